import { screen, waitFor, within } from "@testing-library/react";
import { expect, test } from "vitest";
import { FakeHealer } from "./test/fakeHealer";
import { plannerSave } from "./test/fakeTasks";
import { answer, toolStep } from "./test/fakeThreads";
import { renderApp } from "./test/renderApp";

function healerWithWorkflow() {
  const healer = new FakeHealer().install();
  const kept = healer.addWorkflow({ title: "Weekly sales report", code: "print('v1')\n" });
  return { healer, id: kept.workflow.id };
}

test("a message to the planner is sent, the planner thinks, and its answer appears", async () => {
  const { healer, id } = healerWithWorkflow();
  let release = () => {};
  healer.tasks.plannerGate = new Promise((resolve) => (release = resolve));
  healer.tasks.planner = () => [
    ...plannerSave("print('v2')\n", "Total by week instead of by day", "2.0"),
    ...toolStep("schedule", { schedule: "0 7 * * 1" }, "schedule changed: At 07:00, only on Monday"),
    ...toolStep("schedule", { schedule: "every 5s" }, "error: not changed: an interval must be at least 60 seconds", { isError: true }),
    answer("Done: it now totals by week, every Monday at 07:00."),
  ];
  const { user } = renderApp(`#/workflows/${id}`);

  await user.click(await screen.findByRole("tab", { name: "Chat" }));
  const chat = await screen.findByTestId("planner-chat");
  expect(chat).toHaveTextContent("Tell the planner what this workflow should do");
  const box = within(chat).getByLabelText("Message to the planner");
  expect(box).toHaveAttribute("placeholder", "Tell the planner what this workflow should do…");

  // Shift+Enter is a new line; Enter sends.
  await user.type(box, "Total by week{Shift>}{Enter}{/Shift}and run on Mondays");
  expect(box).toHaveValue("Total by week\nand run on Mondays");
  await user.keyboard("{Enter}");

  await waitFor(() => expect(healer.callsTo("send_planner_message")).toHaveLength(1));
  expect(healer.callsTo("send_planner_message")[0].args).toEqual({ workflowId: id, message: "Total by week\nand run on Mondays" });
  expect(await within(chat).findByText("The planner is thinking…")).toBeInTheDocument();
  expect(box).toHaveValue("");
  // Shown at once, on the person's side; nothing more can be sent meanwhile.
  expect(within(chat).getByTestId("chat-person")).toHaveTextContent("Total by week and run on Mondays");
  await user.type(box, "Also on Fridays");
  expect(within(chat).getByTestId("chat-send")).toBeDisabled();
  await user.keyboard("{Enter}");
  expect(healer.callsTo("send_planner_message")).toHaveLength(1);

  release();
  // A whole turn of steps, each an event the chat follows.
  await waitFor(() => expect(within(chat).queryByText("The planner is thinking…")).not.toBeInTheDocument(), { timeout: 4000 });
  expect(within(chat).getByTestId("chat-planner")).toHaveTextContent("Done: it now totals by week, every Monday at 07:00.");
  expect(within(chat).getAllByTestId("chat-person")).toHaveLength(1);
  expect(within(chat).getByTestId("chat-save")).toHaveTextContent("Saved version 2.0 — Total by week instead of by day");
  expect(within(chat).getByTestId("chat-schedule")).toHaveTextContent("Schedule changed: At 07:00, only on Monday");
  expect(within(chat).getByTestId("chat-tool-error")).toHaveTextContent("Not changed: an interval must be at least 60 seconds");
  expect(within(chat).getByTestId("chat-send")).toBeEnabled();
  // The saved version reached the page too.
  await waitFor(() => expect(screen.getByTestId("page-workflow")).toHaveTextContent("v2.0"));
});

test("an open question is highlighted and the message box asks for its answer", async () => {
  const { healer, id } = healerWithWorkflow();
  healer.tasks.planner = () => [
    ...toolStep("ask", { question: "Should refunds count towards the total?" }, "The question is shown to the person."),
    answer("I asked you a question above."),
  ];
  const { user } = renderApp(`#/workflows/${id}/chat`);

  const box = await screen.findByLabelText("Message to the planner");
  await user.type(box, "Leave out cancelled orders{Enter}");

  const question = await screen.findByTestId("chat-question");
  expect(question).toHaveTextContent("The planner asks");
  expect(question).toHaveTextContent("Should refunds count towards the total?");
  await waitFor(() => expect(box).toHaveAttribute("placeholder", "Answer the planner's question…"));
});

test("a planner without a model says so plainly", async () => {
  const { healer, id } = healerWithWorkflow();
  healer.tasks.planner = null;
  const { user } = renderApp(`#/workflows/${id}/chat`);

  await user.type(await screen.findByLabelText("Message to the planner"), "Run it hourly{Enter}");

  const failure = await screen.findByTestId("chat-failure");
  expect(failure).toHaveTextContent("The planner could not answer.");
  expect(failure).toHaveTextContent("No model is configured for any tier");
  expect(within(failure).getByRole("link", { name: "Set up a model" })).toHaveAttribute("href", "#/setup");
  // The engine kept no copy of the message; the chat still shows what was sent.
  expect(screen.getByTestId("chat-person")).toHaveTextContent("Run it hourly");
  expect(screen.queryByText("The planner is thinking…")).not.toBeInTheDocument();
});

test("a message that cannot be sent says why and stays in the box", async () => {
  const { healer, id } = healerWithWorkflow();
  healer.fail("send_planner_message", "engine_unavailable", "The engine is not running. Restart Healer.");
  const { user } = renderApp(`#/workflows/${id}/chat`);

  const box = await screen.findByLabelText("Message to the planner");
  await user.type(box, "Run it hourly");
  await user.click(screen.getByRole("button", { name: "Send" }));

  expect(await screen.findByRole("alert")).toHaveTextContent("The message couldn't be sent. The engine is not running. Restart Healer.");
  expect(box).toHaveValue("Run it hourly");
});

test("the automatic repair's question opens the chat and stays before the person's answer once answered", async () => {
  const { healer, id } = healerWithWorkflow();
  healer.tasks.maintainerQuestions.set(id, "Tell me whether total is the same figure as amount.");
  healer.tasks.planner = () => [answer("Thanks, I will read amount.")];
  const { user } = renderApp(`#/workflows/${id}`);
  await user.click(await screen.findByRole("tab", { name: "Chat" }));
  const chat = await screen.findByTestId("planner-chat");
  const waiting = await within(chat).findByTestId("maintainer-question");
  expect(waiting).toHaveTextContent("The automatic repair stopped and asks you");
  // The box says whose question it answers.
  expect(within(chat).getByLabelText("Message to the planner")).toHaveAttribute("placeholder", "Answer the repair assistant's question…");

  await user.type(within(chat).getByLabelText("Message to the planner"), "Yes, the same figure{Enter}");
  await waitFor(() => expect(within(chat).getByTestId("chat-planner")).toHaveTextContent("Thanks, I will read amount."));
  const kept = within(chat).getByTestId("maintainer-question");
  expect(kept).toHaveAttribute("data-answered", "true");
  expect(kept).toHaveTextContent("The automatic repair stopped and asked you");
  expect(kept).toHaveTextContent("Tell me whether total is the same figure as amount.");
  const items = [...chat.querySelectorAll(".chat-item")].map((i) => i.textContent ?? "");
  expect(items.findIndex((t) => t.includes("Tell me whether"))).toBeLessThan(items.findIndex((t) => t.includes("Yes, the same figure")));
});
