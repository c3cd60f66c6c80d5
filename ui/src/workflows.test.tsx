import { screen, waitFor, within } from "@testing-library/react";
import { expect, test } from "vitest";
import { events } from "./bindings";
import { FakeHealer, minutesAgo } from "./test/fakeHealer";
import { renderApp } from "./test/renderApp";

function rows() {
  return screen.getAllByTestId("workflow-row");
}

test("the list shows each workflow's status, schedule and last run", async () => {
  const healer = new FakeHealer().install();
  const report = healer.addWorkflow({
    title: "Weekly sales report", schedule: { kind: "cron", expression: "0 9 * * 1" }, status: "needs_attention",
    next_run_at: new Date(Date.now() + 25 * 60_000).toISOString(),
  });
  healer.addVersion(report.workflow.id, "print(2)", "Read the new field", { major: 1, minor: 1 });
  healer.addRun(report.workflow.id, {
    status: "failed", summary: "KeyError: 'total' (logic)", started_at: minutesAgo(125), finished_at: minutesAgo(125),
  });
  const backup = healer.addWorkflow({ title: "Nightly backup", schedule: { kind: "interval", seconds: 900 }, status: "paused" });
  healer.addWorkflow({ title: "Clean downloads", name: "clean-downloads" });

  renderApp();

  await waitFor(() => expect(rows()).toHaveLength(3));
  // What needs the person first, then by name.
  const [first, third, second] = rows();
  expect(first).toHaveAttribute("data-name", "weekly-sales-report");
  expect(first).toHaveAttribute("data-status", "needs_attention");
  expect(first).toHaveTextContent("Needs attention");
  expect(first).toHaveTextContent("At 09:00, only on Monday");
  expect(first).toHaveTextContent("Failed");
  expect(first).toHaveTextContent("2 h ago");
  expect(within(first).getByTitle("KeyError: 'total' (logic)")).toBeInTheDocument();
  expect(first).toHaveTextContent("in 25 min");
  expect(first).toHaveTextContent("v1.1");

  expect(second).toHaveAttribute("data-status", "paused");
  expect(second).toHaveTextContent("Paused");
  expect(second).toHaveTextContent("Every 15 minutes");
  expect(within(second).getByLabelText("No next run")).toHaveTextContent("—");

  expect(third).toHaveAttribute("data-name", "clean-downloads");
  expect(third).toHaveTextContent("Active");
  expect(third).toHaveTextContent("Only when run by hand");
  expect(third).toHaveTextContent("Not run yet");

  // A run that starts elsewhere shows up without a reload.
  const run = healer.addRun(backup.workflow.id, { status: "running", started_at: minutesAgo(0), finished_at: null });
  await healer.happen({ kind: "run_started", run_id: run.run.id, workflow_id: backup.workflow.id, title: "Nightly backup", trigger: "schedule" });
  await waitFor(() => expect(rows()[2]).toHaveAttribute("data-busy", "true"));
  expect(rows()[2]).toHaveTextContent("Running");

  // A row opens its workflow.
  expect(first.getAttribute("href")).toBe(`#/workflows/${report.workflow.id}`);
});

test("loading the examples from the empty state lists them", async () => {
  const healer = new FakeHealer().install();
  const { user } = renderApp();

  await user.click(await screen.findByTestId("load-examples"));

  await waitFor(() => expect(rows()).toHaveLength(4));
  // By name, as a person reads them.
  expect(rows().map((row) => row.getAttribute("data-name"))).toEqual([
    "daily-weather-summary",
    "exchange-rates",
    "team-chat-digest",
    "weekly-sales-report",
  ]);
  expect(rows()[0]).toHaveTextContent("Every day at 07:00");
  expect(rows()[1]).toHaveTextContent("Every hour");
  expect(healer.callsTo("load_examples")).toHaveLength(1);
  expect(screen.queryByTestId("load-examples")).not.toBeInTheDocument();
});

test("examples that cannot be loaded say why, and the button stays", async () => {
  new FakeHealer().fail("load_examples", "io", "Cannot write into /home/ada/.local/share/healer/workflows.").install();
  const { user } = renderApp();

  await user.click(await screen.findByTestId("load-examples"));

  expect(await screen.findByRole("alert")).toHaveTextContent("Cannot write into /home/ada/.local/share/healer/workflows.");
  expect(screen.getByTestId("load-examples")).toBeEnabled();
});

test("a workflow made while the window opens is listed, though its event came before the window listened", async () => {
  const healer = new FakeHealer().install();
  healer.addWorkflow({ title: "Clean downloads", name: "clean-downloads" });
  const listen = healer.holdListening();

  renderApp();
  await waitFor(() => expect(rows()).toHaveLength(1));
  // Another program makes a workflow; its event reaches nobody, the window is not listening yet.
  const made = healer.addWorkflow({ title: "Nightly report", name: "nightly-report" });
  await healer.happen({ kind: "workflow_created", workflow_id: made.workflow.id, title: "Nightly report" });
  listen();

  await waitFor(() => expect(rows().map((row) => row.getAttribute("data-name"))).toEqual(["clean-downloads", "nightly-report"]));
});

test("when the window missed events it reads everything again", async () => {
  const healer = new FakeHealer().install();
  healer.addWorkflow({ title: "Clean downloads", name: "clean-downloads" });
  renderApp();
  await waitFor(() => expect(rows()).toHaveLength(1));

  // Made while the engine's events ran ahead of the window: its event never came.
  const made = healer.addWorkflow({ title: "Nightly report", name: "nightly-report" });
  healer.record({ kind: "workflow_created", workflow_id: made.workflow.id, title: "Nightly report" });
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(rows()).toHaveLength(1);
  await events.eventsMissed.emit({ count: 1 });

  await waitFor(() => expect(rows().map((row) => row.getAttribute("data-name"))).toEqual(["clean-downloads", "nightly-report"]));
});
