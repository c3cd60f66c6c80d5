// Comments on the agent's lines in the real window: a task done and left on its branch; the
// person clicks a line of the new side of greet.py in the review, writes a comment, and sends it.
// The comment reaches the agent's next model request (a session that picks the task up again),
// the agent changes that line, and the comment shows as answered. Screenshots at 800×600 and
// 1920×1080, light and dark.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ARTIFACTS } from "./lib/harness.mjs";
import { COMMENT } from "./lib/modelServer.mjs";
import { ScriptedApp } from "./lib/scriptedApp.mjs";

const STARTUP_ERROR = '[data-testid="startup-error"]';
const CHECK = `test=python3 -c 'from greet import greet; assert greet("Ada") == "Hello, Ada!"'`;

function git(folder, ...args) {
  return execFileSync("git", ["-C", folder, "-c", "user.name=Ada", "-c", "user.email=ada@example.com", ...args], { encoding: "utf8" });
}

for (const theme of ["light", "dark"]) {
  describe(`Comments on the agent's lines in the real window, ${theme}`, { timeout: 300_000 }, () => {
    const app = new ScriptedApp(`comments-${theme}`);
    const folder = mkdtempSync(path.join(os.tmpdir(), "healer-e2e-comments-"));
    let session;
    let project;
    let taskId;

    const taskOf = async () => JSON.parse(await app.cli("project", "tasks", "greeter", "--json")).tasks.find((t) => t.task.id === taskId).task;

    before(
      async () => {
        writeFileSync(path.join(folder, "greet.py"), "def greet(name):\n    return 'Hi ' + name\n");
        writeFileSync(path.join(folder, ".gitignore"), "__pycache__/\n");
        git(folder, "init", "-q", "-b", "main");
        git(folder, "add", "-A");
        git(folder, "commit", "-q", "-m", "First");
        session = await app.start(["cheap", "standard"], { env: theme === "dark" ? { GTK_THEME: "Adwaita:dark" } : {} });
        project = JSON.parse(
          await app.cli("project", "add", folder, "--name", "greeter", "--verify", CHECK, "--leave-branch", "--allow", "python3", "--json"),
        );
        const added = JSON.parse(await app.cli("project", "task", "add", "greeter", "--title", "Greet properly", "--json"));
        taskId = added.task?.id ?? added.id;
        await session.until(
          async () => {
            try {
              await app.cli("project", "run", "greeter", "--task", taskId);
              return true;
            } catch {
              return false;
            }
          },
          { timeoutMs: 60_000, what: "the task started" },
        );
        await session.until(async () => (await taskOf()).status === "closed", { timeoutMs: 90_000, what: "the task done on its branch" });
      },
      { timeout: 240_000 },
    );

    after(
      async () => {
        await app.stop();
        rmSync(folder, { recursive: true, force: true });
      },
      { timeout: 60_000 },
    );

    async function shoot(name) {
      for (const [width, height] of [
        [800, 600],
        [1920, 1080],
      ]) {
        await session.cmd("POST", "/window/rect", { width, height });
        await new Promise((r) => setTimeout(r, 500));
        await session.settlePaint();
        await session.screenshot(path.join(ARTIFACTS, `comments-${theme}-${name}-${width}x${height}.png`));
      }
      await session.cmd("POST", "/window/rect", { width: 1180, height: 760 });
    }

    test("a comment on a line reaches the agent's next request, and shows as answered once it changed that line", { timeout: 180_000 }, async () => {
      await session.waitFor('[data-testid="nav-projects"]', { timeoutMs: 30_000, failFast: STARTUP_ERROR });
      await session.executeScript(`window.location.hash = ${JSON.stringify(`#/projects/${project.id}/tasks/${taskId}`)};`);
      await session.waitFor('[data-testid="review-file"][data-path="greet.py"] .cm-merge-b .cm-line', { timeoutMs: 30_000, what: "greet.py side by side" });
      const lines = await session.findElements('[data-testid="review-file"][data-path="greet.py"] .cm-merge-b .cm-line');
      await session.click(lines[1]);
      await session.click((await session.waitFor('[data-testid="comment-on-lines"]', { timeoutMs: 10_000, what: "the comment button" })).id);
      const box = await session.waitFor('[data-testid="comment-text"]', { timeoutMs: 10_000, what: "the comment box" });
      await session.sendKeys(box.id, COMMENT);
      await session.click(await session.findElement('[data-testid="save-comment"]'));
      const kept = await session.waitFor('[data-testid="review-comment"][data-state="waiting"]', { timeoutMs: 15_000, what: "the comment kept" });
      const keptText = await session.getText(kept.id);
      assert.match(keptText, /line 2/);
      assert.match(keptText, /Waiting to be sent/);
      assert.match(keptText, new RegExp(COMMENT.replace(".", "\\.")));
      const bar = await session.findElement('[data-testid="comments-send"]');
      assert.match(await session.getText(bar), /1 comment waiting to be sent\./);
      await shoot("waiting");

      await session.click(await session.findElement('[data-testid="send-comments"]'));
      const toast = await session.waitFor('[data-testid="toast"]', { timeoutMs: 30_000, what: "what sending came to" });
      assert.match(await session.getText(toast.id), /Sent 1 comment to the agent/);
      // The agent's next request carries it, with the line as it read.
      await session.until(
        () =>
          app.model.seen.some((r) => {
            const text = JSON.stringify(r.body?.messages ?? []);
            return text.includes(COMMENT) && text.includes("greet.py, line 2") && text.includes("return 'Hello, ' + name + '!'");
          }),
        { timeoutMs: 60_000, what: "the comment in the agent's request" },
      );
      await session.until(async () => (await taskOf()).status === "closed", { timeoutMs: 90_000, what: "the agent's answer done" });
      assert.match(git(folder, "show", `healer/${taskId}:greet.py`), /f'Hello, \{name\}!'/);
      await session.executeScript("window.location.reload();");
      // The page settles after the reload (the review and its comments load): read the text as
      // it is found, and look again until it says so.
      const answered = await session.waitFor('[data-testid="review-comment"][data-state="answered"]', {
        timeoutMs: 30_000,
        what: "the comment answered",
        predicate: (text) => /Answered/.test(text),
      });
      const said = answered.text;
      assert.match(said, /Answered: the agent changed these lines/);
      assert.doesNotMatch(said, /addressed|session|sent_at/);
      await shoot("answered");
    });
  });
}
