// Projects in the real window: a person adds a folder as a project (the folder dialog is
// bypassed by the test hook; the folder is not a repository yet, so they let Healer make it
// one), sees what Healer detected, adds a task, runs it with the built-in agent against the
// scripted model server, watches the session stream, and sees the task closed with its commit.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ScriptedApp } from "./lib/scriptedApp.mjs";
import { AGENT_SUMMARY, WAITING_TASK } from "./lib/modelServer.mjs";

const STARTUP_ERROR = '[data-testid="startup-error"]';
const CTRL = "\uE009";
const element = (id) => ({ "element-6066-11e4-a52e-4f735466cecf": id });
const PERSON_MESSAGE = "Please keep the greeting short, Ada likes it brief.";

/** Press Ctrl and `key` together, as a person does. */
async function chord(session, key) {
  await session.cmd("POST", "/actions", {
    actions: [
      {
        type: "key",
        id: "keyboard",
        actions: [
          { type: "keyDown", value: CTRL },
          { type: "keyDown", value: key },
          { type: "keyUp", value: key },
          { type: "keyUp", value: CTRL },
        ],
      },
    ],
  });
}

/** Both sides of a side-by-side view inside `css` have drawn. */
async function sideBySide(session, css, what) {
  await session.until(async () => (await session.findElements(`${css} .cm-editor`)).length === 2, { timeoutMs: 15_000, what });
}

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
    // The agent asks before anything risky by default; the person lets it run python3 freely.
    const preset = await session.waitFor('[data-testid="preset-ask_risky"]', { timeoutMs: 5_000 });
    assert.equal(await session.executeScript("return arguments[0].checked;", [{ "element-6066-11e4-a52e-4f735466cecf": preset.id }]), true);
    const allowed = await session.waitFor('[data-testid="field-allowed-commands"]', { timeoutMs: 5_000 });
    await session.sendKeys(allowed.id, "python3");
    await shot("add-form");
    const save = await session.waitFor('[data-testid="save-project"]:not([disabled])', { timeoutMs: 15_000, what: "the form checked by the engine" });
    await session.click(save.id);
    await session.waitFor('[data-testid="page-project"]', { timeoutMs: 15_000, what: "the project's board" });
  });

  test("a task is added to the board", { timeout: 60_000 }, async () => {
    const add = await session.waitFor('[data-testid="add-task"]', { timeoutMs: 10_000 });
    await session.click(add.id);
    // Greyed out with its reason beside it, until the task has a title.
    await session.waitFor('[data-testid="task-save"][disabled]', { timeoutMs: 5_000, what: "Add greyed out" });
    const why = await session.waitFor('[data-testid="task-save-why"]', { timeoutMs: 5_000, what: "why Add is greyed out" });
    assert.equal(await session.getText(why.id), "Give the task a title to add it.");
    await shot("add-task-why");
    const title = await session.waitFor('[data-testid="task-title"]', { timeoutMs: 5_000 });
    await session.sendKeys(title.id, "Greet properly");
    assert.equal((await session.findElements('[data-testid="task-save-why"]')).length, 0);
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

  test("the task's commit and a past session's change show file by file, side by side", { timeout: 60_000 }, async () => {
    await clickFresh(session, '[data-testid="column-closed"] [data-testid="task-card"][data-title="Greet properly"] a', "the closed task");
    await session.waitFor('[data-testid="change-review"][data-of="commit"]', {
      timeoutMs: 15_000,
      predicate: (text) => text.includes("greet.py") && text.includes("In commit"),
      what: "the task's commit, file by file",
    });
    await sideBySide(session, '[data-testid="change-review"] [data-testid="review-file"][data-path="greet.py"]', "greet.py side by side");
    const right = await session.executeScript(
      "return [...document.querySelectorAll('[data-testid=review-file][data-path=\"greet.py\"] .cm-content')].map((c) => c.textContent);",
    );
    assert.ok(right[0].includes("'Hi ' + name") && right[1].includes("'Hello, ' + name + '!'"), JSON.stringify(right));
    await shot("task-change");

    // The Sessions page's history opens the session, with what it changed.
    await session.click((await session.waitFor('[data-testid="nav-sessions"]')).id);
    await clickFresh(session, '[data-testid="past-session"] a', "the past session");
    await session.waitFor('[data-testid="session"] [data-testid="change-review"]', {
      timeoutMs: 15_000,
      predicate: (text) => text.includes("What this session changed") && text.includes("greet.py"),
      what: "the session's own change",
    });
    await sideBySide(session, '[data-testid="session"] [data-testid="review-file"][data-path="greet.py"]', "the session's change side by side");
    await shot("past-session");
  });

  test("Ctrl+K finds a task and opens it", { timeout: 30_000 }, async () => {
    await session.click((await session.waitFor('[data-testid="nav-workflows"]')).id);
    await chord(session, "k");
    const input = await session.waitFor('[data-testid="quick-jump-input"]', { timeoutMs: 5_000, what: "the quick jump" });
    await session.sendKeys(input.id, "Greet prop");
    await clickFresh(session, '[data-testid="quick-jump-item"]', "the task in the quick jump");
    await session.waitFor('[data-testid="task-page"]', { timeoutMs: 10_000, predicate: (t) => t.includes("Greet properly"), what: "the task's page" });
  });

  test("leaving a new task asks first; a task dragged to Blocked is blocked in tasks.jsonl", { timeout: 60_000 }, async () => {
    await session.click(await session.findElement(".back-link"));
    await clickFresh(session, '[data-testid="add-task"]', "Add a task");
    const title = await session.waitFor('[data-testid="task-title"]', { timeoutMs: 5_000 });
    await session.sendKeys(title.id, "Say goodbye");
    await session.click((await session.waitFor('[data-testid="nav-workflows"]')).id);
    const stay = await session.waitFor('[data-testid="leave-stay"]', { timeoutMs: 5_000, what: "the question before leaving" });
    await shot("leave-asks");
    await session.click(stay.id);
    assert.equal(await session.getAttribute((await session.waitFor('[data-testid="task-title"]')).id, "value"), "Say goodbye");
    await session.click((await session.waitFor('[data-testid="task-save"]:not([disabled])')).id);
    const card = await session.waitFor('[data-testid="column-open"] [data-testid="task-card"][data-title="Say goodbye"]', { timeoutMs: 15_000 });

    // A person's drag, as the webview delivers it: dragstart on the card, dragover and drop on the column.
    const blocked = await session.waitFor('[data-testid="column-blocked"]');
    await session.executeScript(
      `const [card, column] = arguments;
       const data = new DataTransfer();
       card.dispatchEvent(new DragEvent("dragstart", { bubbles: true, cancelable: true, dataTransfer: data }));
       column.dispatchEvent(new DragEvent("dragover", { bubbles: true, cancelable: true, dataTransfer: data }));
       column.dispatchEvent(new DragEvent("drop", { bubbles: true, cancelable: true, dataTransfer: data }));
       card.dispatchEvent(new DragEvent("dragend", { bubbles: true, dataTransfer: data }));`,
      [element(card.id), element(blocked.id)],
    );
    await session.waitFor('[data-testid="column-blocked"] [data-testid="task-card"][data-title="Say goodbye"]', { timeoutMs: 15_000, what: "the card in Blocked" });
    const lines = readFileSync(path.join(folder, ".healer", "tasks.jsonl"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    assert.equal(lines.find((t) => t.title === "Say goodbye")?.status, "blocked", JSON.stringify(lines));
    await shot("dragged");
  });

  test("a message typed to the working agent reaches its next model request and shows as delivered", { timeout: 90_000 }, async () => {
    const projects = JSON.parse(await app.cli("project", "list", "--json"));
    const project = projects[0].project ?? projects[0];
    const added = JSON.parse(await app.cli("project", "task", "add", project.name, "--title", WAITING_TASK, "--json"));
    const taskId = added.task?.id ?? added.id;
    await app.cli("project", "run", project.name, "--task", taskId);
    await session.executeScript(`window.location.hash = ${JSON.stringify(`#/projects/${project.id}/tasks/${taskId}`)};`);
    await session.waitFor('[data-testid="session"][data-status="running"] [data-testid="session-steps"]', {
      timeoutMs: 30_000,
      predicate: (t) => t.includes("wait for the file"),
      what: "the agent waiting in its command",
    });
    const box = await session.waitFor('[data-testid="say-text"]', { timeoutMs: 5_000 });
    await session.sendKeys(box.id, PERSON_MESSAGE);
    await session.click((await session.waitFor('[data-testid="say-send"]:not([disabled])')).id);
    await session.waitFor('[data-testid="steering-timeline"]', {
      timeoutMs: 15_000,
      predicate: (t) => t.includes(PERSON_MESSAGE) && t.includes("Waiting to reach the agent"),
      what: "the message waiting on the timeline",
    });
    const before = app.model.seen.length;
    // Let the agent go on: its next request carries the message.
    const slots = path.join(app.dataDir, "worktrees", String(project.id));
    for (const slot of readdirSync(slots)) writeFileSync(path.join(slots, slot, "go"), "");
    await session.waitFor('[data-testid="steering-timeline"]', {
      timeoutMs: 30_000,
      predicate: (t) => t.includes("Delivered to the agent"),
      what: "the message delivered",
    });
    const carried = app.model.seen
      .slice(before)
      .some((r) => (r.body.messages ?? []).some((m) => m.role === "user" && String(m.content).includes(PERSON_MESSAGE)));
    assert.ok(carried, "the scripted server saw the person's message in the agent's next request");
    await shot("message-delivered");
  });
});
