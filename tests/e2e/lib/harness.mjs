// Process plumbing for the end-to-end stories: binaries, free ports, tauri-driver,
// bounded child processes, and a clean-up that cannot be skipped.

import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { existsSync, mkdtempSync, mkdirSync, createWriteStream, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { waitForDriver } from "./webdriver.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
export const E2E_DIR = path.resolve(here, "..");
export const ARTIFACTS = path.join(E2E_DIR, "artifacts");

const targetDir = process.env.CARGO_TARGET_DIR || path.join(os.homedir(), ".cache/healer/target");
export const DESKTOP_BIN = process.env.HEALER_DESKTOP_BIN || path.join(targetDir, "debug/healer-desktop");
export const CLI_BIN = process.env.HEALER_CLI_BIN || path.join(targetDir, "debug/healer");
export const NATIVE_DRIVER = process.env.HEALER_NATIVE_DRIVER || "/usr/bin/WebKitWebDriver";

/** The tauri-driver executable: $TAURI_DRIVER, else ~/.cargo/bin/tauri-driver, else PATH. */
export function tauriDriverBin() {
  if (process.env.TAURI_DRIVER) return process.env.TAURI_DRIVER;
  const cargoBin = path.join(os.homedir(), ".cargo/bin/tauri-driver");
  return existsSync(cargoBin) ? cargoBin : "tauri-driver";
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Throws a plain-language message when something the stories need is missing. */
export function requireBinaries() {
  const missing = [];
  if (!existsSync(DESKTOP_BIN)) missing.push(`desktop app ${DESKTOP_BIN} (build it with \`make build\`, or set HEALER_DESKTOP_BIN)`);
  if (!existsSync(CLI_BIN)) missing.push(`CLI ${CLI_BIN} (build it with \`make build\`, or set HEALER_CLI_BIN)`);
  if (!existsSync(NATIVE_DRIVER)) missing.push(`${NATIVE_DRIVER} (apt-get install webkit2gtk-driver)`);
  if (missing.length) throw new Error(`missing: ${missing.join("; ")}`);
}

/** A TCP port free right now on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** A fresh, empty data folder for one run. */
/** Every regular file under `dir` (a data folder's database, its WAL, logs, secrets…). */
export function filesUnder(dir) {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    const stat = statSync(file);
    return stat.isDirectory() ? filesUnder(file) : stat.isFile() ? [file] : [];
  });
}

export function freshDataDir(label = "run") {
  return mkdtempSync(path.join(os.tmpdir(), `healer-e2e-${label}-`));
}

/**
 * Run a command to completion, bounded by `timeoutMs` (then SIGKILL and report it).
 * Resolves `{ code, signal, stdout, stderr, timedOut }`; never rejects on a non-zero exit.
 */
export function run(cmd, args, { env = process.env, timeoutMs = 30_000 } = {}) {
  return new Promise((resolve) => {
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    let child;
    try {
      child = spawn(cmd, args, { env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    } catch (e) {
      resolve({ code: null, signal: null, stdout, stderr: `spawn failed: ${e.message}`, timedOut });
      return;
    }
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid, "SIGKILL");
    }, timeoutMs);
    child.on("error", (e) => {
      clearTimeout(timer);
      resolve({ code: null, signal: null, stdout, stderr: stderr + `spawn failed: ${e.message}`, timedOut });
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, timedOut });
    });
  });
}

export function describeRun(r) {
  const how = r.timedOut ? "was killed after its time limit" : r.signal ? `died of ${r.signal}` : `exited ${r.code}`;
  return `${how}\n--- stdout ---\n${r.stdout.trim()}\n--- stderr ---\n${r.stderr.trim()}`;
}

/** Signal a whole process group we created (detached child); ignore if already gone. */
function killGroup(pid, signal) {
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      /* already gone */
    }
  }
}

/**
 * PIDs of live processes whose environment carries HEALER_DATA_DIR=<dataDir>, or (Healer's
 * own, whose initial environment block is wiped at start, see `healer::secrets`) that hold a
 * file of that folder open. The folder is a fresh temp dir made by this run, so this only
 * ever finds processes we started (the app the driver launched, and its children), never
 * anyone else's.
 */
export function pidsUsingDataDir(dataDir) {
  const needle = Buffer.from(`HEALER_DATA_DIR=${dataDir}\0`);
  const pids = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const environ = readFileSync(`/proc/${entry}/environ`);
      if (environ.includes(needle) || holdsFileIn(entry, dataDir)) pids.push(Number(entry));
    } catch {
      /* gone, or not ours to read */
    }
  }
  return pids;
}

function holdsFileIn(pid, dir) {
  if (!readFileSync(`/proc/${pid}/comm`, "utf8").startsWith("healer")) return false;
  return readdirSync(`/proc/${pid}/fd`).some((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith(`${dir}/`);
    } catch {
      return false;
    }
  });
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * tauri-driver (which starts WebKitWebDriver, which starts the app) as a child in its own
 * process group, logging to artifacts/tauri-driver.log.
 */
export class Driver {
  /** `env`: more environment for the app (e.g. HEALER_TEST_HOOKS). */
  constructor(dataDir, env = {}) {
    this.dataDir = dataDir;
    this.env = env;
    this.child = null;
    this.exited = false;
    this.logFile = path.join(ARTIFACTS, "tauri-driver.log");
  }

  get baseUrl() {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(timeoutMs = 20_000) {
    this.port = await freePort();
    this.nativePort = await freePort();
    while (this.nativePort === this.port) this.nativePort = await freePort();
    mkdirSync(ARTIFACTS, { recursive: true });
    const log = createWriteStream(this.logFile);
    const bin = tauriDriverBin();
    const args = ["--port", String(this.port), "--native-port", String(this.nativePort), "--native-driver", NATIVE_DRIVER];
    log.write(`$ HEALER_DATA_DIR=${this.dataDir} ${bin} ${args.join(" ")}\n`);
    this.child = spawn(bin, args, {
      // RUST_LIB_BACKTRACE=0: tauri-driver logs an anyhow backtrace for every /status poll
      // made before WebKitWebDriver listens; app panics still honour RUST_BACKTRACE.
      env: { RUST_LIB_BACKTRACE: "0", ...process.env, ...this.env, HEALER_DATA_DIR: this.dataDir },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    this.child.stdout.pipe(log);
    this.child.stderr.pipe(log);
    const spawnError = new Promise((_, reject) =>
      this.child.once("error", (e) =>
        reject(new Error(`cannot start ${bin}: ${e.message}. Install it with \`cargo install tauri-driver --locked\``)),
      ),
    );
    spawnError.catch(() => {});
    this.child.once("exit", () => (this.exited = true));
    await Promise.race([waitForDriver(this.baseUrl, timeoutMs, () => !this.exited), spawnError]);
  }

  /** Kill the driver's process group, then anything still using our data folder. Bounded. */
  async stop() {
    if (this.child && !this.exited) killGroup(this.child.pid, "SIGTERM");
    await waitUntil(() => this.exited || !this.child, 3_000);
    if (this.child && !this.exited) killGroup(this.child.pid, "SIGKILL");
    await reap(this.dataDir);
  }
}

/** TERM, then KILL, every process still using `dataDir`; bounded to a few seconds. */
export async function reap(dataDir) {
  let pids = pidsUsingDataDir(dataDir);
  for (const pid of pids) killQuiet(pid, "SIGTERM");
  await waitUntil(() => pids.every((p) => !alive(p)), 3_000);
  pids = pids.filter(alive);
  for (const pid of pids) killQuiet(pid, "SIGKILL");
  await waitUntil(() => pids.every((p) => !alive(p)), 2_000);
  return pids;
}

function killQuiet(pid, signal) {
  try {
    process.kill(pid, signal);
  } catch {
    /* gone */
  }
}

async function waitUntil(cond, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (!cond() && Date.now() < deadline) await sleep(100);
}

export function removeDir(dir) {
  try {
    rmSync(dir, { recursive: true, force: true });
  } catch {
    /* best effort */
  }
}
