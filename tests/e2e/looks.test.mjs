// How the project page, the checkpoint dialog and the Sessions page look, light and dark, at the
// smallest window people use (800×600) and a large one (1920×1080): screenshots in the artifacts
// (looks-<theme>-<screen>-<size>.png) to look at, and no page may scroll sideways at 800 px.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ARTIFACTS } from "./lib/harness.mjs";
import { ScriptedApp } from "./lib/scriptedApp.mjs";

const STARTUP_ERROR = '[data-testid="startup-error"]';
const SIZES = [
  [800, 600],
  [1280, 800],
  [1920, 1080],
];

/**
 * What a person would see wrong in the checkpoint dialog as it is drawn: any part of it that
 * scrolls sideways, and text showing below its "Decide later" bar, scrolled to the top or the end
 * (only text really on screen counts: inside every scrolling box around it).
 */
const DIALOG_PROBLEMS = `
  const d = document.querySelector('[data-testid=checkpoint-dialog]');
  if (!d) return ['the dialog is not open'];
  const out = [];
  const name = (el) => el.getAttribute('data-testid') || (typeof el.className === 'string' && el.className) || el.tagName;
  for (const el of [d, ...d.querySelectorAll('*')]) {
    const cs = getComputedStyle(el);
    const scrolls = cs.overflowX === 'auto' || cs.overflowX === 'scroll';
    if (scrolls && el.scrollWidth > el.clientWidth + 1) out.push('scrolls sideways: ' + name(el) + ' ' + el.scrollWidth + ' > ' + el.clientWidth);
  }
  const bar = d.querySelector('.checkpoint-later');
  for (const end of bar ? ['top', 'bottom'] : []) {
    d.scrollTop = end === 'top' ? 0 : d.scrollHeight;
    const b = bar.getBoundingClientRect();
    const onScreen = (rect, node) => {
      let top = rect.top, bottom = rect.bottom;
      for (let el = node.parentElement; el; el = el.parentElement) {
        const cs = getComputedStyle(el);
        if (cs.overflowY !== 'visible' || el === d) {
          const c = el.getBoundingClientRect();
          top = Math.max(top, c.top); bottom = Math.min(bottom, c.bottom);
        }
        if (el === d) break;
      }
      return bottom - top > 2 && top < window.innerHeight;
    };
    const walker = document.createTreeWalker(d, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
      const t = walker.currentNode;
      if (!t.textContent.trim() || bar.contains(t)) continue;
      const range = document.createRange();
      range.selectNodeContents(t);
      for (const rect of range.getClientRects()) {
        if (rect.top >= b.bottom - 1 && onScreen(rect, t)) out.push('scrolled to the ' + end + ', text below the Decide later bar: ' + t.textContent.trim().slice(0, 50));
      }
    }
  }
  d.scrollTop = 0;
  return out;`;

for (const theme of ["light", "dark"]) {
  describe(`The main screens, ${theme}`, { timeout: 240_000 }, () => {
    const app = new ScriptedApp(`looks-${theme}`);
    const folder = mkdtempSync(path.join(os.tmpdir(), "healer-e2e-looks-"));
    let session;
    const sideways = [];

    before(
      async () => {
        writeFileSync(path.join(folder, "greet.py"), "def greet(name):\n    return 'Hi ' + name\n");
        session = await app.start(["cheap", "standard"], { env: theme === "dark" ? { GTK_THEME: "Adwaita:dark" } : {} });
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

    /** Each size: the window resized, the screen drawn, a screenshot, and its width measured. */
    async function shoot(name) {
      for (const [width, height] of SIZES) {
        await session.cmd("POST", "/window/rect", { width, height });
        await new Promise((r) => setTimeout(r, 500));
        await session.settlePaint();
        await session.screenshot(path.join(ARTIFACTS, `looks-${theme}-${name}-${width}x${height}.png`));
        const [page, view, main, mainView] = await session.executeScript(
          "const m = document.querySelector('main.content'); return [document.scrollingElement.scrollWidth, window.innerWidth, m ? m.scrollWidth : 0, m ? m.clientWidth : 0];",
        );
        if (width === 800 && (page > view || main > mainView)) sideways.push(`${name}: page ${page}/${view}, main ${main}/${mainView}`);
      }
    }

    test("the project page and the Sessions page after an agent's session", { timeout: 120_000 }, async () => {
      await session.waitFor('[data-testid="nav-projects"]', { timeoutMs: 30_000, failFast: STARTUP_ERROR });
      const added = JSON.parse(await app.cli("project", "add", folder, "--name", "greeter", "--git-init", "--no-checks", "--allow", "python3", "--json"));
      const projectId = added.project?.id ?? added.id;
      const first = JSON.parse(await app.cli("project", "task", "add", "greeter", "--title", "Greet properly", "--acceptance", "greet('Ada') says Hello, Ada!", "--json"));
      await app.cli("project", "task", "add", "greeter", "--title", "Say goodbye when the person leaves");
      await app.cli("project", "task", "add", "greeter", "--title", "Wish a happy birthday on the right day");
      await app.cli("project", "run", "greeter", "--task", first.task?.id ?? first.id);
      await session.executeScript(`window.location.hash = ${JSON.stringify(`#/projects/${projectId}`)};`);
      await session.waitFor('[data-testid="column-closed"] [data-testid="task-card"]', { timeoutMs: 60_000, what: "the task done" });
      await shoot("project");
      await session.executeScript("window.location.hash = '#/sessions';");
      await session.waitFor('[data-testid="past-session"]', { timeoutMs: 15_000 });
      await shoot("sessions");
    });

    test("Settings → General, its checkboxes drawn in the page's colours", { timeout: 60_000 }, async () => {
      await session.executeScript("window.location.hash = '#/settings/general';");
      await session.waitFor('input[type="checkbox"]', { timeoutMs: 15_000, what: "a checkbox" });
      // Not the desktop theme's own box (a white square on a dark window): the page draws it.
      const drawn = await session.executeScript(`
        const colour = (value) => { const p = document.createElement("span"); p.style.background = value; document.body.append(p); const c = getComputedStyle(p).backgroundColor; p.remove(); return c; };
        return [...document.querySelectorAll("input[type=checkbox]")].map((box) => {
          const c = getComputedStyle(box);
          return { appearance: c.appearance || c.webkitAppearance, background: c.backgroundColor, expected: colour(box.checked ? "var(--accent)" : "var(--surface)") };
        });`);
      assert.ok(drawn.length > 0);
      for (const box of drawn) {
        assert.equal(box.appearance, "none", JSON.stringify(box));
        assert.equal(box.background, box.expected, JSON.stringify(box));
      }
      await shoot("settings-general");
    });

    test("the checkpoint dialog", { timeout: 90_000 }, async () => {
      const script = path.join(app.dataDir, "report.sh");
      writeFileSync(script, "echo 'Building the report'\nreport-tool --today\n");
      const created = JSON.parse(await app.cli("workflow", "create", "--title", "Nightly report", "--runtime", "bash", "--file", script, "--json"));
      await session.cmd("POST", "/window/rect", { width: 1180, height: 760 });
      await session.executeScript(`window.location.hash = ${JSON.stringify(`#/workflows/${created.id}`)};`);
      await session.click((await session.waitFor('[data-testid="run-now"]', { timeoutMs: 10_000 })).id);
      await session.waitFor('[data-testid="checkpoint-dialog"]', { timeoutMs: 45_000, what: "the checkpoint" });
      await shoot("checkpoint");
      // As a person sees it at the sizes people use: nothing sideways, no text below the bar.
      const seen = [];
      for (const [width, height] of [
        [1280, 800],
        [800, 600],
      ]) {
        await session.cmd("POST", "/window/rect", { width, height });
        await new Promise((r) => setTimeout(r, 500));
        await session.settlePaint();
        for (const problem of await session.executeScript(DIALOG_PROBLEMS)) seen.push(`${width}×${height}: ${problem}`);
      }
      assert.deepEqual(seen, [], `the checkpoint dialog, ${theme}:\n${seen.join("\n")}`);
      // "Decide later" stays in view at the smallest size.
      await session.cmd("POST", "/window/rect", { width: 800, height: 600 });
      await new Promise((r) => setTimeout(r, 500));
      const visible = await session.executeScript(
        "const b = document.querySelector('.checkpoint-later button, [data-testid=checkpoint-later]'); if (!b) return null; const r = b.getBoundingClientRect(); return r.bottom <= window.innerHeight && r.top >= 0;",
      );
      assert.equal(visible, true, "Decide later is in view at 800×600");
      assert.deepEqual(sideways, [], `sideways scroll at 800 px:\n${sideways.join("\n")}`);
    });
  });
}
