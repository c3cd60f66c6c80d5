// Running on more computers in the real window, against a real Temporal dev server and a real
// `healer worker`: Settings → More computers tests and connects, shows the worker once it polls;
// a workflow moved to the cluster from its page runs there from Run now, and its attempt says
// which computer ran it.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { CLI_BIN, freePort, sleep } from "./lib/harness.mjs";
import { ScriptedApp } from "./lib/scriptedApp.mjs";

const STARTUP_ERROR = '[data-testid="startup-error"]';
const TEMPORAL = process.env.HEALER_TEMPORAL_CLI || path.join(os.homedir(), ".cache/healer/temporal-venv/bin/temporal");

/** Resolves once something accepts connections on 127.0.0.1:port. */
async function listening(port, timeoutMs) {
  const { connect } = await import("node:net");
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await new Promise((resolve) => {
      const socket = connect(port, "127.0.0.1");
      socket.once("connect", () => (socket.destroy(), resolve(true)));
      socket.once("error", () => resolve(false));
    });
    if (ok) return;
    await sleep(200);
  }
  throw new Error(`nothing listened on ${port}`);
}

describe("Running on more computers in the real window", { timeout: 300_000 }, () => {
  const app = new ScriptedApp("cluster");
  const scratch = mkdtempSync(path.join(os.tmpdir(), "healer-e2e-cluster-"));
  let session;
  let server;
  let worker;
  let port;

  before(
    async () => {
      port = await freePort();
      server = spawn(TEMPORAL, ["server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", String(port), "--db-filename", path.join(scratch, "temporal.db"), "--log-level", "error"], { stdio: "ignore" });
      await listening(port, 60_000);
      await sleep(1500);
      session = await app.start([]);
      await app.cli("secret", "use-file", "--yes");
    },
    { timeout: 180_000 },
  );

  after(
    async () => {
      worker?.kill("SIGKILL");
      server?.kill("SIGKILL");
      await app.stop();
    },
    { timeout: 60_000 },
  );

  test("connect, see the worker, move a workflow there, run it, see which computer ran it", { timeout: 180_000 }, async () => {
    await session.waitFor('[data-testid="nav-workflows"]', { timeoutMs: 30_000, failFast: STARTUP_ERROR });
    await session.executeScript("window.location.hash = '#/settings/computers';");
    const address = await session.waitFor('[data-testid="cluster-address"]', { timeoutMs: 15_000 });
    await session.sendKeys(address.id, `127.0.0.1:${port}`);
    await session.click((await session.waitFor('[data-testid="cluster-test"]:not([disabled])')).id);
    await session.waitFor('[data-testid="cluster-test-result"]', {
      timeoutMs: 20_000,
      predicate: (t) => t.includes("The cluster answers. No computer is taking work from it yet."),
      what: "the test's answer",
    });
    await app.shot("test");
    await session.click((await session.waitFor('[data-testid="cluster-connect"]:not([disabled])')).id);
    await session.waitFor('[data-testid="cluster-reachable"]', {
      timeoutMs: 20_000,
      predicate: (t) => t.includes(`Connected to 127.0.0.1:${port}`),
      what: "connected",
    });

    // A worker with the key the control room made.
    const keyFile = path.join(scratch, "cluster.key");
    await app.cli("cluster", "key", "--out", keyFile);
    const env = { ...process.env };
    delete env.HEALER_DATA_DIR;
    worker = spawn(CLI_BIN, ["worker", "--temporal", `127.0.0.1:${port}`, "--name", "office-mac", "--key-file", keyFile, "--cache", path.join(scratch, "worker")], { env, stdio: "ignore" });
    await session.waitFor('[data-testid="cluster-worker"]', {
      timeoutMs: 40_000,
      predicate: (t) => t.includes("office-mac") && t.includes("asked for work"),
      what: "the worker in the list",
    });
    await app.shot("connected");

    // A workflow moved to the cluster from its page.
    const script = path.join(scratch, "export.sh");
    writeFileSync(script, "echo exported on $(hostname)\n");
    const created = JSON.parse(await app.cli("workflow", "create", "--title", "Nightly export", "--runtime", "bash", "--file", script, "--json"));
    await session.executeScript(`window.location.hash = ${JSON.stringify(`#/workflows/${created.id}`)};`);
    await session.click((await session.waitFor('[data-testid="runs-on-cluster"]', { timeoutMs: 15_000, what: "the Runs on choice" })).id);
    await session.until(async () => JSON.parse(await app.cli("cluster", "status", "--json")).workflows_on_cluster === 1, {
      timeoutMs: 10_000,
      what: "the workflow on the cluster",
    });
    await session.until(async () => await session.executeScript("return document.querySelector('[data-testid=\"runs-on-cluster\"]').checked;"), {
      timeoutMs: 10_000,
      what: "the picker showing the cluster",
    });

    await session.click((await session.waitFor('[data-testid="run-now"]:not([disabled])')).id);
    const row = await session.waitFor('[data-testid="run-row"][data-status="succeeded"]', { timeoutMs: 60_000, what: "the run succeeded" });
    // The run opened while it ran; if the window missed that, open it.
    const summary = await session.findElement('[data-testid="run-row"] .run-summary');
    if ((await session.getAttribute(summary, "aria-expanded")) !== "true") await session.click(summary);
    const on = await session.waitFor('[data-testid="attempt-worker"]', { timeoutMs: 10_000, what: "the attempt's computer" });
    assert.equal(await session.getText(on.id), "on office-mac");
    const stdout = await session.waitFor('[data-testid="stdout"]');
    assert.match(await session.getText(stdout.id), /exported on/);
    void row;
    await app.shot("ran");
  });
});
