import { screen, waitFor, within } from "@testing-library/react";
import { expect, test } from "vitest";
import { FakeHealer } from "./test/fakeHealer";
import { answer, toolStep } from "./test/fakeThreads";
import { renderApp } from "./test/renderApp";

test("a repair that gave up says how often it failed since, and Try auto-fix again starts one", async () => {
  const healer = new FakeHealer().install();
  const id = healer.addWorkflow({ title: "Weekly sales report" }).workflow.id;
  const notification = healer.notification(
    "“Weekly sales report” needs you: automatic repair failed",
    "The export has no total any more.",
    {
      kind: "maintenance_failed", workflow_id: id, run_id: 4, actions: ["replan", "retry_autofix"],
      repeats: 3, repeated_at: new Date().toISOString(),
    },
  );
  healer.record({ kind: "notification_created", notification });
  const { user } = renderApp("#/notifications");

  const row = (await screen.findAllByTestId("notification-item"))[0];
  expect(within(row).getByTestId("notification-repeats")).toHaveTextContent("It failed 3 more times since.");
  await user.click(screen.getByTestId("notification-action-retry_autofix"));
  await waitFor(() => expect(healer.callsTo("retry_autofix").map((c) => c.args)).toEqual([{ workflowId: id }]));
  await waitFor(() => expect(window.location.hash).toBe(`#/workflows/${id}/autofix`));
});

test("a question about one error in several workflows names each of them", async () => {
  const healer = new FakeHealer().install();
  const ids = ["North sales", "South sales", "East sales"].map((title) => healer.addWorkflow({ title }).workflow.id);
  renderApp("#/workflows");
  await healer.checkpoints.raise({
    trigger: "systemic", recommend: 3, context: "The same error failed 3 workflows within 60 minutes.",
    affected: ids.map((workflow_id, i) => ({ workflow_id, title: ["North sales", "South sales", "East sales"][i], run_id: i + 1 })),
  });
  const dialog = await screen.findByTestId("checkpoint-dialog");
  expect(dialog).toHaveTextContent("3 workflows");
  expect(within(dialog).getByTestId("checkpoint-affected")).toHaveTextContent(
    "Failed with it: “North sales”, “South sales” and “East sales”. Your choice applies to each of them.",
  );
});

test("Healer's nudge in the planner's chat is Healer's, not the person's", async () => {
  const healer = new FakeHealer().install();
  const id = healer.addWorkflow({ title: "Weekly sales report" }).workflow.id;
  healer.tasks.planner = () => [
    ...toolStep("ask", { question: "Which column holds the total now?" }, "asked"),
    { role: "nudge", content: "Your last reply had no usable answer or tool call." },
    answer("I asked which column to use."),
  ];
  const { user } = renderApp(`#/workflows/${id}`);
  await user.click(await screen.findByRole("tab", { name: "Chat" }));
  const chat = await screen.findByTestId("planner-chat");
  await user.type(within(chat).getByLabelText("Message to the planner"), "It broke{Enter}");
  expect(await within(chat).findByTestId("chat-nudge")).toHaveTextContent("Healer asked the planner again");
  expect(within(chat).queryByText("Your last reply had no usable answer or tool call.")).not.toBeInTheDocument();
});

test("the script editor lists what Healer gives a script, the recovery hint too", async () => {
  const healer = new FakeHealer().install();
  const id = healer.addWorkflow({ title: "Weekly sales report" }).workflow.id;
  const { user } = renderApp(`#/workflows/${id}`);
  await user.click(await screen.findByRole("tab", { name: "Script" }));
  const help = await screen.findByTestId("script-variables-help");
  await user.click(within(help).getByText("What Healer gives your script"));
  expect(help).toHaveTextContent("HEALER_RECOVERY_HINT");
  expect(help).toHaveTextContent("HEALER_RESULT");
});
