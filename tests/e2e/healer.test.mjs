// End-to-end stories for the Healer desktop app, driven over W3C WebDriver through
// tauri-driver + WebKitWebDriver. Dependency-free: node:test and global fetch.
//
// Run through run.sh (it provides a display and a session bus). Environment:
//   HEALER_DESKTOP_BIN  the desktop app  (default $CARGO_TARGET_DIR/debug/healer-desktop)
//   HEALER_CLI_BIN      the CLI          (default $CARGO_TARGET_DIR/debug/healer)
//   TAURI_DRIVER        tauri-driver     (default ~/.cargo/bin/tauri-driver, else PATH)
//   HEALER_E2E_KEEP=1   keep the temp data folder even when everything passes

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { cpSync } from "node:fs";
import path from "node:path";
import { Session } from "./lib/webdriver.mjs";
import {
  ARTIFACTS,
  CLI_BIN,
  DESKTOP_BIN,
  Driver,
  describeRun,
  freshDataDir,
  reap,
  removeDir,
  requireBinaries,
  run,
} from "./lib/harness.mjs";

const STARTUP_ERROR = '[data-testid="startup-error"]';
const HEAL_FINISHED = '[data-testid="activity-item"][data-kind="heal_finished"]';

const slug = (s) => s.replace(/[^a-z0-9]+/gi, "-").replace(/^-|-$/g, "").toLowerCase();
const note = (msg) => process.stderr.write(`# ${msg}\n`);

describe("Healer on the desktop", { timeout: 300_000 }, () => {
  let dataDir;
  let driver;
  let session;
  let failed = false;

  const cliEnv = () => ({ ...process.env, HEALER_DATA_DIR: dataDir });

  async function shot(name) {
    if (!session) return;
    const file = path.join(ARTIFACTS, `${slug(name)}.png`);
    try {
      await session.screenshot(file);
      note(`screenshot: ${file}`);
    } catch (e) {
      note(`screenshot ${file} failed: ${e.message}`);
    }
  }

  /** A story: on failure, a screenshot named after it lands in artifacts/. */
  function story(name, fn, timeout = 60_000) {
    test(name, { timeout }, async () => {
      try {
        await fn();
      } catch (e) {
        failed = true;
        await shot(`${name} FAILED`);
        throw e;
      }
      await shot(name);
    });
  }

  /** Click a sidebar link and wait for its page; an error screen fails at once. */
  async function openPage(page) {
    const link = await session.waitFor(`[data-testid="nav-${page}"]`, { timeoutMs: 15_000, failFast: STARTUP_ERROR });
    await session.click(link.id);
    return session.waitFor(`[data-testid="page-${page}"]`, { timeoutMs: 10_000, failFast: STARTUP_ERROR });
  }

  async function cleanUp() {
    if (session) {
      await session.delete().catch((e) => note(`deleting the WebDriver session failed: ${e.message}`));
      session = undefined;
    }
    if (driver) {
      await driver.stop().catch((e) => note(`stopping tauri-driver failed: ${e.message}`));
      driver = undefined;
    }
    if (dataDir) {
      const leftovers = await reap(dataDir);
      if (leftovers.length) note(`had to SIGKILL leftover processes ${leftovers.join(", ")}`);
      if (failed) {
        const copy = path.join(ARTIFACTS, "data-dir");
        removeDir(copy);
        try {
          cpSync(dataDir, copy, { recursive: true });
          note(`data folder (engine logs, database) copied to ${copy}`);
        } catch (e) {
          note(`could not copy ${dataDir}: ${e.message}`);
        }
      }
      if (process.env.HEALER_E2E_KEEP === "1") note(`data folder kept: ${dataDir}`);
      else removeDir(dataDir);
      dataDir = undefined;
    }
  }

  // Last resort if the runner is interrupted: stop the driver's process group synchronously.
  const emergency = () => {
    try {
      if (driver?.child?.pid) process.kill(-driver.child.pid, "SIGKILL");
    } catch {
      /* gone */
    }
  };
  process.once("exit", emergency);
  for (const sig of ["SIGINT", "SIGTERM"]) {
    process.once(sig, () => {
      emergency();
      process.exit(130);
    });
  }

  before(
    async () => {
      try {
        requireBinaries();
        dataDir = freshDataDir("app");
        note(`data folder: ${dataDir}`);
        driver = new Driver(dataDir);
        await driver.start(20_000);
        session = await Session.create(
          driver.baseUrl,
          { alwaysMatch: { "tauri:options": { application: DESKTOP_BIN } } },
          60_000,
        );
      } catch (e) {
        failed = true;
        await cleanUp();
        throw new Error(`${e.message}${driver ? ` (see ${driver.logFile})` : ""}`);
      }
    },
    { timeout: 120_000 },
  );

  after(cleanUp, { timeout: 60_000 });

  story("the Workflows page greets a new person", async () => {
    const page = await session.waitFor('[data-testid="page-workflows"]', {
      timeoutMs: 30_000,
      predicate: (text) => text.trim().length > 0,
      failFast: STARTUP_ERROR,
      what: "the Workflows page with some text",
    });
    note(`Workflows says: ${JSON.stringify(page.text.trim().slice(0, 160))}`);
  });

  story("an event from the engine appears live in Activity", async () => {
    await openPage("activity");
    const before = (await session.findElements(HEAL_FINISHED)).length;
    // A marker in the page: if it survives, the page was not reloaded.
    await session.executeScript("window.__healerE2eMarker = 'still here'; return true;");

    const started = Date.now();
    const check = await run(CLI_BIN, ["--data-dir", dataDir, "check"], { env: cliEnv(), timeoutMs: 45_000 });
    assert.equal(check.code, 0, `\`healer check\` ${describeRun(check)}`);
    assert.match(check.stdout + check.stderr, /contained/, `\`healer check\` did not report a contained heal: ${describeRun(check)}`);
    note(`healer check (${Date.now() - started} ms): ${check.stdout.trim()}`);
    const checked = Date.now();

    try {
      await session.until(async () => (await session.findElements(HEAL_FINISHED)).length > before, {
        timeoutMs: 15_000,
        what: `a new ${HEAL_FINISHED} row in Activity (there were ${before}) without a reload`,
      });
    } catch (e) {
      const kinds = await session
        .executeScript(
          "return [...document.querySelectorAll('[data-testid=\"activity-item\"]')].map((e) => e.dataset.kind);",
        )
        .catch((err) => `unreadable: ${err.message}`);
      throw new Error(`${e.message}; activity rows now: ${JSON.stringify(kinds)}`);
    }
    note(`heal_finished row appeared ${Date.now() - checked} ms after \`healer check\` returned`);

    const marker = await session.executeScript("return window.__healerE2eMarker ?? null;");
    assert.equal(marker, "still here", "the page was reloaded: the event should appear live, without a reload");

    await session.waitFor('[data-testid="unread-count"]', {
      timeoutMs: 10_000,
      predicate: (text) => text.trim() === "1",
      what: "the unread badge showing 1",
    });
  });

  story("sending a test alert from Settings shows its outcome", async () => {
    await openPage("settings");
    const button = await session.waitFor('[data-testid="send-test-alert"]', { timeoutMs: 10_000 });
    await session.click(button.id);
    const result = await session.waitFor('[data-testid="test-alert-result"]', {
      timeoutMs: 30_000,
      predicate: (text) => text.includes("The failure is handled for now: Healer told you about it."),
      what: "the test alert result in plain words",
    });
    note(`test alert result: ${JSON.stringify(result.text.trim())}`);
  });

  story("Settings shows the model setup with its three tiers", async () => {
    await openPage("settings");
    const tab = await session.waitFor('[data-testid="settings-section-models"]', { timeoutMs: 10_000 });
    await session.click(tab.id);
    await session.waitFor('[data-testid="settings-models"]', { timeoutMs: 10_000, what: "the Models settings" });
    await session.waitFor('[data-testid="ollama-status"]', { timeoutMs: 15_000, what: "the Ollama status" });
    await session.until(async () => (await session.findElements('[data-testid="tier-row"]')).length === 3, {
      timeoutMs: 10_000,
      what: "cheap, standard and deep tier rows",
    });
  });

  story("a second engine is refused while the app runs", async () => {
    // The app must still be up (it holds engine.lock) for this story to mean anything.
    await session.waitFor('[data-testid="nav-workflows"]', { timeoutMs: 5_000, what: "the running app" });
    const daemon = await run(CLI_BIN, ["--data-dir", dataDir, "daemon"], { env: cliEnv(), timeoutMs: 20_000 });
    assert.ok(!daemon.timedOut, `\`healer daemon\` kept running beside the app instead of refusing: ${describeRun(daemon)}`);
    assert.equal(daemon.code, 1, `\`healer daemon\` ${describeRun(daemon)}`);
    assert.match(daemon.stdout + daemon.stderr, /already running/, `\`healer daemon\` ${describeRun(daemon)}`);
  });
});

test("without a display the app says so and exits 1", { timeout: 60_000 }, async () => {
  requireBinaries();
  const dataDir = freshDataDir("nodisplay");
  try {
    const env = { ...process.env, HEALER_DATA_DIR: dataDir };
    delete env.DISPLAY;
    delete env.WAYLAND_DISPLAY;
    const app = await run(DESKTOP_BIN, [], { env, timeoutMs: 30_000 });
    assert.ok(!app.timedOut, `healer-desktop kept running without a display: ${describeRun(app)}`);
    assert.equal(app.code, 1, `healer-desktop without a display ${describeRun(app)}`);
    assert.match(app.stderr, /no display/i, `healer-desktop without a display ${describeRun(app)}`);
  } finally {
    await reap(dataDir);
    removeDir(dataDir);
  }
});
