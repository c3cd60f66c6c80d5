import { screen, waitFor } from "@testing-library/react";
import { expect, test } from "vitest";
import type { WorkflowInput } from "./bindings";
import { replaceAll } from "./test/editor";
import { FakeHealer } from "./test/fakeHealer";
import { renderApp } from "./test/renderApp";

async function editorContent(): Promise<HTMLElement> {
  return waitFor(() => {
    const content = document.querySelector<HTMLElement>(".code-editor .cm-content");
    if (!content) throw new Error("no editor yet");
    return content;
  });
}

// These two type a whole form key by key, which takes seconds on a busy machine.
const TYPING_TIMEOUT = { timeout: 15_000 };

test("the create form shows the engine's validation messages under their fields and will not save", TYPING_TIMEOUT, async () => {
  const healer = new FakeHealer().install();
  const { user } = renderApp("#/workflows/new");

  await screen.findByTestId("page-new-workflow");
  // Untouched, nothing is shouted at; the footer says what saving needs.
  expect(await screen.findByTestId("form-waiting")).toHaveTextContent("Before saving: Give the workflow a title.");
  expect(screen.queryByTestId("field-error-title")).not.toBeInTheDocument();
  expect(screen.getByTestId("save-workflow")).toBeDisabled();

  // Typed and emptied again: its message is under the field, and beside the greyed-out button.
  await user.type(screen.getByLabelText("Title"), "x");
  await user.clear(screen.getByLabelText("Title"));
  await waitFor(() => expect(screen.getByTestId("field-error-title")).toBeInTheDocument());
  expect(screen.getByTestId("form-waiting")).toHaveTextContent("Before saving: Give the workflow a title.");
  await user.type(screen.getByLabelText("Title"), "Nightly backup");
  await user.click(screen.getByTestId("schedule-cron"));
  await user.clear(screen.getByLabelText("Cron expression"));
  await user.type(screen.getByLabelText("Cron expression"), "61 * * * *");
  await user.click(screen.getByTestId("runtime-custom"));
  await user.type(screen.getByLabelText("Command"), "no-such-interpreter-xyz");
  await user.clear(screen.getByLabelText("Time limit"));

  // Validation answers a little after typing stops; on a busy machine an earlier answer (for a
  // half-typed expression) may still be on screen for a moment.
  await waitFor(() =>
    expect(screen.getByTestId("field-error-schedule")).toHaveTextContent("Minute 61 is out of range (0–59)"),
  );
  await waitFor(() =>
    expect(screen.getByTestId("field-error-runtime")).toHaveTextContent(
      "A custom command must contain {file} where the script goes",
    ),
  );
  await waitFor(() =>
    expect(screen.getByTestId("field-error-timeout_secs")).toHaveTextContent("between 1 second and 86400 seconds"),
  );
  await waitFor(() => expect(screen.queryByTestId("field-error-title")).not.toBeInTheDocument());
  expect(screen.getByLabelText("Cron expression")).toHaveAccessibleDescription(/minute hour day month weekday/);
  expect(screen.getByTestId("save-workflow")).toBeDisabled();

  // The interpreter the command names is not installed.
  await user.type(screen.getByLabelText("Command"), " {{file}");
  await waitFor(() =>
    expect(screen.getByTestId("field-error-runtime")).toHaveTextContent(
      "no-such-interpreter-xyz was not found on PATH. Install it, or choose another runtime",
    ),
  );

  // An emptied script is a problem of its own.
  replaceAll(await editorContent(), "   ");
  await waitFor(() => expect(screen.getByTestId("field-error-code")).toHaveTextContent("The script is empty"));

  // Asked as the person typed, a little after they stopped, not on every key.
  const asked = healer.callsTo("validate_workflow").map((c) => c.args.input as WorkflowInput);
  expect(asked.length).toBeLessThan(12);
  expect(asked.some((input) => input.schedule.kind === "cron" && input.schedule.expression === "61 * * * *")).toBe(true);
  expect(healer.callsTo("create_workflow")).toHaveLength(0);
});

test("a workflow that passes the checks is created and opens", TYPING_TIMEOUT, async () => {
  const healer = new FakeHealer().install();
  const { user } = renderApp("#/workflows/new");

  await user.type(await screen.findByLabelText("Title"), "Nightly backup");
  await user.type(screen.getByLabelText(/Summary/), "Copies the photos folder");
  await user.click(screen.getByTestId("runtime-bash"));
  // The template follows the runtime until the person edits it.
  await waitFor(async () => expect((await editorContent()).textContent).toContain('echo "Hello from Healer"'));
  await user.click(screen.getByTestId("schedule-interval"));
  await user.clear(screen.getByLabelText("How many"));
  await user.type(screen.getByLabelText("How many"), "15");
  await user.selectOptions(screen.getByLabelText("Unit"), "minutes");
  await user.click(screen.getByRole("button", { name: "Add variable" }));
  await user.type(screen.getByLabelText("Name of variable 1"), "TARGET");
  await user.type(screen.getByLabelText("Value of variable 1"), "/mnt/backup");
  expect(screen.getByText(/put passwords and keys under Secrets/)).toBeInTheDocument();

  await waitFor(() => expect(screen.getByTestId("save-workflow")).toBeEnabled());
  await user.click(screen.getByTestId("save-workflow"));

  expect(await screen.findByTestId("page-workflow")).toBeInTheDocument();
  const [call] = healer.callsTo("create_workflow");
  const input = call.args.input as WorkflowInput;
  expect(input).toMatchObject({
    title: "Nightly backup",
    summary: "Copies the photos folder",
    runtime: { kind: "bash" },
    schedule: { kind: "interval", seconds: 900 },
    env: [{ name: "TARGET", value: "/mnt/backup" }],
    timeout_secs: 300,
    retry: null,
    entry: null,
  });
  expect(input.code).toContain("HEALER_RESULT");
  expect(await screen.findByRole("heading", { name: "Nightly backup" })).toBeInTheDocument();
  expect(screen.getByTestId("page-workflow")).toHaveTextContent("Every 15 minutes");
});

test("editing settings keeps the script and saves through updateWorkflow", async () => {
  const healer = new FakeHealer().install();
  const kept = healer.addWorkflow({ title: "Exchange rates", schedule: { kind: "interval", seconds: 3600 }, timeout_secs: 60 });
  const { user } = renderApp(`#/workflows/${kept.workflow.id}`);

  await user.click(await screen.findByTestId("edit-settings"));
  const title = await screen.findByLabelText("Title");
  expect(title).toHaveValue("Exchange rates");
  expect(screen.getByLabelText("How many")).toHaveValue("1");
  expect(screen.getByLabelText("Unit")).toHaveValue("hours");
  expect(screen.getByLabelText("Time limit")).toHaveValue("60");
  // No script here: it changes only through the Script tab.
  expect(document.querySelector(".code-editor")).toBeNull();

  await user.clear(title);
  await user.type(title, "Exchange rates (EUR)");
  await waitFor(() => expect(screen.getByTestId("save-workflow")).toBeEnabled());
  await user.click(screen.getByTestId("save-workflow"));

  expect(await screen.findByRole("heading", { name: "Exchange rates (EUR)" })).toBeInTheDocument();
  const [call] = healer.callsTo("update_workflow");
  expect(call.args.id).toBe(kept.workflow.id);
  expect(call.args.input).toMatchObject({ title: "Exchange rates (EUR)", entry: "main.py", code: "print('hello')\n" });
});

test("every 0 hours is answered under the interval it is about", async () => {
  new FakeHealer().install();
  const { user } = renderApp("#/workflows/new");
  await screen.findByTestId("page-new-workflow");
  await user.type(screen.getByLabelText("Title"), "Nightly backup");
  await user.click(screen.getByTestId("schedule-interval"));
  await user.clear(screen.getByTestId("field-every"));
  await user.type(screen.getByTestId("field-every"), "0");
  await user.selectOptions(screen.getByTestId("field-unit"), "hours");
  const error = await screen.findByTestId("field-error-schedule");
  await waitFor(() => expect(error).toHaveTextContent("Every 0 never comes round"));
  // Under its own row, beside the number it is about, not at the end of the schedule choices.
  expect(error.closest(".schedule-choice")).toContainElement(screen.getByTestId("field-every"));
});

test("a schedule says what it means and when it next runs before it is saved; typing replaces the example", async () => {
  new FakeHealer().install();
  const { user } = renderApp("#/workflows/new");
  await screen.findByTestId("page-new-workflow");
  await user.click(screen.getByTestId("schedule-cron"));
  const meaning = await screen.findByTestId("schedule-meaning");
  await waitFor(() => expect(meaning).toHaveTextContent(/^Every day at 07:00\. Next: .*07:00, then .*07:00\.$/));

  // Typed into the field holding the example, the text replaces it instead of joining it.
  const field = screen.getByLabelText("Cron expression");
  await user.click(field);
  await user.keyboard("0 7 * * * *");
  expect(field).toHaveValue("0 7 * * * *");
  await waitFor(() =>
    expect(screen.getByTestId("schedule-meaning")).toHaveTextContent(
      "At minute 7 past every hour. It has six fields, so the first is seconds",
    ),
  );

  // Words are answered with the shape to write, and nothing claims a meaning.
  await user.clear(field);
  await user.type(field, "every day at 7");
  await waitFor(() => expect(screen.queryByTestId("schedule-meaning")).not.toBeInTheDocument());
});
