// A checkpoint in the real window: the example that needs a Node package this machine lacks
// fails on the missing module, the Level-2 analyzer (a scripted model on 127.0.0.1) asks for
// diagnostics, and Healer stops to ask in a blocking dialog. The person presses Enter: the
// recommended option (Pause, with no history) is done and the dialog closes.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { ScriptedApp } from "./lib/scriptedApp.mjs";
import { ANALYSIS } from "./lib/modelServer.mjs";

const STARTUP_ERROR = '[data-testid="startup-error"]';
const ENTER = "\uE007";

describe("A checkpoint in the real window", { timeout: 300_000 }, () => {
  const app = new ScriptedApp("checkpoint");
  let session;
  let model;
  const shot = (name) => app.shot(name);
  const cli = (...args) => app.cli(...args);

  before(
    async () => {
      session = await app.start(["cheap"]);
      model = app.model;
    },
    { timeout: 150_000 },
  );

  after(() => app.stop(), { timeout: 60_000 });

  test("a missing module leads to an ENVIRONMENT checkpoint; Enter takes the recommendation", { timeout: 120_000 }, async () => {
    const nav = await session.waitFor('[data-testid="nav-workflows"]', { timeoutMs: 30_000, failFast: STARTUP_ERROR });
    await session.click(nav.id);
    const row = await session.waitFor('[data-testid="workflow-row"][data-name="team-chat-digest"]', { timeoutMs: 15_000 });
    await session.click(row.id);
    const runNow = await session.waitFor('[data-testid="run-now"]', { timeoutMs: 10_000 });
    await session.click(runNow.id);

    const dialog = await session.waitFor('[data-testid="checkpoint-dialog"]', {
      timeoutMs: 45_000,
      predicate: (text) =>
        text.includes("Something is missing on this machine") && text.includes("node is installed (") && text.includes(ANALYSIS.reasoning.slice(0, 30)),
      what: "the environment checkpoint with its diagnostics",
    });
    assert.ok(dialog.id);
    const recommended = await session.waitFor('[data-testid="checkpoint-option"][data-recommended="true"]', {
      timeoutMs: 5_000,
      predicate: (text) => text.includes("Pause"),
      what: "Pause, recommended",
    });
    await shot("dialog");
    // The analyzer was asked by the cheap tier, with the error.
    const asked = model.seen.find((r) => r.method === "POST" && String(r.body.messages?.[0]?.content).includes("recovery analyzer"));
    assert.ok(asked, "the analyzer was asked");
    assert.ok(JSON.stringify(asked.body.messages).includes("@slack/webhook"));

    await session.sendKeys(recommended.id, ENTER);
    await session.until(async () => (await session.findElements('[data-testid="checkpoint-dialog"]')).length === 0, {
      timeoutMs: 15_000,
      what: "the dialog to close",
    });
    const shown = await cli("workflow", "show", "team-chat-digest", "--json");
    assert.equal(JSON.parse(shown).workflow.status, "paused", shown);
    await shot("after");
  });
});
