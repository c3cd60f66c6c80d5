import { screen, waitFor, within } from "@testing-library/react";
import { expect, test } from "vitest";
import { FakeHealer } from "./test/fakeHealer";
import { renderApp } from "./test/renderApp";

function healerWithTwoUnread() {
  const healer = new FakeHealer().install();
  for (const [title, body] of [
    ["Backup repaired", "The nightly backup failed once and ran fine on retry."],
    ["Report needs you", "The weekly report keeps failing; Healer paused it."],
  ]) {
    healer.record({ kind: "notification_created", notification: healer.notification(title, body) });
  }
  return healer;
}

test("marking all notifications read clears the badge", async () => {
  const healer = healerWithTwoUnread();
  const { user } = renderApp("#/notifications");

  expect(await screen.findByTestId("unread-count")).toHaveTextContent("2");
  const rows = await screen.findAllByTestId("notification-item");
  expect(rows.map((row) => row.getAttribute("data-read"))).toEqual(["false", "false"]);
  // Newest first.
  expect(rows[0]).toHaveTextContent("Report needs you");

  await user.click(screen.getByRole("button", { name: "Mark all read" }));

  await waitFor(() => expect(screen.queryByTestId("unread-count")).not.toBeInTheDocument());
  expect(healer.callsTo("mark_notifications_read").map((call) => call.args)).toEqual([{ ids: [] }]);
  for (const row of screen.getAllByTestId("notification-item")) expect(row).toHaveAttribute("data-read", "true");
  expect(screen.queryByRole("button", { name: "Mark all read" })).not.toBeInTheDocument();
});

test("opening an unread notification marks just that one read", async () => {
  const healer = healerWithTwoUnread();
  const { user } = renderApp("#/notifications");

  const [newest] = await screen.findAllByTestId("notification-item");
  await user.click(newest);

  await waitFor(() => expect(screen.getByTestId("unread-count")).toHaveTextContent("1"));
  expect(healer.callsTo("mark_notifications_read").map((call) => call.args)).toEqual([{ ids: [2] }]);
  const rows = screen.getAllByTestId("notification-item");
  expect(rows.map((row) => row.getAttribute("data-read"))).toEqual(["true", "false"]);
});

test("a new notification raises the badge while the person is on another page", async () => {
  const healer = new FakeHealer().install();
  renderApp("#/workflows");
  await screen.findByTestId("page-workflows");
  expect(screen.queryByTestId("unread-count")).not.toBeInTheDocument();

  await healer.happen({ kind: "notification_created", notification: healer.notification("Heal 4 contained", "…") });

  expect(await screen.findByTestId("unread-count")).toHaveTextContent("1");
});

test("with no notifications the page says what will arrive there", async () => {
  new FakeHealer().install();
  renderApp("#/notifications");

  expect(await screen.findByText("No notifications")).toBeInTheDocument();
  expect(screen.getByText(/When Healer repairs something/)).toBeInTheDocument();
  expect(screen.queryByRole("button", { name: "Mark all read" })).not.toBeInTheDocument();
});

function healerWithFailedRepair() {
  const healer = new FakeHealer().install();
  const kept = healer.addWorkflow({ title: "Weekly sales report", status: "needs_attention" });
  const id = kept.workflow.id;
  healer.addRun(id, { status: "succeeded", summary: "Succeeded in 1.2 s" });
  const run = healer.addRun(id, { status: "failed", class: "logic", summary: "KeyError: 'total' (logic)" }, [
    { status: "failed", class: "logic", stderr: "KeyError: 'total'\n" },
  ]);
  const body = "The orders file no longer has a total.\nI could not tell which field to use instead.\n\nRe-plan to decide.";
  healer.record({
    kind: "notification_created",
    notification: healer.notification("“Weekly sales report” needs you: automatic repair failed", body, {
      kind: "maintenance_failed", workflow_id: id, run_id: run.run.id, task_id: 41, actions: ["replan"],
    }),
  });
  return { healer, id, runId: run.run.id, body };
}

test("a failed repair shows its explanation, and Re-plan opens the workflow's chat ready to write", async () => {
  const { healer, id, body } = healerWithFailedRepair();
  const { user } = renderApp("#/notifications");

  const [row] = await screen.findAllByTestId("notification-item");
  expect(row).toHaveAttribute("data-kind", "maintenance_failed");
  expect(row).toHaveTextContent("“Weekly sales report” needs you: automatic repair failed");
  // Line breaks are kept.
  expect(row.querySelector(".notification-body")?.textContent).toBe(body);
  expect(screen.queryByRole("button", { name: "Open settings" })).not.toBeInTheDocument();

  await user.click(screen.getByRole("button", { name: "Re-plan" }));

  const chat = await screen.findByTestId("planner-chat");
  expect(screen.getByTestId("page-workflow")).toHaveAttribute("data-workflow-id", String(id));
  expect(screen.getByRole("tab", { name: "Chat" })).toHaveAttribute("aria-selected", "true");
  await waitFor(() => expect(within(chat).getByLabelText("Message to the planner")).toHaveFocus());
  expect(healer.callsTo("get_planner_chat").map((c) => c.args)).toContainEqual({ workflowId: id });
  // Acting on it read it.
  expect(healer.callsTo("mark_notifications_read").map((c) => c.args)).toEqual([{ ids: [1] }]);
});

test("a notification about a failed run links to that run", async () => {
  const { id, runId } = healerWithFailedRepair();
  const { user } = renderApp("#/notifications");

  await user.click(await screen.findByRole("link", { name: "See the failed run" }));

  await screen.findByTestId("page-workflow");
  expect(window.location.hash).toBe(`#/workflows/${id}/runs/${runId}`);
  const rows = await screen.findAllByTestId("run-row");
  const failed = rows.find((r) => r.getAttribute("data-run-id") === String(runId))!;
  expect(failed).toHaveAttribute("data-target", "true");
  // That run is open; the other one is not.
  expect(await within(failed).findByTestId("attempt")).toHaveTextContent("Logic error");
  expect(within(rows.find((r) => r !== failed)!).queryByTestId("attempt")).not.toBeInTheDocument();
});

test("a repair without a model offers Open settings, which goes to Settings → Models", async () => {
  const healer = new FakeHealer().install();
  const kept = healer.addWorkflow({ title: "Weekly sales report" });
  healer.record({
    kind: "notification_created",
    notification: healer.notification(
      "“Weekly sales report” failed and could not be repaired",
      "KeyError: 'total'. Healer repairs errors like this with a model, and none is set up. Set one up in Settings → Models; then Healer can try the repair again from here.",
      { kind: "no_model", workflow_id: kept.workflow.id, run_id: null, actions: ["open_settings"] },
    ),
  });
  const { user } = renderApp("#/notifications");

  const row = await screen.findByTestId("notification-item");
  expect(row).toHaveAttribute("data-kind", "no_model");
  // Re-plan needs a model too: not offered.
  expect(screen.queryByRole("button", { name: "Re-plan" })).not.toBeInTheDocument();
  // No run: no link to one.
  expect(screen.queryByRole("link", { name: "See the failed run" })).not.toBeInTheDocument();

  await user.click(screen.getByRole("button", { name: "Open settings" }));

  expect(await screen.findByTestId("page-settings")).toBeInTheDocument();
  expect(window.location.hash).toBe("#/settings/models");
  expect(screen.getByTestId("settings-section-models")).toHaveAttribute("aria-current", "page");
  expect(await screen.findByTestId("no-model")).toBeInTheDocument();
});

test("once a model is set up, a notice about the missing model offers the repair instead", async () => {
  const healer = new FakeHealer().install();
  const kept = healer.addWorkflow({ title: "Weekly sales report" });
  healer.record({
    kind: "notification_created",
    notification: healer.notification(
      "“Weekly sales report” failed and could not be repaired",
      "KeyError: 'total'. Healer repairs errors like this with a model, and none is set up. Set one up in Settings → Models; then Healer can try the repair again from here.",
      { kind: "no_model", workflow_id: kept.workflow.id, run_id: null, actions: ["open_settings"] },
    ),
  });
  renderApp("#/notifications");
  await screen.findByTestId("notification-item");
  expect(await screen.findByRole("button", { name: "Open settings" })).toBeInTheDocument();

  healer.tierSettings = [{ tier: "cheap", provider: "openai", model: "gpt-4o-mini", budget_tokens: 5000 }];
  await healer.happen({ kind: "llm_settings_changed", what: "a tier was set" });
  expect(await screen.findByRole("button", { name: "Repair it now" })).toBeInTheDocument();
  expect(screen.getByTestId("notification-item")).toHaveTextContent("A model is set up now: Healer can try the repair again.");
  expect(screen.queryByRole("button", { name: "Open settings" })).not.toBeInTheDocument();
  expect(screen.queryByText("Set up a model step by step")).not.toBeInTheDocument();
});
