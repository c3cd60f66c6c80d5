import { EditorView } from "@codemirror/view";
import { act, screen, waitFor, within } from "@testing-library/react";
import { expect, test } from "vitest";
import type { ChangeReview } from "./bindings";
import { FakeHealer } from "./test/fakeHealer";
import { FOLDER, step, task } from "./test/fakeProjects";
import { renderApp } from "./test/renderApp";

function healerWithProject() {
  const healer = new FakeHealer().install();
  healer.projects.projects.push({
    id: 1, name: "greeter", path: FOLDER, created_at: "", updated_at: "",
    settings: { main_branch: "main", agent: "builtin", verify: [{ name: "test", command: "npm test" }] },
  });
  healer.projects.tasks = [task("t1", "Greet properly")];
  return healer;
}

const committed: ChangeReview = {
  of: "commit", commit: "1a2b3c4", more_files: 0, worktree: "/data/worktrees/1/t1", session_id: 7,
  files: [
    {
      path: "greet.py", old_path: null, how: "modified", added: 1, removed: 1, shown: true,
      before: "def greet(name):\n    return 'Hi ' + name\n", after: "def greet(name):\n    return 'Hello, ' + name + '!'\n",
    },
    { path: "NOTES.md", old_path: null, how: "added", added: 2, removed: 0, shown: true, before: "", after: "one\ntwo\n" },
    { path: "logo.png", old_path: null, how: "added", added: 0, removed: 0, shown: false, before: null, after: null },
  ],
};

test("a task's change is reviewed file by file side by side, and its working copy opens in the editor or a terminal", async () => {
  const healer = healerWithProject();
  healer.projects.session(6, "t1", "failed", [step("The older attempt.")]);
  healer.projects.session(7, "t1", "finished", [step("It edited greet.py.")]);
  healer.projects.reviews.set(7, committed);
  const { user } = renderApp("#/projects/1/tasks/t1");

  const card = await screen.findByTestId("change-review");
  expect(card).toHaveAttribute("data-of", "commit");
  expect(within(card).getByTestId("change-review-summary")).toHaveTextContent(
    "3 files changed · 3 lines added · 1 line removed. In commit 1a2b3c4.",
  );
  const rows = within(card).getAllByTestId("review-file");
  expect(rows.map((r) => r.dataset.path)).toEqual(["greet.py", "NOTES.md", "logo.png"]);
  expect(rows[0]).toHaveTextContent("Changed");
  expect(rows[1]).toHaveTextContent("New file");
  // The first file is open, side by side like a workflow's versions.
  await waitFor(() => expect(rows[0].querySelectorAll(".cm-editor")).toHaveLength(2));
  const [left, right] = [...rows[0].querySelectorAll(".cm-content")];
  expect(left.textContent).toContain("'Hi ' + name");
  expect(right.textContent).toContain("'Hello, ' + name + '!'");

  await user.click(within(rows[2]).getByRole("button"));
  expect(rows[2]).toHaveTextContent("This file is not text, or too large to show here.");
  expect(rows[0].querySelectorAll(".cm-editor")).toHaveLength(0);

  await user.click(within(card).getByTestId("open-in-editor"));
  await user.click(within(card).getByTestId("open-terminal"));
  await waitFor(() =>
    expect(healer.projects.opened).toEqual([
      { sessionId: 7, terminal: false },
      { sessionId: 7, terminal: true },
    ]),
  );

  // An earlier session shows its own change under its steps.
  healer.projects.reviews.set(6, { of: "nothing", commit: null, files: [], more_files: 0, worktree: null, session_id: 6 });
  renderApp("#/projects/1/tasks/t1/sessions/6");
  const own = await screen.findByRole("region", { name: "What this session changed" });
  expect(own).toHaveTextContent("Nothing to show: no commit, and the working copy is gone.");
  expect(within(own).queryByTestId("open-in-editor")).toBeNull();
  // Its steps can be saved as a trajectory file for other tools.
  const sessions = screen.getAllByTestId("session").filter((s) => s.contains(own));
  await user.click(within(sessions[0]).getByTestId("export-trajectory"));
  await waitFor(() => expect(healer.exportedTrajectories).toEqual([6]));
});

test("the editor command is saved from Settings", async () => {
  const healer = new FakeHealer().install();
  const { user } = renderApp("#/settings");
  const field = await screen.findByTestId("editor-command");
  await user.type(field, "code -n");
  await user.click(screen.getByTestId("save-editor-command"));
  await waitFor(() => expect(healer.projects.editorCommand).toBe("code -n"));
});

test("a comment on a selected line waits, is sent with the others as one, and shows when the agent answered it", async () => {
  const healer = healerWithProject();
  healer.projects.session(7, "t1", "finished", [step("It edited greet.py.")]);
  healer.projects.reviews.set(7, committed);
  const { user } = renderApp("#/projects/1/tasks/t1");

  const card = await screen.findByTestId("change-review");
  const greet = within(card).getAllByTestId("review-file")[0];
  await waitFor(() => expect(greet.querySelectorAll(".cm-editor")).toHaveLength(2));
  expect(greet).toHaveTextContent("Select a line on the right to comment on it.");
  // The person puts the cursor on line 2 of the new side (jsdom has no layout for a click to
  // land by its coordinates, so the selection is made as the editor would make it).
  const right = greet.querySelectorAll(".cm-content")[1] as HTMLElement;
  const view = EditorView.findFromDOM(right);
  if (!view) throw new Error("no editor on the new side");
  act(() => view.dispatch({ selection: { anchor: view.state.doc.line(2).from + 4 } }));
  await user.click(await within(greet).findByTestId("comment-on-lines"));
  expect(within(greet).getByText("Your comment on line 2")).toBeVisible();
  await user.type(within(greet).getByTestId("comment-text"), "Use an f-string here.");
  await user.click(within(greet).getByTestId("save-comment"));

  const kept = await within(greet).findByTestId("review-comment");
  expect(kept).toHaveAttribute("data-state", "waiting");
  expect(kept).toHaveTextContent("line 2");
  expect(kept).toHaveTextContent("Waiting to be sent");
  expect(kept).toHaveTextContent("Use an f-string here.");
  expect(healer.projects.comments[0]).toMatchObject({ path: "greet.py", line_start: 2, line_end: 2 });

  const bar = within(card).getByTestId("comments-send");
  expect(bar).toHaveTextContent("1 comment waiting to be sent.");
  await user.click(within(bar).getByTestId("send-comments"));
  await waitFor(() => expect(healer.projects.commentsSent).toEqual([[1]]));
  expect(await screen.findByText(/it picks the task up again on its branch/)).toBeVisible();
  await waitFor(() => expect(within(greet).getByTestId("review-comment")).toHaveAttribute("data-state", "sent"));
  expect(within(card).queryByTestId("send-comments")).toBeNull();
  // Nothing in the window names engine words.
  expect(card.textContent).not.toMatch(/session_id|sent_at|addressed/);
});
