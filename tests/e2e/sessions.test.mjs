// The Sessions page in the real window: empty at first; once the person lets Healer watch the
// Claude Code sessions they run themselves, one of theirs that keeps running the same failing
// command shows up as going in circles, and they are told. Claude Code's folder is a temporary
// one (CLAUDE_CONFIG_DIR), so the person's real sessions are never looked at.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { ScriptedApp } from "./lib/scriptedApp.mjs";

const STARTUP_ERROR = '[data-testid="startup-error"]';

/** A session in Claude Code's transcript format that runs `bash check.sh` four times, failing alike. */
function loopingTranscript(cwd) {
  const sessionId = randomUUID();
  const lines = [];
  const base = { sessionId, cwd, version: "2.1.328", isSidechain: false, userType: "external" };
  let at = Date.now() - 60_000;
  const push = (type, message) => lines.push(JSON.stringify({ ...base, type, message, uuid: randomUUID(), timestamp: new Date((at += 1000)).toISOString() }));
  push("user", { role: "user", content: "Make the check pass." });
  for (let i = 0; i < 4; i++) {
    const id = `toolu_${i}`;
    push("assistant", {
      id: `msg_${i}`, role: "assistant", model: "claude-sonnet", type: "message",
      content: [{ type: "tool_use", id, name: "Bash", input: { command: "bash check.sh", description: "Run the check" } }],
      usage: { input_tokens: 100, output_tokens: 20 },
    });
    push("user", { role: "user", content: [{ type: "tool_result", tool_use_id: id, is_error: true, content: "error: config.ini missing" }] });
  }
  return { sessionId, text: lines.join("\n") + "\n" };
}

describe("Sessions in the real window", { timeout: 240_000 }, () => {
  const app = new ScriptedApp("sessions");
  const claudeDir = mkdtempSync(path.join(os.tmpdir(), "healer-e2e-claude-"));
  let session;

  before(
    async () => {
      process.env.CLAUDE_CONFIG_DIR = claudeDir;
      session = await app.start(["cheap", "standard"]);
    },
    { timeout: 150_000 },
  );

  after(
    async () => {
      await app.stop();
      delete process.env.CLAUDE_CONFIG_DIR;
      rmSync(claudeDir, { recursive: true, force: true });
    },
    { timeout: 60_000 },
  );

  test("a person's own Claude Code session that goes in circles is listed once they turn watching on", { timeout: 90_000 }, async () => {
    const nav = await session.waitFor('[data-testid="nav-sessions"]', { timeoutMs: 30_000, failFast: STARTUP_ERROR });
    await session.click(nav.id);
    await session.waitFor('[data-testid="page-sessions"]', { timeoutMs: 15_000 });
    await app.shot("empty");
    await session.waitFor('[data-testid="no-sessions"]', {
      timeoutMs: 15_000,
      predicate: (text) => text.includes("No agent is at work right now"),
      what: "the empty Sessions page",
    });
    const toggle = await session.waitFor('[data-testid="watch-own-sessions"]', { timeoutMs: 10_000 });
    await session.click(toggle.id);
    // The watcher starts within the engine's look at the setting.
    await new Promise((r) => setTimeout(r, 4_000));

    const folder = path.join(claudeDir, "projects", "-home-ada-notes");
    mkdirSync(folder, { recursive: true });
    const { sessionId, text } = loopingTranscript("/home/ada/notes");
    writeFileSync(path.join(folder, `${sessionId}.jsonl`), text);

    const row = await session.waitFor('[data-testid="live-session"][data-origin="person"]', {
      timeoutMs: 30_000,
      predicate: (t) => t.includes("Going in circles"),
      what: "the person's looping session on the Sessions page",
    });
    const words = await session.getText(row.id);
    assert.match(words, /\/home\/ada\/notes/);
    assert.match(words, /started by you/);
    assert.match(words, /Last active/);
    assert.doesNotMatch(words, /repeated-error|repeat\b/);
    await app.shot("own-session-looping");

    // The person was told (the notification behind the desktop one).
    let notes = "";
    for (let i = 0; i < 30 && !/going in circles/.test(notes); i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 500));
      notes = await app.cli("notifications", "--json");
    }
    assert.match(notes, /One of your Claude Code sessions is going in circles/);

    // At the narrowest window the row still reads; nothing scrolls sideways.
    await session.cmd("POST", "/window/rect", { width: 600, height: 800 });
    await new Promise((r) => setTimeout(r, 500));
    await app.shot("own-session-looping-600");
    const [scroll, inner] = await session.executeScript("return [document.scrollingElement.scrollWidth, window.innerWidth];");
    assert.ok(scroll <= inner, `the page scrolls sideways at 600 px: ${scroll} > ${inner}`);
    await session.cmd("POST", "/window/rect", { width: 1280, height: 800 });
  });

  test("Settings says which model steers and how often it looks", { timeout: 60_000 }, async () => {
    await session.executeScript("window.location.hash = '#/settings/models';");
    const now = await session.waitFor('[data-testid="steering-model-now"]', {
      timeoutMs: 15_000,
      predicate: (t) => t.includes("Steering asks scripted-small from scripted"),
      what: "the steering model in Settings",
    });
    assert.ok(now);
    const interval = await session.waitFor('[data-testid="steering-interval"]', { timeoutMs: 5_000 });
    assert.equal(await session.getAttribute(interval.id, "value"), "15");
    await session.executeScript("document.querySelector('[data-testid=\"steering\"]').scrollIntoView();");
    await new Promise((r) => setTimeout(r, 300));
    await app.shot("settings-steering");
  });
});
