import { screen, waitFor, within } from "@testing-library/react";
import { expect, test } from "vitest";
import { FakeHealer, minutesAgo } from "./test/fakeHealer";
import { renderApp } from "./test/renderApp";

function rowTitles() {
  return screen.getAllByTestId("activity-item").map((row) => row.querySelector(".row-title")?.textContent);
}

test("activity shows stored events and then a live one", async () => {
  const healer = new FakeHealer().install();
  healer.record({ kind: "engine_started", pid: 4242, version: "0.1.0" }, minutesAgo(12));
  healer.record(
    { kind: "heal_started", heal_id: 3, source: "self_check", scenario: "test_alert", class: "transient",
      signature: "sig", summary: "the nightly backup exited with code 1" },
    minutesAgo(2),
  );

  const { user } = renderApp();
  await user.click(await screen.findByTestId("nav-activity"));

  await screen.findByTestId("page-activity");
  await waitFor(() => expect(rowTitles()).toEqual(["Healer is looking into a failure", "Healer started"]));
  expect(screen.getByText("2 min ago")).toBeInTheDocument();
  expect(screen.getByText("Transient failure: the nightly backup exited with code 1")).toBeInTheDocument();
  expect(healer.callsTo("list_events")[0].args).toEqual({ before: null, limit: 100 });

  const live = await healer.happen({
    kind: "remedy_applied", heal_id: 3, remedy: "record_and_notify", status: "contained",
    detail: "the person was told in a notification",
  });
  await waitFor(() =>
    expect(rowTitles()).toEqual(["Healer told you about it", "Healer is looking into a failure", "Healer started"]),
  );
  const newest = screen.getAllByTestId("activity-item")[0];
  expect(newest).toHaveAttribute("data-kind", "remedy_applied");
  expect(within(newest).getByText("just now")).toHaveAttribute("title");

  // The bridge may deliver an event the first load already had; it must not show twice.
  const { events } = await import("./bindings");
  await events.healerEvent.emit(live);
  await new Promise((resolve) => setTimeout(resolve, 20));
  expect(screen.getAllByTestId("activity-item")).toHaveLength(3);

  // No engine wording on the page until the person asks for the technical record.
  expect(document.body).not.toHaveTextContent("record_and_notify");
  await user.click(screen.getByTestId("activity-details"));
  expect(within(screen.getAllByTestId("activity-item")[0]).getByTestId("activity-technical")).toHaveTextContent(
    "remedy applied · heal id: 3 · remedy: record_and_notify · status: contained",
  );
});

test("a heal that finishes reads as its outcome", async () => {
  const healer = new FakeHealer().install();
  healer.record({ kind: "heal_finished", heal_id: 7, outcome: "unresolved", summary: "disk still full" });
  renderApp("#/activity");

  const row = await screen.findByTestId("activity-item");
  expect(row).toHaveAttribute("data-kind", "heal_finished");
  expect(row).toHaveTextContent("Healer could not repair the failure");
  expect(row).toHaveTextContent("disk still full");
});

test("an empty activity log says what will appear there", async () => {
  new FakeHealer().install();
  renderApp("#/activity");

  expect(await screen.findByText("Nothing has happened yet")).toBeInTheDocument();
  expect(screen.getByText(/heals a failure, tries a remedy/)).toBeInTheDocument();
  expect(screen.queryByTestId("activity-item")).not.toBeInTheDocument();
});

test("activity that cannot be loaded explains why, in the backend's words", async () => {
  new FakeHealer().fail("list_events", "store", "The database is busy; try again in a moment.").install();
  renderApp("#/activity");

  const alert = await screen.findByRole("alert");
  expect(alert).toHaveTextContent("Activity couldn't be loaded.");
  expect(alert).toHaveTextContent("The database is busy; try again in a moment.");
});

test("auto-fixes and the planner read as plain sentences", async () => {
  const healer = new FakeHealer().install();
  healer.record({ kind: "maintenance_started", workflow_id: 1, task_id: 41, run_id: 5, title: "Auto-fix: Weekly sales report" });
  healer.record({ kind: "run_started", run_id: 6, workflow_id: 1, title: "Weekly sales report", trigger: "fix" });
  healer.record({ kind: "maintenance_finished", workflow_id: 1, task_id: 41, status: "fixed", summary: "Fixed as 1.1 (1.0 → 1.1); re-running" });
  healer.record({
    kind: "maintenance_finished", workflow_id: 1, task_id: 42, status: "gave_up", summary: "The orders file is missing.",
  });
  healer.record({ kind: "planner_replied", workflow_id: 1, task_id: 43, question: "Should refunds count?", summary: "I asked." });
  renderApp("#/activity");

  await waitFor(() => expect(screen.getAllByTestId("activity-item")).toHaveLength(5));
  const [asked, gaveUp, fixed, rerun, started] = screen.getAllByTestId("activity-item");
  expect(started).toHaveTextContent("Auto-fix started for “Weekly sales report”");
  expect(started).toHaveTextContent("A run failed on an error in the script; Healer is repairing it.");
  expect(rerun).toHaveTextContent("Re-run after an automatic fix");
  expect(fixed).toHaveTextContent("Auto-fix repaired the script — re-running");
  expect(fixed).toHaveTextContent("Fixed as 1.1 (1.0 → 1.1); re-running");
  expect(fixed.querySelector(".marker")).toHaveClass("tone-good");
  expect(gaveUp).toHaveTextContent("Auto-fix stopped and asks you");
  expect(gaveUp).toHaveTextContent("The orders file is missing.");
  expect(gaveUp.querySelector(".marker")).toHaveClass("tone-bad");
  expect(asked).toHaveTextContent("The planner asked you something");
  expect(asked).toHaveTextContent("Should refunds count?");
});
