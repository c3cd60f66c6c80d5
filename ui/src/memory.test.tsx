import { screen, waitFor, within } from "@testing-library/react";
import { expect, test } from "vitest";
import { FakeHealer } from "./test/fakeHealer";
import { CONNECTION_ERROR, KEY_ERROR, KEY_ERROR_TEXT, MISSING_MODULE, healerWithMemory } from "./test/memoryExamples";
import { renderApp } from "./test/renderApp";

function rows() {
  return screen.getAllByTestId("pattern-row");
}

function diffLines(fix: HTMLElement, kind: string) {
  return [...fix.querySelectorAll(`[data-line="${kind}"] .diff-code`)].map((line) => line.textContent);
}

test("Memory lists each error with how often it was seen, when last, and how its fixes did", async () => {
  healerWithMemory();
  const { user } = renderApp();

  await user.click(await screen.findByTestId("nav-memory"));

  await screen.findByTestId("page-memory");
  expect(screen.getByTestId("nav-memory")).toHaveAttribute("aria-current", "page");
  await waitFor(() => expect(rows()).toHaveLength(3));
  // Most recently seen first.
  expect(rows().map((r) => r.getAttribute("data-signature"))).toEqual([KEY_ERROR, CONNECTION_ERROR, MISSING_MODULE]);

  const [keyError, connection, module] = rows();
  expect(keyError.querySelector(".pattern-type")).toHaveTextContent("KeyError");
  // The first line of the normalised text, without the type shown beside it.
  expect(keyError.querySelector(".pattern-line")).toHaveTextContent(/^'total'$/);
  expect(within(keyError).getByTestId("pattern-seen")).toHaveTextContent("Seen 14 times · last 2 h ago");
  // The fix whose re-run has not said yet is neither: "being checked", not a failure.
  expect(within(keyError).getByTestId("pattern-fixes")).toHaveTextContent("2 fixes, 1 worked; 1 more being checked");
  expect(within(keyError).getByTestId("pattern-fixes")).toHaveClass("tone-good");

  expect(within(connection).getByTestId("pattern-seen")).toHaveTextContent("Seen 5 times · last yesterday");
  expect(within(connection).getByTestId("pattern-fixes")).toHaveTextContent("No fixes yet");
  expect(within(module).getByTestId("pattern-seen")).toHaveTextContent("Seen once · last 3 days ago");
  expect(module.getAttribute("href")).toBe(`#/memory/${MISSING_MODULE}`);
});

test("opening an error shows its whole text, its signature and every fix with its diff and result", async () => {
  const { sales, invoices } = healerWithMemory();
  const { user } = renderApp("#/memory");

  await user.click((await screen.findAllByTestId("pattern-row"))[0]);

  const detail = await screen.findByTestId("pattern-detail");
  expect(window.location.hash).toBe(`#/memory/${KEY_ERROR}`);
  expect(within(detail).getByRole("heading", { level: 1 })).toHaveTextContent("KeyError");
  expect(within(detail).getByTestId("pattern-text").textContent).toBe(KEY_ERROR_TEXT);
  expect(within(detail).getByTestId("pattern-signature")).toHaveTextContent(KEY_ERROR);
  expect(detail).toHaveTextContent("Seen 14 times. 2 fixes, 1 worked; 1 more being checked.");
  expect(detail).toHaveTextContent("First seen6 days ago");
  expect(detail).toHaveTextContent("Last seen2 h ago");

  // Newest first: waiting for its re-run, failed, worked.
  const fixes = within(detail).getAllByTestId("pattern-fix");
  expect(fixes.map((f) => f.getAttribute("data-result"))).toEqual(["pending", "failed", "success"]);
  expect(fixes.map((f) => within(f).getByTestId("pattern-fix-result").textContent)).toEqual([
    "Waiting for its re-run",
    "Failed",
    "Worked",
  ]);
  expect(within(fixes[0]).getByTestId("pattern-fix-result")).toHaveClass("tone-working");
  expect(within(fixes[1]).getByTestId("pattern-fix-result")).toHaveClass("tone-bad");
  expect(within(fixes[2]).getByTestId("pattern-fix-result")).toHaveClass("tone-good");

  const worked = fixes[2];
  expect(worked).toHaveTextContent("Read the order amount from the new “amount” field");
  expect(within(worked).getByTestId("pattern-fix-workflow")).toHaveTextContent("“Weekly sales report”");
  expect(within(worked).getByTestId("pattern-fix-workflow").getAttribute("href")).toBe(`#/workflows/${sales}`);
  expect(within(worked).getByRole("link", { name: "See the repair" }).getAttribute("href")).toBe(`#/workflows/${sales}/autofix/41`);
  expect(within(fixes[0]).getByTestId("pattern-fix-workflow").getAttribute("href")).toBe(`#/workflows/${invoices}`);

  // The diff reads as removed and added lines, with unchanged lines around them.
  expect(diffLines(worked, "removed")).toEqual(['Removed:         total += order["total"]']);
  expect(diffLines(worked, "added")).toEqual(['Added:         total += order["amount"]']);
  expect(diffLines(worked, "context")).toContain("    for order in orders:");
  expect(worked.querySelector('[data-line="removed"] .diff-sign')).toHaveTextContent("-");
  expect(worked.querySelector('[data-line="added"] .diff-sign')).toHaveTextContent("+");
  expect(worked.querySelector('[data-line="added"]')).toHaveClass("diff-added");
  expect(worked.querySelector('[data-line="hunk"]')).toHaveTextContent("Around line 6");
  // The file names of the diff are not shown.
  expect(worked).not.toHaveTextContent("+++ modified");
  expect(within(worked).getByTestId("unified-diff")).toHaveTextContent("1 line added1 line removed");
  expect(diffLines(fixes[0], "added")).toHaveLength(2);
  expect(diffLines(fixes[0], "removed")).toHaveLength(0);

  // Back to the list.
  await user.click(within(detail).getByRole("link", { name: "Memory" }));
  await waitFor(() => expect(rows()).toHaveLength(3));
});

test("an error with no fix yet says so", async () => {
  healerWithMemory();
  renderApp(`#/memory/${CONNECTION_ERROR}`);

  const detail = await screen.findByTestId("pattern-detail");
  expect(within(detail).queryByTestId("pattern-fix")).not.toBeInTheDocument();
  expect(detail).toHaveTextContent("No repair has been tried for this error yet.");
});

test("an error Healer does not know says so", async () => {
  new FakeHealer().install();
  renderApp("#/memory/0000000000000000");

  expect(await screen.findByTestId("pattern-gone")).toHaveTextContent("Healer doesn't remember this error");
});

test("an empty memory explains what Healer remembers", async () => {
  const healer = new FakeHealer().install();
  renderApp("#/memory");

  expect(await screen.findByText("Nothing remembered yet")).toBeInTheDocument();
  expect(
    screen.getByText("When a repair works, Healer remembers it: the same error next time is fixed at once, without asking a model."),
  ).toBeInTheDocument();
  expect(screen.queryByTestId("pattern-row")).not.toBeInTheDocument();
  expect(healer.callsTo("list_patterns")).toHaveLength(1);
});

test("a fix judged by its re-run shows without reopening the page", async () => {
  const { healer, invoices, pending } = healerWithMemory();
  renderApp(`#/memory/${KEY_ERROR}`);
  const [newest] = await screen.findAllByTestId("pattern-fix");
  expect(newest).toHaveAttribute("data-result", "pending");

  pending.result = "success";
  await healer.happen({ kind: "run_finished", run_id: 9, workflow_id: invoices, title: "Monthly invoices", status: "succeeded", summary: "Succeeded in 0.8 s" });

  await waitFor(() => expect(screen.getAllByTestId("pattern-fix")[0]).toHaveAttribute("data-result", "success"));
  expect(screen.getByTestId("pattern-detail")).toHaveTextContent("3 fixes, 2 worked");
});
