// For people who do not live in a terminal: work is never lost, a question can wait, things are
// found quickly, and notifications say what happened to whom.
import { screen, waitFor, within } from "@testing-library/react";
import { expect, test } from "vitest";
import { typeAtEnd } from "./test/editor";
import { FakeHealer, minutesAgo } from "./test/fakeHealer";
import { readyDialog } from "./test/readyDialog";
import { renderApp } from "./test/renderApp";

async function editor(): Promise<HTMLElement> {
  return waitFor(() => {
    const content = document.querySelector<HTMLElement>(".code-editor .cm-content");
    if (!content) throw new Error("no editor yet");
    return content;
  });
}

test("a save over a version that appeared meanwhile asks, and Keep mine saves on top of it", async () => {
  const healer = new FakeHealer().install();
  const kept = healer.addWorkflow({ title: "Weekly sales report", code: "print('v1')\n" });
  const id = kept.workflow.id;
  const { user } = renderApp(`#/workflows/${id}/script`);
  typeAtEnd(await editor(), "\n# mine");
  // An auto-fix lands while the person edits.
  healer.addVersion(id, "print('fixed')\n", "Read totl", { major: 1, minor: 1 }, { kind: "task", task_id: 9 });

  await user.click(await screen.findByTestId("save-script"));
  const dialog = await screen.findByRole("alertdialog");
  expect(dialog).toHaveTextContent("This script changed while you were editing (1.1 by auto-fix)");
  expect(healer.callsTo("save_script")).toHaveLength(1);
  expect(kept.versions).toHaveLength(2);

  await user.click(within(dialog).getByTestId("conflict-compare"));
  expect(await within(dialog).findByTestId("conflict-diff")).toBeInTheDocument();
  await user.click(within(dialog).getByTestId("conflict-keep"));
  expect(await screen.findByTestId("toast")).toHaveTextContent("Saved as version 2.0");
  expect(healer.callsTo("save_script")[1].args.base).toEqual({ major: 1, minor: 1 });
  expect(kept.versions.at(-1)?.code).toBe("print('v1')\n\n# mine");
});

test("Discard mine drops the edits and keeps the newer version", async () => {
  const healer = new FakeHealer().install();
  const kept = healer.addWorkflow({ title: "Report", code: "print('v1')\n" });
  const { user } = renderApp(`#/workflows/${kept.workflow.id}/script`);
  typeAtEnd(await editor(), "\n# mine");
  healer.addVersion(kept.workflow.id, "print('2')\n", "From the terminal", { major: 2, minor: 0 }, { kind: "person" });
  await user.click(await screen.findByTestId("save-script"));
  await user.click(await screen.findByTestId("conflict-discard"));
  await waitFor(() => expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument());
  expect(kept.versions).toHaveLength(2);
  expect(await screen.findByTestId("toast")).toHaveTextContent("Your changes were dropped; version 2.0 is the one that runs.");
});

test("the syntax check speaks before saving, and Save waits for a script that passes", async () => {
  const healer = new FakeHealer().install();
  healer.syntaxRefuses = { marker: "def (", message: "main.py line 2: invalid syntax" };
  const kept = healer.addWorkflow({ title: "Report", code: "print('v1')\n" });
  renderApp(`#/workflows/${kept.workflow.id}/script`);
  typeAtEnd(await editor(), "\ndef (");
  expect(await screen.findByTestId("syntax-problem", {}, { timeout: 3000 })).toHaveTextContent("main.py line 2: invalid syntax");
  expect(screen.getByTestId("save-script")).toBeDisabled();
});

test("leaving the Script tab with edits asks first; Stay keeps them, Leave drops them", async () => {
  const healer = new FakeHealer().install();
  const kept = healer.addWorkflow({ title: "Report", code: "print('v1')\n" });
  const { user } = renderApp(`#/workflows/${kept.workflow.id}/script`);
  typeAtEnd(await editor(), "\n# mine");
  expect(await screen.findByTestId("run-unsaved-hint")).toHaveTextContent("Run now runs version 1.0, the saved one.");

  // Another tab of the same workflow is not leaving.
  await user.click(screen.getByTestId("tab-versions"));
  expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument();
  await user.click(screen.getByTestId("tab-script"));

  await user.click(screen.getByTestId("nav-activity"));
  expect(await screen.findByRole("alertdialog")).toHaveTextContent("Leave without saving your changes?");
  expect(window.location.hash).toBe(`#/workflows/${kept.workflow.id}/script`);
  await user.click(screen.getByTestId("leave-stay"));
  expect((await editor()).textContent).toContain("# mine");

  await user.click(screen.getByTestId("nav-activity"));
  await user.click(await screen.findByTestId("leave-discard"));
  await screen.findByTestId("page-activity");
});

test("Decide later closes the question; the banner and the sidebar keep it, and Decide now brings it back", async () => {
  const healer = new FakeHealer().install();
  const { workflow } = healer.addWorkflow({ title: "Nightly backup" });
  const { user } = renderApp();
  await healer.checkpoints.raise({ trigger: "cost", workflow_id: workflow.id, context: "Healing used 60000 tokens today." });
  await readyDialog();
  await user.click(screen.getByTestId("checkpoint-open-models"));
  await waitFor(() => expect(screen.queryByTestId("checkpoint-dialog")).not.toBeInTheDocument());
  expect(window.location.hash).toBe("#/settings/models");
  expect(screen.getByTestId("postponed-banner")).toHaveTextContent("Healer is waiting for your decision about “Nightly backup”");
  expect(screen.getByTestId("checkpoint-count")).toHaveTextContent("1");
  expect(await screen.findByTestId("settings-models")).toBeInTheDocument();

  await user.click(screen.getByTestId("decide-now"));
  await readyDialog();
  expect(screen.queryByTestId("postponed-banner")).not.toBeInTheDocument();
});

test("Run now on a workflow waiting for a decision brings the question back instead of running past it", async () => {
  const healer = new FakeHealer().install();
  const { workflow } = healer.addWorkflow({ title: "Nightly backup" });
  const { user } = renderApp(`#/workflows/${workflow.id}`);
  await healer.checkpoints.raise({ trigger: "hiccup", workflow_id: workflow.id, title: "It keeps failing the same way" });
  await readyDialog();
  await user.click(screen.getByTestId("checkpoint-later"));
  await waitFor(() => expect(screen.queryByTestId("checkpoint-dialog")).not.toBeInTheDocument());
  expect(await screen.findByTestId("run-waits-hint")).toHaveTextContent(
    "This workflow waits for your decision: It keeps failing the same way. Run now shows you the question",
  );

  await user.click(screen.getByTestId("run-now"));
  await readyDialog();
  expect(healer.callsTo("run_workflow_now")).toEqual([]);
});

test("workflows can be searched and filtered, what needs you comes first in natural order, and the header counts it", async () => {
  const healer = new FakeHealer().install();
  healer.addWorkflow({ title: "Report 10" });
  healer.addWorkflow({ title: "Report 2" });
  healer.addWorkflow({ title: "Zebra import", status: "needs_attention" });
  healer.addWorkflow({ title: "A".repeat(120) });
  const { user } = renderApp();

  await waitFor(() => expect(screen.getAllByTestId("workflow-row")).toHaveLength(4));
  const titles = () => screen.getAllByTestId("workflow-row").map((r) => r.querySelector(".workflow-title")?.textContent);
  expect(titles()).toEqual(["Zebra import", "A".repeat(120), "Report 2", "Report 10"]);
  expect(screen.getByTestId("needs-you-count")).toHaveTextContent("1 workflow needs you.");
  // A long title is cut on screen; the whole of it is in the tooltip.
  expect(screen.getAllByTestId("workflow-row")[1].querySelector(".workflow-title")).toHaveAttribute("title", "A".repeat(120));

  await user.type(screen.getByTestId("workflow-search"), "report");
  expect(titles()).toEqual(["Report 2", "Report 10"]);
  await user.click(screen.getByTestId("filter-needs_you"));
  expect(screen.getByTestId("no-match")).toBeInTheDocument();
  await user.clear(screen.getByTestId("workflow-search"));
  expect(titles()).toEqual(["Zebra import"]);
});

test("Healthy lists only workflows a run showed healthy, not ones that never ran", async () => {
  const healer = new FakeHealer().install();
  const ran = healer.addWorkflow({ title: "Ran green" }).workflow;
  healer.addRun(ran.id, { status: "succeeded" });
  healer.addWorkflow({ title: "Never ran" });
  const { user } = renderApp();
  await waitFor(() => expect(screen.getAllByTestId("workflow-row")).toHaveLength(2));
  await user.click(screen.getByTestId("filter-healthy"));
  await waitFor(() =>
    expect(screen.getAllByTestId("workflow-row").map((r) => r.querySelector(".workflow-title")?.textContent)).toEqual(["Ran green"]),
  );
});

test("Ctrl+K jumps to a workflow or a page by name, Ctrl+N opens a new workflow", async () => {
  const healer = new FakeHealer().install();
  const { workflow } = healer.addWorkflow({ title: "Weekly sales report" });
  const { user } = renderApp();
  await screen.findByTestId("page-workflows");
  await user.keyboard("{Control>}k{/Control}");
  await user.type(await screen.findByTestId("quick-jump-input"), "weekly");
  await user.keyboard("{Enter}");
  await waitFor(() => expect(window.location.hash).toBe(`#/workflows/${workflow.id}`));

  await user.keyboard("{Control>}k{/Control}");
  await user.type(await screen.findByTestId("quick-jump-input"), "models");
  expect(screen.getAllByTestId("quick-jump-item").map((i) => i.textContent)).toContain("Settings → Models");
  await user.keyboard("{Escape}");

  await user.keyboard("{Control>}n{/Control}");
  await screen.findByTestId("page-new-workflow");
});

test("notifications are grouped by workflow, can be dismissed one by one, and a resolved alert has no buttons", async () => {
  const healer = new FakeHealer().install();
  const report = healer.addWorkflow({ title: "Weekly sales report" }).workflow;
  const backup = healer.addWorkflow({ title: "Nightly backup" }).workflow;
  healer.notifications.push(
    healer.notification("“Weekly sales report” needs you: automatic repair failed", "No amount column.", {
      kind: "maintenance_failed", workflow_id: report.id, actions: ["replan"], resolved: true, created_at: minutesAgo(30),
    }),
  );
  healer.notifications.push(
    healer.notification("Nightly backup was repaired: 1.0 → 1.1, the run passed", "Healer changed the script.", {
      kind: "repaired", workflow_id: backup.id, task_id: 7,
    }),
  );
  healer.notifications.push(healer.notification("Weekly sales report was repaired: 1.1 → 1.2, the run passed", "…", { kind: "repaired", workflow_id: report.id, task_id: 8 }));
  const { user } = renderApp("#/notifications");

  const groups = await screen.findAllByTestId("notification-group");
  expect(groups.map((g) => g.querySelector("h2")?.textContent)).toEqual(["Weekly sales report", "Nightly backup"]);
  const resolved = within(groups[0]).getAllByTestId("notification-item")[1];
  expect(resolved).toHaveTextContent("Resolved");
  expect(within(groups[0]).queryByTestId("notification-action-replan")).not.toBeInTheDocument();
  expect(within(groups[1]).getByRole("link", { name: "See what was repaired" })).toHaveAttribute("href", `#/workflows/${backup.id}/autofix/7`);

  await user.click(within(groups[1]).getByTestId("notification-dismiss"));
  await waitFor(() => expect(screen.getAllByTestId("notification-group")).toHaveLength(1));
  expect(healer.callsTo("dismiss_notification")[0].args).toEqual({ id: 2 });
});

test("a project's notifications are grouped under the project and open its task or its question", async () => {
  const healer = new FakeHealer().install();
  healer.notifications.push(
    healer.notification("Healer asks you about \u201cGreet properly\u201d in \u201cgreeter\u201d", "Healer asked you before undoing anything; the work is kept as snapshot 1. No agent works on this task until you decide.", {
      kind: "heal", project_id: 1, project_name: "greeter", project_task: "t1", checkpoint_id: 4, actions: ["answer_question", "open_task"],
    }),
  );
  healer.notifications.push(
    healer.notification("Healer fixed \u201cAdd a README\u201d in \u201cgreeter\u201d", "Fixed: the checks pass.", {
      kind: "heal", project_id: 1, project_name: "greeter", project_task: "t2", actions: ["open_task"],
    }),
  );
  const { user } = renderApp("#/notifications");
  const groups = await screen.findAllByTestId("notification-group");
  expect(groups.map((g) => g.querySelector("h2")?.textContent)).toEqual(["Project \u201cgreeter\u201d"]);
  expect(within(groups[0]).getAllByTestId("notification-item")).toHaveLength(2);
  const [question] = within(groups[0]).getAllByTestId("notification-action-answer_question");
  expect(question).toHaveTextContent("Answer the question");
  const fixed = within(groups[0]).getAllByRole("listitem").find((li) => li.textContent?.includes("Add a README"));
  if (!fixed) throw new Error("the fixed task's notification is listed");
  await user.click(within(fixed).getByTestId("notification-action-open_task"));
  await waitFor(() => expect(window.location.hash).toBe("#/projects/1/tasks/t2"));
  window.location.hash = "#/notifications";
  await user.click(await screen.findByTestId("notification-action-answer_question"));
  await waitFor(() => expect(window.location.hash).toBe("#/checkpoints"));
});

test("with no model the Workflows page offers the setup, and Not now puts the offer away", async () => {
  const healer = new FakeHealer().install();
  const { user } = renderApp();
  expect(await screen.findByTestId("setup-offer")).toHaveTextContent("Set up a model first");
  expect(screen.getByTestId("start-setup")).toHaveAttribute("href", "#/setup");
  await user.click(screen.getByTestId("skip-setup"));
  expect(screen.queryByTestId("setup-offer")).not.toBeInTheDocument();
  // Kept by the engine, with the data: a fresh data folder is a first run again.
  expect(healer.callsTo("skip_setup")).toHaveLength(1);
});

test("a provider may be named in any words and is shown in them; its short key stays out of sight", async () => {
  const healer = new FakeHealer().install();
  const { user } = renderApp("#/settings/models");
  await user.click(await screen.findByTestId("add-provider"));
  await user.type(screen.getByTestId("provider-name"), "My OpenAI");
  expect(screen.queryByText(/my-openai/)).toBeNull();
  await user.type(screen.getByTestId("provider-base-url"), "https://api.openai.com/v1");
  await user.click(screen.getByTestId("save-provider"));
  await waitFor(() => expect(healer.callsTo("save_provider")).toHaveLength(1));
  expect(healer.callsTo("save_provider")[0].args.input).toMatchObject({ name: "my-openai", title: "My OpenAI" });
  const row = await screen.findByTestId("provider-row");
  expect(within(row).getByText("My OpenAI")).toBeInTheDocument();
  expect(row).not.toHaveTextContent("my-openai");
});
