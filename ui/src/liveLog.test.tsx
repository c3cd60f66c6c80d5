// A script that prints thousands of lines a second must not freeze the window: live output is
// gathered and drawn in batches. Measured as what the window has to do: how many times the log
// on screen changes while 5,000 lines arrive one chunk each.
import { screen, waitFor, within } from "@testing-library/react";
import { expect, test } from "vitest";
import { LIVE_BATCH_MS } from "./liveOutput";
import { FakeHealer } from "./test/fakeHealer";
import { renderApp } from "./test/renderApp";

const LINES = 5_000;

test("5,000 live lines arrive in a few screen updates, all of them, and the stored log opens at its end", async () => {
  const healer = new FakeHealer().install();
  const kept = healer.addWorkflow({ title: "Chatty export" });
  const id = kept.workflow.id;
  const run = healer.addRun(id, { status: "running" }, [{ status: "running" }]);
  const runId = run.run.id;
  renderApp(`#/workflows/${id}/runs/${runId}`);
  const attempt = await screen.findByTestId("attempt");
  const pane = within(attempt).getByTestId("stdout");

  let updates = 0;
  const observer = new MutationObserver((records) => {
    if (records.length > 0) updates += 1;
  });
  observer.observe(pane, { childList: true, characterData: true, subtree: true });

  const started = performance.now();
  for (let i = 0; i < LINES; i++) {
    await healer.print({ run_id: runId, attempt: 1, stream: "stdout", text: `row ${i}\n` });
  }
  const arrivalMs = performance.now() - started;
  await waitFor(() => expect(pane.textContent?.endsWith(`row ${LINES - 1}\n`)).toBe(true), { timeout: 5_000 });
  observer.disconnect();

  expect(pane.textContent?.split("\n").filter(Boolean)).toHaveLength(LINES);
  // One update per batch interval at most, plus the last one: never one per line.
  const batches = Math.ceil(arrivalMs / LIVE_BATCH_MS) + 2;
  expect(updates).toBeLessThanOrEqual(batches);
  expect(updates).toBeLessThan(LINES / 50);
  console.info(`5,000 live lines: ${updates} screen updates while they arrived over ${Math.round(arrivalMs)} ms`);

  // The run ends: the stored log replaces the live one and stays at its end, not at line 1.
  const text = pane.textContent ?? "";
  Object.defineProperty(HTMLElement.prototype, "scrollHeight", { configurable: true, get: () => 90_000 });
  try {
    Object.assign(run.run, { status: "succeeded", finished_at: new Date().toISOString() });
    Object.assign(run.attempts[0], { status: "succeeded", stdout: text, exit_code: 0 });
    await healer.happen({
      kind: "attempt_finished", run_id: runId, workflow_id: id, attempt: 1, succeeded: true, class: null,
      summary: "Succeeded in 1 s", retry_in_ms: null,
    });
    await healer.happen({ kind: "run_finished", run_id: runId, workflow_id: id, title: "Chatty export", status: "succeeded", summary: "Succeeded in 1 s" });
    await waitFor(() => expect(screen.getByTestId("attempt")).toHaveAttribute("data-status", "succeeded"));
    const stored = screen.getByTestId("stdout");
    expect(stored.scrollTop).toBe(90_000);
    expect(screen.getByTestId("download-stdout")).toHaveTextContent("Download full log");
  } finally {
    Reflect.deleteProperty(HTMLElement.prototype, "scrollHeight");
  }
});
