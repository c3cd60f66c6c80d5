import { screen, waitFor, within } from "@testing-library/react";
import { expect, test } from "vitest";
import { FakeHealer, minutesAgo } from "./test/fakeHealer";
import { typeAtEnd } from "./test/editor";
import { renderApp } from "./test/renderApp";

const TRACEBACK = `Traceback (most recent call last):
  File "/w/main.py", line 9, in <module>
    total = order["total"]
KeyError: 'total'`;

function healerWithFailedRun() {
  const healer = new FakeHealer().install();
  const kept = healer.addWorkflow({ title: "Weekly sales report", summary: "Totals last week's orders" });
  const id = kept.workflow.id;
  healer.addRun(id, { status: "succeeded", summary: "Succeeded in 1.2 s", started_at: minutesAgo(60 * 26) }, [
    { status: "succeeded", stdout: "Total: 1200 EUR\n" },
  ]);
  healer.addRun(
    id,
    { status: "failed", summary: "KeyError: 'total' (logic)", class: "logic", started_at: minutesAgo(30) },
    [
      {
        status: "failed", exit_code: null, timed_out: false, class: "transient", duration_ms: 5000,
        stderr: "ConnectionRefusedError: [Errno 111]\n", note: "Retrying in 1.4 s",
        evidence: { error_type: "ConnectionRefusedError", message: "[Errno 111] Connection refused", stack: null },
        signal: 9,
      },
      {
        status: "failed", exit_code: 1, class: "logic", duration_ms: 830,
        stdout: "Reading orders.json\n  42 orders\n[… 3 KB cut …]\nDone reading\n", stdout_cut: 3072,
        stderr: TRACEBACK,
        evidence: { error_type: "KeyError", message: "'total'", stack: TRACEBACK },
        result: '{"orders":42,"total":null}',
        note: "Healer is looking for a repair.",
      },
    ],
  );
  return { healer, id };
}

test("a run expands to its attempts with logs, evidence and result", async () => {
  const { id } = healerWithFailedRun();
  const { user } = renderApp(`#/workflows/${id}`);

  await screen.findByTestId("page-workflow");
  const runs = await screen.findAllByTestId("run-row");
  expect(runs.map((r) => r.getAttribute("data-status"))).toEqual(["failed", "succeeded"]);
  const [failed] = runs;
  expect(failed).toHaveTextContent("KeyError: 'total' (logic)");
  expect(failed).toHaveTextContent("Scheduled");
  expect(failed).toHaveTextContent("2 attempts");
  expect(within(failed).queryByTestId("attempt")).not.toBeInTheDocument();

  await user.click(within(failed).getByRole("button", { expanded: false }));

  const attempts = await within(failed).findAllByTestId("attempt");
  expect(attempts.map((a) => a.getAttribute("data-class"))).toEqual(["transient", "logic"]);
  const [first, second] = attempts;
  expect(first).toHaveTextContent("Transient");
  expect(first).toHaveTextContent("Stopped by signal 9");
  expect(first).toHaveTextContent("Healer: Retrying in 1.4 s");
  expect(first).toHaveTextContent("ConnectionRefusedError: [Errno 111] Connection refused");

  expect(second).toHaveTextContent("Logic error");
  expect(second).toHaveTextContent("Exit code 1");
  expect(second).toHaveTextContent("830 ms");
  expect(within(second).getByTestId("stdout").textContent).toBe("Reading orders.json\n  42 orders\n[… 3 KB cut …]\nDone reading\n");
  expect(second).toHaveTextContent("3 KB cut from the middle");
  expect(within(second).getByTestId("stderr").textContent).toBe(TRACEBACK);
  expect(second.querySelector(".evidence-stack")?.textContent).toBe(TRACEBACK);
  expect(within(second).getByTestId("result").textContent).toBe('{\n  "orders": 42,\n  "total": null\n}');

  // A succeeded attempt has no class.
  await user.click(within(runs[1]).getByRole("button", { expanded: false }));
  const ok = await within(runs[1]).findByTestId("attempt");
  expect(ok).toHaveAttribute("data-class", "");
  expect(within(ok).getByTestId("stdout")).toHaveTextContent("Total: 1200 EUR");
});

test("live output of a running attempt appears as it is printed", async () => {
  const healer = new FakeHealer().install();
  const kept = healer.addWorkflow({ title: "Exchange rates" });
  const id = kept.workflow.id;
  const { user } = renderApp(`#/workflows/${id}`);
  await screen.findByText("No runs yet");

  await user.click(screen.getByTestId("run-now"));
  const runId = kept.runs[0].run.id;
  expect(healer.callsTo("run_workflow_now")).toHaveLength(1);
  // The engine starts it: the run and its first attempt are running.
  Object.assign(kept.runs[0].run, { status: "running", started_at: minutesAgo(0), attempts: 1 });
  kept.runs[0].attempts.push(healer.attempt(runId, 1, { status: "running" }));
  await healer.happen({ kind: "run_started", run_id: runId, workflow_id: id, title: "Exchange rates", trigger: "manual" });

  // A running run opens by itself; Run now waits for it.
  const attempt = await screen.findByTestId("attempt");
  expect(screen.getByTestId("run-row")).toHaveAttribute("data-status", "running");
  expect(screen.getByTestId("run-now")).toBeDisabled();
  expect(within(attempt).getByTestId("stdout")).toHaveTextContent("Waiting for output…");

  await healer.print({ run_id: runId, attempt: 1, stream: "stdout", text: "Asking the rate service…\n" });
  await waitFor(() => expect(within(attempt).getByTestId("stdout").textContent).toBe("Asking the rate service…\n"));
  await healer.print({ run_id: runId, attempt: 1, stream: "stdout", text: "EUR 1.0, USD 1.08\n" });
  await healer.print({ run_id: runId, attempt: 1, stream: "stderr", text: "warning: cached rates\n" });
  // Another run's output stays out.
  await healer.print({ run_id: runId + 1, attempt: 1, stream: "stdout", text: "someone else\n" });
  await waitFor(() =>
    expect(within(attempt).getByTestId("stdout").textContent).toBe("Asking the rate service…\nEUR 1.0, USD 1.08\n"),
  );
  expect(within(attempt).getByTestId("stderr").textContent).toBe("warning: cached rates\n");

  // When the attempt ends, the stored log takes over.
  Object.assign(kept.runs[0].run, { status: "succeeded", summary: "Succeeded in 0.4 s", finished_at: minutesAgo(0) });
  Object.assign(kept.runs[0].attempts[0], {
    status: "succeeded", exit_code: 0, duration_ms: 400, stdout: "Asking the rate service…\nEUR 1.0, USD 1.08\nSaved\n",
    stderr: "warning: cached rates\n", finished_at: minutesAgo(0),
  });
  await healer.happen({
    kind: "attempt_finished", run_id: runId, workflow_id: id, attempt: 1, succeeded: true, class: null,
    summary: "Succeeded in 0.4 s", retry_in_ms: null,
  });
  await healer.happen({ kind: "run_finished", run_id: runId, workflow_id: id, title: "Exchange rates", status: "succeeded", summary: "Succeeded in 0.4 s" });

  await waitFor(() => expect(screen.getByTestId("run-row")).toHaveAttribute("data-status", "succeeded"));
  await waitFor(() => expect(screen.getByTestId("stdout").textContent).toBe("Asking the rate service…\nEUR 1.0, USD 1.08\nSaved\n"));
  // Still open for the person who watched it.
  expect(screen.getByTestId("attempt")).toHaveAttribute("data-status", "succeeded");
  expect(screen.getByTestId("run-now")).toBeEnabled();
});

test("the versions tab shows a side-by-side diff of two versions", async () => {
  const healer = new FakeHealer().install();
  const kept = healer.addWorkflow({ title: "Weekly sales report", code: "total = order['total']\nprint(total)\n" });
  const id = kept.workflow.id;
  healer.addVersion(id, "total = order['amount']\nprint(total)\n", "Read the new field", { major: 1, minor: 1 }, { kind: "task", task_id: 7 });
  healer.addVersion(id, "total = order.get('amount', 0)\nprint(total)\n", "Default to 0", { major: 2, minor: 0 });
  const { user } = renderApp(`#/workflows/${id}`);

  await user.click(await screen.findByTestId("tab-versions"));

  const items = await screen.findAllByTestId("version-item");
  expect(items.map((i) => i.getAttribute("data-version"))).toEqual(["2.0", "1.1", "1.0"]);
  expect(items[0]).toHaveTextContent("Active");
  expect(items[0]).toHaveTextContent("You");
  expect(items[0]).toHaveTextContent("Default to 0");
  expect(items[1]).toHaveTextContent("Auto-fix");
  expect(items[1]).not.toHaveTextContent("Active");

  // By default: the one before the active version against the active one.
  const diff = screen.getByTestId("version-diff");
  expect(diff).toHaveAttribute("data-from", "1.1");
  expect(diff).toHaveAttribute("data-to", "2.0");
  await waitFor(() => expect(diff.querySelectorAll(".cm-editor")).toHaveLength(2));
  const [left, right] = [...diff.querySelectorAll(".cm-content")];
  expect(left.textContent).toContain("total = order['amount']");
  expect(right.textContent).toContain("total = order.get('amount', 0)");

  // Another pair.
  await user.click(items[1]);
  await waitFor(() => expect(screen.getByTestId("version-diff")).toHaveAttribute("data-from", "1.0"));
  await waitFor(() =>
    expect(screen.getByTestId("version-diff").querySelector(".cm-content")?.textContent).toContain("order['total']"),
  );
});

test("saving the script creates the next major version", async () => {
  const healer = new FakeHealer().install();
  const kept = healer.addWorkflow({ title: "Weekly sales report", code: "print('v1')\n" });
  const id = kept.workflow.id;
  healer.addVersion(id, "print('v1.1')\n", "Auto-fix", { major: 1, minor: 1 }, { kind: "planner" });
  const { user } = renderApp(`#/workflows/${id}/script`);

  const save = await screen.findByTestId("save-script");
  expect(save).toHaveTextContent("Save as version 2.0");
  expect(save).toBeDisabled();

  const editor = await waitFor(() => {
    const content = document.querySelector<HTMLElement>(".code-editor .cm-content");
    if (!content) throw new Error("no editor yet");
    return content;
  });
  expect(editor.textContent).toBe("print('v1.1')");
  // jsdom can't type into a contenteditable the way a browser does; edit as CodeMirror would.
  typeAtEnd(editor, "\n# checked by hand");
  await waitFor(() => expect(save).toBeEnabled());
  await user.type(screen.getByLabelText("What changed?"), "Note that it was checked");
  await user.click(save);

  await waitFor(() => expect(healer.callsTo("save_script")).toHaveLength(1));
  expect(healer.callsTo("save_script")[0].args).toEqual({
    id, code: "print('v1.1')\n\n# checked by hand", comment: "Note that it was checked",
    // The version the editor opened: a newer one would be a conflict, not an overwrite.
    base: { major: 1, minor: 1 },
  });
  // The Versions tab shows the new version against the one before.
  expect(await screen.findByTestId("toast")).toHaveTextContent("Saved as version 2.0. It runs from now on.");
  expect(screen.getByTestId("tab-versions")).toHaveAttribute("aria-selected", "true");
  const newest = screen.getAllByTestId("version-item")[0];
  expect(newest).toHaveAttribute("data-version", "2.0");
  expect(newest).toHaveTextContent("Active");
  expect(screen.getByTestId("version-diff")).toHaveAttribute("data-from", "1.1");
  expect(screen.getByTestId("version-diff")).toHaveAttribute("data-to", "2.0");
});

test("deleting asks for confirmation first", async () => {
  const healer = new FakeHealer().install();
  const kept = healer.addWorkflow({ title: "Nightly backup" });
  healer.addWorkflow({ title: "Clean downloads" });
  const { user } = renderApp(`#/workflows/${kept.workflow.id}`);

  await user.click(await screen.findByTestId("delete-workflow"));
  let dialog = screen.getByRole("alertdialog", { name: "Delete “Nightly backup”?" });
  expect(dialog).toHaveTextContent("Every version of its script, all of its runs with their logs, and its folder are deleted too.");
  expect(dialog).toHaveTextContent("/home/ada/.local/share/healer/workflows/1");
  // The safe choice has focus, and focus stays in the dialog.
  expect(within(dialog).getByRole("button", { name: "Cancel" })).toHaveFocus();
  await user.tab();
  expect(screen.getByTestId("confirm-delete")).toHaveFocus();
  await user.tab();
  expect(within(dialog).getByRole("button", { name: "Cancel" })).toHaveFocus();

  // Escape cancels, and nothing was deleted.
  await user.keyboard("{Escape}");
  expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument();
  expect(healer.callsTo("delete_workflow")).toHaveLength(0);
  expect(screen.getByTestId("delete-workflow")).toHaveFocus();

  await user.click(screen.getByTestId("delete-workflow"));
  dialog = screen.getByRole("alertdialog");
  await user.click(within(dialog).getByTestId("confirm-delete"));

  expect(await screen.findByTestId("page-workflows")).toBeInTheDocument();
  expect(healer.callsTo("delete_workflow").map((c) => c.args)).toEqual([{ id: kept.workflow.id }]);
  await waitFor(() => expect(screen.getAllByTestId("workflow-row")).toHaveLength(1));
  expect(screen.getByTestId("workflow-row")).toHaveAttribute("data-name", "clean-downloads");
});

test("run now on a workflow that is already running says so", async () => {
  const healer = new FakeHealer().install();
  const kept = healer.addWorkflow({ title: "Nightly backup" });
  const { user } = renderApp(`#/workflows/${kept.workflow.id}`);
  await screen.findByText("No runs yet");
  // Another window started a run a moment ago.
  healer.addRun(kept.workflow.id, { status: "queued", started_at: null });

  await user.click(screen.getByTestId("run-now"));

  expect(await screen.findByRole("alert")).toHaveTextContent('"Nightly backup" is already running; wait for that run to finish.');
});

test("pausing and resuming a workflow", async () => {
  const healer = new FakeHealer().install();
  const kept = healer.addWorkflow({ title: "Nightly backup", schedule: { kind: "interval", seconds: 3600 } });
  const { user } = renderApp(`#/workflows/${kept.workflow.id}`);

  await user.click(await screen.findByRole("button", { name: "Pause" }));
  expect(await screen.findByRole("button", { name: "Resume" })).toBeInTheDocument();
  expect(screen.getByTestId("page-workflow")).toHaveTextContent("Paused");
  expect(healer.callsTo("set_workflow_paused").map((c) => c.args)).toEqual([{ id: kept.workflow.id, paused: true }]);
});

test("a re-run after an automatic fix says so", async () => {
  const healer = new FakeHealer().install();
  const kept = healer.addWorkflow({ title: "Weekly sales report" });
  healer.addVersion(kept.workflow.id, "print('fixed')\n", "Read the renamed field", { major: 1, minor: 1 }, { kind: "task", task_id: 41 });
  healer.addRun(kept.workflow.id, { status: "succeeded", trigger: "fix", summary: "Succeeded in 0.8 s" });
  renderApp(`#/workflows/${kept.workflow.id}`);

  const row = await screen.findByTestId("run-row");
  expect(within(row).getByText("After a fix")).toHaveAttribute("title", "Re-run after an automatic fix");
  expect(row).toHaveTextContent("v1.1");
});
