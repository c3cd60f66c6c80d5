import { useId, useState, type FormEvent } from "react";
import type { LocalServerStatus, ProviderView, TierView } from "../../bindings";
import { InlineError } from "../../components/InlineError";
import { Spinner } from "../../components/Loading";
import { tierLabel, tierPurpose, tokens } from "../../modelText";
import { useClearTier, useKnownModels, useOllama, useSetTier } from "../../queries";
import { ollamaProvider } from "./LocalModelsCard";

const OTHER = "\u0000other";

/** The models to choose from: the last successful test's, and for a local Ollama what it reported. */
/** A provider's name as the person wrote it. */
function titleOf(providers: ProviderView[], name: string): string {
  return providers.find((p) => p.provider.name === name)?.provider.title ?? name;
}

function useModelChoices(provider: string, providers: ProviderView[], ollama: LocalServerStatus | undefined): string[] {
  const tested = useKnownModels(provider).data ?? [];
  const local = ollama?.running && ollamaProvider(ollama, providers)?.provider.name === provider ? ollama.models : [];
  return [...new Set([...tested, ...local])];
}

function wholeNumber(text: string): number | null {
  const trimmed = text.trim().replace(/[,_\s]/g, "");
  return /^\d+$/.test(trimmed) ? Number(trimmed) : null;
}

function TierEditor({
  view,
  providers,
  onDone,
  onCancel,
}: {
  view: TierView;
  providers: ProviderView[];
  onDone: () => void;
  onCancel: () => void;
}) {
  const ollama = useOllama().data;
  const [provider, setProvider] = useState(() => {
    // The tier's own provider, else the one it falls back to, else the first.
    const start = view.setting?.provider ?? view.resolves_to?.provider.name;
    return providers.find((p) => p.provider.name === start)?.provider.name ?? providers[0]?.provider.name ?? "";
  });
  const [model, setModel] = useState(view.setting?.model ?? "");
  const [budget, setBudget] = useState(tokens(view.setting?.budget_tokens ?? view.default_budget));
  const [temperature, setTemperature] = useState(view.setting?.temperature?.toString() ?? "");
  const [minutes, setMinutes] = useState(view.setting?.minutes?.toString() ?? "");
  const [problem, setProblem] = useState<string | null>(null);
  const choices = useModelChoices(provider, providers, ollama);
  const [typing, setTyping] = useState(() => model !== "" && !choices.includes(model));
  const save = useSetTier();
  const id = useId();
  const ids = {
    provider: `${id}-provider`,
    model: `${id}-model`,
    budget: `${id}-budget`,
    budgetHint: `${id}-budget-hint`,
    temperature: `${id}-temperature`,
    minutes: `${id}-minutes`,
    problem: `${id}-problem`,
  };
  const picking = choices.length > 0 && !typing;
  // With models to choose from, one is chosen unless the person asks to type another.
  const chosen = picking && !choices.includes(model) ? choices[0] : model;

  function submit(event: FormEvent) {
    event.preventDefault();
    if (save.isPending) return;
    const tokensPerAttempt = wholeNumber(budget);
    if (tokensPerAttempt === null || tokensPerAttempt === 0) {
      setProblem("The budget is a whole number of tokens above zero, like 10000.");
      return;
    }
    const heat = temperature.trim() === "" ? null : Number(temperature.trim().replace(",", "."));
    if (heat !== null && !(Number.isFinite(heat) && heat >= 0 && heat <= 2)) {
      setProblem("The temperature is a number from 0 to 2, like 0.1, or empty.");
      return;
    }
    const time = minutes.trim() === "" ? null : wholeNumber(minutes);
    if (time === 0 || (minutes.trim() !== "" && time === null)) {
      setProblem("The time is a whole number of minutes above zero, like 20, or empty.");
      return;
    }
    setProblem(null);
    save.mutate(
      { tier: view.tier, provider, model: chosen.trim(), budget_tokens: tokensPerAttempt, temperature: heat, minutes: time },
      { onSuccess: onDone },
    );
  }

  return (
    <form className="tier-editor" onSubmit={submit} noValidate data-testid="tier-editor">
      <div className="tier-fields">
        <div className="field">
          <label className="field-label" htmlFor={ids.provider}>
            Provider
          </label>
          <select
            id={ids.provider}
            className="input select"
            value={provider}
            onChange={(e) => {
              setProvider(e.target.value);
              setTyping(false);
            }}
            data-testid="tier-provider"
          >
            {providers.map((p) => (
              <option key={p.provider.name} value={p.provider.name}>
                {p.provider.title}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label className="field-label" htmlFor={ids.model}>
            Model
          </label>
          {picking ? (
            <select
              id={ids.model}
              className="input select"
              value={chosen}
              onChange={(e) => {
                if (e.target.value === OTHER) {
                  setTyping(true);
                  setModel("");
                } else setModel(e.target.value);
              }}
              data-testid="tier-model"
            >
              {choices.map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
              <option value={OTHER}>Another model…</option>
            </select>
          ) : (
            <input
              id={ids.model}
              className="input mono"
              value={model}
              onChange={(e) => setModel(e.target.value)}
              placeholder="gpt-4o-mini"
              spellCheck={false}
              autoCapitalize="off"
              autoComplete="off"
              autoFocus={typing}
              aria-describedby={`${ids.model}-hint`}
              data-testid="tier-model"
            />
          )}
        </div>
        <div className="field tier-budget-field">
          <label className="field-label" htmlFor={ids.budget}>
            Budget per attempt
          </label>
          <div className="input-with-unit">
            <input
              id={ids.budget}
              className="input budget-input"
              inputMode="numeric"
              value={budget}
              onChange={(e) => setBudget(e.target.value)}
              aria-invalid={problem !== null}
              aria-describedby={problem ? `${ids.budgetHint} ${ids.problem}` : ids.budgetHint}
              autoComplete="off"
              data-testid="tier-budget"
            />
            <span className="unit">tokens</span>
          </div>
        </div>
        <div className="field tier-temperature-field">
          <label className="field-label" htmlFor={ids.temperature}>
            Temperature
          </label>
          <input
            id={ids.temperature}
            className="input temperature-input"
            inputMode="decimal"
            value={temperature}
            onChange={(e) => setTemperature(e.target.value)}
            placeholder="0.1"
            autoComplete="off"
            data-testid="tier-temperature"
          />
        </div>
        <div className="field tier-minutes-field">
          <label className="field-label" htmlFor={ids.minutes}>
            Time per attempt
          </label>
          <div className="input-with-unit">
            <input
              id={ids.minutes}
              className="input minutes-input"
              inputMode="numeric"
              value={minutes}
              onChange={(e) => setMinutes(e.target.value)}
              placeholder="10"
              autoComplete="off"
              data-testid="tier-minutes"
            />
            <span className="unit">min</span>
          </div>
        </div>
      </div>
      <p className="field-hint" id={ids.budgetHint} data-testid="tier-budget-hint">
        The budget counts the tokens the model writes in one attempt; a typical repair writes about 3,000. What it
        reads counts toward the per-task cap in Budgets. Leave the temperature empty for 0.1 on repairs. A model on
        your own computer costs time rather than money: give it the minutes one attempt may take (10 when empty).
      </p>
      {!picking && (
        <p className="field-hint" id={`${ids.model}-hint`}>
          {choices.length > 0 ? (
            <button type="button" className="link-button" onClick={() => setTyping(false)}>
              Choose from the models {titleOf(providers, provider)} offers
            </button>
          ) : (
            `Type the model's name as ${titleOf(providers, provider)} knows it, or test the connection above to choose from its models.`
          )}
        </p>
      )}
      {problem && (
        <div className="field-error" id={ids.problem} role="alert">
          <p>{problem}</p>
        </div>
      )}
      {save.isError && <InlineError lead="The tier wasn't saved." error={save.error} />}
      <div className="provider-form-actions">
        <button type="submit" className="button button-primary button-small" disabled={save.isPending} data-testid="save-tier">
          {save.isPending && <Spinner />}
          Save
        </button>
        <button type="button" className="button button-small" onClick={onCancel} disabled={save.isPending}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** What a call for this tier uses now, in words. */
function TierState({ view, providers }: { view: TierView; providers: ProviderView[] }) {
  const { setting, resolves_to: uses } = view;
  if (setting) {
    return (
      <p className="tier-state" data-testid="tier-state">
        <span className="tier-provider">{titleOf(providers, setting.provider)}</span>
        <span className="tier-sep">·</span>
        <code className="tier-model">{setting.model}</code>
        <span className="tier-budget">
          {tokens(setting.budget_tokens)} tokens written per attempt
          {setting.temperature != null && ` · temperature ${setting.temperature}`}
          {setting.minutes != null && ` · at most ${setting.minutes} min per attempt`}
        </span>
      </p>
    );
  }
  return (
    <p className="tier-state unset" data-testid="tier-state">
      {uses
        ? `Not set — uses ${tierLabel[uses.used]} (${uses.provider.title} · ${uses.model})`
        : "Not set — no model is configured"}
    </p>
  );
}

function TierRow({ view, providers }: { view: TierView; providers: ProviderView[] }) {
  const [editing, setEditing] = useState(false);
  const clear = useClearTier();
  const { tier, setting } = view;
  return (
    <li className="tier-row" data-testid="tier-row" data-tier={tier} data-set={setting ? "true" : "false"}>
      <div className="tier-main">
        <div className="tier-name">
          <span className="tier-label">{tierLabel[tier]}</span>
          <span className="tier-purpose">{tierPurpose[tier]}</span>
        </div>
        {!editing && <TierState view={view} providers={providers} />}
        {!editing && providers.length > 0 && (
          <div className="tier-actions">
            <button
              type="button"
              className="button button-small"
              onClick={() => setEditing(true)}
              disabled={clear.isPending}
              data-testid="edit-tier"
            >
              {setting ? "Change" : "Choose model"}
            </button>
            {setting && (
              <button
                type="button"
                className="button button-small button-quiet-danger"
                onClick={() => clear.mutate(tier)}
                disabled={clear.isPending}
                data-testid="clear-tier"
              >
                {clear.isPending && <Spinner />}
                Clear
              </button>
            )}
          </div>
        )}
      </div>
      {editing && (
        <TierEditor view={view} providers={providers} onDone={() => setEditing(false)} onCancel={() => setEditing(false)} />
      )}
      {clear.isError && <InlineError lead="The tier wasn't cleared." error={clear.error} />}
    </li>
  );
}

export function TiersCard({ tiers, providers }: { tiers: TierView[]; providers: ProviderView[] }) {
  const titleId = useId();
  return (
    <section className="card settings-section" aria-labelledby={titleId} data-testid="tiers">
      <div className="section-head-text">
        <h2 className="section-title" id={titleId}>
          Tiers
        </h2>
        <p className="muted">
          Healer asks for a tier, never a model. A tier without a model uses the nearest one that has one. The budget
          bounds the tokens the model writes in one attempt; what it reads is bounded by the per-task cap.
        </p>
      </div>
      {providers.length === 0 && <p className="empty-note">Add a provider first; then choose a model for each tier.</p>}
      <ul className="tier-list">
        {tiers.map((view) => (
          <TierRow key={view.tier} view={view} providers={providers} />
        ))}
      </ul>
    </section>
  );
}
