// The steering judge in the real window: the person sets the judge to look every minute; an
// agent waits on a task; a minute or two later the task's page shows the steering model's look
// ("told the agent what to change", with its message) and the task has Healer's comment. The
// judge's answer comes from the scripted server; the clock is the real one (so this story takes
// about two minutes).

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ScriptedApp } from "./lib/scriptedApp.mjs";
import { STEER_MESSAGE, WAITING_TASK } from "./lib/modelServer.mjs";

const STARTUP_ERROR = '[data-testid="startup-error"]';

describe("Steering in the real window", { timeout: 420_000 }, () => {
  const app = new ScriptedApp("steering");
  const folder = mkdtempSync(path.join(os.tmpdir(), "healer-e2e-steered-"));
  let session;

  before(
    async () => {
      writeFileSync(path.join(folder, "greet.py"), "def greet(name):\n    return 'Hi ' + name\n");
      session = await app.start(["cheap", "standard"]);
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

  test("the steering model's look is on the task's timeline, with what it told the agent", { timeout: 360_000 }, async () => {
    await session.waitFor('[data-testid="nav-settings"]', { timeoutMs: 30_000, failFast: STARTUP_ERROR });
    await session.executeScript("window.location.hash = '#/settings/models';");
    const interval = await session.waitFor('[data-testid="steering-interval"]', { timeoutMs: 15_000 });
    await session.executeScript("arguments[0].scrollIntoView();", [{ "element-6066-11e4-a52e-4f735466cecf": interval.id }]);
    await session.click(interval.id);
    await session.executeScript(
      "const i = arguments[0]; const set = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set; set.call(i, '1'); i.dispatchEvent(new Event('input', { bubbles: true }));",
      [{ "element-6066-11e4-a52e-4f735466cecf": interval.id }],
    );
    const save = await session.waitFor('[data-testid="save-steering"]', { timeoutMs: 5_000 });
    await session.click(save.id);
    await session.waitFor('[data-testid="steering"]', { timeoutMs: 10_000, predicate: (t) => t.includes("Saved"), what: "the interval saved" });

    const project = JSON.parse(await app.cli("project", "add", folder, "--name", "steered", "--git-init", "--no-checks", "--allow", "python3", "--json"));
    const projectId = project.project?.id ?? project.id;
    const task = JSON.parse(await app.cli("project", "task", "add", "steered", "--title", WAITING_TASK, "--acceptance", "greet says Hello, Ada!", "--json"));
    const taskId = task.task?.id ?? task.id;
    await app.cli("project", "run", "steered", "--task", taskId);

    await session.executeScript(`window.location.hash = ${JSON.stringify(`#/projects/${projectId}/tasks/${taskId}`)};`);
    const timeline = await session.waitFor('[data-testid="steering-timeline"]', {
      timeoutMs: 200_000,
      intervalMs: 2_000,
      // The agent sits in its waiting command: the message waits too, and the timeline says so.
      predicate: (t) => t.includes("Progress checked: a message for the agent is on its way") && t.includes("Waiting to reach the agent"),
      what: "the steering model's look on the timeline, its message waiting",
    });
    const words = await session.getText(timeline.id);
    assert.ok(words.includes(STEER_MESSAGE), words);
    assert.doesNotMatch(words, /judgement|"action"/);
    await session.executeScript("arguments[0].scrollIntoView();", [{ "element-6066-11e4-a52e-4f735466cecf": timeline.id }]);
    await new Promise((r) => setTimeout(r, 400));
    await app.shot("timeline-judgement");

    const list = readFileSync(path.join(folder, ".healer", "tasks.jsonl"), "utf8");
    assert.ok(list.includes("Healer's steering model told the agent"), list);

    // Let the agent go on: it reads the message before its next step.
    writeFileSync(path.join(app.dataDir, "worktrees", String(projectId), "slot-1", "go"), "");
    await session.waitFor('[data-testid="steering-timeline"]', {
      timeoutMs: 60_000,
      predicate: (t) =>
        t.includes("Told the agent") &&
        t.includes("Progress checked: told the agent what to change") &&
        t.includes("Delivered to the agent as the next message of its conversation"),
      what: "the delivery on the timeline, and the look saying it was delivered",
    });
    await app.shot("timeline-delivered");
  });
});
