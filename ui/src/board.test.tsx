import { createEvent, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { expect, test } from "vitest";
import { FakeHealer } from "./test/fakeHealer";
import { FOLDER, task } from "./test/fakeProjects";
import { renderApp } from "./test/renderApp";

function healerWithBoard() {
  const healer = new FakeHealer().install();
  healer.projects.projects.push({
    id: 1, name: "greeter", path: FOLDER, created_at: "", updated_at: "",
    settings: { main_branch: "main", agent: "builtin", verify: [{ name: "test", command: "npm test" }] },
  });
  healer.projects.tasks = [
    task("t1", "Greet properly", { labels: ["ui"] }),
    task("t2", "Say goodbye", { labels: ["api"], priority: 1 }),
    task("t3", "Being worked on", { status: "in_progress" }),
  ];
  return healer;
}

/** What a drag carries, as the webview's DataTransfer does. */
function carrying() {
  const data = new Map<string, string>();
  return {
    setData: (type: string, value: string) => data.set(type, value),
    getData: (type: string) => data.get(type) ?? "",
    get types() {
      return [...data.keys()];
    },
    effectAllowed: "all",
    dropEffect: "none",
  };
}

function card(title: string): HTMLElement {
  const found = screen.getAllByTestId("task-card").find((c) => c.dataset.title === title);
  if (!found) throw new Error(`no card ${title}`);
  return found;
}

function drag(from: HTMLElement, to: HTMLElement) {
  const dataTransfer = carrying();
  fireEvent.dragStart(from, { dataTransfer });
  const over = createEvent.dragOver(to, { dataTransfer });
  fireEvent(to, over);
  fireEvent.drop(to, { dataTransfer });
  return over.defaultPrevented;
}

test("a task dragged to Blocked is blocked, dropped on another goes before it, and nothing lands in In progress", async () => {
  const healer = healerWithBoard();
  renderApp("#/projects/1");
  await screen.findByTestId("board");

  // Within Open: priority order (Say goodbye is more urgent); dropping Greet on it puts it first.
  expect(within(screen.getByTestId("column-open")).getAllByTestId("task-card").map((c) => c.dataset.title)).toEqual([
    "Say goodbye",
    "Greet properly",
  ]);
  drag(card("Greet properly"), card("Say goodbye"));
  await waitFor(() =>
    expect(within(screen.getByTestId("column-open")).getAllByTestId("task-card").map((c) => c.dataset.title)).toEqual([
      "Greet properly",
      "Say goodbye",
    ]),
  );
  expect(healer.callsTo("move_project_task")[0].args).toMatchObject({ taskId: "t1", before: "t2" });

  expect(drag(card("Greet properly"), screen.getByTestId("column-blocked"))).toBe(true);
  await waitFor(() => expect(card("Greet properly")).toHaveAttribute("data-status", "blocked"));
  expect(healer.callsTo("set_project_task_status")[0].args).toMatchObject({ taskId: "t1", status: "blocked" });

  // "In progress" takes no drop, and a task an agent works on does not move.
  expect(drag(card("Say goodbye"), screen.getByTestId("column-in_progress"))).toBe(false);
  expect(card("Being worked on")).toHaveAttribute("draggable", "false");
  expect(healer.callsTo("set_project_task_status")).toHaveLength(1);
});

test("labels show on cards and filter the board", async () => {
  healerWithBoard();
  const { user } = renderApp("#/projects/1");
  const filter = await screen.findByTestId("label-filter");
  expect(within(filter).getAllByTestId("label-chip").map((c) => c.textContent)).toEqual(["api", "ui"]);
  await user.click(within(filter).getByRole("button", { name: "ui" }));
  expect(screen.getAllByTestId("task-card").map((c) => c.dataset.title)).toEqual(["Greet properly"]);
  expect(within(screen.getByTestId("column-blocked")).getByText("Nothing labelled ui")).toBeInTheDocument();
  await user.click(within(filter).getByRole("button", { name: "All" }));
  expect(screen.getAllByTestId("task-card")).toHaveLength(3);
});
