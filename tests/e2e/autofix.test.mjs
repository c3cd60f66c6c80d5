// The maintainer in the real window: the example with a data-shape bug fails, its auto-fix task
// appears and streams its thread (evidence, an eval in the sandbox, the explanation), the
// scripted model gives up, the person gets the notification, and Re-plan opens the workflow's
// chat with the planner, which answers. The model provider is a scripted OpenAI-compatible
// server on 127.0.0.1 (lib/modelServer.mjs), so the app's real model client is used.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { ScriptedApp } from "./lib/scriptedApp.mjs";
import { GIVE_UP, PLANNER_ANSWER } from "./lib/modelServer.mjs";

const STARTUP_ERROR = '[data-testid="startup-error"]';

describe("Auto-fix and Re-plan in the real window", { timeout: 300_000 }, () => {
  const app = new ScriptedApp("autofix");
  let session;
  let model;
  const shot = (name) => app.shot(name);
  const cli = (...args) => app.cli(...args);

  before(
    async () => {
      session = await app.start(["cheap", "standard"]);
      // The standard tier on another model, so the request says which tier a repair's first try used.
      await cli("tier", "set", "standard", "scripted", "scripted-large");
      model = app.model;
    },
    { timeout: 150_000 },
  );

  after(() => app.stop(), { timeout: 60_000 });

  test("a failing example's auto-fix thread appears, runs an eval, and gives up with its reason", { timeout: 120_000 }, async () => {
    const nav = await session.waitFor('[data-testid="nav-workflows"]', { timeoutMs: 30_000, failFast: STARTUP_ERROR });
    await session.click(nav.id);
    const row = await session.waitFor('[data-testid="workflow-row"][data-name="weekly-sales-report"]', { timeoutMs: 15_000 });
    await session.click(row.id);
    const runNow = await session.waitFor('[data-testid="run-now"]', { timeoutMs: 10_000 });
    await session.click(runNow.id);
    await session.waitFor('[data-testid="run-row"][data-status="failed"]', { timeoutMs: 30_000, what: "the failed run" });

    const tab = await session.waitFor('[data-testid="tab-autofix"]', { timeoutMs: 10_000 });
    await session.click(tab.id);
    const fix = await session.waitFor('[data-testid="autofix-row"]', { timeoutMs: 30_000, what: "the auto-fix task in the list" });
    await session.click(fix.id);
    await session.waitFor('[data-testid="autofix-thread"]', {
      timeoutMs: 30_000,
      predicate: (text) => text.includes("KeyError") && text.includes("customer"),
      what: "the thread with the evidence and the eval's output",
    });
    const outcome = await session.waitFor('[data-testid="autofix-outcome"]', {
      timeoutMs: 30_000,
      predicate: (text) => text.includes("no longer has an amount"),
      what: "the outcome with the model's explanation",
    });
    assert.ok(outcome.id);
    // What failed opens the thread in a sentence; what the model was told stays folded under it.
    const failed = await session.waitFor('[data-testid="autofix-failed"]', { timeoutMs: 10_000 });
    assert.match(await session.getText(failed.id), /^Run #\d+ of version 1\.0 failed: .*KeyError/);
    const thread = await session.getText((await session.findElement('[data-testid="autofix-thread"]')));
    assert.doesNotMatch(thread, /workflow id|runtime python3|entry file/);
    const folded = await session.findElement('[data-testid="autofix-prompt"] button');
    assert.equal(await session.getText(folded), "Show what Healer told the repair assistant");
    await session.click(folded);
    await session.waitFor('[data-testid="autofix-prompt"]', {
      timeoutMs: 5_000,
      predicate: (text) => text.includes("Hide what Healer told the repair assistant") && text.length > 80,
      what: "the prompt unfolded",
    });
    await shot("thread");
    // The model was asked by the maintainer with its own tools only.
    const first = model.seen.find((r) => r.method === "POST");
    const tools = first.body.tools.map((t) => t.function.name).sort();
    assert.deepEqual(tools, ["eval", "fix", "list_versions", "read_file"]);
    // The first try of a repair is the cheap tier's, as Settings → Models says of it.
    assert.equal(first.body.model, "scripted-small");
    await session.executeScript("window.location.hash = '#/settings/models';");
    const cheap = await session.waitFor('[data-testid="tier-row"][data-tier="cheap"]', { timeoutMs: 15_000, what: "the cheap tier" });
    assert.match(await session.getText(cheap.id), /First tries at repairs/);
    const standard = await session.findElement('[data-testid="tier-row"][data-tier="standard"]');
    assert.match(await session.getText(standard), /Second tries/);
    assert.match(await session.getText(standard), /scripted-large/);
    await shot("tiers");
  });

  test("the person is told, and Re-plan opens the chat where the planner answers", { timeout: 120_000 }, async () => {
    const nav = await session.waitFor('[data-testid="nav-notifications"]', { timeoutMs: 10_000 });
    await session.click(nav.id);
    await session.waitFor('[data-testid="notification-item"]', {
      timeoutMs: 30_000,
      predicate: (text) => text.includes(GIVE_UP.slice(0, 40)),
      what: "the maintenance-failed notification with the explanation",
    });
    await shot("notification");
    const replan = await session.waitFor('li[data-kind="maintenance_failed"] [data-testid="notification-action-replan"]', {
      timeoutMs: 10_000,
      what: "the Re-plan button on the notification",
    });
    await session.click(replan.id);
    await session.waitFor('[data-testid="planner-chat"]', { timeoutMs: 15_000, what: "the planner chat" });
    // The maintainer's last question opens the chat, waiting for an answer (not "Gave up").
    await session.waitFor('[data-testid="maintainer-question"]', {
      timeoutMs: 10_000,
      predicate: (text) => text.includes("Tell me whether total is the same figure"),
      what: "the maintainer's question as the first message",
    });
    await shot("question");
    const input = await session.waitFor('[aria-label="Message to the planner"]', { timeoutMs: 10_000 });
    await session.sendKeys(input.id, "Yes, total is the same figure as amount.");
    const send = await session.waitFor('[data-testid="chat-send"]', { timeoutMs: 10_000 });
    await session.click(send.id);
    await session.waitFor('[data-testid="planner-chat"]', {
      timeoutMs: 30_000,
      predicate: (text) => text.includes(PLANNER_ANSWER.slice(0, 30)),
      what: "the planner's answer in the chat",
    });
    // The planner was told which question the person's message answers.
    const planner = model.seen.filter((r) => r.method === "POST" && String(r.body.messages?.[0]?.content).includes("planner")).at(-1);
    assert.ok(String(planner.body.messages[0].content).includes("Tell me whether total is the same figure"));
    // Answered, the question stays in the conversation, before the answer, no longer waiting.
    await session.waitFor('[data-testid="maintainer-question"][data-answered="true"]', {
      timeoutMs: 10_000,
      predicate: (text) => text.toLowerCase().includes("stopped and asked you") && text.includes("Tell me whether total is the same figure"),
      what: "the question to stay as answered",
    });
    const order = await session.executeScript(
      `const items = [...document.querySelectorAll('.chat-messages .chat-item')].map((i) => i.textContent);
       return [items.findIndex((t) => t.includes("Tell me whether total")), items.findIndex((t) => t.includes("Yes, total is the same figure"))];`,
    );
    assert.ok(order[0] >= 0 && order[0] < order[1], `question before answer: ${JSON.stringify(order)}`);
    await shot("chat");
  });

  test("the failure is remembered on the Memory page under its signature", { timeout: 60_000 }, async () => {
    const nav = await session.waitFor('[data-testid="nav-memory"]', { timeoutMs: 10_000 });
    await session.click(nav.id);
    const row = await session.waitFor('[data-testid="pattern-row"]', {
      timeoutMs: 15_000,
      predicate: (text) => text.includes("KeyError"),
      what: "the KeyError's signature in memory",
    });
    await session.click(row.id);
    await session.waitFor('[data-testid="pattern-detail"]', {
      timeoutMs: 10_000,
      predicate: (text) => text.includes("'amount'"),
      what: "the normalised error text naming the missing key",
    });
    await shot("memory");
  });
});
