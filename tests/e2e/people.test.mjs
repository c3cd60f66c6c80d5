// For people who do not live in a terminal, in the real window: a save from an editor that
// opened an older version asks instead of overwriting; a checkpoint can wait ("Decide later")
// while the person looks at Settings → Models, and comes back from the banner; the first-run
// setup reaches the scripted model server (lib/modelServer.mjs) through the app's real client.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { filesUnder } from "./lib/harness.mjs";
import { ScriptedApp } from "./lib/scriptedApp.mjs";

const STARTUP_ERROR = '[data-testid="startup-error"]';
const ENTER = "\uE007";
/** A key typed into the setup, to look for in every byte of the data folder afterwards. */
const KEY_SECRET = "sk-e2e-kept-in-the-file-7f31c2";


describe("Work is never lost, and a checkpoint can wait", { timeout: 300_000 }, () => {
  const app = new ScriptedApp("people");
  let session;
  const shot = (name) => app.shot(name);

  before(
    async () => {
      session = await app.start(["cheap"]);
    },
    { timeout: 150_000 },
  );

  after(() => app.stop(), { timeout: 60_000 });

  test("a save over a newer version asks: Compare, Keep mine as 3.0", { timeout: 120_000 }, async () => {
    const nav = await session.waitFor('[data-testid="nav-workflows"]', { timeoutMs: 30_000, failFast: STARTUP_ERROR });
    await session.click(nav.id);
    const row = await session.waitFor('[data-testid="workflow-row"][data-name="daily-weather-summary"]', { timeoutMs: 15_000 });
    await session.click(row.id);
    const tab = await session.waitFor('[data-testid="tab-script"]', { timeoutMs: 10_000 });
    await session.click(tab.id);
    const editor = await session.waitFor(".cm-content", { timeoutMs: 15_000, what: "the script editor" });
    await session.sendKeys(editor.id, "# my change\n");
    await session.waitFor('[data-testid="run-unsaved-hint"]', { timeoutMs: 5_000, what: "Run now saying which version runs" });

    // Meanwhile a save from the terminal makes 2.0.
    const dir = mkdtempSync(path.join(os.tmpdir(), "healer-e2e-script-"));
    const file = path.join(dir, "daily.py");
    writeFileSync(file, "print('saved from the terminal')\n");
    await app.cli("workflow", "save", "daily-weather-summary", "--file", file, "--comment", "From the terminal");

    const save = await session.waitFor('[data-testid="save-script"]:not([disabled])', { timeoutMs: 15_000, what: "Save enabled" });
    await session.click(save.id);
    await session.waitFor('[data-testid="conflict-dialog"]', { timeoutMs: 15_000, what: "the conflict dialog" });
    const title = await session.waitFor(".dialog-title", {
      timeoutMs: 5_000,
      predicate: (text) => text.includes("This script changed while you were editing (2.0 by you)"),
      what: "the dialog naming the newer version",
    });
    assert.ok(title.id);
    const compare = await session.waitFor('[data-testid="conflict-compare"]');
    await session.click(compare.id);
    await session.waitFor('[data-testid="conflict-diff"] .cm-editor', { timeoutMs: 15_000, what: "the comparison" });
    await shot("conflict");
    // Nothing was saved yet.
    let history = JSON.parse(await app.cli("workflow", "history", "daily-weather-summary", "--json"));
    assert.equal(history.length, 2, JSON.stringify(history));

    const keep = await session.waitFor('[data-testid="conflict-keep"]', { predicate: (t) => t.includes("Keep mine as 3.0") });
    await session.click(keep.id);
    await session.waitFor('[data-testid="toast"]', { timeoutMs: 15_000, predicate: (t) => t.includes("Saved as version 3.0") });
    history = JSON.parse(await app.cli("workflow", "history", "daily-weather-summary", "--json"));
    const newest = history.at(-1);
    assert.equal(`${newest.version.major}.${newest.version.minor}`, "3.0");
    assert.ok(newest.code.includes("# my change"), newest.code);
    await shot("kept");
  });

  test("Decide later keeps a checkpoint waiting while the person looks at Settings → Models, and the banner brings it back", { timeout: 150_000 }, async () => {
    // A program the machine lacks stops at a checkpoint (a missing module no longer does:
    // Healer installs it into the workflow's own environment).
    const script = path.join(app.dataDir, "report.sh");
    writeFileSync(script, "echo 'Building the report'\nreport-tool --today\n");
    await app.cli("workflow", "create", "--title", "Nightly report", "--runtime", "bash", "--file", script);
    const nav = await session.waitFor('[data-testid="nav-workflows"]', { timeoutMs: 10_000 });
    await session.click(nav.id);
    const row = await session.waitFor('[data-testid="workflow-row"][data-name="nightly-report"]', { timeoutMs: 15_000 });
    await session.click(row.id);
    const runNow = await session.waitFor('[data-testid="run-now"]', { timeoutMs: 10_000 });
    await session.click(runNow.id);
    await session.waitFor('[data-testid="checkpoint-dialog"][data-ready="true"]', { timeoutMs: 60_000, what: "the checkpoint dialog" });

    const later = await session.waitFor('[data-testid="checkpoint-later"]');
    await session.click(later.id);
    await session.until(async () => (await session.findElements('[data-testid="checkpoint-dialog"]')).length === 0, {
      timeoutMs: 10_000,
      what: "the dialog to close",
    });
    await session.waitFor('[data-testid="postponed-banner"]', { timeoutMs: 5_000, what: "the banner" });
    const count = await session.waitFor('[data-testid="checkpoint-count"]', { timeoutMs: 5_000 });
    assert.equal(await session.getText(count.id), "1");

    // The window is usable: Settings → Models opens.
    const settings = await session.waitFor('[data-testid="nav-settings"]');
    await session.click(settings.id);
    await session.executeScript("window.location.hash = '#/settings/models';");
    await session.waitFor('[data-testid="settings-models"]', { timeoutMs: 10_000, what: "Settings → Models" });
    await shot("later");
    // Still pending in the engine.
    const list = JSON.parse(await app.cli("checkpoint", "list", "--json"));
    assert.equal(list.pending.length, 1, JSON.stringify(list));

    const back = await session.waitFor('[data-testid="decide-now"]');
    await session.click(back.id);
    const recommended = await session.waitFor('[data-testid="checkpoint-dialog"][data-ready="true"] [data-testid="checkpoint-option"][data-recommended="true"]', {
      timeoutMs: 10_000,
      what: "the dialog again",
    });
    await session.sendKeys(recommended.id, ENTER);
    await session.until(async () => (await session.findElements('[data-testid="checkpoint-dialog"]')).length === 0, {
      timeoutMs: 15_000,
      what: "the dialog to close after deciding",
    });
    const after = JSON.parse(await app.cli("checkpoint", "list", "--json"));
    assert.equal(after.pending.length, 0, JSON.stringify(after));
  });
});

describe("The smallest window", { timeout: 200_000 }, () => {
  const app = new ScriptedApp("narrow");
  let session;

  before(
    async () => {
      session = await app.start([]);
    },
    { timeout: 150_000 },
  );

  after(() => app.stop(), { timeout: 60_000 });

  test("at 600 px no screen scrolls sideways and the sidebar names do not wrap", { timeout: 120_000 }, async () => {
    await session.waitFor('[data-testid="nav-workflows"]', { timeoutMs: 30_000, failFast: STARTUP_ERROR });
    await session.cmd("POST", "/window/rect", { width: 600, height: 760 });
    const width = await session.executeScript("return window.innerWidth;");
    assert.ok(width <= 620, `the window is ${width} px wide`);
    const wide = [];
    for (const hash of ["#/workflows", "#/workflows/1", "#/workflows/1/script", "#/workflows/1/versions", "#/activity", "#/notifications", "#/checkpoints", "#/settings/models", "#/setup", "#/workflows/new"]) {
      await session.executeScript(`window.location.hash = ${JSON.stringify(hash)};`);
      await session.settlePaint();
      const [page, view, content, inner] = await session.executeScript(
        "const m = document.querySelector('main.content'); return [document.scrollingElement.scrollWidth, window.innerWidth, m.scrollWidth, m.clientWidth];",
      );
      if (page > view || content > inner) wide.push(`${hash}: page ${page}/${view}, content ${content}/${inner}`);
    }
    assert.deepEqual(wide, [], "screens that scroll sideways");
    await app.shot("600");
  });
});

describe("The first-run setup in the real window", { timeout: 300_000 }, () => {
  const app = new ScriptedApp("setup");
  let session;
  const shot = (name) => app.shot(name);

  before(
    async () => {
      session = await app.start([], { provider: false });
    },
    { timeout: 150_000 },
  );

  after(() => app.stop(), { timeout: 60_000 });

  test("from the offer to three tiers on the scripted server, keeping the key in Healer's own file where no keyring runs", { timeout: 150_000 }, async () => {
    const offer = await session.waitFor('[data-testid="start-setup"]', { timeoutMs: 30_000, failFast: STARTUP_ERROR, what: "the setup offer" });
    await session.click(offer.id);
    await session.waitFor('[data-testid="page-setup"]', { timeoutMs: 10_000 });
    const other = await session.waitFor('[data-testid="setup-choice-other"]');
    await session.click(other.id);

    const name = await session.waitFor('[data-testid="setup-name"]');
    await session.executeScript("arguments[0].select();", [{ "element-6066-11e4-a52e-4f735466cecf": name.id }]);
    await session.sendKeys(name.id, "My scripted server");
    const url = await session.waitFor('[data-testid="setup-url"]');
    await session.sendKeys(url.id, app.model.url);
    const key = await session.waitFor('[data-testid="setup-key"]');
    await session.sendKeys(key.id, "sk-typed-not-a-secret");
    await shot("filled");

    const testButton = await session.waitFor('[data-testid="setup-test"]');
    await session.click(testButton.id);
    // No keyring in this session: said plainly where the key is typed, with what Healer's own
    // file protects against and the environment variable as the other way.
    const choice = await session.waitFor('[data-testid="secrets-file-choice"]', { timeoutMs: 20_000, what: "the choice where no keyring runs" });
    const offered = await session.getText(choice.id);
    assert.match(offered, /no keyring service/);
    assert.match(offered, /reveals nothing/);
    assert.match(offered, /environment variable/);
    const said = await session.waitFor('[data-testid="setup-no-keyring"]', { timeoutMs: 20_000, what: "the key not kept" });
    assert.match(await session.getText(said.id), /The key is not kept yet: choose above where Healer keeps it/);
    assert.doesNotMatch(await session.getText(await session.findElement('[data-testid="page-setup"]')), /object Object/);
    await shot("no-keyring");
    await session.click((await session.waitFor('[data-testid="secrets-file-accept"]')).id);
    await session.until(async () => (await session.findElements('[data-testid="secrets-file-choice"]')).length === 0, { timeoutMs: 10_000, what: "the file chosen" });
    // The key pasted before the choice was kept there, not dropped.
    await session.until(
      async () => (await session.executeScript("return document.querySelector('[data-testid=setup-key]').placeholder;")) === "Kept",
      { timeoutMs: 10_000, what: "the key pasted before the choice kept" },
    );
    await session.sendKeys((await session.waitFor('[data-testid="setup-key"]')).id, KEY_SECRET);
    await session.click(testButton.id);
    await session.waitFor('[data-testid="setup-test-ok"]', { timeoutMs: 20_000, what: "a working connection" });
    await session.waitFor('[data-testid="setup-tier-cheap"]', { timeoutMs: 5_000 });
    await shot("tiers");
    const finish = await session.waitFor('[data-testid="setup-finish"]:not([disabled])');
    await session.click(finish.id);
    await session.waitFor('[data-testid="settings-models"]', { timeoutMs: 15_000, what: "Settings → Models after the setup" });

    const tiers = JSON.parse(await app.cli("tier", "list", "--json"));
    const cheap = tiers.find((t) => t.tier === "cheap");
    assert.equal(cheap.setting?.provider, "my-scripted-server", JSON.stringify(tiers));
    assert.equal(cheap.setting?.model, "scripted-small");
    // The app's own client listed the models on the scripted server, with the kept key.
    assert.ok(app.model.seen.some((r) => r.method === "GET" && r.url.endsWith("/models")));
    const providers = JSON.parse(await app.cli("provider", "list", "--json"));
    assert.equal(providers.find((p) => p.provider.name === "my-scripted-server")?.key.source, "file", JSON.stringify(providers));
    assert.equal(providers.find((p) => p.provider.name === "my-scripted-server")?.provider.title, "My scripted server");
    // The file holds it sealed; nothing in the data folder holds it in the clear.
    for (const file of filesUnder(app.dataDir)) {
      assert.ok(!readFileSync(file).includes(KEY_SECRET), `${file} holds the key`);
    }
    await shot("done");
  });
});
