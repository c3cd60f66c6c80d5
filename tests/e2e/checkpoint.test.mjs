// A checkpoint in the real window: the example that needs a Node package this machine lacks
// fails on the missing module, the Level-2 analyzer (a scripted model on 127.0.0.1) asks for
// diagnostics, and Healer stops to ask in a blocking dialog. The person presses Enter: the
// recommended option (Pause, with no history) is done and the dialog closes.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { Session } from "./lib/webdriver.mjs";
import { ARTIFACTS, CLI_BIN, DESKTOP_BIN, Driver, describeRun, freshDataDir, reap, removeDir, requireBinaries, run } from "./lib/harness.mjs";
import { startModelServer } from "./lib/modelServer.mjs";

const STARTUP_ERROR = '[data-testid="startup-error"]';
const KEY_VAR = "E2E_SCRIPTED_MODEL_KEY";
const ENTER = "\uE007";

describe("A checkpoint in the real window", { timeout: 300_000 }, () => {
  let dataDir;
  let driver;
  let session;
  let model;

  const shot = (name) => session?.screenshot(path.join(ARTIFACTS, `checkpoint-${name}.png`)).catch(() => {});
  const cli = async (...args) => {
    const r = await run(CLI_BIN, ["--data-dir", dataDir, ...args], { timeoutMs: 30_000, env: { ...process.env, HEALER_DATA_DIR: dataDir } });
    assert.equal(r.code, 0, `healer ${args.join(" ")} ${describeRun(r)}`);
    return r.stdout;
  };

  before(
    async () => {
      requireBinaries();
      model = await startModelServer();
      dataDir = freshDataDir("checkpoint");
      process.env[KEY_VAR] = "sk-e2e-not-a-secret";
      process.env.HEALER_KEYRING = "off";
      await cli("provider", "add", "scripted", "--kind", "openai-compatible", "--base-url", model.url, "--key-env", KEY_VAR);
      await cli("tier", "set", "cheap", "scripted", "scripted-small");
      await cli("examples");
      driver = new Driver(dataDir);
      await driver.start(20_000);
      session = await Session.create(driver.baseUrl, { alwaysMatch: { "tauri:options": { application: DESKTOP_BIN } } }, 60_000);
    },
    { timeout: 150_000 },
  );

  after(
    async () => {
      await session?.delete().catch(() => {});
      await driver?.stop().catch(() => {});
      await model?.close().catch(() => {});
      if (dataDir) {
        await reap(dataDir);
        removeDir(dataDir);
      }
    },
    { timeout: 60_000 },
  );

  test("a missing module leads to an ENVIRONMENT checkpoint; Enter takes the recommendation", { timeout: 120_000 }, async () => {
    const nav = await session.waitFor('[data-testid="nav-workflows"]', { timeoutMs: 30_000, failFast: STARTUP_ERROR });
    await session.click(nav.id);
    const row = await session.waitFor('[data-testid="workflow-row"][data-name="team-chat-digest"]', { timeoutMs: 15_000 });
    await session.click(row.id);
    const runNow = await session.waitFor('[data-testid="run-now"]', { timeoutMs: 10_000 });
    await session.click(runNow.id);

    const dialog = await session.waitFor('[data-testid="checkpoint-dialog"]', {
      timeoutMs: 45_000,
      predicate: (text) => text.includes("Something is missing on this machine") && text.includes("== Interpreter"),
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
