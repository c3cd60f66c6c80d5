// A person's path through workflows in the real window: load the examples, open the one with
// a data-shape bug, run it, see the failed run with its class and evidence, and look at its
// versions. Also the healthy example runs green.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Session } from "./lib/webdriver.mjs";
import { ARTIFACTS, CLI_BIN, DESKTOP_BIN, Driver, freshDataDir, reap, removeDir, requireBinaries, run } from "./lib/harness.mjs";

const note = (msg) => process.stderr.write(`# ${msg}\n`);
const STARTUP_ERROR = '[data-testid="startup-error"]';

describe("Workflows in the real window", { timeout: 300_000 }, () => {
  let dataDir;
  let driver;
  let session;

  const shot = (name) => session?.screenshot(path.join(ARTIFACTS, `workflows-${name}.png`)).catch(() => {});

  before(
    async () => {
      requireBinaries();
      dataDir = freshDataDir("workflows");
      driver = new Driver(dataDir);
      await driver.start(20_000);
      session = await Session.create(driver.baseUrl, { alwaysMatch: { "tauri:options": { application: DESKTOP_BIN } } }, 60_000);
    },
    { timeout: 120_000 },
  );

  after(
    async () => {
      await session?.delete().catch(() => {});
      await driver?.stop().catch(() => {});
      if (dataDir) {
        await reap(dataDir);
        removeDir(dataDir);
      }
    },
    { timeout: 60_000 },
  );

  async function openWorkflow(name) {
    const nav = await session.waitFor('[data-testid="nav-workflows"]', { timeoutMs: 15_000, failFast: STARTUP_ERROR });
    await session.click(nav.id);
    const row = await session.waitFor(`[data-testid="workflow-row"][data-name="${name}"]`, { timeoutMs: 15_000 });
    await session.click(row.id);
    await session.waitFor('[data-testid="page-workflow"]', { timeoutMs: 10_000 });
  }

  async function runNow() {
    const before = (await session.findElements('[data-testid="run-row"]')).length;
    const button = await session.waitFor('[data-testid="run-now"]', { timeoutMs: 10_000 });
    await session.click(button.id);
    await session.until(async () => (await session.findElements('[data-testid="run-row"]')).length > before, {
      timeoutMs: 15_000,
      what: "a new run row",
    });
  }

  test("a new person loads the examples and sees them listed", { timeout: 60_000 }, async () => {
    const load = await session.waitFor('[data-testid="load-examples"]', { timeoutMs: 30_000, failFast: STARTUP_ERROR });
    await session.click(load.id);
    await session.until(async () => (await session.findElements('[data-testid="workflow-row"]')).length === 4, {
      timeoutMs: 15_000,
      what: "four example workflows",
    });
    await shot("list");
  });

  test("a greyed-out Create says what keeps it from working, beside the button", { timeout: 60_000 }, async () => {
    const nav = await session.waitFor('[data-testid="nav-workflows"]', { timeoutMs: 15_000, failFast: STARTUP_ERROR });
    await session.click(nav.id);
    await session.click((await session.waitFor('[data-testid="new-workflow"]', { timeoutMs: 10_000 })).id);
    await session.waitFor('[data-testid="page-new-workflow"]', { timeoutMs: 10_000 });
    const title = await session.waitFor('[data-testid="field-title"]', { timeoutMs: 5_000, what: "the title field" });
    // Typed and emptied again: the reason is said beside the greyed-out button, in view.
    await session.sendKeys(title.id, "x");
    await session.sendKeys(title.id, "\uE003");
    await session.waitFor('[data-testid="save-workflow"][disabled]', { timeoutMs: 5_000, what: "Create greyed out" });
    const why = await session.waitFor('[data-testid="form-waiting"]', {
      timeoutMs: 5_000,
      predicate: (text) => text.includes("Give the workflow a title"),
      what: "why Create is greyed out",
    });
    const inView = await session.executeScript(
      "const r = arguments[0].getBoundingClientRect(); return r.top >= 0 && r.bottom <= window.innerHeight;",
      [{ "element-6066-11e4-a52e-4f735466cecf": why.id }],
    );
    assert.equal(inView, true, "the reason is in view beside the button");
    await shot("create-why");
    // Leaving the form: nothing worth keeping was typed, so whatever it asks, leave it.
    await session.click((await session.waitFor('[data-testid="nav-workflows"]')).id);
    const discard = await session.findElements('[data-testid="leave-discard"]');
    if (discard.length > 0) await session.click(discard[0]);
    await session.waitFor('[data-testid="workflow-row"]', { timeoutMs: 10_000, what: "the list again" });
  });

  test("the healthy example runs green", { timeout: 90_000 }, async () => {
    await openWorkflow("daily-weather-summary");
    await runNow();
    await session.waitFor('[data-testid="run-row"][data-status="succeeded"]', { timeoutMs: 30_000, what: "a succeeded run" });
  });

  test("the data-shape bug fails as a logic error with its evidence", { timeout: 90_000 }, async () => {
    await openWorkflow("weekly-sales-report");
    await runNow();
    const row = await session.waitFor('[data-testid="run-row"][data-status="failed"]', { timeoutMs: 30_000, what: "a failed run" });
    await session.click(row.id);
    await session.waitFor('[data-testid="attempt"][data-class="logic"]', {
      timeoutMs: 10_000,
      predicate: (text) => text.includes("KeyError"),
      what: "the attempt classified as logic, naming the KeyError",
    });
    await session.waitFor('[data-testid="stderr"]', {
      timeoutMs: 5_000,
      predicate: (text) => text.includes("amount"),
      what: "stderr with the traceback",
    });
    await shot("failed-run");
  });

  test("the transient example recovers on its second attempt", { timeout: 90_000 }, async () => {
    await openWorkflow("exchange-rates");
    await runNow();
    const row = await session.waitFor('[data-testid="run-row"][data-status="succeeded"]', { timeoutMs: 30_000, what: "a succeeded run" });
    await session.click(row.id);
    await session.waitFor('[data-testid="attempt"][data-class="transient"]', { timeoutMs: 10_000, what: "a transient first attempt" });
    await shot("transient");
  });

  test("a version saved from the CLI appears with a side-by-side diff", { timeout: 60_000 }, async () => {
    await openWorkflow("weekly-sales-report");
    const tab = await session.waitFor('[data-testid="tab-versions"]', { timeoutMs: 10_000 });
    await session.click(tab.id);
    await session.waitFor('[data-testid="version-item"][data-version="1.0"]', { timeoutMs: 10_000 });

    // The person fixes the script in their editor and saves it with the CLI; the running app
    // does the save (one engine) and the window follows live.
    const fixed = path.join(dataDir, "fixed.py");
    writeFileSync(fixed, readFileSync(path.join(dataDir, "workflows", "3", "main.py"), "utf8").replace('order["amount"]', 'order["total"]'));
    const saved = await run(CLI_BIN, ["--data-dir", dataDir, "workflow", "save", "weekly-sales-report", "--file", fixed, "--comment", "Read the renamed total"], { timeoutMs: 30_000 });
    assert.equal(saved.code, 0, saved.stderr);
    await session.waitFor('[data-testid="version-item"][data-version="2.0"]', { timeoutMs: 15_000, what: "version 2.0 in the list" });
    const diff = await session.waitFor('[data-testid="version-diff"]', {
      timeoutMs: 15_000,
      predicate: (text) => text.includes('order["amount"]') && text.includes('order["total"]'),
      what: "the diff showing both sides",
    });
    // CodeMirror's own styles must apply under the app's strict CSP (a laid-out editor is flex).
    const display = await session.executeScript(
      "const e = document.querySelector('[data-testid=\"version-diff\"] .cm-editor'); return e ? getComputedStyle(e).display : null;",
    );
    assert.equal(display, "flex", "CodeMirror's styles were blocked");
    assert.ok(diff.id);
    await shot("versions-diff");
  });
});
