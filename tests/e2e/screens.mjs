// Screenshots of the screens a person sees, at the smallest window (600 px) and a wide one, to
// look at after UI work: `node screens.mjs [label]` under run.sh's display (GTK_THEME=Adwaita:dark
// for the dark ones). Also fails when a screen scrolls sideways at 600 px. Not part of `make test`.

import path from "node:path";
import { ARTIFACTS } from "./lib/harness.mjs";
import { ScriptedApp } from "./lib/scriptedApp.mjs";

const label = process.argv[2] ?? "light";
const screens = [
  ["workflows", "#/workflows"],
  ["workflow", "#/workflows/3"],
  ["script", "#/workflows/1/script"],
  ["versions", "#/workflows/1/versions"],
  ["chat", "#/workflows/3/chat"],
  ["activity", "#/activity"],
  ["notifications", "#/notifications"],
  ["checkpoints", "#/checkpoints"],
  ["models", "#/settings/models"],
  ["setup", "#/setup"],
  ["new", "#/workflows/new"],
];

const app = new ScriptedApp(`screens-${label}`);
const session = await app.start(["cheap", "standard"]);
let sideways = [];
try {
  await session.waitFor('[data-testid="nav-workflows"]', { timeoutMs: 30_000 });
  // Something to show: a failed run, a repair that asks, a saved version.
  await app.cli("workflow", "run", "weekly-sales-report", "--until-healed").catch(() => {});
  for (const width of [600, 1500]) {
    await session.cmd("POST", "/window/rect", { width, height: 800 });
    for (const [name, hash] of screens) {
      await session.executeScript(`window.location.hash = ${JSON.stringify(hash)};`);
      await new Promise((r) => setTimeout(r, 700));
      await session.screenshot(path.join(ARTIFACTS, "screens", `${name}-${label}-${width}.png`));
      const wide = await session.executeScript(
        "const m = document.querySelector('main.content'); return [document.scrollingElement.scrollWidth, window.innerWidth, m ? m.scrollWidth : 0, m ? m.clientWidth : 0];",
      );
      if (width === 600 && (wide[0] > wide[1] || wide[2] > wide[3])) sideways.push(`${name}: ${JSON.stringify(wide)}`);
    }
  }
} finally {
  await app.stop();
}
if (sideways.length) {
  console.error(`sideways scroll at 600 px:\n${sideways.join("\n")}`);
  process.exit(1);
}
console.log(`screens saved in ${path.join(ARTIFACTS, "screens")}`);
