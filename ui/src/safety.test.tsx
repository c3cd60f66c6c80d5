import { screen, waitFor, within } from "@testing-library/react";
import { expect, test } from "vitest";
import { FakeHealer } from "./test/fakeHealer";
import { SURVIVORS_REASON, healerWithMemory } from "./test/memoryExamples";
import { renderApp } from "./test/renderApp";

test("while a breaker keeps scheduled runs paused a banner says why, and Resume lets them go again", async () => {
  const healer = new FakeHealer().install();
  healer.addWorkflow({ title: "Nightly backup" });
  healer.memory.schedulerPause = SURVIVORS_REASON;
  const { user } = renderApp("#/workflows");

  const banner = await screen.findByTestId("scheduler-paused");
  expect(banner).toHaveTextContent("Scheduled runs are paused");
  expect(within(banner).getByTestId("scheduler-paused-reason")).toHaveTextContent(SURVIVORS_REASON);
  expect(screen.getByTestId("page-workflows")).toBeInTheDocument();

  await user.click(within(banner).getByRole("button", { name: "Resume scheduled runs" }));

  await waitFor(() => expect(screen.queryByTestId("scheduler-paused")).not.toBeInTheDocument());
  expect(healer.callsTo("resume_scheduler")).toHaveLength(1);
  expect(healer.memory.schedulerPause).toBeNull();
  // The decision is logged, and the log shows it.
  await user.click(screen.getByTestId("nav-activity"));
  await user.click(await screen.findByTestId("activity-view-decisions"));
  const [row] = await screen.findAllByTestId("decision-row");
  expect(row).toHaveAttribute("data-kind", "scheduler_resumed");
  expect(row).toHaveTextContent("Resumed scheduled runs");
});

test("the banner shows on every page, appears when the breaker trips, and a refused resume says why", async () => {
  const healer = new FakeHealer().install();
  healer.fail("resume_scheduler", "store", "the database is busy; try again in a moment");
  const { user } = renderApp("#/settings");
  await screen.findByTestId("page-settings");
  expect(screen.queryByTestId("scheduler-paused")).not.toBeInTheDocument();

  await healer.memory.pauseScheduler(SURVIVORS_REASON);

  const banner = await screen.findByTestId("scheduler-paused");
  expect(banner).toHaveTextContent(SURVIVORS_REASON);
  await user.click(within(banner).getByTestId("resume-scheduler"));
  expect(await within(banner).findByRole("alert")).toHaveTextContent(
    "Scheduled runs couldn't be resumed. The database is busy; try again in a moment.",
  );
  expect(screen.getByTestId("scheduler-paused")).toBeInTheDocument();
  // The safety notification arrived too.
  expect(await screen.findByTestId("unread-count")).toHaveTextContent("1");
});

test("a workflow flagged for review says so on its row and on its page", async () => {
  const { sales, rates } = healerWithMemory();
  const { user } = renderApp("#/workflows");

  await waitFor(() => expect(screen.getAllByTestId("workflow-row")).toHaveLength(3));
  const [flagged, other] = screen.getAllByTestId("workflow-row");
  expect(flagged).toHaveAttribute("data-review", "true");
  const badge = within(flagged).getByTestId("review-badge");
  expect(badge).toHaveTextContent("Needs review");
  expect(badge.getAttribute("title")).toMatch(/repair this script many times lately/);
  expect(other).toHaveAttribute("data-review", "false");
  expect(within(other).queryByTestId("review-badge")).not.toBeInTheDocument();
  expect(other.getAttribute("href")).toBe(`#/workflows/${rates}`);

  await user.click(flagged);

  const page = await screen.findByTestId("page-workflow");
  expect(page).toHaveAttribute("data-workflow-id", String(sales));
  expect(within(page).getByTestId("review-badge")).toBeInTheDocument();
  const note = within(page).getByTestId("review-note");
  expect(within(note).getByRole("link", { name: "automatic fixes" }).getAttribute("href")).toBe(`#/workflows/${sales}/autofix`);
  expect(within(note).getByRole("link", { name: "re-plan it" }).getAttribute("href")).toBe(`#/workflows/${sales}/chat?focus=message`);
});

test("a version Healer made itself shows as Healer", async () => {
  const { sales } = healerWithMemory();
  renderApp(`#/workflows/${sales}/versions`);

  const items = await screen.findAllByTestId("version-item");
  expect(items.map((i) => i.getAttribute("data-version"))).toEqual(["1.3", "1.2", "1.1", "1.0"]);
  expect(items[0]).toHaveTextContent("Rolled back to 1.1 after 3 failed repairs");
  expect(items[0].querySelector(".version-author")).toHaveTextContent(/^Healer$/);
  expect(items[0].querySelector(".version-author")).toHaveClass("author-healer");
  expect(items[1].querySelector(".version-author")).toHaveTextContent("Auto-fix");
  // The comparison names its author as well.
  expect(document.querySelector(".diff-sides")).toHaveTextContent("1.3 · Healer · active");
});

test("review and safety notifications say what kind they are and where to look", async () => {
  const healer = new FakeHealer().install();
  const id = healer.addWorkflow({ title: "Weekly sales report" }).workflow.id;
  healer.record({
    kind: "notification_created",
    notification: healer.notification(
      "“Weekly sales report” needs a look",
      "Healer repaired its script 6 times in the last 7 days. The repairs work, but something keeps changing under it: look at the auto-fix history, or Re-plan it.",
      { kind: "review", workflow_id: id, actions: ["replan"] },
    ),
  });
  healer.record({
    kind: "notification_created",
    notification: healer.notification("“Weekly sales report” was rolled back to 1.1", "3 automatic repairs in a row did not hold.", {
      kind: "safety", workflow_id: id, actions: ["replan"],
    }),
  });
  healer.record({
    kind: "notification_created",
    notification: healer.notification("Scheduled runs are paused", SURVIVORS_REASON, { kind: "safety" }),
  });
  renderApp("#/notifications");

  await waitFor(() => expect(screen.getAllByTestId("notification-item")).toHaveLength(3));
  const entries = screen.getAllByTestId("notification-item").map((item) => item.closest("li")!);
  const [paused, rolledBack, review] = entries;
  expect(within(review).getByTestId("notification-kind")).toHaveTextContent("Needs review");
  expect(within(review).getByTestId("notification-kind")).toHaveClass("tone-working");
  expect(within(review).getByRole("button", { name: "Re-plan" })).toBeInTheDocument();
  expect(within(review).getByRole("link", { name: "See its repairs" }).getAttribute("href")).toBe(`#/workflows/${id}/autofix`);

  expect(within(rolledBack).getByTestId("notification-kind")).toHaveTextContent("Healer stepped in");
  expect(within(rolledBack).getByRole("link", { name: "See its versions" }).getAttribute("href")).toBe(`#/workflows/${id}/versions`);
  expect(within(paused).getByTestId("notification-kind")).toHaveTextContent("Healer stepped in");
  expect(within(paused).queryByRole("link")).not.toBeInTheDocument();
});
