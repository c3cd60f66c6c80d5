import { screen, waitFor, within } from "@testing-library/react";
import { expect, test } from "vitest";
import { FakeHealer } from "./test/fakeHealer";
import { renderApp } from "./test/renderApp";
import type { SessionRecord } from "./bindings";
import { modelUseText } from "./projectText";

test("the Sessions page lists every live session with its last activity and verdict, and the person's own only when watched", async () => {
  const healer = new FakeHealer().install();
  const at = new Date(Date.now() - 120_000).toISOString();
  healer.liveSessions = [
    {
      origin: "healer", session_id: 7, project_id: 1, task_id: "t1", title: "Run the check", agent: "claude-code",
      last_activity_at: at, loop_rule: "repeated-error", loop_message: "The same step failing again and again",
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
  expect(row).toHaveTextContent("Going in circles: the same step failing again and again");
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

test("the Sessions page lists past sessions of every project, filterable, each opening its task", async () => {
  const healer = new FakeHealer().install();
  const session = (id: number, task: string, title: string, status: SessionRecord["status"], project_id = 1): SessionRecord => ({
    id, project_id, task_id: task, task_title: title, agent: "builtin", status, worktree: "/w", branch: `healer/${task}`,
    base_commit: null, pgid: null, agent_session_id: null, transcript: null, exit_code: null, summary: "", commit_id: null,
    merged: false, started_at: "2026-11-28T10:00:00.000Z", ended_at: "2026-11-28T10:04:30.000Z", resumed_from: null,
    agent_version: null, raw_lines: 0,
  });
  healer.pastSessions = [
    { session: session(3, "t2", "Fix login", "failed"), project_name: "greeter", tokens: 12_400, cost_usd: 0.0312 },
    { session: session(2, "t1", "Add dark mode", "finished", 2), project_name: "website", tokens: 0, cost_usd: null },
  ];
  const { user } = renderApp("#/sessions");
  const history = await screen.findByTestId("session-history");
  await waitFor(() => expect(within(history).getAllByTestId("past-session")).toHaveLength(2));
  const [first] = within(history).getAllByTestId("past-session");
  expect(first).toHaveTextContent("Fix login");
  expect(first).toHaveTextContent("greeter");
  expect(first).toHaveTextContent("Failed");
  expect(first).toHaveTextContent("5 minutes");
  expect(first).toHaveTextContent("12,400 tokens · $0.03");
  expect(first.querySelector("a")).toHaveAttribute("href", "#/projects/1/tasks/t2/sessions/3");

  await user.type(within(history).getByTestId("history-search"), "website");
  await waitFor(() => expect(within(history).getAllByTestId("past-session")).toHaveLength(1));
  expect(within(history).getByTestId("past-session")).toHaveTextContent("Add dark mode");
  await user.clear(within(history).getByTestId("history-search"));
  await user.selectOptions(within(history).getByTestId("history-status"), "failed");
  await waitFor(() => expect(within(history).getAllByTestId("past-session")).toHaveLength(1));
  expect(within(history).getByTestId("past-session")).toHaveTextContent("Fix login");
});

test("the history lists the person's own Claude Code sessions Healer watched, with what it noticed", async () => {
  const healer = new FakeHealer().install();
  healer.steeringSettings = { ...healer.steeringSettings, watch_own_sessions: true };
  healer.ownPastSessions = [
    {
      origin: "person", session_id: null, project_id: null, task_id: null, title: "/home/ada/notes", agent: "claude-code",
      last_activity_at: new Date(Date.now() - 3 * 3600_000).toISOString(), loop_rule: "repeat",
      loop_message: "It ran `cat config.ini` four times with the same result.",
    },
  ];
  renderApp("#/sessions");
  const own = await screen.findByTestId("own-past-session");
  expect(own).toHaveTextContent("/home/ada/notes");
  expect(own).toHaveTextContent("Claude Code, started by you · last active 3 h ago");
  expect(own).toHaveTextContent("Going in circles");
  expect(own.querySelector("code")).toHaveTextContent("cat config.ini");
  expect(own).not.toHaveTextContent("`");
});

test("what a session used of its model reads as a sentence, in money where there is a price", () => {
  const use = { requests: 3, prompt_tokens: 12345, completion_tokens: 678, cached_tokens: 0, cost_usd: 0.4213, unpriced_tokens: 0 };
  expect(modelUseText(use, false)).toBe("It asked the model 3 times: 12,345 tokens read, 678 tokens written, costing $0.42.");
  expect(modelUseText({ ...use, requests: 1, cost_usd: 0, unpriced_tokens: 13023 }, true)).toBe(
    "So far it has asked the model 1 time: 12,345 tokens read, 678 tokens written (the model has no price in Healer, so it is counted in tokens).",
  );
});
