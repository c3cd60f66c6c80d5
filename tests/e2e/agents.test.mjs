// Another agent in the real window: the person chooses opencode for a project in its settings
// (the model provider set up in Healer, the pinned program of the tests), reads which questions
// it cannot ask, and watches a live session of the real opencode on the task's page — its
// commands and edit as they come — until the task closes with its commit. The model is the
// scripted server, reached through Healer's model gateway.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { E2E_DIR } from "./lib/harness.mjs";
import { ScriptedApp } from "./lib/scriptedApp.mjs";

const STARTUP_ERROR = '[data-testid="startup-error"]';
const OPENCODE = path.resolve(E2E_DIR, "../agents/node_modules/opencode-linux-x64/bin/opencode");
const CHECK = "python3 -c \"from greet import greet; assert greet('Ada') == 'Hello, Ada!', greet('Ada')\"";

async function go(session, hash) {
  await session.executeScript("window.location.hash = arguments[0];", [hash]);
}

describe("opencode in the real window", { timeout: 300_000 }, () => {
  const app = new ScriptedApp("agents");
  const folder = mkdtempSync(path.join(os.tmpdir(), "healer-e2e-opencode-"));
  let session;
  const shot = (name) => app.shot(name);

  before(
    async () => {
      assert.ok(existsSync(OPENCODE), `${OPENCODE} is missing: run scripts/setup.sh test`);
      writeFileSync(path.join(folder, "greet.py"), "def greet(name):\n    return 'Hi ' + name\n");
      // As a Python project has it: what running it leaves is not part of the work.
      writeFileSync(path.join(folder, ".gitignore"), "__pycache__/\n");
      session = await app.start(["cheap", "standard"]);
      await app.cli("project", "add", folder, "--name", "greeter", "--git-init", "--verify", `test=${CHECK}`);
    },
    { timeout: 150_000 },
  );

  after(
    async () => {
      await app.stop();
      rmSync(folder, { recursive: true, force: true });
    },
    { timeout: 60_000 },
  );

  test("the person chooses opencode on a Healer provider and reads what it cannot ask", { timeout: 90_000 }, async () => {
    await session.waitFor('[data-testid="nav-projects"]', { timeoutMs: 30_000, failFast: STARTUP_ERROR });
    await go(session, "#/projects/1/settings");
    await session.waitFor('[data-testid="agent-opencode"]', { timeoutMs: 15_000, what: "opencode among the agents" });
    // The choices are radio buttons inside their labels: the label is what a person clicks.
    await session.click((await session.findElement('label:has([data-testid="agent-opencode"])')));
    await session.waitFor('[data-testid="agent-healer-provider"]:not([disabled])', { timeoutMs: 10_000, what: "the provider choice" });
    await session.click(await session.findElement('label:has([data-testid="agent-healer-provider"])'));
    const model = await session.waitFor('[data-testid="field-model"]', { timeoutMs: 5_000 });
    await session.sendKeys(model.id, "scripted-small");
    const program = await session.waitFor('[data-testid="field-agent-program"]', { timeoutMs: 5_000 });
    await session.sendKeys(program.id, OPENCODE);
    const allowed = await session.waitFor('[data-testid="field-allowed-commands"]', { timeoutMs: 5_000 });
    await session.sendKeys(allowed.id, "python3");
    const cannot = await session.waitFor('[data-testid="agent-cannot-ask"]', { timeoutMs: 5_000, what: "what opencode cannot ask" });
    assert.match(await session.getText(cannot.id), /^opencode cannot stop to ask you in a session Healer runs/);
    await session.executeScript("document.querySelector('[data-testid=agent-cannot-ask]').scrollIntoView({ block: 'center' });");
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
    const head = await session.getText(await session.findElement('[data-testid="session"] .session-head'));
    assert.ok(head.includes("opencode") && head.includes("version 1.18.33"), head);
    const commit = await session.waitFor('[data-testid="session-commit"]', { timeoutMs: 90_000, what: "the commit" });
    assert.match(await session.getText(commit.id), /Commit [0-9a-f]{7} on healer\/t1/);
    await session.waitFor('[data-testid="task-status"]', { timeoutMs: 15_000, predicate: (text) => text.includes("Closed"), what: "the task closed" });
    await shot("opencode-closed");
    assert.match(readFileSync(path.join(folder, "greet.py"), "utf8"), /Hello, /);
  });
});
