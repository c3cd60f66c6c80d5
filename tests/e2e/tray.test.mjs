// Healer in the tray: the person closes the window and Healer keeps working without it — light
// (no web process), on schedule, and telling them of a failure by desktop notification. Opened
// again from the tray menu, the window shows the page they left, scrolled as they left it;
// Quit ends every process. No tray can be clicked under Xvfb, so the menu is chosen through
// the app's test hook: a second launch with `--tray-menu ID` (HEALER_TEST_HOOKS=1), which
// runs the same handler as a click on that menu item.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Session } from "./lib/webdriver.mjs";
import { ARTIFACTS, CLI_BIN, DESKTOP_BIN, Driver, describeRun, freshDataDir, reap, removeDir, requireBinaries, run, sleep } from "./lib/harness.mjs";
import { NotificationWatcher, appProcesses } from "./lib/desktopBus.mjs";

const note = (msg) => process.stderr.write(`# ${msg}\n`);

/** A process with where each of its threads waits, to see why one did not end. */
function withThreads(p) {
  try {
    const tasks = readdirSync(`/proc/${p.pid}/task`);
    const threads = tasks.map((t) => {
      const read = (f) => readFileSync(`/proc/${p.pid}/task/${t}/${f}`, "utf8").trim();
      try {
        return `${read("comm")}@${read("wchan")}`;
      } catch {
        return t;
      }
    });
    return { ...p, threads };
  } catch {
    return p;
  }
}
const HOOKS = { HEALER_TEST_HOOKS: "1" };
// The app's home: where "Start at login" writes its autostart entry (~/.config/autostart).
const HOME = mkdtempSync(path.join(os.tmpdir(), "healer-e2e-home-"));
const AUTOSTART = path.join(HOME, ".config/autostart/Healer.desktop");

/** Whether a window titled Healer is on the display. */
function healerWindowShown() {
  const tree = execFileSync("xwininfo", ["-root", "-tree"], { encoding: "utf8" });
  return tree.includes('"Healer"');
}

describe("Healer in the tray", { timeout: 240_000 }, () => {
  let dataDir;
  let driver;
  let session;
  const watcher = new NotificationWatcher();

  const env = () => ({ ...process.env, ...HOOKS, HOME, HEALER_DATA_DIR: dataDir });
  const shot = (name) => session?.screenshot(path.join(ARTIFACTS, `tray-${name}.png`)).catch(() => {});

  /** Choose a tray menu item, as a click on it would. */
  async function tray(item) {
    const r = await run(DESKTOP_BIN, ["--tray-menu", item], { env: env(), timeoutMs: 30_000 });
    assert.equal(r.code, 0, `the second launch choosing ${item} ${describeRun(r)}`);
  }

  async function cli(...args) {
    const r = await run(CLI_BIN, ["--data-dir", dataDir, ...args], { env: env(), timeoutMs: 30_000 });
    assert.equal(r.code, 0, `healer ${args.join(" ")} ${describeRun(r)}`);
    return r.stdout;
  }

  before(
    async () => {
      requireBinaries();
      await watcher.start();
      dataDir = freshDataDir("tray");
      driver = new Driver(dataDir, { ...HOOKS, HOME });
      await driver.start(20_000);
      session = await Session.create(driver.baseUrl, { alwaysMatch: { "tauri:options": { application: DESKTOP_BIN } } }, 60_000);
    },
    { timeout: 120_000 },
  );

  after(
    async () => {
      watcher.stop();
      await session?.delete().catch(() => {});
      await driver?.stop().catch(() => {});
      if (dataDir) {
        await reap(dataDir);
        removeDir(dataDir);
      }
      removeDir(HOME);
    },
    { timeout: 60_000 },
  );

  test("closed, Healer keeps running light and on schedule; the tray brings back the same page; Quit ends it all", { timeout: 180_000 }, async () => {
    // The person is reading Settings, scrolled down a little.
    const nav = await session.waitFor('[data-testid="nav-settings"]', { timeoutMs: 30_000 });
    await session.click(nav.id);
    await session.waitFor('[data-testid="background-settings"]', { timeoutMs: 10_000 });
    // While here, they ask Healer to start when they log in: it starts in the tray.
    const login = await session.waitFor('[data-testid="start-at-login"]', { timeoutMs: 10_000 });
    assert.equal(await session.executeScript("return document.querySelector('[data-testid=\"start-at-login\"]').checked;"), false, "off by default");
    await session.click(login.id);
    await session.until(async () => existsSync(AUTOSTART), { timeoutMs: 10_000, what: `the autostart entry ${AUTOSTART}` });
    const entry = readFileSync(AUTOSTART, "utf8");
    assert.ok(entry.split("\n").includes(`Exec=${DESKTOP_BIN} --hidden`), `the entry starts this app hidden: ${entry}`);
    const scrolled = await session.executeScript(
      "const m = document.querySelector('main.content'); m.scrollTop = 180; return m.scrollTop;",
    );
    assert.ok(scrolled > 100, `the Settings page must be tall enough to scroll (scrolled to ${scrolled})`);
    await sleep(600); // the window reports where the person is a moment after they stop
    await shot("before-close");

    // They close the window.
    await tray("close-window");
    await session.until(async () => !appProcesses(dataDir).some((p) => p.name.startsWith("WebKitWebProc")), {
      timeoutMs: 15_000,
      what: "the web process to end with the window",
    });
    const left = appProcesses(dataDir);
    note(`after closing: ${JSON.stringify(left)}`);
    assert.ok(left.some((p) => p.name === "healer-desktop"), `Healer stopped with its window: ${JSON.stringify(left)}`);
    const told = await watcher.waitFor((n) => n.summary === "Healer is still running", {
      timeoutMs: 10_000,
      what: "the first-close notification",
    });
    assert.match(told.body, /Quit Healer in the tray menu/);

    // Meanwhile a workflow from the terminal, due a few seconds from now, fails on its schedule.
    const due = new Date(Date.now() + 6_000);
    const script = path.join(dataDir, "export.py");
    writeFileSync(script, "rows = [{'total': 3}]\nprint(sum(r['amount'] for r in rows))\n");
    const cron = `${due.getSeconds()} ${due.getMinutes()} ${due.getHours()} * * *`;
    await cli("workflow", "create", "--title", "Nightly export", "--runtime", "python3", "--file", script, "--schedule", cron);
    const failed = await watcher.waitFor((n) => `${n.summary} ${n.body}`.includes("Nightly export"), {
      timeoutMs: 45_000,
      what: "a desktop notification about the failed run of “Nightly export”",
    });
    note(`notified: ${JSON.stringify(failed)}`);
    const shown = JSON.parse(await cli("workflow", "show", "nightly-export", "--json"));
    assert.equal(shown.runs.length, 1, JSON.stringify(shown.runs));
    assert.equal(shown.runs[0].trigger, "schedule");
    assert.equal(shown.runs[0].status, "failed");
    assert.equal(shown.runs[0].number, 1);
    assert.ok(
      !appProcesses(dataDir).some((p) => p.name.startsWith("WebKitWebProc")),
      "no web process came back while the window was closed",
    );

    // Open Healer from the tray: a new window, on the page they left, scrolled as they left it.
    await tray("open");
    const handle = await session.until(
      async () => {
        const handles = await session.windowHandles();
        return handles.length === 1 ? handles[0] : null;
      },
      { timeoutMs: 20_000, what: "the new window" },
    );
    await session.switchToWindow(handle);
    await session.waitFor('[data-testid="background-settings"]', { timeoutMs: 20_000, what: "Settings, where the person was" });
    const hash = await session.executeScript("return window.location.hash;");
    assert.equal(hash, "#/settings");
    await session.until(
      async () => Math.abs((await session.executeScript("return document.querySelector('main.content').scrollTop;")) - scrolled) < 2,
      { timeoutMs: 5_000, what: `the page scrolled back to ${scrolled}` },
    );
    await shot("reopened");

    // Quit from the tray: every process of the app ends, through the normal shutdown.
    await tray("quit");
    await session.until(async () => appProcesses(dataDir).length === 0, {
      timeoutMs: 20_000,
      what: `every process of the app to end (left: ${JSON.stringify(appProcesses(dataDir).map(withThreads))})`,
    });
    const last = JSON.parse(await cli("events", "--json", "--limit", "1"));
    assert.equal(last[0].event.kind, "engine_stopped", "the engine stopped through its shutdown");
  });

  test("started at login, Healer waits in the tray without a window until opened", { timeout: 90_000 }, async () => {
    const exec = /^Exec=(.+)$/m.exec(readFileSync(AUTOSTART, "utf8"))?.[1];
    assert.ok(exec, "the autostart entry has an Exec line");
    const [bin, ...args] = exec.split(" ");
    const loginDir = freshDataDir("login");
    const loginEnv = { ...process.env, ...HOOKS, HOME, HEALER_DATA_DIR: loginDir };
    const child = spawn(bin, args, { env: loginEnv, stdio: "ignore" });
    try {
      const started = async () => {
        const r = await run(CLI_BIN, ["--data-dir", loginDir, "events", "--json"], { env: loginEnv });
        return r.code === 0 && r.stdout.includes('"engine_started"');
      };
      await session.until(started, { timeoutMs: 30_000, what: "the engine of the app started at login" });
      await sleep(2_000); // time a window would need to show
      assert.equal(healerWindowShown(), false, "no window at login");
      assert.deepEqual(appProcesses(loginDir).map((p) => p.name), ["healer-desktop"], "no WebKit process without a window");

      const open = await run(DESKTOP_BIN, ["--tray-menu", "open"], { env: loginEnv, timeoutMs: 30_000 });
      assert.equal(open.code, 0, describeRun(open));
      await session.until(async () => healerWindowShown(), { timeoutMs: 20_000, what: "the window, opened from the tray" });

      const quit = await run(DESKTOP_BIN, ["--tray-menu", "quit"], { env: loginEnv, timeoutMs: 30_000 });
      assert.equal(quit.code, 0, describeRun(quit));
      await session.until(async () => appProcesses(loginDir).length === 0, { timeoutMs: 20_000, what: "every process to end after Quit" });
    } finally {
      child.kill("SIGKILL");
      await reap(loginDir);
      removeDir(loginDir);
    }
  });

  test("with Keep running turned off, closing the window quits Healer", { timeout: 120_000 }, async () => {
    const quitDir = freshDataDir("keep-off");
    const quitDriver = new Driver(quitDir, { ...HOOKS, HOME });
    let quitSession;
    try {
      await quitDriver.start(20_000);
      quitSession = await Session.create(quitDriver.baseUrl, { alwaysMatch: { "tauri:options": { application: DESKTOP_BIN } } }, 60_000);
      const nav = await quitSession.waitFor('[data-testid="nav-settings"]', { timeoutMs: 30_000 });
      await quitSession.click(nav.id);
      const keep = await quitSession.waitFor('[data-testid="keep-running"]', { timeoutMs: 10_000 });
      await quitSession.click(keep.id);
      await quitSession.until(
        async () => (await quitSession.executeScript("return document.querySelector('[data-testid=\"keep-running\"]').checked;")) === false,
        { what: "Keep running turned off" },
      );
      const closed = await run(DESKTOP_BIN, ["--tray-menu", "close-window"], {
        env: { ...process.env, ...HOOKS, HOME, HEALER_DATA_DIR: quitDir },
        timeoutMs: 30_000,
      });
      assert.equal(closed.code, 0, describeRun(closed));
      await quitSession.until(async () => appProcesses(quitDir).length === 0, {
        timeoutMs: 20_000,
        what: `Healer to quit with its window (left: ${JSON.stringify(appProcesses(quitDir).map(withThreads))})`,
      });
      const last = await run(CLI_BIN, ["--data-dir", quitDir, "events", "--json", "--limit", "1"], { env: { ...process.env, HEALER_DATA_DIR: quitDir } });
      assert.equal(JSON.parse(last.stdout)[0].event.kind, "engine_stopped");
    } finally {
      await quitSession?.delete().catch(() => {});
      await quitDriver.stop().catch(() => {});
      await reap(quitDir);
      removeDir(quitDir);
    }
  });
});
