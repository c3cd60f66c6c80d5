import { cleanup, screen, waitFor, within } from "@testing-library/react";
import { expect, test } from "vitest";
import { FakeHealer } from "./test/fakeHealer";
import { renderApp } from "./test/renderApp";

test("a workflow's secret is saved apart from the form, never shown again, and refused nowhere to keep it until the person chooses Healer's file", async () => {
  const healer = new FakeHealer().install();
  healer.secrets.keyringService = false;
  const kept = healer.addWorkflow({ title: "Exchange rates", schedule: { kind: "interval", seconds: 3600 }, timeout_secs: 60 });
  const { user } = renderApp(`#/workflows/${kept.workflow.id}`);
  await user.click(await screen.findByTestId("edit-settings"));
  const section = await screen.findByTestId("workflow-secrets");

  // Nowhere to keep it yet: the choice says what the file protects against.
  const choice = await within(section).findByTestId("secrets-file-choice");
  expect(choice).toHaveTextContent("This computer has no keyring service");
  expect(choice).toHaveTextContent("sealed with a key kept beside it");

  await user.type(within(section).getByTestId("secret-name"), "API_TOKEN");
  const value = within(section).getByTestId("secret-value");
  await user.type(value, "tok-typed-in-the-window");
  await user.click(within(section).getByTestId("secret-save"));
  expect(await within(section).findByRole("alert")).toHaveTextContent("no keyring service");
  // Refused, what was pasted is not lost.
  expect(value).toHaveValue("tok-typed-in-the-window");

  await user.click(within(section).getByTestId("secrets-file-accept"));
  await waitFor(() => expect(within(section).queryByTestId("secrets-file-choice")).toBeNull());
  expect(within(section).queryByRole("alert")).toBeNull();

  // The name and the value stay; Enter keeps it now.
  expect(within(section).getByTestId("secret-name")).toHaveValue("API_TOKEN");
  await user.type(value, "{Enter}");
  const row = await within(section).findByTestId("secret-row");
  expect(row).toHaveTextContent("API_TOKEN");
  expect(row).toHaveTextContent("kept in Healer's own secrets file");
  expect([...healer.secrets.values.entries()]).toEqual([[`workflow:${kept.workflow.id}:API_TOKEN`, "tok-typed-in-the-window"]]);
  expect(document.body.innerHTML).not.toContain("tok-typed-in-the-window");
  // Enter saved the secret, not the settings form.
  expect(healer.callsTo("update_workflow")).toHaveLength(0);

  await user.click(within(row).getByTestId("secret-remove"));
  await waitFor(() => expect(within(section).queryByTestId("secret-row")).toBeNull());
});

test("setup on a computer without a keyring service finishes with Healer's own file", async () => {
  const healer = new FakeHealer().install();
  healer.secrets.keyringService = false;
  healer.connections.set("openai", ["gpt-4o-mini", "gpt-4o"]);
  const { user } = renderApp("#/setup");
  const choice = await screen.findByTestId("secrets-file-choice");
  expect(choice).toHaveTextContent("Or leave this and put the key in the environment variable");

  await user.type(screen.getByTestId("setup-key"), "sk-pasted-before-choosing");
  await user.click(screen.getByTestId("setup-test"));
  expect(await screen.findByTestId("setup-no-keyring")).toHaveTextContent(
    "The key is not kept yet: choose above where Healer keeps it, and the key you pasted is kept there.",
  );
  // Not dropped: still in the field while the person chooses.
  expect(screen.getByTestId("setup-key")).toHaveValue("sk-pasted-before-choosing");
  expect(screen.queryByText(/object Object/)).toBeNull();

  await user.click(screen.getByTestId("secrets-file-accept"));
  await waitFor(() => expect(screen.queryByTestId("secrets-file-choice")).toBeNull());
  await waitFor(() => expect(screen.getByTestId("setup-key")).toHaveAttribute("placeholder", "Kept"));
  expect(healer.secrets.values.get("provider:openai")).toBe("sk-pasted-before-choosing");
  expect(screen.getByTestId("setup-key")).toHaveValue("");
  expect(screen.getByText("Kept in Healer's own secrets file, never in its database or logs.")).toBeInTheDocument();
  await user.click(screen.getByTestId("setup-test"));
  expect(await screen.findByTestId("setup-test-ok")).toBeInTheDocument();
});

test("Settings → Models says where keys are kept on this computer, never a keyring it does not have", async () => {
  const healer = new FakeHealer().install();
  healer.secrets.keyringService = false;
  renderApp("#/settings/models");
  const providers = await screen.findByTestId("providers");
  await waitFor(() =>
    expect(providers).toHaveTextContent("This computer has no keyring service: when you enter a key, Healer asks where to keep it."),
  );
  expect(providers).not.toHaveTextContent("system's keyring");
  healer.secrets.fileChosen = true;
  cleanup();
  renderApp("#/settings/models");
  await waitFor(() =>
    expect(screen.getByTestId("providers")).toHaveTextContent("A key you enter is kept in Healer's own secrets file"),
  );
});

test("a key the provider refused is not called Kept in setup", async () => {
  const healer = new FakeHealer().install();
  healer.connections.set("openai", { code: "model_auth", message: "openai refused the key (HTTP 401: invalid key)" });
  const { user } = renderApp("#/setup");
  await user.type(await screen.findByTestId("setup-key"), "sk-wrong");
  await user.click(screen.getByTestId("setup-test"));
  await waitFor(() =>
    expect(screen.getByTestId("setup-key")).toHaveAttribute("placeholder", "The kept key was refused: paste the right one"),
  );
  healer.connections.set("openai", ["gpt-4o-mini"]);
  await user.type(screen.getByTestId("setup-key"), "sk-right");
  await user.click(screen.getByTestId("setup-test"));
  await waitFor(() => expect(screen.getByTestId("setup-key")).toHaveAttribute("placeholder", "Kept"));
});
