// A tiny W3C WebDriver client over global fetch. No dependencies.
// Every request is bounded by a timeout, so nothing here can hang.

import { execFile } from "node:child_process";
import { mkdir } from "node:fs/promises";
import { promisify } from "node:util";
import path from "node:path";

const ELEMENT_KEY = "element-6066-11e4-a52e-4f735466cecf";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const execFileP = promisify(execFile);

/**
 * Run in the page before a click: scroll the element to the middle of the view, wait until its
 * place on screen has stayed the same for three frames and 100 ms (at most 3 s), and note where
 * the next click lands (window.__healerClick) — inside the element, or on what.
 */
const STEADY_THEN_WATCH = `
const el = arguments[0];
const done = arguments[arguments.length - 1];
el.scrollIntoView({ block: "center", inline: "nearest" });
const place = () => { const r = el.getBoundingClientRect(); return [r.x, r.y, r.width, r.height].join(","); };
const start = performance.now();
let last = place(); let since = start; let frames = 0;
const watch = () => {
  window.__healerClickStop?.();
  delete window.__healerClick;
  const onClick = (event) => {
    stop();
    const target = event.target instanceof Element ? event.target : document.body;
    const usable = target.closest("a, button, input, select, textarea, label, summary, [role], [tabindex]");
    window.__healerClick = {
      inside: el.contains(target),
      usable: usable !== null,
      what: (usable ?? target).outerHTML.slice(0, 160),
    };
  };
  const stop = () => document.removeEventListener("click", onClick, true);
  window.__healerClickStop = stop;
  document.addEventListener("click", onClick, true);
  done(true);
};
const tick = () => {
  const now = performance.now();
  const current = place();
  if (current !== last) { last = current; since = now; frames = 0; } else { frames += 1; }
  if ((frames >= 3 && now - since >= 100) || now - start > 3000) watch();
  else requestAnimationFrame(tick);
};
requestAnimationFrame(tick);
`;

/** The X id of the Healer window that is on screen (the largest one, when a test opened two). */
async function healerWindow() {
  const { stdout } = await execFileP("xwininfo", ["-root", "-children"], { timeout: 10_000 });
  let best = null;
  for (const line of stdout.split("\n")) {
    const m = line.match(/^\s*(0x[0-9a-f]+) "Healer": .*?\s(\d+)x(\d+)[+-]/);
    if (!m) continue;
    const { stdout: info } = await execFileP("xwininfo", ["-id", m[1]], { timeout: 10_000 });
    if (!info.includes("IsViewable")) continue;
    const area = Number(m[2]) * Number(m[3]);
    if (!best || area > best.area) best = { id: m[1], area };
  }
  if (!best) throw new Error("no Healer window is on the display to take a picture of");
  return best.id;
}

export class WebDriverError extends Error {
  constructor(method, url, status, value) {
    const code = value?.error ?? `http ${status}`;
    super(`WebDriver ${method} ${url} failed: ${code}: ${value?.message ?? JSON.stringify(value)}`);
    this.code = code;
    this.status = status;
  }
}

/** Send one WebDriver command. Returns the `value` of the JSON reply. */
export async function wdRequest(baseUrl, method, route, body, timeoutMs = 30_000) {
  const url = `${baseUrl}${route}`;
  let res;
  try {
    res = await fetch(url, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json; charset=utf-8" },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (e) {
    throw new Error(`WebDriver ${method} ${url}: no answer within ${timeoutMs} ms or connection failed: ${e.cause?.message ?? e.message}`);
  }
  const text = await res.text();
  let json;
  try {
    json = text ? JSON.parse(text) : {};
  } catch {
    throw new Error(`WebDriver ${method} ${url}: HTTP ${res.status}, not JSON: ${text.slice(0, 500)}`);
  }
  if (!res.ok || (json.value && typeof json.value === "object" && "error" in json.value)) {
    throw new WebDriverError(method, url, res.status, json.value);
  }
  return json.value;
}

/** Poll `GET /status` until the driver answers ready, or throw after `timeoutMs`. */
export async function waitForDriver(baseUrl, timeoutMs, isAlive = () => true) {
  const deadline = Date.now() + timeoutMs;
  let last = "no answer";
  while (Date.now() < deadline) {
    if (!isAlive()) throw new Error(`the driver exited before answering ${baseUrl}/status`);
    try {
      const value = await wdRequest(baseUrl, "GET", "/status", undefined, 2_000);
      if (value?.ready !== false) return value;
      last = `not ready: ${JSON.stringify(value)}`;
    } catch (e) {
      last = e.message;
    }
    await sleep(250);
  }
  throw new Error(`the driver at ${baseUrl} did not answer /status within ${timeoutMs} ms (${last})`);
}

export class Session {
  constructor(baseUrl, id) {
    this.baseUrl = baseUrl;
    this.id = id;
  }

  static async create(baseUrl, capabilities, timeoutMs = 60_000) {
    const value = await wdRequest(baseUrl, "POST", "/session", { capabilities }, timeoutMs);
    return new Session(baseUrl, value.sessionId);
  }

  cmd(method, route, body, timeoutMs) {
    return wdRequest(this.baseUrl, method, `/session/${this.id}${route}`, body, timeoutMs);
  }

  async delete() {
    await this.cmd("DELETE", "", undefined, 15_000);
  }

  /** Element id for the first match of a CSS selector; throws `no such element`. */
  async findElement(css) {
    const value = await this.cmd("POST", "/element", { using: "css selector", value: css });
    return value[ELEMENT_KEY];
  }

  /** All element ids matching a CSS selector (possibly none). */
  async findElements(css) {
    const value = await this.cmd("POST", "/elements", { using: "css selector", value: css });
    return value.map((v) => v[ELEMENT_KEY]);
  }

  /**
   * Click an element as a person would: brought to the middle of the view and left there until it
   * stops moving on screen, then clicked. WebDriver alone scrolls it just inside the edge and
   * clicks at once, at the place it measured; when the page is still settling (a scroll, a
   * re-render that moves the element) the click lands beside it. Where the click landed is
   * checked: beside the element on nothing a person could use, it is made again (as a person
   * would, seeing nothing happen); on something else, the story fails saying where it went.
   */
  async click(elementId) {
    for (let attempt = 1; ; attempt++) {
      await this.cmd(
        "POST",
        "/execute/async",
        { script: `${STEADY_THEN_WATCH}`, args: [{ [ELEMENT_KEY]: elementId }] },
        5_000,
      ).catch(() => sleep(300));
      await this.cmd("POST", `/element/${elementId}/click`, {});
      const landed = await this.executeScript(
        "window.__healerClickStop?.(); const l = window.__healerClick; delete window.__healerClick; return l ?? null;",
      ).catch(() => null);
      if (landed === null || landed.inside) return;
      if (landed.usable || attempt >= 3) {
        throw new Error(`a click meant for an element landed beside it, on ${landed.what} (attempt ${attempt})`);
      }
      console.warn(`webdriver: a click landed beside its element, on ${landed.what}; clicking again`);
      await sleep(200);
    }
  }

  /** Type text into an element (an input or textarea), as keystrokes. */
  async sendKeys(elementId, text) {
    await this.cmd("POST", `/element/${elementId}/value`, { text });
  }

  async getText(elementId) {
    return this.cmd("GET", `/element/${elementId}/text`);
  }

  async getAttribute(elementId, name) {
    return this.cmd("GET", `/element/${elementId}/attribute/${encodeURIComponent(name)}`);
  }

  async executeScript(script, args = []) {
    return this.cmd("POST", "/execute/sync", { script, args });
  }

  /** Handles of the windows (browsing contexts) the app has now. */
  async windowHandles() {
    return this.cmd("GET", "/window/handles");
  }

  /** Drive the window with `handle` from now on (a window the app made again). */
  async switchToWindow(handle) {
    await this.cmd("POST", "/window", { handle });
  }

  async title() {
    return this.cmd("GET", "/title");
  }

  /** Wait until the page has painted its latest DOM (two animation frames), bounded. */
  async settlePaint(timeoutMs = 3_000) {
    await this.cmd(
      "POST",
      "/execute/async",
      {
        script:
          "const done = arguments[arguments.length - 1];" +
          "requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(() => done(true), 50)));",
        args: [],
      },
      timeoutMs,
    ).catch(() => sleep(300));
  }

  /**
   * Save a PNG of the window to `file` once the page has painted; returns the path. The picture
   * is taken from the X display (ImageMagick's `import`), as a person would see it, so that the
   * stories can look at the window whichever way WebKit composites it (WebKit's own WebDriver
   * snapshot never finishes without DMA-BUF: docs/memory.md).
   */
  async screenshot(file) {
    await this.settlePaint();
    await mkdir(path.dirname(file), { recursive: true });
    const window = await healerWindow();
    await execFileP("import", ["-window", window, file], { timeout: 20_000 });
    return file;
  }

  /** Poll `fn` until it returns a truthy value (returned), or throw after `timeoutMs`. */
  async until(fn, { timeoutMs = 10_000, intervalMs = 200, what = "a condition" } = {}) {
    const deadline = Date.now() + timeoutMs;
    let last = "";
    for (;;) {
      try {
        const value = await fn();
        if (value) return value;
      } catch (e) {
        last = ` (last error: ${e.message})`;
      }
      if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last}`);
      await sleep(intervalMs);
    }
  }

  /**
   * Poll until `css` matches an element (and, when given, `predicate(text)` holds for
   * one of the matches). Returns `{ id, text }`. Throws after `timeoutMs` saying what
   * was last seen. `failFast` (a CSS selector) aborts early when it appears, e.g. an
   * error screen.
   */
  async waitFor(css, { timeoutMs = 10_000, predicate, intervalMs = 200, failFast, what } = {}) {
    const deadline = Date.now() + timeoutMs;
    let seen = "nothing matched";
    for (;;) {
      if (failFast) {
        const bad = await this.findElements(failFast).catch(() => []);
        if (bad.length) {
          const text = await this.getText(bad[0]).catch((e) => `(text unreadable: ${e.message})`);
          throw new Error(`while waiting for ${what ?? css}, ${failFast} appeared: ${text}`);
        }
      }
      try {
        const ids = await this.findElements(css);
        if (ids.length) {
          if (!predicate) return { id: ids[0], text: undefined };
          const texts = [];
          for (const id of ids) {
            const text = await this.getText(id);
            if (predicate(text)) return { id, text };
            texts.push(text);
          }
          seen = `${ids.length} match(es) with text ${JSON.stringify(texts).slice(0, 300)}`;
        } else {
          seen = "nothing matched";
        }
      } catch (e) {
        seen = e.message;
      }
      if (Date.now() >= deadline) {
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${what ?? css}; last seen: ${seen}`);
      }
      await sleep(intervalMs);
    }
  }
}
