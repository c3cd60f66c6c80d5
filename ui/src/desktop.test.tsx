import { screen, waitFor, within } from "@testing-library/react";
import { expect, test } from "vitest";
import { FakeHealer, minutesAgo } from "./test/fakeHealer";
import { renderApp } from "./test/renderApp";
import { openWhereLeft } from "./viewMemory";

test("Activity loads older events as the person reaches the end of the list", async () => {
  const healer = new FakeHealer().install();
  for (let i = 1; i <= 230; i++) healer.record({ kind: "recovered_at_startup", summary: `Settled ${i}` }, minutesAgo(300 - i));
  const { user } = renderApp("#/activity");

  await waitFor(() => expect(screen.getAllByTestId("activity-item")).toHaveLength(100));
  expect(screen.getAllByTestId("activity-item")[0]).toHaveTextContent("Settled 230");

  await user.click(screen.getByTestId("older-events"));
  await waitFor(() => expect(screen.getAllByTestId("activity-item")).toHaveLength(200));
  expect(healer.callsTo("list_events").map((c) => c.args)).toEqual([
    { before: null, limit: 100 },
    { before: 131, limit: 100 },
  ]);

  await user.click(screen.getByTestId("older-events"));
  await waitFor(() => expect(screen.getAllByTestId("activity-item")).toHaveLength(230));
  const rows = screen.getAllByTestId("activity-item");
  expect(rows[229]).toHaveTextContent("Settled 1");
  expect(screen.getByTestId("activity-end")).toHaveTextContent("That is everything Healer has recorded.");
  expect(screen.queryByTestId("older-events")).not.toBeInTheDocument();

  // A live event still arrives on top of the long list, and nothing older is dropped.
  await healer.happen({ kind: "recovered_at_startup", summary: "Settled live" });
  await waitFor(() => expect(screen.getAllByTestId("activity-item")).toHaveLength(231));
  expect(screen.getAllByTestId("activity-item")[0]).toHaveTextContent("Settled live");
});

test("a short activity log has no end marker and loads nothing more", async () => {
  const healer = new FakeHealer().install();
  healer.record({ kind: "engine_started", pid: 1, version: "0.1.0" });
  renderApp("#/activity");
  await screen.findByTestId("activity-item");
  expect(screen.queryByTestId("older-events")).not.toBeInTheDocument();
  expect(screen.queryByTestId("activity-end")).not.toBeInTheDocument();
  expect(healer.callsTo("list_events")).toHaveLength(1);
});

test("runs are numbered within their workflow", async () => {
  const healer = new FakeHealer().install();
  const first = healer.addWorkflow({ title: "Nightly backup" }).workflow.id;
  const second = healer.addWorkflow({ title: "Exchange rates" }).workflow.id;
  healer.addRun(first, { status: "succeeded", summary: "Succeeded in 1 s" });
  healer.addRun(first, { status: "succeeded", summary: "Succeeded in 1 s" });
  healer.addRun(second, { status: "failed", summary: "KeyError: 'rate' (logic)" });
  healer.addRun(second, { status: "succeeded", summary: "Succeeded in 2 s" });
  renderApp(`#/workflows/${second}`);

  const rows = await screen.findAllByTestId("run-row");
  expect(rows.map((r) => r.querySelector(".run-number")?.textContent)).toEqual(["Run #2", "Run #1"]);
  expect(rows.map((r) => r.getAttribute("data-run-id"))).toEqual(["4", "3"]);
});

test("Settings says whether Healer stays in the tray and starts at login, and changes it", async () => {
  const healer = new FakeHealer().install();
  const { user } = renderApp("#/settings");

  const card = await screen.findByTestId("background-settings");
  const keep = await within(card).findByRole("switch", { name: /Keep Healer running when the window is closed/ });
  const login = within(card).getByRole("switch", { name: /Start Healer when you log in/ });
  expect(keep).toBeChecked();
  expect(login).not.toBeChecked();
  expect(card).toHaveTextContent("It starts in the tray, without opening a window.");

  await user.click(login);
  await waitFor(() => expect(login).toBeChecked());
  expect(healer.callsTo("set_start_at_login")[0].args).toEqual({ on: true });
  await user.click(keep);
  await waitFor(() => expect(keep).not.toBeChecked());
  expect(healer.desktop.settings).toEqual({ keep_running: false, start_at_login: true, tray: true });

  await user.click(within(card).getByTestId("quit-app"));
  await waitFor(() => expect(healer.desktop.quit).toBe(true));
});

test("without a tray, closing the window quits, and the setting says why", async () => {
  const healer = new FakeHealer().install();
  healer.desktop.settings = { keep_running: true, start_at_login: false, tray: false };
  renderApp("#/settings");
  const keep = await screen.findByRole("switch", { name: /Keep Healer running/ });
  expect(keep).toBeDisabled();
  expect(keep).not.toBeChecked();
  expect(screen.getByTestId("background-settings")).toHaveTextContent("This desktop has no tray, so closing the window quits Healer.");
});

test("a window made after a close opens on the screen the last one showed, and reports where the person goes", async () => {
  const healer = new FakeHealer().install();
  const id = healer.addWorkflow({ title: "Exchange rates" }).workflow.id;
  healer.desktop.restore = { hash: `#/workflows/${id}/versions`, scroll: 0 };
  window.location.hash = "";

  await openWhereLeft();
  const { user } = renderApp(window.location.hash);

  await screen.findByTestId("page-workflow");
  expect(window.location.hash).toBe(`#/workflows/${id}/versions`);
  await waitFor(() => expect(healer.desktop.remembered?.hash).toBe(`#/workflows/${id}/versions`));

  await user.click(screen.getByTestId("nav-activity"));
  await screen.findByTestId("page-activity");
  await waitFor(() => expect(healer.desktop.remembered).toEqual({ hash: "#/activity", scroll: 0 }));
  // Asked once: a later window of this session starts fresh unless told again.
  expect(healer.callsTo("restored_view")).toHaveLength(1);
});
