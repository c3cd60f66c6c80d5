// Another agent in the real window: the person chooses opencode for a project in its settings
// (the model provider set up in Healer, the pinned program of the tests) after reading what
// Gemini CLI cannot ask, and watches a live session of the real opencode on the task's page —
// its commands and edit as they come, a command it asks about answered in the dialog — until
// the task closes with its commit; then a second project on Gemini CLI, whose live session
// streams on its task's page the same way. The model is the
// scripted server, reached through Healer's model gateway.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { E2E_DIR } from "./lib/harness.mjs";
import { KEY_VAR, ScriptedApp } from "./lib/scriptedApp.mjs";

const STARTUP_ERROR = '[data-testid="startup-error"]';
const OPENCODE = path.resolve(E2E_DIR, "../agents/node_modules/opencode-linux-x64/bin/opencode");
const GEMINI = path.resolve(E2E_DIR, "../agents/node_modules/@google/gemini-cli/bundle/gemini.js");
const CHECK = "python3 -c \"from greet import greet; assert greet('Ada') == 'Hello, Ada!', greet('Ada')\"";

async function go(session, hash) {
  await session.executeScript("window.location.hash = arguments[0];", [hash]);
}

describe("opencode and Gemini CLI in the real window", { timeout: 300_000 }, () => {
  const app = new ScriptedApp("agents");
  const folder = mkdtempSync(path.join(os.tmpdir(), "healer-e2e-opencode-"));
  const geminiFolder = mkdtempSync(path.join(os.tmpdir(), "healer-e2e-gemini-"));
  let session;
  const shot = (name) => app.shot(name);

  before(
    async () => {
      for (const program of [OPENCODE, GEMINI]) assert.ok(existsSync(program), `${program} is missing: run scripts/setup.sh test`);
      for (const dir of [folder, geminiFolder]) {
        writeFileSync(path.join(dir, "greet.py"), "def greet(name):\n    return 'Hi ' + name\n");
        // As a Python project has it: what running it leaves is not part of the work.
        writeFileSync(path.join(dir, ".gitignore"), "__pycache__/\n");
      }
      session = await app.start(["cheap", "standard"]);
      await app.cli("project", "add", folder, "--name", "greeter", "--git-init", "--verify", `test=${CHECK}`);
    },
    { timeout: 150_000 },
  );

  after(
    async () => {
      await app.stop();
      for (const dir of [folder, geminiFolder]) rmSync(dir, { recursive: true, force: true });
    },
    { timeout: 60_000 },
  );

  test("the person chooses opencode on a Healer provider; Gemini CLI says what it cannot ask", { timeout: 90_000 }, async () => {
    await session.waitFor('[data-testid="nav-projects"]', { timeoutMs: 30_000, failFast: STARTUP_ERROR });
    await go(session, "#/projects/1/settings");
    await session.waitFor('[data-testid="agent-opencode"]', { timeoutMs: 15_000, what: "opencode among the agents" });
    // The choices are radio buttons inside their labels: the label is what a person clicks.
    // Gemini CLI cannot stop to ask: the form says what the project's choice means for it.
    await session.click(await session.findElement('label:has([data-testid="agent-gemini-cli"])'));
    const cannot = await session.waitFor('[data-testid="agent-cannot-ask"]', { timeoutMs: 5_000, what: "what Gemini CLI cannot ask" });
    assert.match(await session.getText(cannot.id), /^Gemini CLI cannot stop to ask you in a session Healer runs/);
    await session.executeScript("document.querySelector('[data-testid=agent-cannot-ask]').scrollIntoView({ block: 'center' });");
    await shot("gemini-chosen");
    // opencode asks through its server, like Claude Code: nothing to warn about.
    await session.click(await session.findElement('label:has([data-testid="agent-opencode"])'));
    await session.until(async () => (await session.findElements('[data-testid="agent-cannot-ask"]')).length === 0, {
      timeoutMs: 5_000,
      what: "no warning for opencode",
    });
    await session.waitFor('[data-testid="agent-healer-provider"]:not([disabled])', { timeoutMs: 10_000, what: "the provider choice" });
    await session.click(await session.findElement('label:has([data-testid="agent-healer-provider"])'));
    const model = await session.waitFor('[data-testid="field-model"]', { timeoutMs: 5_000 });
    await session.sendKeys(model.id, "scripted-small");
    const program = await session.waitFor('[data-testid="field-agent-program"]', { timeoutMs: 5_000 });
    await session.sendKeys(program.id, OPENCODE);
    const allowed = await session.waitFor('[data-testid="field-allowed-commands"]', { timeoutMs: 5_000 });
    await session.sendKeys(allowed.id, "python3");
    await shot("opencode-chosen");
    await session.executeScript("document.querySelector('[data-testid=save-project]').scrollIntoView({ block: 'center' });");
    const save = await session.waitFor('[data-testid="save-project"]:not([disabled])', { timeoutMs: 15_000, what: "the form checked by the engine" });
    await session.click(save.id);
    await session.waitFor('[data-testid="project-agent"]', {
      timeoutMs: 15_000,
      predicate: (text) => text.includes("opencode works on the tasks, using the model provider"),
      what: "the project saying opencode works on it",
    });
  });

  test("a live opencode session streams on the task's page and the task closes with its commit", { timeout: 150_000 }, async () => {
    await app.cli("project", "task", "add", "greeter", "--title", "Greet properly", "--description", "greet('Ada') must say Hello, Ada!");
    await app.cli("project", "run", "greeter");
    await go(session, "#/projects/1/tasks/t1");
    try {
      await session.waitFor('[data-testid="session"][data-status="running"] [data-testid="session-steps"]', {
        timeoutMs: 60_000,
        predicate: (text) => text.includes("Let me see what it says now.") && text.includes("Hi Ada"),
        what: "opencode's first command and its output, live",
      });
    } catch (e) {
      const seen = await session.executeScript("return document.querySelector('[data-testid=session]')?.innerText ?? document.body.innerText;");
      throw new Error(`${e.message}\nThe page said:\n${seen}`);
    }
    await shot("opencode-live");
    // Its second command is not among the project's: it waits for the person, in a dialog.
    const dialog = await session.waitFor('[data-testid="checkpoint-dialog"][data-ready="true"]', { timeoutMs: 60_000, what: "opencode's question" });
    const asked = await session.getText(dialog.id);
    assert.match(asked, /opencode asks to run a command/);
    assert.doesNotMatch(asked, /opencode-|\{"|approval:|per_/);
    assert.equal(await session.getText(await session.findElement('[data-testid="agent-request-command"]')), "curl -s http://127.0.0.1:9/ || echo offline");
    await shot("opencode-asks");
    await session.sendKeys(dialog.id, "1");
    await session.until(async () => (await session.findElements('[data-testid="checkpoint-dialog"]')).length === 0, {
      timeoutMs: 10_000,
      what: "the dialog closed",
    });
    const head = await session.getText(await session.findElement('[data-testid="session"] .session-head'));
    assert.ok(head.includes("opencode") && head.includes("version 1.18.33"), head);
    const commit = await session.waitFor('[data-testid="session-commit"]', { timeoutMs: 90_000, what: "the commit" });
    assert.match(await session.getText(commit.id), /Commit [0-9a-f]{7} on healer\/t1/);
    await session.waitFor('[data-testid="task-status"]', { timeoutMs: 15_000, predicate: (text) => text.includes("Closed"), what: "the task closed" });
    await shot("opencode-closed");
    assert.match(readFileSync(path.join(folder, "greet.py"), "utf8"), /Hello, /);
  });

  test("a live Gemini CLI session streams on the task's page and its task closes too", { timeout: 150_000 }, async () => {
    // Gemini CLI speaks Google's Gemini API: a provider of that kind, on the same scripted server.
    await app.cli("provider", "add", "google", "--kind", "gemini", "--base-url", app.model.url.replace(/\/v1$/, ""), "--key-env", KEY_VAR);
    await app.cli(
      "project", "add", geminiFolder, "--name", "gemini-greeter", "--git-init", "--verify", `test=${CHECK}`,
      "--agent", "gemini-cli", "--provider", "google", "--model", "scripted-gemini", "--program", GEMINI, "--allow", "python3",
    );
    await app.cli("project", "task", "add", "gemini-greeter", "--title", "Greet properly", "--description", "greet('Ada') must say Hello, Ada!");
    await app.cli("project", "run", "gemini-greeter");
    await go(session, "#/projects/2/tasks/t1");
    try {
      await session.waitFor('[data-testid="session"] [data-testid="session-steps"]', {
        timeoutMs: 90_000,
        predicate: (text) => text.includes("Let me see what it says now.") && text.includes("Hi Ada"),
        what: "Gemini CLI's command and its output, live",
      });
    } catch (e) {
      const seen = await session.executeScript("return document.querySelector('[data-testid=session]')?.innerText ?? document.body.innerText;");
      throw new Error(`${e.message}\nThe page said:\n${seen}`);
    }
    await shot("gemini-live");
    const head = await session.getText(await session.findElement('[data-testid="session"] .session-head'));
    assert.ok(head.includes("Gemini CLI") && head.includes("version 0.61.0"), head);
    const commit = await session.waitFor('[data-testid="session-commit"]', { timeoutMs: 90_000, what: "the commit" });
    assert.match(await session.getText(commit.id), /Commit [0-9a-f]{7} on healer\/t1/);
    await session.waitFor('[data-testid="task-status"]', { timeoutMs: 15_000, predicate: (text) => text.includes("Closed"), what: "the task closed" });
    await shot("gemini-closed");
    assert.match(readFileSync(path.join(geminiFolder, "greet.py"), "utf8"), /Hello, /);
  });
});
