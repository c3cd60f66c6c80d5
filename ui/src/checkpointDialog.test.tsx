import { screen, waitFor, within } from "@testing-library/react";
import { expect, onTestFinished, test } from "vitest";
import { DIAGNOSTICS, healerWithCheckpoints } from "./test/checkpointExamples";
import { FakeHealer } from "./test/fakeHealer";
import { readyDialog } from "./test/readyDialog";
import { renderApp } from "./test/renderApp";

function option(dialog: HTMLElement, number: number) {
  return within(dialog).getAllByTestId("checkpoint-option").find((o) => o.getAttribute("data-option") === String(number))!;
}

function decisions(healer: FakeHealer) {
  return healer.callsTo("decide_checkpoint").map((call) => call.args);
}

test("the oldest question shows over the page, with its options and the recommended one ready", async () => {
  const { environment } = healerWithCheckpoints();
  renderApp("#/workflows");

  const dialog = await screen.findByRole("dialog", { name: "Something is missing on this machine" });
  expect(dialog).toBe(screen.getByTestId("checkpoint-dialog"));
  expect(dialog).toHaveAttribute("aria-modal", "true");
  expect(dialog).toHaveAttribute("data-checkpoint-id", String(environment.id));
  expect(dialog).toHaveTextContent("“Exchange rates”");
  expect(dialog).toHaveTextContent("Healer's analysis: The script imports the requests module");
  // The machine report keeps its lines, in its own block.
  expect(within(dialog).getByTestId("checkpoint-report").textContent).toBe(DIAGNOSTICS);
  expect(within(dialog).getByTestId("checkpoint-context").querySelector(".checkpoint-prose")?.textContent).not.toContain("python3 is installed");

  const options = within(dialog).getAllByTestId("checkpoint-option");
  expect(options.map((o) => o.getAttribute("data-option"))).toEqual(["1", "2", "3"]);
  expect(options.map((o) => o.querySelector(".checkpoint-option-label")?.textContent)).toEqual([
    "Proceed",
    "Skip",
    "Pause (recommended)",
  ]);
  expect(options.map((o) => o.getAttribute("data-recommended"))).toEqual(["false", "false", "true"]);
  expect(options[2]).toHaveAttribute("data-selected", "true");
  expect(options[2]).toHaveTextContent("Stop running it until you resume it");
  await waitFor(() => expect(options[2]).toHaveFocus());
  expect(dialog).toHaveTextContent("Healer recommends: Pause — it will keep failing until the machine is fixed");
  expect(within(dialog).getByLabelText("Notes (optional)")).toHaveValue("");
  expect(within(dialog).getByTestId("checkpoint-more")).toHaveTextContent("1 more waiting");
  // Everything behind it is out of reach.
  expect(document.querySelector(".app-frame")).toHaveAttribute("inert");
});

test("Enter decides with the recommended option, then the next question shows, then the page is back", async () => {
  const { healer, environment, hiccup } = healerWithCheckpoints();
  const { user } = renderApp("#/workflows");
  await readyDialog(environment.id);

  await user.keyboard("{Enter}");

  expect(decisions(healer)).toEqual([{ id: environment.id, option: 3, notes: null }]);
  const next = await readyDialog(hiccup.id);
  expect(next).toHaveAccessibleName("A run keeps failing");
  expect(next).toHaveTextContent("“Nightly backup”");
  expect(within(next).queryByTestId("checkpoint-more")).not.toBeInTheDocument();
  // Its own recommendation is the one ready now.
  await waitFor(() => expect(option(next, 2)).toHaveFocus());

  await user.keyboard("{Enter}");

  await waitFor(() => expect(screen.queryByTestId("checkpoint-dialog")).not.toBeInTheDocument());
  expect(decisions(healer)).toEqual([
    { id: environment.id, option: 3, notes: null },
    { id: hiccup.id, option: 2, notes: null },
  ]);
  expect(document.querySelector(".app-frame")).not.toHaveAttribute("inert");
});

test("the next question shows at once, before the engine has acted on the first", async () => {
  const { healer, environment, hiccup } = healerWithCheckpoints();
  let release = () => {};
  healer.checkpoints.decideGate = new Promise((resolve) => (release = resolve));
  const { user } = renderApp("#/workflows");
  await readyDialog(environment.id);

  await user.keyboard("{Enter}");

  await readyDialog(hiccup.id);
  expect(environment.decision).toBeNull();
  release();
  await waitFor(() => expect(environment.decision?.outcome).toBe("Paused until you resume it"));
  expect(screen.getByTestId("checkpoint-dialog")).toHaveAttribute("data-checkpoint-id", String(hiccup.id));
});

test("a number key decides with that option at once", async () => {
  const { healer, environment } = healerWithCheckpoints();
  const { user } = renderApp("#/workflows");
  await readyDialog(environment.id);

  await user.keyboard("1");

  expect(decisions(healer)).toEqual([{ id: environment.id, option: 1, notes: null }]);
  // Proceed ran it again.
  expect(healer.kept(environment.workflow_id!).runs.at(-1)?.run.trigger).toBe("checkpoint");
});

test("other keys, and clicks beside it, do nothing", async () => {
  const { healer, environment } = healerWithCheckpoints();
  const { user } = renderApp("#/workflows");
  const dialog = await readyDialog(environment.id);

  await user.keyboard("x{Escape}9{Backspace} 0");
  await user.click(dialog.parentElement!);
  await new Promise((resolve) => setTimeout(resolve, 50));

  expect(decisions(healer)).toEqual([]);
  expect(screen.getByTestId("checkpoint-dialog")).toHaveAttribute("data-checkpoint-id", String(environment.id));
  expect(option(dialog, 3)).toHaveFocus();
});

test("a question that appears while the person is typing waits until they stop", async () => {
  const healer = new FakeHealer().install();
  const id = healer.addWorkflow({ title: "Nightly backup" }).workflow.id;
  const { user } = renderApp("#/workflows");
  await screen.findByTestId("page-workflows");

  await user.keyboard("backup at 2");
  const raised = await healer.checkpoints.raise({ trigger: "hiccup", workflow_id: id, context: "It timed out.", recommend: 1 });
  const dialog = await screen.findByTestId("checkpoint-dialog");
  expect(dialog).toHaveAttribute("data-ready", "false");
  await user.keyboard("1{Enter}");
  await user.click(option(dialog, 2));

  expect(decisions(healer)).toEqual([]);
  await readyDialog(raised.id);
  await user.keyboard("3");
  expect(decisions(healer)).toEqual([{ id: raised.id, option: 3, notes: null }]);
});

test("a second Enter right after deciding does not answer the next question", async () => {
  const { healer, environment, hiccup } = healerWithCheckpoints();
  const { user } = renderApp("#/workflows");
  await readyDialog(environment.id);

  await user.keyboard("{Enter}");
  await waitFor(() => expect(screen.getByTestId("checkpoint-dialog")).toHaveAttribute("data-checkpoint-id", String(hiccup.id)));
  expect(screen.getByTestId("checkpoint-dialog")).toHaveAttribute("data-ready", "false");
  await user.keyboard("{Enter}");

  expect(decisions(healer)).toEqual([{ id: environment.id, option: 3, notes: null }]);
  await readyDialog(hiccup.id);
  await user.keyboard("{Enter}");
  expect(decisions(healer)).toEqual([
    { id: environment.id, option: 3, notes: null },
    { id: hiccup.id, option: 2, notes: null },
  ]);
});

test("notes take digits as text, and Enter there sends them with the highlighted option", async () => {
  const { healer, environment } = healerWithCheckpoints();
  const { user } = renderApp("#/workflows");
  const dialog = await readyDialog(environment.id);
  const notes = within(dialog).getByLabelText("Notes (optional)");

  await user.click(notes);
  await user.keyboard("Installing requests 2.32{Shift>}{Enter}{/Shift}  then resume ");

  expect(notes).toHaveValue("Installing requests 2.32\n  then resume ");
  expect(decisions(healer)).toEqual([]);
  expect(within(dialog).getByText("Enter decides with “Pause” · Shift+Enter starts a new line")).toBeInTheDocument();

  await user.keyboard("{Enter}");

  expect(decisions(healer)).toEqual([{ id: environment.id, option: 3, notes: "Installing requests 2.32\n  then resume" }]);
});

test("the arrow keys move the highlight, which Enter in the notes then decides with", async () => {
  const { healer, environment } = healerWithCheckpoints();
  const { user } = renderApp("#/workflows");
  const dialog = await readyDialog(environment.id);
  await waitFor(() => expect(option(dialog, 3)).toHaveFocus());

  await user.keyboard("{ArrowUp}");
  expect(option(dialog, 2)).toHaveFocus();
  expect(option(dialog, 2)).toHaveAttribute("data-selected", "true");
  expect(option(dialog, 3)).toHaveAttribute("data-selected", "false");

  await user.click(within(dialog).getByLabelText("Notes (optional)"));
  await user.keyboard("Only this once{Enter}");

  expect(decisions(healer)).toEqual([{ id: environment.id, option: 2, notes: "Only this once" }]);
});

test("clicking an option decides with it", async () => {
  const { healer, environment } = healerWithCheckpoints();
  const { user } = renderApp("#/workflows");
  const dialog = await screen.findByTestId("checkpoint-dialog");

  await user.click(option(dialog, 1));

  expect(decisions(healer)).toEqual([{ id: environment.id, option: 1, notes: null }]);
});

test("Tab goes round inside the dialog", async () => {
  const { environment } = healerWithCheckpoints();
  const { user } = renderApp("#/workflows");
  const dialog = await readyDialog(environment.id);
  const notes = within(dialog).getByLabelText("Notes (optional)");
  await waitFor(() => expect(option(dialog, 3)).toHaveFocus());

  await user.tab();
  expect(notes).toHaveFocus();
  await user.tab();
  expect(within(dialog).getByTestId("checkpoint-later")).toHaveFocus();
  await user.tab();
  expect(within(dialog).getByTestId("checkpoint-report")).toHaveFocus();
  await user.tab({ shift: true });
  expect(within(dialog).getByTestId("checkpoint-later")).toHaveFocus();
});

test("a refused decision brings the question back with the reason and what was written", async () => {
  const { healer, environment } = healerWithCheckpoints();
  healer.fail("decide_checkpoint", "store", "the database is busy; try again in a moment");
  const { user } = renderApp("#/workflows");
  const dialog = await readyDialog(environment.id);

  await user.click(within(dialog).getByLabelText("Notes (optional)"));
  await user.keyboard("Wait for IT{Enter}");

  const alert = await screen.findByRole("alert");
  expect(alert).toHaveTextContent("Your decision wasn't recorded.");
  expect(alert).toHaveTextContent("The database is busy; try again in a moment.");
  const again = screen.getByTestId("checkpoint-dialog");
  expect(again).toHaveAttribute("data-checkpoint-id", String(environment.id));
  expect(within(again).getByLabelText("Notes (optional)")).toHaveValue("Wait for IT");
  expect(option(again, 3)).toHaveAttribute("data-selected", "true");
});

test("a question raised or answered elsewhere appears and goes away by itself", async () => {
  const healer = new FakeHealer().install();
  const id = healer.addWorkflow({ title: "Nightly backup" }).workflow.id;
  renderApp("#/workflows");
  await screen.findByTestId("page-workflows");
  expect(screen.queryByTestId("checkpoint-dialog")).not.toBeInTheDocument();

  const raised = await healer.checkpoints.raise({ trigger: "hiccup", workflow_id: id, context: "It timed out.", recommend: 1 });

  const dialog = await screen.findByRole("dialog", { name: "A run keeps failing" });
  expect(dialog).toHaveTextContent("“Nightly backup”");
  expect(screen.getByTestId("checkpoint-count")).toHaveTextContent("1");

  // As if answered with `healer checkpoint decide` in a terminal.
  await healer.checkpoints.decide(raised.id, 3, null);

  await waitFor(() => expect(screen.queryByTestId("checkpoint-dialog")).not.toBeInTheDocument());
  expect(screen.queryByTestId("checkpoint-count")).not.toBeInTheDocument();
});

test("a long report scrolls inside the dialog, which fits the window, with its title and options outside the scroll", async () => {
  const { environment } = healerWithCheckpoints();
  environment.context = `${environment.context}\n${Array.from({ length: 120 }, (_, i) => `line ${i + 1} of a long report`).join("\n")}`;
  // jsdom lays nothing out, but it does apply style sheets: the dialog's own rules are put in.
  const sheet = document.createElement("style");
  sheet.textContent = (await import("./styles/checkpoints.css?raw")).default;
  document.head.append(sheet);
  onTestFinished(() => sheet.remove());
  renderApp("#/workflows");

  const dialog = await readyDialog(environment.id);
  const scroll = within(dialog).getByTestId("checkpoint-scroll");
  // What happened, the report's last line included, is in the scrolling part ...
  expect(within(scroll).getByTestId("checkpoint-report")).toHaveTextContent("line 120 of a long report");
  // ... and the title, the options and the notes are not: they stay in view however long it is.
  const title = within(dialog).getByRole("heading", { name: "Something is missing on this machine" });
  expect(scroll).not.toContainElement(title);
  const choices = within(dialog).getByTestId("checkpoint-choices");
  expect(scroll).not.toContainElement(choices);
  expect(within(choices).getAllByTestId("checkpoint-option")).toHaveLength(3);
  expect(within(choices).getByLabelText("Notes (optional)")).toBeInTheDocument();

  const style = (element: Element) => window.getComputedStyle(element);
  expect(style(dialog).maxHeight).toMatch(/^calc\(100d?vh - 48px\)$/);
  expect(style(scroll).overflowY).toBe("auto");
  expect(style(scroll).flexGrow).toBe("1");
  expect(style(scroll).flexShrink).toBe("1");
  for (const fixed of [dialog.querySelector(".checkpoint-head")!, choices]) expect(style(fixed).flexShrink).toBe("0");
  // One scroller: the report does not scroll on its own inside it.
  expect(style(within(scroll).getByTestId("checkpoint-report")).maxHeight).toBe("none");
  // The page behind is dimmed clearly.
  expect(dialog.parentElement).toHaveClass("checkpoint-backdrop");
  const alpha = Number(/rgba\(17, 24, 39, ([\d.]+)\)/.exec(style(dialog.parentElement!).backgroundColor)?.[1]);
  expect(alpha).toBeGreaterThanOrEqual(0.5);
});
