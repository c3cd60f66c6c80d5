// A workflow's secret in the real window, on a computer with no keyring service: the person
// chooses Healer's own secrets file, an engine refusal shows as its sentence, the secret is
// saved from the workflow's settings, reaches the script at run time (printed reversed, to
// prove it arrived) and is redacted from its output — and its bytes are nowhere in the data
// folder: the database, its WAL, logs, the workflow's folder.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { filesUnder } from "./lib/harness.mjs";
import { ScriptedApp } from "./lib/scriptedApp.mjs";

const STARTUP_ERROR = '[data-testid="startup-error"]';
const TOKEN = "tok-e2e-canary-51c0ffee93";


describe("A workflow's secret in the real window", { timeout: 240_000 }, () => {
  const app = new ScriptedApp("secrets");
  let session;

  before(
    async () => {
      session = await app.start([]);
    },
    { timeout: 150_000 },
  );

  after(() => app.stop(), { timeout: 60_000 });

  test("kept in Healer's own file, given to the script, redacted, and nowhere in the data folder", { timeout: 120_000 }, async () => {
    const script = path.join(app.dataDir, "token.py");
    writeFileSync(script, "import os\nt = os.environ['API_TOKEN']\nprint('token', t)\nprint('reversed', t[::-1])\n");
    const created = JSON.parse(await app.cli("workflow", "create", "--title", "Uses a token", "--runtime", "python3", "--file", script, "--json"));
    await session.waitFor('[data-testid="nav-workflows"]', { timeoutMs: 30_000, failFast: STARTUP_ERROR });
    await session.executeScript(`window.location.hash = ${JSON.stringify(`#/workflows/${created.id}`)};`);
    await session.click((await session.waitFor('[data-testid="edit-settings"]', { timeoutMs: 15_000 })).id);
    const section = await session.waitFor('[data-testid="workflow-secrets"]', { timeoutMs: 10_000 });
    await session.executeScript("arguments[0].scrollIntoView({ block: 'center' });", [{ "element-6066-11e4-a52e-4f735466cecf": section.id }]);
    await session.waitFor('[data-testid="workflow-secrets"] [data-testid="secrets-file-choice"]', { timeoutMs: 10_000, what: "the choice where no keyring runs" });
    await app.shot("choice");
    await session.click((await session.waitFor('[data-testid="secrets-file-accept"]')).id);
    await session.until(async () => (await session.findElements('[data-testid="secrets-file-choice"]')).length === 0, { timeoutMs: 10_000, what: "the file chosen" });

    // A name the engine refuses: its sentence, not a code.
    const name = await session.waitFor('[data-testid="secret-name"]');
    await session.sendKeys(name.id, "PATH");
    await session.sendKeys((await session.waitFor('[data-testid="secret-value"]')).id, TOKEN);
    await session.click((await session.waitFor('[data-testid="secret-save"]:not([disabled])')).id);
    const refused = await session.waitFor('[data-testid="workflow-secrets"] [role="alert"]', { timeoutMs: 10_000, what: "the engine's refusal" });
    const said = await session.getText(refused.id);
    assert.match(said, /The secret wasn't saved\. PATH is set by Healer for every run; choose another name/);
    assert.doesNotMatch(said, /object Object|invalid_input/);
    await app.shot("refused");

    // Refused, what was pasted stays in its field: only the name is typed again.
    const kept = await session.executeScript("return document.querySelector('[data-testid=secret-value]').value === arguments[0];", [TOKEN]);
    assert.equal(kept, true, "the pasted value is still in its field");
    await session.executeScript("arguments[0].select();", [{ "element-6066-11e4-a52e-4f735466cecf": name.id }]);
    await session.sendKeys(name.id, "API_TOKEN");
    await session.click((await session.waitFor('[data-testid="secret-save"]:not([disabled])')).id);
    await session.waitFor('[data-testid="secret-row"][data-name="API_TOKEN"]', {
      timeoutMs: 10_000,
      predicate: (t) => t.includes("Healer's own secrets file") && !t.includes(TOKEN),
      what: "the secret saved, its value not shown",
    });
    assert.ok(!(await session.executeScript("return document.body.innerHTML;")).includes(TOKEN));
    await app.shot("saved");

    const ran = JSON.parse(await app.cli("workflow", "run", "uses-a-token", "--json"));
    const output = JSON.stringify(ran);
    assert.ok(output.includes([...TOKEN].reverse().join("")), `the script got it: ${output}`);
    assert.ok(output.includes("token [redacted]"), output);
    for (const file of filesUnder(app.dataDir)) {
      assert.ok(!readFileSync(file).includes(TOKEN), `${file} holds the secret`);
    }
    assert.ok(filesUnder(app.dataDir).some((f) => f.endsWith("healer.db-wal") || f.endsWith("healer.db")));
  });
});
