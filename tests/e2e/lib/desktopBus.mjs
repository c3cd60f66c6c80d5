// What the app says on the session bus, watched with dbus-monitor: desktop notifications are
// `Notify` calls to org.freedesktop.Notifications. A test session has no notification server,
// so the call fails there; the monitor still sees that the app raised it, with its words.

import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { pidsUsingDataDir, sleep } from "./harness.mjs";

export class NotificationWatcher {
  constructor() {
    this.text = "";
    this.child = null;
  }

  /** Start watching; resolves once the monitor is connected. */
  async start() {
    this.child = spawn("dbus-monitor", ["--session", "type='method_call',interface='org.freedesktop.Notifications',member='Notify'"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.child.stdout.on("data", (d) => (this.text += d));
    this.child.stderr.on("data", (d) => (this.text += d));
    const deadline = Date.now() + 5_000;
    // It announces itself with the bus's NameAcquired signal.
    while (!this.text.includes("NameAcquired") && Date.now() < deadline) await sleep(50);
    if (!this.text.includes("NameAcquired")) throw new Error(`dbus-monitor did not connect: ${this.text || "no output"}`);
  }

  /** Every Notify call so far: `{ summary, body }`. */
  seen() {
    return this.text
      .split(/^method call /m)
      .filter((block) => block.includes("member=Notify"))
      .map((block) => {
        const strings = [...block.matchAll(/^\s+string "([\s\S]*?)"$/gm)].map((m) => m[1]);
        // app_name, app_icon, summary, body (replaces_id is a uint32 between).
        return { summary: strings[2] ?? "", body: strings[3] ?? "" };
      });
  }

  /** The first notification matching `predicate`, waiting up to `timeoutMs`. */
  async waitFor(predicate, { timeoutMs = 30_000, what = "a desktop notification" } = {}) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = this.seen().find(predicate);
      if (hit) return hit;
      if (Date.now() >= deadline) {
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; seen: ${JSON.stringify(this.seen())}`);
      }
      await sleep(200);
    }
  }

  stop() {
    this.child?.kill("SIGTERM");
  }
}

/** The app's own processes (the app and WebKit's), by name: `[{ pid, name }]`. */
export function appProcesses(dataDir) {
  return pidsUsingDataDir(dataDir)
    .map((pid) => {
      try {
        return { pid, name: readFileSync(`/proc/${pid}/comm`, "utf8").trim() };
      } catch {
        return null;
      }
    })
    .filter((p) => p && /^(healer-desktop|WebKit(Web|Network|GPU)Proc)/.test(p.name));
}
