// The healer service in the real window: a person sets a project's Healer settings to go
// ahead without asking, runs a task whose change does not pass the project's check, sees
// Healer's card appear on the task's page as it works (the agent's work put aside, the task
// paused with a follow-up), and brings the agent's work back with the card's button.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ScriptedApp } from "./lib/scriptedApp.mjs";

const STARTUP_ERROR = '[data-testid="startup-error"]';

/** A greeter whose check wants more than the scripted agent writes: verification fails. */
function strictGreeter() {
  const dir = mkdtempSync(path.join(os.tmpdir(), "healer-e2e-strict-"));
  writeFileSync(path.join(dir, "greet.py"), "def greet(name):\n    return 'Hi ' + name\n");
  return dir;
}

const CHECK = "python3 -c \"from greet import greet; assert greet('Ada') == 'Hello there, Ada!', greet('Ada')\"";

async function go(session, hash) {
  await session.executeScript("window.location.hash = arguments[0];", [hash]);
}

describe("The healer service in the real window", { timeout: 300_000 }, () => {
  const app = new ScriptedApp("healer-service");
  let session;
  let folder;
  let asked;
  const shot = (name) => app.shot(name);

  before(
    async () => {
      folder = strictGreeter();
      session = await app.start(["cheap", "standard"]);
      await app.cli("project", "add", folder, "--name", "strict", "--verify", `test=${CHECK}`, "--git-init", "--allow", "python3");
      await app.cli("project", "task", "add", "strict", "--title", "Greet properly", "--description", "greet('Ada') must say Hello there, Ada!");
      // A second project at the shipped defaults (Healer asks before it undoes anything).
      asked = strictGreeter();
      await app.cli("project", "add", asked, "--name", "asked", "--verify", `test=${CHECK}`, "--git-init", "--allow", "python3");
      await app.cli("project", "task", "add", "asked", "--title", "Greet properly", "--description", "greet('Ada') must say Hello there, Ada!");
    },
    { timeout: 150_000 },
  );

  after(
    async () => {
      await app.stop();
      if (folder) rmSync(folder, { recursive: true, force: true });
      if (asked) rmSync(asked, { recursive: true, force: true });
    },
    { timeout: 60_000 },
  );

  test("asked first (the default): the question names the task and the project, and the card waits with a link to it", { timeout: 150_000 }, async () => {
    await session.waitFor('[data-testid="nav-projects"]', { timeoutMs: 30_000, failFast: STARTUP_ERROR });
    await go(session, "#/projects/2/tasks/t1");
    const run = await session.waitFor('[data-testid="run-task"]:not([disabled])', { timeoutMs: 15_000, what: "Run this task" });
    await session.click(run.id);
    await session.waitFor('[data-testid="checkpoint-dialog"][data-ready="true"]', {
      timeoutMs: 90_000,
      predicate: (text) => text.includes("Healer wants to undo"),
      what: "Healer's question",
    });
    // Its heading names what it is about: the task and the project, not "Healer itself".
    await session.waitFor('[data-testid="checkpoint-dialog"] .checkpoint-about', {
      timeoutMs: 5_000,
      predicate: (text) => text.includes("The task “Greet properly” of the project “asked”") && !text.includes("About Healer itself"),
      what: "the question's heading naming the task and the project",
    });
    await shot("question");
    const later = await session.waitFor('[data-testid="checkpoint-later"]', { timeoutMs: 5_000 });
    await session.click(later.id);
    const card = await session.waitFor('[data-testid="healer-card"][data-status="waiting"]', {
      timeoutMs: 30_000,
      predicate: (text) => text.includes("Waiting for your answer") && text.includes("nothing has been undone yet"),
      what: "the card that waits for the answer",
    });
    const said = await session.getText(card.id);
    assert.ok(!said.includes("Bring the work back"), said);
    await session.waitFor('[data-testid="healer-question-link"]', { timeoutMs: 5_000, what: "the link to the question" });
    const banner = await session.waitFor('[data-testid="postponed-banner"]', {
      timeoutMs: 5_000,
      predicate: (text) => text.includes("No agent works on this task until you decide"),
      what: "the banner saying what waits",
    });
    assert.ok(banner);
    await session.executeScript("document.querySelector('[data-testid=healer-card]').scrollIntoView({ block: 'center' });");
    await session.settlePaint();
    await shot("waiting-card");
    // Pause: nothing is undone, Healer stops there.
    const now = await session.waitFor('[data-testid="decide-now"]', { timeoutMs: 5_000 });
    await session.click(now.id);
    await session.waitFor('[data-testid="checkpoint-dialog"][data-ready="true"]', { timeoutMs: 10_000, what: "the question again" });
    await session.executeScript("document.querySelectorAll('[data-testid=checkpoint-option]')[2].click();");
    await session.waitFor('[data-testid="healer-card"][data-status="contained"]', { timeoutMs: 30_000, what: "the card after Pause" });

    // The notifications about it are grouped under the project, and one opens the task.
    await go(session, "#/notifications");
    await session.waitFor('[data-testid="notification-group"]', {
      timeoutMs: 15_000,
      predicate: (text) => text.includes("Project “asked”") && text.includes("Healer asks you about “Greet properly” in “asked”"),
      what: "the project's notifications, grouped under it",
    });
    await shot("project-notifications");
    await session.executeScript(
      "[...document.querySelectorAll('[data-testid=notification-group]')].find((g) => g.textContent.includes('Project “asked”')).querySelector('[data-testid=notification-action-open_task]').click();",
    );
    await session.waitFor('[data-testid="task-page"]', {
      timeoutMs: 15_000,
      predicate: (text) => text.includes("Greet properly"),
      what: "the task the notification is about",
    });
    const hash = await session.executeScript("return window.location.hash;");
    assert.equal(hash, "#/projects/2/tasks/t1");
  });

  test("the person lets Healer go ahead without asking, in the project's settings", { timeout: 60_000 }, async () => {
    await session.waitFor('[data-testid="nav-projects"]', { timeoutMs: 30_000, failFast: STARTUP_ERROR });
    await go(session, "#/projects/1/settings");
    const form = await session.waitFor('[data-testid="healer-settings"]', {
      timeoutMs: 15_000,
      predicate: (text) => text.includes("When a task fails") && text.includes("Ask me first"),
      what: "Healer's settings",
    });
    assert.ok(form);
    const aggressive = await session.waitFor('[data-testid="healer-mode-aggressive"]', { timeoutMs: 5_000 });
    await session.click(aggressive.id);
    await shot("settings");
    // One Save for the whole page: Healer's settings are part of the project's form.
    const saves = await session.executeScript(
      "return [...document.querySelectorAll('button')].filter((b) => /save/i.test(b.textContent)).length;",
    );
    assert.equal(saves, 1, "one Save button on the settings page");
    await session.executeScript("document.querySelector('[data-testid=save-project]').scrollIntoView({ block: 'center' });");
    await shot("settings-save");
    const save = await session.waitFor('[data-testid="save-project"]', { timeoutMs: 5_000 });
    await session.click(save.id);
    await session.waitFor('[data-testid="page-project"]', { timeoutMs: 15_000, what: "the project's page after saving" });
    // Saved: the settings page shows the choice again.
    await go(session, "#/projects/1/settings");
    await session.waitFor('[data-testid="healer-mode-aggressive"].checked', { timeoutMs: 10_000, what: "the saved choice" });
  });

  test("a red check: Healer's card appears live, and the person brings the agent's work back", { timeout: 150_000 }, async () => {
    await go(session, "#/projects/1/tasks/t1");
    const run = await session.waitFor('[data-testid="run-task"]:not([disabled])', { timeoutMs: 15_000, what: "Run this task" });
    await session.click(run.id);
    const card = await session.waitFor('[data-testid="healer-card"][data-status="contained"]', {
      timeoutMs: 90_000,
      predicate: (text) =>
        text.includes("The agent's change did not pass the checks") &&
        text.includes("Put the files back as they were at the last save point") &&
        text.includes("Paused the task and wrote a follow-up task"),
      what: "Healer's card, done",
    });
    const text = await session.getText(card.id);
    assert.ok(!text.includes("rewind_uncommitted_changes"), text);
    assert.ok(!text.includes("refs/healer"), text);
    await session.waitFor('[data-testid="followup-link"]', { timeoutMs: 5_000, what: "the follow-up task's link" });
    await session.executeScript("document.querySelector('[data-testid=healer-card]').scrollIntoView({ block: 'center' });");
    await session.settlePaint();
    await shot("card");

    const worktree = path.join(app.dataDir, "worktrees", "1", "slot-1");
    assert.ok(existsSync(path.join(worktree, "greet.py")), "the task's worktree");
    assert.match(readFileSync(path.join(worktree, "greet.py"), "utf8"), /'Hi '/, "rewound to the last commit");
    const restore = await session.waitFor('[data-testid="restore-snapshot"]', { timeoutMs: 5_000 });
    await session.click(restore.id);
    await session.waitFor('[data-testid="restore-done"]', { timeoutMs: 30_000, what: "the work brought back" });
    assert.match(readFileSync(path.join(worktree, "greet.py"), "utf8"), /'Hello, '/, "the agent's change is back");
    await session.executeScript("document.querySelector('[data-testid=healer-card]').scrollIntoView({ block: 'center' });");
    await session.settlePaint();
    await shot("restored");
  });
});
