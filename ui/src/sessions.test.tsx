import { screen, waitFor, within } from "@testing-library/react";
import { expect, test } from "vitest";
import { FakeHealer } from "./test/fakeHealer";
import { renderApp } from "./test/renderApp";

test("the Sessions page lists every live session with its last activity and verdict, and the person's own only when watched", async () => {
  const healer = new FakeHealer().install();
  const at = new Date(Date.now() - 120_000).toISOString();
  healer.liveSessions = [
    {
      origin: "healer", session_id: 7, project_id: 1, task_id: "t1", title: "Run the check", agent: "claude-code",
      last_activity_at: at, loop_rule: "repeated-error", loop_message: "The same step failing the same way",
    },
    {
      origin: "person", session_id: null, project_id: null, task_id: null, title: "/home/ada/notes", agent: "claude-code",
      last_activity_at: at, loop_rule: null, loop_message: null,
    },
  ];
  const { user } = renderApp("#/sessions");
  const page = await screen.findByTestId("page-sessions");
  await waitFor(() => expect(within(page).getAllByTestId("live-session")).toHaveLength(1));
  const row = within(page).getByTestId("live-session");
  expect(row).toHaveTextContent("Run the check");
  expect(row).toHaveTextContent("Claude Code, started by Healer");
  expect(row).toHaveTextContent("Going in circles: the same step failing the same way");
  expect(row).toHaveTextContent("Last active 2 min ago");
  expect(within(row).getByRole("link", { name: "Run the check" })).toHaveAttribute("href", "#/projects/1/tasks/t1");
  expect(page).not.toHaveTextContent("repeated-error");

  const toggle = within(page).getByTestId("watch-own-sessions");
  expect(toggle).not.toBeChecked();
  expect(page).toHaveTextContent("It never writes into a session it did not start.");
  await user.click(toggle);
  await waitFor(() => expect(within(page).getAllByTestId("live-session")).toHaveLength(2));
  const mine = within(page).getAllByTestId("live-session")[1];
  expect(mine).toHaveTextContent("/home/ada/notes");
  expect(mine).toHaveTextContent("Claude Code, started by you");
  expect(mine).toHaveTextContent("Making progress");
  expect(healer.callsTo("set_steering_settings").map((c) => (c.args.settings as { watch_own_sessions: boolean }).watch_own_sessions)).toEqual([true]);
});

test("with no agent at work the Sessions page says so", async () => {
  new FakeHealer().install();
  renderApp("#/sessions");
  expect(await screen.findByTestId("no-sessions")).toHaveTextContent("No agent is at work right now");
});
