import { screen, waitFor, within } from "@testing-library/react";
import { expect, test } from "vitest";
import { FakeHealer } from "./test/fakeHealer";
import { FOLDER, step, task } from "./test/fakeProjects";
import { renderApp } from "./test/renderApp";

function healerWithWaitingWork() {
  const healer = new FakeHealer().install();
  healer.projects.projects.push({
    id: 1, name: "greeter", path: FOLDER, created_at: "", updated_at: "",
    settings: { main_branch: "main", agent: "builtin", verify: [{ name: "test", command: "npm test" }] },
  });
  healer.projects.tasks = [{ ...task("t1", "Greet properly"), status: "closed", closed_reason: "Done: commit 1a2b3c4; it waits on its own branch for you to accept" }];
  healer.projects.session(7, "t1", "finished", [step("It edited greet.py.")]);
  healer.projects.unaccepted = { branch: "healer/t1", main_branch: "main", main_moved: true, how: "squash" };
  return healer;
}

test("work waiting on its branch is accepted the project's way, and a conflict asks whether the agent resolves it", async () => {
  const healer = healerWithWaitingWork();
  healer.projects.acceptance = { kind: "conflict", files: ["greet.py", "test_greet.py"], said: "main changed the same lines" };
  const { user } = renderApp("#/projects/1/tasks/t1");

  const card = await screen.findByTestId("finish-work");
  expect(card).toHaveTextContent("main has changed since the agent started");
  expect(within(card).getByTestId("accept-how")).toHaveValue("squash");
  await user.selectOptions(within(card).getByTestId("accept-how"), "merge");
  await user.click(within(card).getByTestId("accept-work"));

  const dialog = await screen.findByRole("alertdialog");
  expect(dialog).toHaveTextContent("The work and main changed the same lines");
  expect(within(dialog).getAllByRole("listitem").map((li) => li.textContent)).toEqual(["greet.py", "test_greet.py"]);
  expect(dialog).toHaveTextContent("Nothing was changed");
  // The agent's offer has the focus; Enter takes it.
  expect(within(dialog).getByTestId("resolve-with-agent")).toHaveFocus();
  await user.keyboard("{Enter}");
  await waitFor(() => expect(screen.queryByRole("alertdialog")).toBeNull());
  expect(healer.projects.finished).toEqual([
    { act: "accept", taskId: "t1", how: "merge" },
    { act: "resolve", taskId: "t1", how: "merge" },
  ]);
});

test("a check that fails after the main branch came in shows its output, and leaving the conflict changes nothing", async () => {
  const healer = healerWithWaitingWork();
  healer.projects.acceptance = {
    kind: "checks_failed", check: "test", output: "AssertionError: Hello, Ada!",
    said: "main had moved on, so its changes were brought into the work first; then the check \u201ctest\u201d failed, so nothing was accepted.",
  };
  const { user } = renderApp("#/projects/1/tasks/t1");
  await user.click(await screen.findByTestId("accept-work"));
  const failed = await screen.findByTestId("accept-checks-failed");
  expect(failed).toHaveTextContent("nothing was accepted");
  expect(failed).toHaveTextContent("AssertionError: Hello, Ada!");

  healer.projects.acceptance = { kind: "conflict", files: ["greet.py"], said: "" };
  await user.click(screen.getByTestId("accept-work"));
  await user.click(await screen.findByTestId("leave-on-branch"));
  expect(screen.queryByRole("alertdialog")).toBeNull();
  expect(healer.projects.finished.map((f) => f.act)).toEqual(["accept", "accept"]);
});

test("discarding asks first, keeps a copy, and the task shows no waiting work after", async () => {
  const healer = healerWithWaitingWork();
  const { user } = renderApp("#/projects/1/tasks/t1");
  await user.click(await screen.findByTestId("discard-work"));
  const dialog = await screen.findByRole("alertdialog");
  expect(dialog).toHaveTextContent("A copy is kept in the task's snapshots");
  // Keeping it is what Enter does.
  expect(within(dialog).getByRole("button", { name: "Keep it" })).toHaveFocus();
  await user.click(within(dialog).getByTestId("confirm-discard"));
  await waitFor(() => expect(screen.queryByTestId("finish-work")).toBeNull());
  expect(healer.projects.finished).toEqual([{ act: "discard", taskId: "t1", how: null }]);
});

test("a pull request asks for the host's token right there the first time, then shows its link", async () => {
  const healer = healerWithWaitingWork();
  const { user } = renderApp("#/projects/1/tasks/t1");
  await user.click(await screen.findByTestId("open-pull-request"));
  const token = await screen.findByTestId("host-token");
  expect(screen.getByTestId("pull-request")).toHaveTextContent("Healer has no token for GitHub yet");
  await user.type(token, "ghp_secret");
  await user.click(screen.getByRole("button", { name: "Keep it and open the pull request" }));
  expect(await screen.findByTestId("pull-request-url")).toHaveTextContent("https://github.com/ada/greeter/pull/7");
  expect(screen.getByTestId("pull-request")).toHaveTextContent("Pull request 7 on GitHub (open)");
  expect(healer.projects.hostToken).toBe("ghp_secret");
  expect(screen.queryByTestId("host-token")).toBeNull();
});

test("a pull request's checks are said in a sentence, and a red one says Healer is fixing it", async () => {
  const healer = healerWithWaitingWork();
  healer.projects.pullRequest = {
    project_id: 1, task_id: "t1", host: "github", api_url: "https://api.github.com/", number: 7,
    url: "https://github.com/ada/greeter/pull/7", state: "open", pushed_commit: "1a2b3c4d", created_at: "", updated_at: "",
    checks: "failing", checks_said: "\u201cbuild\u201d failed", next_check_at: null, healed_commit: "1a2b3c4d",
  };
  renderApp("#/projects/1/tasks/t1");
  const said = await screen.findByTestId("pull-request-checks");
  expect(said).toHaveAttribute("data-checks", "failing");
  expect(said).toHaveTextContent("Its checks fail: \u201cbuild\u201d failed. Healer sent the agent the check's log and pushes its fix once it passes the project's checks here.");
  expect(said.textContent).not.toMatch(/healed_commit|pushed_commit|failing/);
});

test("a host whose address does not say what it runs is asked for its API address, then the token, then the pull request opens", async () => {
  const healer = healerWithWaitingWork();
  healer.projects.unknownHost = true;
  const { user } = renderApp("#/projects/1/tasks/t1");
  await user.click(await screen.findByTestId("open-pull-request"));
  await user.type(await screen.findByTestId("host-api-url"), "https://git.example.com/api/v3");
  await user.click(screen.getByRole("button", { name: "Open the pull request" }));
  await user.type(await screen.findByTestId("host-token"), "ghp_secret");
  await user.click(screen.getByRole("button", { name: "Keep it and open the pull request" }));
  expect(await screen.findByTestId("pull-request-url")).toHaveTextContent("https://github.com/ada/greeter/pull/7");
  expect(healer.projects.pullRequestApis).toEqual([null, "https://git.example.com/api/v3", "https://git.example.com/api/v3"]);
  expect(screen.getByTestId("pull-request")).not.toHaveTextContent("cannot tell");
});
