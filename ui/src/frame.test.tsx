import { screen } from "@testing-library/react";
import { mockIPC } from "@tauri-apps/api/mocks";
import { expect, test } from "vitest";
import { FakeHealer } from "./test/fakeHealer";
import { renderApp } from "./test/renderApp";

test("the app opens on Workflows, which explains workflows and offers a first step", async () => {
  new FakeHealer().install();
  const { user } = renderApp();

  await screen.findByTestId("page-workflows");
  expect(
    await screen.findByText("A workflow is a script Healer runs on a schedule — and repairs when it breaks."),
  ).toBeInTheDocument();
  expect(screen.getByTestId("nav-workflows")).toHaveAttribute("aria-current", "page");
  expect(screen.getByTestId("load-examples")).toBeEnabled();

  await user.click(screen.getByRole("link", { name: /Create a workflow/ }));
  expect(await screen.findByTestId("page-new-workflow")).toBeInTheDocument();
  // Still under Workflows in the sidebar.
  expect(screen.getByTestId("nav-workflows")).toHaveAttribute("aria-current", "page");
});

test("each sidebar link opens its page", async () => {
  new FakeHealer().install();
  const { user } = renderApp();

  for (const page of ["activity", "notifications", "checkpoints", "memory", "settings", "workflows"]) {
    await user.click(await screen.findByTestId(`nav-${page}`));
    expect(await screen.findByTestId(`page-${page}`)).toBeInTheDocument();
  }
});

test("while the engine is starting a quiet spinner shows, not a blank window", async () => {
  // app_info never answers.
  mockIPC(() => new Promise(() => {}), { shouldMockEvents: true });
  renderApp();

  expect(await screen.findByRole("status", { name: "Starting Healer" })).toBeInTheDocument();
});
