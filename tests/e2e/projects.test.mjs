// Projects in the real window: a person adds a folder as a project (the folder dialog is
// bypassed by the test hook; the folder is not a repository yet, so they let Healer make it
// one), sees what Healer detected, adds a task, runs it with the built-in agent against the
// scripted model server, watches the session stream, and sees the task closed with its commit.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ScriptedApp } from "./lib/scriptedApp.mjs";
import { AGENT_SUMMARY } from "./lib/modelServer.mjs";

const STARTUP_ERROR = '[data-testid="startup-error"]';

/** A small Node-flavoured project whose test wants greet('Ada') to say "Hello, Ada!". */
function greeterFolder() {
  const dir = mkdtempSync(path.join(os.tmpdir(), "healer-e2e-greeter-"));
  writeFileSync(path.join(dir, "greet.py"), "def greet(name):\n    return 'Hi ' + name\n");
  const test = "python3 -c \"from greet import greet; assert greet('Ada') == 'Hello, Ada!', greet('Ada')\"";
  writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "greeter", scripts: { test } }, null, 2));
  mkdirSync(path.join(dir, "docs"));
  writeFileSync(path.join(dir, "docs", "README.md"), "# Greeter\n");
  return dir;
}

/**
 * Click what `css` finds once it is there; found again and retried when the board re-rendered
 * between finding and clicking (a task-list event refreshes it).
 */
async function clickFresh(session, css, what) {
  for (let attempt = 1; ; attempt++) {
    const element = await session.waitFor(css, { timeoutMs: 15_000, what });
    try {
      await session.click(element.id);
      return;
    } catch (e) {
      if (attempt >= 3) throw e;
      await new Promise((r) => setTimeout(r, 300));
    }
  }
}

describe("Projects in the real window", { timeout: 300_000 }, () => {
  const app = new ScriptedApp("projects");
  let session;
  let folder;
  const shot = (name) => app.shot(name);

  before(
    async () => {
      folder = greeterFolder();
      session = await app.start(["cheap", "standard"]);
    },
    { timeout: 150_000 },
  );

  after(
    async () => {
      await app.stop();
      if (folder) rmSync(folder, { recursive: true, force: true });
    },
    { timeout: 60_000 },
  );

  test("a folder becomes a repository and a project, with the checks Healer detected", { timeout: 90_000 }, async () => {
    const nav = await session.waitFor('[data-testid="nav-projects"]', { timeoutMs: 30_000, failFast: STARTUP_ERROR });
    await session.click(nav.id);
    const add = await session.waitFor('[data-testid="new-project"]', { timeoutMs: 10_000 });
    await session.click(add.id);
    // The native folder dialog cannot be driven over WebDriver: the hook answers for it.
    await session.executeScript("window.__HEALER_E2E__ = { pickFolder: arguments[0] };", [folder]);
    const pick = await session.waitFor('[data-testid="pick-folder"]', { timeoutMs: 10_000 });
    await session.click(pick.id);
    await session.waitFor('[data-testid="folder-state"][data-state="not_a_repository"]', {
      timeoutMs: 15_000,
      predicate: (text) => text.includes("is not a git repository"),
      what: "the offer to make the folder a repository",
    });
    await shot("not-a-repo");
    const init = await session.waitFor('[data-testid="init-repo"]', { timeoutMs: 5_000 });
    await session.click(init.id);
    await session.waitFor('[data-testid="folder-state"][data-state="ready"]', { timeoutMs: 15_000, what: "the repository" });
    const command = await session.waitFor('[data-testid="verify-command-0"]', { timeoutMs: 15_000, what: "the detected check" });
    assert.equal(await session.getAttribute(command.id, "value"), "npm run test");
    const name = await session.waitFor('[data-testid="field-name"]', { timeoutMs: 5_000 });
    assert.match(await session.getAttribute(name.id, "value"), /^healer-e2e-greeter-/);
    await shot("add-form");
    const save = await session.waitFor('[data-testid="save-project"]:not([disabled])', { timeoutMs: 15_000, what: "the form checked by the engine" });
    await session.click(save.id);
    await session.waitFor('[data-testid="page-project"]', { timeoutMs: 15_000, what: "the project's board" });
  });

  test("a task is added to the board", { timeout: 60_000 }, async () => {
    const add = await session.waitFor('[data-testid="add-task"]', { timeoutMs: 10_000 });
    await session.click(add.id);
    const title = await session.waitFor('[data-testid="task-title"]', { timeoutMs: 5_000 });
    await session.sendKeys(title.id, "Greet properly");
    const description = await session.waitFor('[data-testid="task-description"]', { timeoutMs: 5_000 });
    await session.sendKeys(description.id, "greet('Ada') must say Hello, Ada!");
    const save = await session.waitFor('[data-testid="task-save"]:not([disabled])', { timeoutMs: 5_000 });
    await session.click(save.id);
    await session.waitFor('[data-testid="column-open"] [data-testid="task-card"][data-title="Greet properly"]', {
      timeoutMs: 15_000,
      predicate: (text) => text.includes("Runs next"),
      what: "the task in the Open column, next to run",
    });
    const tasks = readFileSync(path.join(folder, ".healer", "tasks.jsonl"), "utf8");
    assert.match(tasks, /"title":"Greet properly"/);
    await shot("board");
  });

  test("the built-in agent's session streams, and the task closes with its commit", { timeout: 120_000 }, async () => {
    await clickFresh(session, '[data-testid="run-next"]:not([disabled])', "the Run next task button");
    await session.waitFor('[data-testid="task-page"]', { timeoutMs: 15_000, what: "the task's page" });
    // The steps arrive while the agent works (the scripted model pauses before each answer).
    await session.waitFor('[data-testid="session"][data-status="running"] [data-testid="session-steps"]', {
      timeoutMs: 20_000,
      predicate: (text) => text.includes("Read greet.py") && !text.includes("Said the task is done"),
      what: "the session streaming its first steps",
    });
    await shot("streaming");
    await session.waitFor('[data-testid="session-steps"]', {
      timeoutMs: 30_000,
      predicate: (text) => text.includes("Edited greet.py") && text.includes("Ran a command") && text.includes("Hello, Ada!"),
      what: "the edit and the command the agent ran",
    });
    const commit = await session.waitFor('[data-testid="session-commit"]', { timeoutMs: 60_000, what: "the commit" });
    const said = await session.getText(commit.id);
    assert.match(said, /Commit [0-9a-f]{7} on healer\/t1, added to the main branch/);
    await session.waitFor('[data-testid="task-status"]', { timeoutMs: 15_000, predicate: (text) => text.includes("Closed"), what: "the task closed" });
    const closed = await session.waitFor('[data-testid="task-closed"]', { timeoutMs: 10_000 });
    assert.ok((await session.getText(closed.id)).includes(said.match(/[0-9a-f]{7}/)[0]));
    const end = await session.getText(await session.findElement('[data-testid="session-end"]'));
    assert.ok(end.includes("Done: commit"), end);
    await shot("closed");
    assert.match(readFileSync(path.join(folder, "greet.py"), "utf8"), /Hello, /);

    // The board shows it closed, and the progress log says what was done.
    await session.click(await session.findElement(".back-link"));
    await session.waitFor('[data-testid="column-closed"] [data-testid="task-card"][data-title="Greet properly"]', { timeoutMs: 15_000 });
    await session.waitFor('[data-testid="progress-log"]', {
      timeoutMs: 10_000,
      predicate: (text) => text.includes("Greet properly") && text.includes(AGENT_SUMMARY.slice(0, 20)),
      what: "the progress log",
    });
    await shot("board-closed");
  });
});
