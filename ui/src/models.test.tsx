import { cleanup, screen, waitFor, within } from "@testing-library/react";
import { expect, test } from "vitest";
import { FakeHealer, usageTotals } from "./test/fakeHealer";
import { renderApp } from "./test/renderApp";

function providerRow(name: string): HTMLElement {
  const row = screen.getAllByTestId("provider-row").find((r) => r.dataset.name === name);
  if (!row) throw new Error(`no provider row for ${name}`);
  return row;
}

function tierRow(tier: string): HTMLElement {
  const row = screen.getAllByTestId("tier-row").find((r) => r.dataset.tier === tier);
  if (!row) throw new Error(`no tier row for ${tier}`);
  return row;
}

test("adding a provider lists it with where its key comes from", async () => {
  const healer = new FakeHealer().install();
  healer.env.OPENROUTER_API_KEY = "sk-or-from-the-shell";
  const { user } = renderApp("#/settings");

  await user.click(await screen.findByTestId("settings-section-models"));
  const models = await screen.findByTestId("settings-models");
  expect(await within(models).findByTestId("no-model")).toHaveTextContent(
    "Healer can still retry and notify, but it cannot repair scripts. Add a provider or start Ollama.",
  );

  await user.click(screen.getByTestId("add-provider"));
  await user.type(screen.getByTestId("provider-name"), "openrouter");
  await user.type(screen.getByTestId("provider-base-url"), "openrouter.ai/api/v1");
  await user.type(screen.getByTestId("provider-key-env"), "OPENROUTER_API_KEY");
  await user.click(screen.getByTestId("save-provider"));

  // The engine's own check, under the field it is about.
  expect(await screen.findByTestId("provider-error-base_url")).toHaveTextContent(
    'The base URL "openrouter.ai/api/v1" must start with http:// or https://.',
  );
  expect(screen.getByTestId("provider-base-url")).toHaveAttribute("aria-invalid", "true");
  expect(screen.queryAllByTestId("provider-row")).toHaveLength(0);

  await user.clear(screen.getByTestId("provider-base-url"));
  await user.type(screen.getByTestId("provider-base-url"), "https://openrouter.ai/api/v1");
  await user.click(screen.getByTestId("save-provider"));

  await waitFor(() => expect(screen.queryByTestId("provider-form")).not.toBeInTheDocument());
  const row = providerRow("openrouter");
  expect(row).toHaveTextContent("OpenAI-compatible");
  expect(row).toHaveTextContent("https://openrouter.ai/api/v1");
  expect(within(row).getByTestId("key-source")).toHaveTextContent("Key from $OPENROUTER_API_KEY");
  expect(healer.callsTo("save_provider").at(-1)?.args.input).toEqual({
    name: "openrouter",
    title: "openrouter",
    kind: "openai_compatible",
    base_url: "https://openrouter.ai/api/v1",
    key_env: "OPENROUTER_API_KEY",
    prices: [],
  });
  // A provider alone maps no tier yet: the next step is said.
  expect(screen.getByTestId("no-model")).toHaveTextContent("Choose a model for a tier below.");
});

test("testing a connection shows the models or the exact error", async () => {
  const healer = new FakeHealer();
  healer.addProvider({ name: "openai", kind: "openai_compatible" });
  healer.addProvider({ name: "claude", kind: "anthropic" });
  healer.keyring.set("openai", "sk-one").set("claude", "sk-two");
  healer.connections.set("openai", ["gpt-4o-mini", "gpt-4o", "o3-mini"]);
  const refusal =
    "claude refused the key (HTTP 401: invalid x-api-key). Set a valid key in Settings → Model providers, or in the environment variable the provider names";
  healer.connections.set("claude", { code: "model_auth", message: refusal });
  healer.install();
  const { user } = renderApp("#/settings/models");

  await screen.findAllByTestId("provider-row");
  await user.click(within(providerRow("openai")).getByTestId("test-connection"));
  const models = await within(providerRow("openai")).findByTestId("connection-result");
  expect(models).toHaveTextContent("Connected. It offers 3 models:");
  expect(within(models).getAllByRole("listitem").map((li) => li.textContent)).toEqual(["gpt-4o-mini", "gpt-4o", "o3-mini"]);

  await user.click(within(providerRow("claude")).getByTestId("test-connection"));
  const failure = await within(providerRow("claude")).findByTestId("connection-result");
  expect(failure).toHaveTextContent("The connection failed.");
  expect(failure.querySelector(".connection-error")?.textContent).toBe(refusal);
  expect(healer.callsTo("test_provider").map((c) => c.args.name)).toEqual(["openai", "claude"]);
});

test("a tier without a model says what it falls back to", async () => {
  const healer = new FakeHealer();
  healer.addProvider({ name: "ollama", kind: "ollama" });
  healer.tierSettings = [{ tier: "standard", provider: "ollama", model: "llama3.2", budget_tokens: 10_000 }];
  healer.install();
  const { user } = renderApp("#/settings/models");

  await screen.findAllByTestId("tier-row");
  expect(within(tierRow("cheap")).getByTestId("tier-state")).toHaveTextContent("Not set — uses Standard (ollama · llama3.2)");
  expect(within(tierRow("deep")).getByTestId("tier-state")).toHaveTextContent("Not set — uses Standard (ollama · llama3.2)");
  expect(within(tierRow("standard")).getByTestId("tier-state")).toHaveTextContent("ollama·llama3.210,000 tokens written per attempt");
  expect(screen.queryByTestId("no-model")).not.toBeInTheDocument();

  await user.click(within(tierRow("standard")).getByTestId("clear-tier"));

  await waitFor(() =>
    expect(within(tierRow("cheap")).getByTestId("tier-state")).toHaveTextContent("Not set — no model is configured"),
  );
  expect(within(tierRow("standard")).getByTestId("tier-state")).toHaveTextContent("Not set — no model is configured");
  expect(healer.callsTo("clear_tier").map((c) => c.args.tier)).toEqual(["standard"]);
  expect(screen.getByTestId("no-model")).toHaveTextContent("Choose a model for a tier below.");

  // Mapped elsewhere (`healer tier set`): the engine's event brings it here.
  healer.tierSettings = [{ tier: "deep", provider: "ollama", model: "qwen2.5-coder:32b", budget_tokens: 20_000 }];
  await healer.happen({ kind: "llm_settings_changed", what: "deep tier → ollama / qwen2.5-coder:32b" });
  await waitFor(() =>
    expect(within(tierRow("standard")).getByTestId("tier-state")).toHaveTextContent("Not set — uses Deep (ollama · qwen2.5-coder:32b)"),
  );
  expect(screen.queryByTestId("no-model")).not.toBeInTheDocument();
});

test("a key typed in is sent once and never shown again", async () => {
  const secret = "sk-proj-Zq81x0A7c3b5d9e1f2a4";
  const healer = new FakeHealer();
  healer.addProvider({ name: "openai", kind: "openai_compatible" });
  let release = () => {};
  healer.keyGate = new Promise((resolve) => (release = resolve));
  healer.install();
  const { user } = renderApp("#/settings/models");

  const row = await screen.findByTestId("provider-row");
  expect(within(row).getByTestId("key-source")).toHaveTextContent(
    "No key yet: set one (it is kept in the OS keyring) or export OPENAI_API_KEY",
  );
  await user.click(within(row).getByTestId("set-key"));
  const field = await screen.findByTestId("provider-key-input");
  expect(field).toHaveAttribute("type", "password");
  expect(field).toHaveAttribute("autocomplete", "off");
  expect(field).toHaveFocus();
  await user.type(field, secret);
  await user.click(screen.getByTestId("save-key"));

  // Emptied as it is sent, before the engine has even answered.
  await waitFor(() => expect(screen.getByTestId("save-key")).toBeDisabled());
  expect(field).toHaveValue("");
  release();

  await waitFor(() => expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument());
  await waitFor(() => expect(within(row).getByTestId("key-source")).toHaveTextContent("Key from the OS keyring"));
  expect(healer.callsTo("set_provider_key")).toEqual([{ cmd: "set_provider_key", args: { name: "openai", key: secret } }]);
  expect(document.body.innerHTML).not.toContain(secret);
  for (const input of document.querySelectorAll("input")) expect(input.value).not.toContain(secret);

  // Replacing it starts from an empty field: the key is never read back.
  await user.click(within(row).getByTestId("set-key"));
  expect(await screen.findByTestId("provider-key-input")).toHaveValue("");
  expect(screen.getByTestId("save-key")).toBeDisabled();
});

test("budgets are saved", async () => {
  const healer = new FakeHealer().install();
  const { user } = renderApp("#/settings/models");

  const perCall = await screen.findByTestId("budget-per-call");
  expect(perCall).toHaveValue("4,096");
  expect(screen.getByTestId("budget-cost")).toHaveValue("5.00");
  expect(screen.getByTestId("save-budgets")).toBeDisabled();
  await user.clear(perCall);
  await user.type(perCall, "2048");
  await user.clear(screen.getByTestId("budget-per-day"));
  await user.type(screen.getByTestId("budget-per-day"), "250,000");
  await user.clear(screen.getByTestId("budget-cost"));
  await user.type(screen.getByTestId("budget-cost"), "1.50");
  await user.click(screen.getByTestId("save-budgets"));

  expect(await screen.findByText("Saved")).toBeInTheDocument();
  expect(healer.callsTo("set_budgets").map((c) => c.args.budgets)).toEqual([
    { max_tokens_per_call: 2048, per_task_tokens: 60_000, per_day_tokens: 250_000, per_day_cost_usd: 1.5 },
  ]);
  // Today's usage is measured against the new caps.
  await waitFor(() => expect(screen.getByTestId("usage-tokens")).toHaveTextContent("0 of 250,000"));
  expect(screen.getByTestId("usage-cost")).toHaveTextContent("$0.00 of $1.50");

  // A cap of zero tokens and a cost that is not a number are each said under their own field.
  const calls = healer.callsTo("set_budgets").length;
  await user.clear(screen.getByTestId("budget-per-call"));
  await user.type(screen.getByTestId("budget-per-call"), "0");
  await user.clear(screen.getByTestId("budget-cost"));
  await user.type(screen.getByTestId("budget-cost"), "five");
  await user.click(screen.getByTestId("save-budgets"));
  expect(await screen.findByTestId("budget-per-call-problem")).toHaveTextContent("Write a whole number of tokens above 0");
  expect(screen.getByTestId("budget-cost-problem")).toHaveTextContent("A number of US dollars");
  expect(screen.getByTestId("budget-per-call")).toHaveAttribute("aria-invalid", "true");
  expect(screen.getByTestId("budget-per-day")).toHaveAttribute("aria-invalid", "false");
  expect(screen.queryByTestId("budget-per-day-problem")).not.toBeInTheDocument();
  expect(healer.callsTo("set_budgets")).toHaveLength(calls);
  expect(screen.queryByText("Saved")).not.toBeInTheDocument();

  // A task cap below one call's is refused with why, not saved without a word.
  await user.clear(screen.getByTestId("budget-per-call"));
  await user.type(screen.getByTestId("budget-per-call"), "8000");
  await user.clear(screen.getByTestId("budget-cost"));
  await user.type(screen.getByTestId("budget-cost"), "1.50");
  await user.clear(screen.getByTestId("budget-per-task"));
  await user.type(screen.getByTestId("budget-per-task"), "5000");
  await user.click(screen.getByTestId("save-budgets"));
  expect(await screen.findByRole("alert")).toHaveTextContent("less than one call may write (8000)");
  expect(screen.queryByText("Saved")).not.toBeInTheDocument();
});

test("today's usage shows tokens and cost per tier", async () => {
  const healer = new FakeHealer();
  healer.usageByTier = [
    { tier: "cheap", totals: usageTotals({ calls: 4, prompt_tokens: 12_000, completion_tokens: 800, cached_tokens: 3_000, cost_usd: 0.0042 }) },
    { tier: "standard", totals: usageTotals({ calls: 2, prompt_tokens: 30_000, completion_tokens: 2_500, cost_usd: 2.1 }) },
    { tier: "deep", totals: usageTotals({ calls: 1, prompt_tokens: 9_000, completion_tokens: 1_200, unpriced_calls: 1 }) },
  ];
  healer.install();
  renderApp("#/settings/models");

  const usage = await screen.findByTestId("usage-today");
  const cells = (testId: string) => [...within(usage).getByTestId(testId).children].map((c) => c.textContent);
  await waitFor(() => expect(within(usage).getByTestId("usage-cheap")).toBeInTheDocument());
  expect(cells("usage-cheap")).toEqual(["Cheap", "4", "12,000", "3,000", "800", "$0.0042"]);
  expect(cells("usage-standard")).toEqual(["Standard", "2", "30,000", "0", "2,500", "$2.10"]);
  expect(cells("usage-deep")).toEqual(["Deep", "1", "9,000", "0", "1,200", "—"]);
  expect(cells("usage-total")).toEqual(["Total", "7", "51,000", "3,000", "4,500", "$2.10"]);

  expect(within(usage).getByTestId("usage-tokens")).toHaveTextContent("55,500 of 1,000,000");
  expect(within(usage).getByRole("meter", { name: "Tokens" })).toHaveAttribute("aria-valuenow", "6");
  expect(within(usage).getByTestId("usage-cost")).toHaveTextContent("$2.10 of $5.00");
  expect(within(usage).getByRole("meter", { name: "Cost" })).toHaveAttribute("aria-valuenow", "42");
  expect(usage).toHaveTextContent("1 call went to models without a price; its cost is not counted.");
});

test("Ollama found offers to use it", async () => {
  const healer = new FakeHealer().install();
  const { user } = renderApp("#/settings/models");

  const status = await screen.findByTestId("ollama-status");
  await waitFor(() => expect(status).toHaveTextContent("Ollama is not running on this computer."));
  expect(status).toHaveTextContent("install Ollama from ollama.com");
  // Nobody asked for Ollama: no alarm, no error text from the probe.
  expect(status).not.toHaveTextContent("Not found");
  expect(status).not.toHaveTextContent("refused");
  expect(within(status).queryByTestId("use-ollama")).not.toBeInTheDocument();

  healer.ollama = { base_url: "http://127.0.0.1:11434", running: true, models: ["llama3.2:3b", "qwen2.5-coder:7b"], detail: null };
  await user.click(within(status).getByTestId("detect-ollama"));

  await waitFor(() => expect(status).toHaveTextContent("Ollama answers at http://127.0.0.1:11434 with 2 models."));
  expect(within(status).getAllByRole("listitem").map((li) => li.textContent)).toEqual(["llama3.2:3b", "qwen2.5-coder:7b"]);
  await user.click(within(status).getByTestId("use-ollama"));

  expect(await within(status).findByTestId("ollama-added")).toHaveTextContent("In use as the provider “ollama”.");
  expect(healer.callsTo("save_provider").map((c) => c.args.input)).toEqual([
    { name: "ollama", kind: "ollama", base_url: "http://127.0.0.1:11434", key_env: null, prices: [] },
  ]);
  expect(within(providerRow("ollama")).getByTestId("key-source")).toHaveTextContent("No key needed");

  // Its models are there to choose from for a tier, without a key or a test.
  await user.click(within(tierRow("cheap")).getByTestId("edit-tier"));
  const model = within(tierRow("cheap")).getByTestId("tier-model");
  expect([...model.querySelectorAll("option")].map((o) => o.textContent)).toEqual([
    "llama3.2:3b",
    "qwen2.5-coder:7b",
    "Another model…",
  ]);
  await user.selectOptions(model, "qwen2.5-coder:7b");
  await user.click(within(tierRow("cheap")).getByTestId("save-tier"));

  await waitFor(() =>
    expect(within(tierRow("cheap")).getByTestId("tier-state")).toHaveTextContent("ollama·qwen2.5-coder:7b5,000 tokens written per attempt"),
  );
  expect(healer.callsTo("set_tier").map((c) => c.args.setting)).toEqual([
    { tier: "cheap", provider: "ollama", model: "qwen2.5-coder:7b", budget_tokens: 5000, temperature: null, minutes: null },
  ]);
  expect(within(tierRow("deep")).getByTestId("tier-state")).toHaveTextContent("Not set — uses Cheap (ollama · qwen2.5-coder:7b)");
});

test("a tier's budget says what it counts, and its temperature is saved with it", async () => {
  const healer = new FakeHealer();
  healer.addProvider({ name: "ollama", kind: "ollama" });
  healer.install();
  const { user } = renderApp("#/settings/models");

  await screen.findAllByTestId("tier-row");
  await user.click(within(tierRow("cheap")).getByTestId("edit-tier"));
  await user.type(within(tierRow("cheap")).getByTestId("tier-model"), "llama3.2");
  expect(within(tierRow("cheap")).getByTestId("tier-budget-hint")).toHaveTextContent(
    "The budget counts the tokens the model writes in one attempt",
  );
  const temperature = within(tierRow("cheap")).getByTestId("tier-temperature");
  await user.type(temperature, "7");
  await user.click(within(tierRow("cheap")).getByTestId("save-tier"));
  expect(await within(tierRow("cheap")).findByRole("alert")).toHaveTextContent("from 0 to 2");
  await user.clear(temperature);
  await user.type(temperature, "0.3");
  await user.click(within(tierRow("cheap")).getByTestId("save-tier"));
  await waitFor(() =>
    expect(within(tierRow("cheap")).getByTestId("tier-state")).toHaveTextContent("tokens written per attempt · temperature 0.3"),
  );
  expect(healer.callsTo("set_tier").map((c) => (c.args.setting as { temperature: number | null }).temperature)).toEqual([0.3]);
});

test("calls to a model on this computer are counted in time, not money", async () => {
  const healer = new FakeHealer();
  healer.usageByTier = [
    { tier: "cheap", totals: usageTotals({ calls: 3, prompt_tokens: 6_000, completion_tokens: 900, unpriced_calls: 3, local_calls: 3, local_secs: 250 }) },
    { tier: "standard", totals: usageTotals({ calls: 1, prompt_tokens: 9_000, completion_tokens: 1_200, unpriced_calls: 1 }) },
  ];
  healer.install();
  renderApp("#/settings/models");

  const usage = await screen.findByTestId("usage-today");
  const cells = (testId: string) => [...within(usage).getByTestId(testId).children].map((c) => c.textContent);
  await waitFor(() => expect(within(usage).getByTestId("usage-cheap")).toBeInTheDocument());
  expect(cells("usage-cheap")).toEqual(["Cheap", "3", "6,000", "0", "900", "4 min 10 s"]);
  expect(cells("usage-standard")).toEqual(["Standard", "1", "9,000", "0", "1,200", "—"]);
  expect(within(usage).getByTestId("usage-local")).toHaveTextContent(
    "3 calls went to models on this computer: they cost time rather than money, 4 min 10 s of it today.",
  );
  expect(usage).toHaveTextContent("1 call went to models without a price; its cost is not counted.");
});

test("llama.cpp's server found on this computer offers to use it, with no key", async () => {
  const healer = new FakeHealer().install();
  const { user } = renderApp("#/settings/models");

  const card = await screen.findByTestId("ollama-status");
  await waitFor(() => expect(card).toHaveTextContent("Ollama is not running on this computer."));
  // Not running: nothing said about it (nobody asked for it).
  expect(within(card).queryByTestId("llama-cpp-status")).not.toBeInTheDocument();

  healer.llamaCpp = { base_url: "http://127.0.0.1:8080", running: true, models: ["gemma3-270m"], detail: null };
  await user.click(within(card).getByTestId("detect-ollama"));
  const found = await within(card).findByTestId("llama-cpp-status");
  expect(found).toHaveTextContent("llama.cpp's server answers at http://127.0.0.1:8080 with 1 model.");
  expect(within(found).getByRole("listitem")).toHaveTextContent("gemma3-270m");
  await user.click(within(found).getByTestId("use-llama-cpp"));

  expect(await within(found).findByTestId("llama-cpp-added")).toHaveTextContent("In use as the provider “llama-cpp”.");
  expect(healer.callsTo("save_provider").map((c) => c.args.input)).toEqual([
    { name: "llama-cpp", kind: "openai_compatible", base_url: "http://127.0.0.1:8080/v1", key_env: null, prices: [] },
  ]);
  expect(within(providerRow("llama-cpp")).getByTestId("key-source")).toHaveTextContent("No key needed");
});

test("a model at home is given time rather than money: the minutes one attempt may take", async () => {
  const healer = new FakeHealer();
  healer.addProvider({ name: "ollama", kind: "ollama" });
  healer.install();
  const { user } = renderApp("#/settings/models");

  await screen.findAllByTestId("tier-row");
  await user.click(within(tierRow("cheap")).getByTestId("edit-tier"));
  await user.type(within(tierRow("cheap")).getByTestId("tier-model"), "llama3.2");
  expect(within(tierRow("cheap")).getByTestId("tier-budget-hint")).toHaveTextContent(
    "A model on your own computer costs time rather than money",
  );
  const minutes = within(tierRow("cheap")).getByTestId("tier-minutes");
  await user.type(minutes, "0");
  await user.click(within(tierRow("cheap")).getByTestId("save-tier"));
  expect(await within(tierRow("cheap")).findByRole("alert")).toHaveTextContent("a whole number of minutes above zero");
  await user.clear(minutes);
  await user.type(minutes, "25");
  await user.click(within(tierRow("cheap")).getByTestId("save-tier"));
  await waitFor(() =>
    expect(within(tierRow("cheap")).getByTestId("tier-state")).toHaveTextContent("at most 25 min per attempt"),
  );
  expect(healer.callsTo("set_tier").map((c) => (c.args.setting as { minutes: number | null }).minutes)).toEqual([25]);
});

test("the steering card says which model looks at the agents, by the rule, and how often", async () => {
  const healer = new FakeHealer().install();
  const { user } = renderApp("#/settings/models");
  const card = await screen.findByTestId("steering");
  // No model at all: only the free check, and the card says so in plain words.
  expect(await within(card).findByTestId("steering-model-now")).toHaveTextContent("only the free loop check watches your agents");
  expect(card).toHaveTextContent("if you name none, it asks the cheapest model you have set up");
  expect(within(card).getByTestId("steering-interval")).toHaveValue("15");
  cleanup();

  healer.addProvider({ name: "openai", kind: "openai_compatible" });
  healer.tierSettings = [
    { tier: "cheap", provider: "openai", model: "gpt-4o-mini", budget_tokens: 5_000, temperature: null },
    { tier: "deep", provider: "openai", model: "gpt-4o", budget_tokens: 20_000, temperature: null },
  ];
  renderApp("#/settings/models");
  const again = await screen.findByTestId("steering");
  expect(await within(again).findByTestId("steering-model-now")).toHaveTextContent("Steering asks gpt-4o-mini from openai");
  await user.selectOptions(within(again).getByTestId("steering-model"), "gpt-4o (openai)");
  await waitFor(() => expect(healer.callsTo("set_steering_model").map((c) => c.args.setting)).toEqual([{ provider: "openai", model: "gpt-4o" }]));
  expect(await within(again).findByText(/Steering asks gpt-4o from openai \(the model you named\)/)).toBeInTheDocument();

  const interval = within(again).getByTestId("steering-interval");
  await user.clear(interval);
  await user.type(interval, "0");
  await user.click(within(again).getByTestId("save-steering"));
  expect(await within(again).findByRole("alert")).toHaveTextContent("1 or more");
  await user.clear(interval);
  await user.type(interval, "10");
  await user.click(within(again).getByTestId("save-steering"));
  await waitFor(() => expect(healer.callsTo("set_steering_settings").map((c) => (c.args.settings as { judge_every_secs: number }).judge_every_secs)).toEqual([600]));
  expect(await within(again).findByText("Saved")).toBeInTheDocument();
  expect(within(again).getByTestId("steering-interval")).toHaveValue("10");
});

test("on a computer without a keyring, the Set key dialog names the variable to use instead (nothing is 'named below' it)", async () => {
  const healer = new FakeHealer();
  healer.addProvider({ name: "openai", kind: "openai_compatible" });
  healer.secrets.keyringService = false;
  healer.install();
  const { user } = renderApp("#/settings/models");
  const row = await screen.findByTestId("provider-row");
  await user.click(within(row).getByTestId("set-key"));
  const choice = await screen.findByTestId("secrets-file-choice");
  expect(choice).toHaveTextContent("Or leave this and put the key in the environment variable OPENAI_API_KEY where Healer starts");
  expect(choice).not.toHaveTextContent("named below");
});
