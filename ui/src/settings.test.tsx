import { screen, waitFor } from "@testing-library/react";
import { expect, test } from "vitest";
import { FakeHealer } from "./test/fakeHealer";
import { renderApp } from "./test/renderApp";

test("sending a test alert shows the heal outcome", async () => {
  const healer = new FakeHealer().install();
  for (const title of ["One", "Two", "Three"]) {
    healer.record({ kind: "notification_created", notification: healer.notification(title, "", { read: true }) });
  }
  let release = () => {};
  healer.testAlertGate = new Promise((resolve) => (release = resolve));
  const { user } = renderApp("#/settings");

  await user.click(await screen.findByTestId("send-test-alert"));
  expect(await screen.findByText("Healing the test failure…")).toBeInTheDocument();
  expect(screen.getByTestId("send-test-alert")).toBeDisabled();

  release();
  expect(await screen.findByTestId("test-alert-result")).toHaveTextContent(
    "The failure is handled for now: Healer told you about it.",
  );
  // The heal's notification reaches the sidebar without a reload.
  await waitFor(() => expect(screen.getByTestId("unread-count")).toHaveTextContent("1"));
  expect(screen.getByTestId("send-test-alert")).toBeEnabled();
});

test("a test alert that cannot run says why", async () => {
  new FakeHealer().fail("send_test_alert", "engine_unavailable", "The engine is not running. Restart Healer.").install();
  const { user } = renderApp("#/settings");

  await user.click(await screen.findByTestId("send-test-alert"));

  expect(await screen.findByRole("alert")).toHaveTextContent("The engine is not running. Restart Healer.");
  expect(screen.queryByTestId("test-alert-result")).not.toBeInTheDocument();
});

test("settings tells where Healer keeps its data", async () => {
  new FakeHealer().install();
  renderApp("#/settings");

  await screen.findByTestId("page-settings");
  expect(screen.getByText("/home/ada/.local/share/healer")).toBeInTheDocument();
  expect(screen.getByText("/home/ada/.local/share/healer/healer.db")).toBeInTheDocument();
  expect(screen.getByText("/home/ada/.local/share/healer/logs")).toBeInTheDocument();
  expect(screen.getByText("Version").nextElementSibling).toHaveTextContent("(data format 3)");
  expect(screen.queryByText("Schema version")).not.toBeInTheDocument();
});

test("a log folder that cannot be opened shows the reason next to the button", async () => {
  const healer = new FakeHealer().fail("open_log_folder", "io", "No file manager is installed.").install();
  const { user } = renderApp("#/settings");

  await user.click(await screen.findByRole("button", { name: "Open log folder" }));

  expect(await screen.findByRole("alert")).toHaveTextContent("No file manager is installed.");
  expect(healer.callsTo("open_log_folder")).toHaveLength(1);
});
