// Environment problems in the real window. A program the machine lacks: the Level-2 analyzer (a
// scripted model on 127.0.0.1) asks for diagnostics, and Healer stops to ask in a blocking
// dialog; the person presses Enter and the recommended option (Pause, with no history) is done.
// A missing module: the example that needs a Node package heals itself — the package is
// installed into the workflow's own node_modules from the npm registry, version 1.1 runs green,
// and the model is never asked.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { ScriptedApp } from "./lib/scriptedApp.mjs";
import { ANALYSIS } from "./lib/modelServer.mjs";

const STARTUP_ERROR = '[data-testid="startup-error"]';
const ENTER = "\uE007";

describe("Environment problems in the real window", { timeout: 360_000 }, () => {
  const app = new ScriptedApp("checkpoint");
  let session;
  let model;
  const shot = (name) => app.shot(name);
  const cli = (...args) => app.cli(...args);

  before(
    async () => {
      session = await app.start(["cheap"]);
      model = app.model;
    },
    { timeout: 150_000 },
  );

  after(() => app.stop(), { timeout: 60_000 });

  async function openWorkflow(name) {
    const nav = await session.waitFor('[data-testid="nav-workflows"]', { timeoutMs: 30_000, failFast: STARTUP_ERROR });
    await session.click(nav.id);
    const row = await session.waitFor(`[data-testid="workflow-row"][data-name="${name}"]`, { timeoutMs: 15_000 });
    await session.click(row.id);
  }

  test("a program the machine lacks leads to an ENVIRONMENT checkpoint; Enter takes the recommendation", { timeout: 120_000 }, async () => {
    const script = path.join(app.dataDir, "report.sh");
    writeFileSync(script, "echo 'Building the report'\nreport-tool --today\n");
    await cli("workflow", "create", "--title", "Nightly report", "--runtime", "bash", "--file", script);
    await openWorkflow("nightly-report");
    const runNow = await session.waitFor('[data-testid="run-now"]', { timeoutMs: 10_000 });
    await session.click(runNow.id);

    const dialog = await session.waitFor('[data-testid="checkpoint-dialog"]', {
      timeoutMs: 45_000,
      predicate: (text) =>
        text.includes("Something is missing on this machine") && text.includes("bash is installed (") && text.includes(ANALYSIS.reasoning.slice(0, 30)),
      what: "the environment checkpoint with its diagnostics",
    });
    assert.ok(dialog.id);
    const recommended = await session.waitFor('[data-testid="checkpoint-option"][data-recommended="true"]', {
      timeoutMs: 5_000,
      predicate: (text) => text.includes("Pause"),
      what: "Pause, recommended",
    });
    await shot("dialog");
    // The analyzer was asked by the cheap tier, with the error.
    const asked = model.seen.find((r) => r.method === "POST" && String(r.body.messages?.[0]?.content).includes("recovery analyzer"));
    assert.ok(asked, "the analyzer was asked");
    assert.ok(JSON.stringify(asked.body.messages).includes("report-tool"));

    await session.sendKeys(recommended.id, ENTER);
    await session.until(async () => (await session.findElements('[data-testid="checkpoint-dialog"]')).length === 0, {
      timeoutMs: 15_000,
      what: "the dialog to close",
    });
    const shown = await cli("workflow", "show", "nightly-report", "--json");
    assert.equal(JSON.parse(shown).workflow.status, "paused", shown);
    await shot("after");
  });

  test("the missing-module example heals itself: its package is installed and version 1.1 runs green", { timeout: 150_000 }, async () => {
    const asked = model.seen.filter((r) => r.method === "POST").length;
    await openWorkflow("team-chat-digest");
    const runNow = await session.waitFor('[data-testid="run-now"]', { timeoutMs: 10_000 });
    await session.click(runNow.id);

    // The first run fails on the missing module; Healer's re-run of 1.1 passes.
    await session.waitFor('[data-testid="run-row"][data-status="failed"]', { timeoutMs: 30_000, what: "the failed first run" });
    const green = await session.waitFor('[data-testid="run-row"][data-status="succeeded"]', {
      timeoutMs: 90_000,
      predicate: (text) => text.includes("1.1"),
      what: "the re-run of version 1.1, green",
    });
    await session.click(green.id);
    await session.waitFor('[data-testid="run-setup"]', { timeoutMs: 10_000, what: "what npm printed, kept with the run" });
    await session.waitFor('[data-testid="stdout"]', {
      timeoutMs: 10_000,
      predicate: (text) => text.includes("Digest ready"),
      what: "the digest in the re-run's output",
    });
    await shot("healed-run");

    const versions = await session.waitFor('[data-testid="tab-versions"]', { timeoutMs: 10_000 });
    await session.click(versions.id);
    await session.waitFor('[data-testid="version-item"][data-version="1.1"][data-active="true"]', {
      timeoutMs: 10_000,
      predicate: (text) => text.includes("Healer"),
      what: "version 1.1 by Healer, the one that runs",
    });
    // (WebKit's driver leaves a one-line, ellipsis-cut comment out of an element's text.)
    const history = JSON.parse(await cli("workflow", "history", "team-chat-digest", "--json"));
    assert.match(history[1].change_comment, /^installed @slack\/webhook \d/);
    await session.waitFor('[data-testid="package-changes"]', {
      timeoutMs: 10_000,
      predicate: (text) => text.includes("Added") && text.includes("@slack/webhook"),
      what: "the package that 1.1 added",
    });
    await shot("versions");

    const deps = await session.waitFor('[data-testid="tab-dependencies"]', { timeoutMs: 10_000 });
    await session.click(deps.id);
    await session.waitFor('[data-testid="dependencies"][data-state="ready"]', {
      timeoutMs: 10_000,
      predicate: (text) => text.includes("@slack/webhook") && text.includes("Installed"),
      what: "the Dependencies tab with the installed package",
    });
    await shot("dependencies");
    assert.equal(model.seen.filter((r) => r.method === "POST").length, asked, "no request reached the model");
  });
});
