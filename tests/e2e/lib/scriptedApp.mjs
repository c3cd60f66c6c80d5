// The desktop app on a fresh data folder whose model provider is the scripted server on
// 127.0.0.1 (lib/modelServer.mjs), with the example workflows loaded — what the stories about
// healing start from. The key is read from an environment variable (no keyring in the test
// session), and is not a secret.

import assert from "node:assert/strict";
import path from "node:path";
import { Session } from "./webdriver.mjs";
import { ARTIFACTS, CLI_BIN, DESKTOP_BIN, Driver, describeRun, freshDataDir, reap, removeDir, requireBinaries, run } from "./harness.mjs";
import { startModelServer } from "./modelServer.mjs";

export const KEY_VAR = "E2E_SCRIPTED_MODEL_KEY";

export class ScriptedApp {
  constructor(label) {
    this.label = label;
    this.dataDir = null;
    this.driver = null;
    this.session = null;
    this.model = null;
  }

  /**
   * Start the model server, configure `tiers` to it, load the examples, open the window.
   * `provider: false` leaves the app with no model at all (a first run): the server still runs.
   * `env`: more environment for the app (GTK_THEME=Adwaita:dark for the dark screens).
   */
  async start(tiers, { provider = true, env = {} } = {}) {
    requireBinaries();
    this.model = await startModelServer();
    this.dataDir = freshDataDir(this.label);
    process.env[KEY_VAR] = "sk-e2e-not-a-secret";
    process.env.HEALER_KEYRING = "off";
    if (provider) await this.cli("provider", "add", "scripted", "--kind", "openai-compatible", "--base-url", this.model.url, "--key-env", KEY_VAR);
    for (const tier of tiers) await this.cli("tier", "set", tier, "scripted", "scripted-small");
    await this.cli("examples");
    this.driver = new Driver(this.dataDir, env);
    await this.driver.start(20_000);
    this.session = await Session.create(this.driver.baseUrl, { alwaysMatch: { "tauri:options": { application: DESKTOP_BIN } } }, 60_000);
    return this.session;
  }

  /** Run the CLI on the app's data folder; it must succeed. */
  async cli(...args) {
    const r = await run(CLI_BIN, ["--data-dir", this.dataDir, ...args], { timeoutMs: 30_000, env: { ...process.env, HEALER_DATA_DIR: this.dataDir } });
    assert.equal(r.code, 0, `healer ${args.join(" ")} ${describeRun(r)}`);
    return r.stdout;
  }

  shot(name) {
    return this.session?.screenshot(path.join(ARTIFACTS, `${this.label}-${name}.png`)).catch(() => {});
  }

  async stop() {
    await this.session?.delete().catch(() => {});
    await this.driver?.stop().catch(() => {});
    await this.model?.close().catch(() => {});
    if (this.dataDir) {
      await reap(this.dataDir);
      removeDir(this.dataDir);
    }
  }
}
