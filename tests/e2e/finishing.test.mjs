// Finishing an agent's work in the real window: two tasks left on their branches; the person
// commits on main meanwhile; the first is accepted from its page (main's change brought in, the
// checks run again, the work in main), then the person changes the very line the second task
// changed, and accepting it opens the conflict dialog that names the file — left on its branch,
// nothing written into the person's checkout. Screenshots at 800×600 and 1920×1080, light and dark.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startForge } from "./lib/forgeServer.mjs";
import { ARTIFACTS } from "./lib/harness.mjs";
import { ScriptedApp } from "./lib/scriptedApp.mjs";

const STARTUP_ERROR = '[data-testid="startup-error"]';
const CHECK = `test=python3 -c 'from greet import greet; assert greet("Ada") == "Hello, Ada!"'`;

function git(folder, ...args) {
  return execFileSync("git", ["-C", folder, "-c", "user.name=Ada", "-c", "user.email=ada@example.com", ...args], { encoding: "utf8" });
}

for (const theme of ["light", "dark"]) {
  describe(`Finishing an agent's work in the real window, ${theme}`, { timeout: 300_000 }, () => {
    const app = new ScriptedApp(`finishing-${theme}`);
    const folder = mkdtempSync(path.join(os.tmpdir(), "healer-e2e-finishing-"));
    let session;
    let project;
    const tasks = [];

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
        for (const title of ["Greet properly", "Greet properly, again"]) {
          const added = JSON.parse(await app.cli("project", "task", "add", "greeter", "--title", title, "--json"));
          const id = added.task?.id ?? added.id;
          tasks.push(id);
          await session.until(
            async () => {
              try {
                await app.cli("project", "run", "greeter", "--task", id);
                return true;
              } catch {
                return false;
              }
            },
            { timeoutMs: 60_000, what: `task ${id} started` },
          );
          await session.until(
            async () => JSON.parse(await app.cli("project", "tasks", "greeter", "--json")).tasks.some((t) => t.task.id === id && t.task.status === "closed"),
            { timeoutMs: 90_000, what: `task ${id} done on its branch` },
          );
        }
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
        await session.screenshot(path.join(ARTIFACTS, `finishing-${theme}-${name}-${width}x${height}.png`));
      }
      await session.cmd("POST", "/window/rect", { width: 1180, height: 760 });
    }

    async function openTask(id) {
      await session.executeScript(`window.location.hash = ${JSON.stringify(`#/projects/${project.id}/tasks/${id}`)};`);
      return session.waitFor('[data-testid="finish-work"]', { timeoutMs: 30_000, what: "the work waiting on its branch" });
    }

    test("accepted from its page when main moved: main's change brought in, checked again, the work in main", { timeout: 120_000 }, async () => {
      await session.waitFor('[data-testid="nav-projects"]', { timeoutMs: 30_000, failFast: STARTUP_ERROR });
      writeFileSync(path.join(folder, "NOTES.md"), "A note of the person's.\n");
      git(folder, "add", "NOTES.md");
      git(folder, "commit", "-q", "-m", "A note");

      const card = await openTask(tasks[0]);
      const text = await session.getText(card.id);
      assert.match(text, /The work is ready to go into main/);
      assert.match(text, /main has changed since the agent started: accepting brings those changes in first and runs the checks again/);
      assert.doesNotMatch(text, /healer\/|fast_forward|rebase/);
      assert.doesNotMatch(await session.getText(await session.findElement('[data-testid="task-closed"]')), /healer\//);
      await shoot("waiting");

      await session.click(await session.findElement('[data-testid="accept-work"]'));
      // Whatever it came to is said: a toast when accepted, a note or the check's output otherwise.
      const outcome = await session
        .waitFor('[data-testid="toast"], [data-testid="accept-left"], [data-testid="accept-checks-failed"], .inline-error', {
          timeoutMs: 60_000,
          what: "what accepting came to",
        })
        .catch(async (e) => {
          await session.screenshot(path.join(ARTIFACTS, `finishing-${theme}-accept-failed.png`));
          throw e;
        });
      const came = await session.getText(outcome.id);
      assert.match(came, /main had moved on, so its changes were brought into the work first; the checks passed again, and the work is in main now \(its commits added as they are\)\./, came);
      await session.until(async () => (await session.findElements('[data-testid="finish-work"]')).length === 0, { timeoutMs: 15_000, what: "the card gone" });
      assert.match(git(folder, "show", "main:greet.py"), /Hello, /);
      assert.match(git(folder, "show", "main:NOTES.md"), /A note/);
      assert.match(readFileSync(path.join(folder, "greet.py"), "utf8"), /Hello, /, "the person's checkout follows");
      await shoot("accepted");
    });

    test("a conflict opens a dialog that names the file; left on its branch, nothing is written", { timeout: 120_000 }, async () => {
      writeFileSync(path.join(folder, "greet.py"), "def greet(name):\n    return 'Howdy, ' + name + '!'\n");
      git(folder, "commit", "-q", "-am", "Howdy");
      const before = git(folder, "rev-parse", "main").trim();

      await openTask(tasks[1]);
      await session.click(await session.findElement('[data-testid="accept-work"]'));
      // Read once it shows its words (it opens before its text is laid out).
      const dialog = await session.waitFor(".dialog", {
        timeoutMs: 60_000,
        what: "the conflict dialog",
        predicate: (text) => /changed the same lines/.test(text),
      });
      const said = dialog.text;
      assert.match(said, /The work and main changed the same lines/);
      assert.match(said, /greet\.py/);
      assert.match(said, /Ask the agent to resolve it/);
      assert.match(said, /Leave it on its branch/);
      assert.doesNotMatch(said, /<<<<<<<|healer\//);
      await shoot("conflict");

      await session.click(await session.findElement('[data-testid="leave-on-branch"]'));
      await session.until(async () => (await session.findElements(".dialog")).length === 0, { timeoutMs: 10_000, what: "the dialog closed" });
      assert.equal(git(folder, "rev-parse", "main").trim(), before, "main did not move");
      const mine = readFileSync(path.join(folder, "greet.py"), "utf8");
      assert.doesNotMatch(mine, /<<<<<<<|>>>>>>>/);
      assert.match(mine, /Howdy/);
      assert.ok(await session.findElement('[data-testid="finish-work"]'), "the work still waits on its branch");
    });

    test("pushed and opened as a pull request from the card: the host's API address and token asked right there, then its link", { timeout: 120_000 }, async () => {
      const served = mkdtempSync(path.join(os.tmpdir(), "healer-e2e-forge-"));
      const bare = path.join(served, "ada", "greeter.git");
      mkdirSync(bare, { recursive: true });
      execFileSync("git", ["init", "-q", "--bare", bare]);
      const forge = await startForge(served);
      try {
        git(folder, "remote", "add", "origin", `${forge.url}/ada/greeter.git`);
        await openTask(tasks[1]);
        await session.click(await session.findElement('[data-testid="open-pull-request"]'));
        const api = await session.waitFor('[data-testid="host-api-url"]', { timeoutMs: 30_000, what: "the API address asked for" });
        const asked = await session.getText(await session.findElement('[data-testid="pull-request"]'));
        assert.match(asked, /cannot tell from the repository's address whether its host runs GitHub, GitLab or Forgejo/);
        await session.sendKeys(api.id, forge.api);
        await session.click(await session.findElement('.finish-token button[type="submit"]'));
        const token = await session.waitFor('[data-testid="host-token"]', { timeoutMs: 30_000, what: "the token asked for" });
        // No keyring here: where to keep the token is asked right there, in the same card.
        const keep = await session.waitFor('[data-testid="secrets-file-accept"]', { timeoutMs: 10_000, what: "where to keep the token" });
        await shoot("pull-request-token");
        await session.click(keep.id);
        await session.until(async () => (await session.findElements('[data-testid="secrets-file-accept"]')).length === 0, {
          timeoutMs: 10_000,
          what: "the secrets file chosen",
        });
        await session.sendKeys(token.id, "ghp_e2eNotARealToken0123456789");
        await session.click(await session.findElement('.finish-token button[type="submit"]'));
        const link = await session
          .waitFor('[data-testid="pull-request-url"]', { timeoutMs: 60_000, what: "the pull request's link" })
          .catch(async (e) => {
            await session.screenshot(path.join(ARTIFACTS, `finishing-${theme}-pull-request-failed.png`));
            throw new Error(`${e.message}; the card said: ${await session.getText(await session.findElement('[data-testid="pull-request"]'))}`);
          });
        assert.match(link.text ?? (await session.getText(link.id)), /Pull request 7 on GitHub \(open\)|github\.example\/ada\/greeter\/pull\/7/);
        const card = await session.getText(await session.findElement('[data-testid="pull-request"]'));
        assert.match(card, /github\.example\/ada\/greeter\/pull\/7/);
        assert.match(card, /Its checks|Healer looks at its checks every minute/);
        assert.doesNotMatch(card, /ghp_|Bearer|api\/v3/);
        // The branch is on the host, and the pull request was asked for with the token.
        assert.match(execFileSync("git", ["--git-dir", bare, "branch", "--list", `healer/${tasks[1]}`], { encoding: "utf8" }), new RegExp(`healer/${tasks[1]}`));
        const created = forge.seen.find((r) => r.method === "POST" && r.path === "/api/v3/repos/ada/greeter/pulls");
        assert.ok(created, "a create call");
        assert.equal(created.authorization, "Bearer ghp_e2eNotARealToken0123456789");
        assert.equal(created.body.head, `healer/${tasks[1]}`);
        await shoot("pull-request");
      } finally {
        await forge.close();
        rmSync(served, { recursive: true, force: true });
      }
    });
  });
}
