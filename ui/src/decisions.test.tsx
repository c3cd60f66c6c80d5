import { screen, waitFor, within } from "@testing-library/react";
import { expect, test } from "vitest";
import type { DecisionKind } from "./bindings";
import { FakeHealer } from "./test/fakeHealer";
import { CONNECTION_ERROR, FORENSICS, SURVIVORS_REASON, healerWithMemory } from "./test/memoryExamples";
import { renderApp } from "./test/renderApp";

function decisions() {
  return screen.getAllByTestId("decision-row");
}

function titles() {
  return decisions().map((row) => within(row).getByTestId("decision-title").textContent);
}

test("Activity lists the decisions Healer made on its own, newest first, in plain words", async () => {
  const { sales } = healerWithMemory();
  const { user } = renderApp("#/activity");
  await screen.findByTestId("page-activity");

  await user.click(screen.getByTestId("activity-view-decisions"));

  await waitFor(() => expect(decisions()).toHaveLength(7));
  expect(window.location.hash).toBe("#/activity/decisions");
  expect(screen.getByTestId("activity-view-decisions")).toHaveAttribute("aria-current", "page");
  expect(decisions().map((row) => row.getAttribute("data-kind"))).toEqual([
    "scheduler_resumed",
    "survivors",
    "catastrophic_rollback",
    "cost",
    "systemic",
    "fix_rolled_back",
    "review",
  ]);
  expect(titles()).toEqual([
    "Resumed scheduled runs",
    "Paused scheduled runs",
    "Rolled back to the last version that worked",
    "Asked before spending more on repairs",
    "Paused repairs: the same error in several workflows",
    "Undid a fix that made things worse",
    "Flagged for review",
  ]);

  const [resumed, paused, rollback, cost, systemic, undone] = decisions();
  expect(resumed).toHaveTextContent("About Healer itself");
  expect(resumed).toHaveTextContent("1 h ago");
  expect(resumed.querySelector(".marker")).toHaveClass("tone-good");
  expect(paused).toHaveTextContent(SURVIVORS_REASON);
  expect(paused.querySelector(".marker")).toHaveClass("tone-bad");

  // The workflow, as a link; the summary; and the details, with where the forensic bundle is kept.
  expect(within(rollback).getByRole("link", { name: "“Weekly sales report”" }).getAttribute("href")).toBe(`#/workflows/${sales}`);
  expect(rollback).toHaveTextContent("Rolled back to 1.1 after 3 failed repairs");
  expect(within(rollback).getByTestId("decision-detail")).toHaveTextContent(FORENSICS);
  expect(rollback).toHaveTextContent("3 h ago");
  expect(cost).toHaveTextContent("“Exchange rates”");

  // The systemic breaker names the error by its signature: a link to Memory.
  expect(within(systemic).getByRole("link", { name: "see it in Memory" }).getAttribute("href")).toBe(`#/memory/${CONNECTION_ERROR}`);
  expect(undone).toHaveTextContent("Rolled back the automatic fix that made 1.2");

  // Back to the events.
  await user.click(screen.getByTestId("activity-view-events"));
  expect(await screen.findByText("Nothing has happened yet")).toBeInTheDocument();
  expect(screen.queryByTestId("decision-row")).not.toBeInTheDocument();
});

test("a long detail is folded until asked for, and a kind Healer adds later still reads sensibly", async () => {
  const healer = new FakeHealer().install();
  const id = healer.addWorkflow({ title: "Nightly backup" }).workflow.id;
  const long = Array.from({ length: 6 }, (_, i) => `Step ${i + 1}: Healer checked the backup folder.`).join("\n");
  // A kind a newer engine adds reaches an older window as a plain string.
  const later = "quarantine_output" as DecisionKind;
  healer.memory.addDecision({ kind: later, workflow_id: id, summary: "Kept the last output aside", detail: long });
  const { user } = renderApp("#/activity/decisions");

  const row = await screen.findByTestId("decision-row");
  expect(within(row).getByTestId("decision-title")).toHaveTextContent("Quarantine output");
  expect(row.querySelector(".marker")).toHaveClass("tone-neutral");
  expect(row).toHaveTextContent("Kept the last output aside");
  const toggle = within(row).getByRole("button", { name: "Show the details" });
  expect(toggle).toHaveAttribute("aria-expanded", "false");

  await user.click(toggle);

  expect(within(row).getByRole("button", { name: "Show less" })).toHaveAttribute("aria-expanded", "true");
  expect(within(row).getByTestId("decision-detail").textContent).toBe(long);
});

test("with no decisions yet the page says what will appear there", async () => {
  new FakeHealer().install();
  renderApp("#/activity/decisions");

  expect(await screen.findByText("Healer hasn't had to step in yet")).toBeInTheDocument();
  expect(screen.getByText(/undoes a fix that made things worse/)).toBeInTheDocument();
});

test("a breaker that trips shows in the events and in the decisions at once", async () => {
  const healer = new FakeHealer().install();
  const id = healer.addWorkflow({ title: "Weekly sales report" }).workflow.id;
  renderApp("#/activity/decisions");
  await screen.findByText("Healer hasn't had to step in yet");

  await healer.memory.trip({
    kind: "fix_rolled_back", workflow_id: id, summary: "1.2 rolled back to the code of 1.1 as 1.3",
    detail: "Rolled back the automatic fix that made 1.2",
  });

  const row = await screen.findByTestId("decision-row");
  expect(row).toHaveAttribute("data-kind", "fix_rolled_back");
  expect(row).toHaveTextContent("Undid a fix that made things worse");

  window.location.hash = "#/activity";
  const event = await screen.findByTestId("activity-item");
  expect(event).toHaveAttribute("data-kind", "breaker_tripped");
  expect(event).toHaveTextContent("Undid a fix that made things worse");
  expect(event).toHaveTextContent("1.2 rolled back to the code of 1.1 as 1.3");
  expect(event.querySelector(".marker")).toHaveClass("tone-contained");
});

test("breaker events read as what Healer did, by breaker", async () => {
  const healer = new FakeHealer().install();
  healer.record({ kind: "breaker_tripped", breaker: "systemic", workflow_id: null, detail: "The same error in 3 workflows within the hour; repairs for it paused (checkpoint 5)" });
  healer.record({ kind: "breaker_tripped", breaker: "cost", workflow_id: 1, detail: "Healing used 51200 of 50000 tokens today; checkpoint 6 asks" });
  healer.record({ kind: "breaker_tripped", breaker: "review", workflow_id: 1, detail: "Fixed 6 times in 7 days: flagged for review" });
  healer.record({ kind: "breaker_tripped", breaker: "catastrophic_rollback", workflow_id: 1, detail: "Rolled back to 1.1 after 3 failed repairs" });
  healer.record({ kind: "breaker_tripped", breaker: "survivors", workflow_id: null, detail: SURVIVORS_REASON });
  healer.record({ kind: "breaker_tripped", breaker: "scheduler_resumed", workflow_id: null, detail: "Scheduled runs resumed" });
  healer.record({
    kind: "version_saved", workflow_id: 1, title: "Weekly sales report", version: { major: 1, minor: 3 },
    author: { kind: "healer" }, comment: "Rolled back to 1.1 after 3 failed repairs",
  });
  renderApp("#/activity");

  await waitFor(() => expect(screen.getAllByTestId("activity-item")).toHaveLength(7));
  const titlesShown = screen.getAllByTestId("activity-item").map((row) => row.querySelector(".row-title")?.textContent);
  expect(titlesShown).toEqual([
    "Healer rolled “Weekly sales report” back, as version 1.3",
    "Resumed scheduled runs",
    "Paused scheduled runs",
    "Rolled back to the last version that worked",
    "Flagged for review",
    "Asked before spending more on repairs",
    "Paused repairs: the same error in several workflows",
  ]);
  const tones = screen.getAllByTestId("activity-item").map((row) => row.querySelector(".marker")?.className);
  expect(tones).toEqual([
    "marker tone-contained",
    "marker tone-good",
    "marker tone-bad",
    "marker tone-contained",
    "marker tone-working",
    "marker tone-working",
    "marker tone-bad",
  ]);
});
