// Running on more computers in the real window, against a real Temporal dev server and a real
// `healer worker`: Settings → More computers tests and connects and says how to start a worker;
// a workflow moved to the cluster from its page says so, and its run from Run now waits, saying
// that no computer takes the cluster's work, until a worker starts and runs it; its attempt says
// which computer ran it; the worker, once killed, shows as stopped.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
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

describe("Running on more computers in the real window", { timeout: 480_000 }, () => {
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

  test("connect, move a workflow there, see its run wait for a computer, start a worker that runs it, see it stop", { timeout: 330_000 }, async () => {
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

    // How to start a worker is told right there, with the line to type and a Copy button.
    const steps = await session.waitFor('[data-testid="worker-steps"] summary', { timeoutMs: 10_000, what: "how to start a worker" });
    await session.click(steps.id);
    const line = await session.waitFor('[data-testid="worker-command"]', { timeoutMs: 5_000, what: "the worker's line" });
    assert.match(await session.getText(line.id), new RegExp(`healer worker --temporal 127\\.0\\.0\\.1:${port} --queue healer --key-file`));
    assert.ok((await session.findElements('[data-testid="worker-steps"] .path-row button')).length > 0, "a Copy button");
    await app.shot("worker-steps");

    // A workflow moved to the cluster from its page, before any computer takes its work.
    const script = path.join(scratch, "export.sh");
    writeFileSync(script, "echo exported on $(hostname)\n");
    const created = JSON.parse(await app.cli("workflow", "create", "--title", "Nightly export", "--runtime", "bash", "--file", script, "--json"));
    await session.executeScript(`window.location.hash = ${JSON.stringify(`#/workflows/${created.id}`)};`);
    await session.click((await session.waitFor('[data-testid="runs-on-cluster"]', { timeoutMs: 15_000, what: "the Runs on choice" })).id);
    // Moving it says so.
    await session.waitFor('[data-testid="toast"]', {
      timeoutMs: 10_000,
      predicate: (t) => t.includes("It runs on other computers now"),
      what: "the move said",
    });
    await session.until(async () => JSON.parse(await app.cli("cluster", "status", "--json")).workflows_on_cluster === 1, {
      timeoutMs: 10_000,
      what: "the workflow on the cluster",
    });
    await session.until(async () => await session.executeScript("return document.querySelector('[data-testid=\"runs-on-cluster\"]').checked;"), {
      timeoutMs: 10_000,
      what: "the picker showing the cluster",
    });

    // Run now with no computer taking the cluster's work: it waits, and says so and how to start one.
    await session.click((await session.waitFor('[data-testid="run-now"]:not([disabled])')).id);
    const waiting = await session.waitFor('[data-testid="cluster-waiting"][data-state="no-worker"]', {
      timeoutMs: 30_000,
      what: "the run waiting for a computer",
    });
    const said = await session.getText(waiting.id);
    assert.match(said, /no computer is taking the cluster's work yet/);
    assert.doesNotMatch(said, /Running on another computer/);
    assert.ok((await session.findElements('[data-testid="cluster-waiting"] a[href="#/settings/computers"]')).length === 1);
    await app.shot("no-worker");

    // A worker with the key the control room made takes the waiting run.
    const keyFile = path.join(scratch, "cluster.key");
    await app.cli("cluster", "key", "--out", keyFile);
    const env = { ...process.env };
    delete env.HEALER_DATA_DIR;
    worker = spawn(CLI_BIN, ["worker", "--temporal", `127.0.0.1:${port}`, "--name", "office-mac", "--key-file", keyFile, "--cache", path.join(scratch, "worker")], { env, stdio: "ignore" });
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

    // The worker shown under the queue, and, once it has stopped asking for work, as stopped.
    await session.executeScript("window.location.hash = '#/settings/computers';");
    await session.waitFor('[data-testid="cluster-worker"][data-state="taking-work"]', {
      timeoutMs: 30_000,
      predicate: (t) => t.includes("office-mac"),
      what: "the worker taking work",
    });
    worker.kill("SIGKILL");
    await session.waitFor('[data-testid="cluster-worker"][data-state="stopped"]', {
      timeoutMs: 150_000,
      predicate: (t) => t.includes("office-mac") && t.includes("stopped: it last asked for work"),
      what: "the worker shown as stopped",
    });
    await app.shot("worker-stopped");
  });

  test("coding agents on workers: the gateway's address and a worker's token in Settings, and a project refused the cluster with a sentence", { timeout: 120_000 }, async () => {
    await session.executeScript("window.location.hash = '#/settings/computers';");
    const card = await session.waitFor('[data-testid="worker-gateway"]', { timeoutMs: 20_000, what: "agents on workers" });
    assert.match(await session.getText(card.id), /never gets a model key/);
    const gatewayPort = await freePort();
    await session.sendKeys((await session.waitFor('[data-testid="worker-gateway-listen"]')).id, `127.0.0.1:${gatewayPort}`);
    await session.click((await session.waitFor('[data-testid="worker-gateway-save"]:not([disabled])')).id);
    await session.until(async () => JSON.parse(await app.cli("cluster", "status", "--json")).settings !== null, { timeoutMs: 5_000, what: "still connected" });
    await session.sendKeys((await session.waitFor('[data-testid="worker-token-name"]')).id, "rack-2");
    await session.click((await session.waitFor('[data-testid="worker-token-make"]:not([disabled])')).id);
    const token = await session.waitFor('[data-testid="worker-token"]', { timeoutMs: 10_000, what: "the token" });
    assert.match(await session.getText(token.id), /^healer-worker-[0-9a-f]{64}$/);
    await session.waitFor('[data-testid="gateway-worker"]', { timeoutMs: 10_000, predicate: (t) => t.includes("rack-2"), what: "the worker listed" });
    await session.executeScript("document.querySelector('[data-testid=\"worker-token-made\"]').scrollIntoView({block: 'center'});");
    await app.shot("worker-gateway");

    // A project with Healer's own agent is refused the cluster, in words, under the choice.
    const repo = path.join(scratch, "site");
    const git = (...args) => execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: repo });
    mkdirSync(repo, { recursive: true });
    writeFileSync(path.join(repo, "README.md"), "a site\n");
    git("init", "--quiet", "--initial-branch=main");
    git("add", ".");
    git("commit", "--quiet", "-m", "first");
    execFileSync("git", ["clone", "--quiet", "--bare", repo, path.join(scratch, "site.git")]);
    git("remote", "add", "origin", path.join(scratch, "site.git"));
    const added = JSON.parse(await app.cli("project", "add", repo, "--no-checks", "--json"));
    const id = added.id ?? added.project?.id;
    await session.executeScript(`window.location.hash = ${JSON.stringify(`#/projects/${id}/settings`)};`);
    await session.click((await session.waitFor('[data-testid="project-runs-on-cluster"]', { timeoutMs: 20_000, what: "where its tasks run" })).id);
    const refused = await session.waitFor('[data-testid="field-error-runs-on"]', { timeoutMs: 10_000, what: "the refusal" });
    assert.match(await session.getText(refused.id), /Healer's own agent works only on this computer/);
    await session.executeScript("document.querySelector('[data-testid=\"field-error-runs-on\"]').scrollIntoView({block: 'center'});");
    await app.shot("project-runs-on-refused");
  });
});
