// Settings → Models → Steering: which model looks at the agents' progress, the rule that picks
// it when none is named, and how often it looks at each task.
import { useId, useState, type FormEvent } from "react";
import type { ProviderView, SteeringSettings, TierView } from "../../bindings";
import { CheckIcon } from "../../components/icons";
import { InlineError } from "../../components/InlineError";
import { Spinner } from "../../components/Loading";
import { useSetSteeringModel, useSetSteeringSettings, useSteeringModel, useSteeringSettings } from "../../queries";

/** The rule's own choice, in the picker. */
const BY_RULE = "";

/** Every model the person has set up: those of the tiers and those with a price. */
function modelChoices(tiers: TierView[], providers: ProviderView[]): { provider: string; title: string; model: string }[] {
  const seen = new Map<string, { provider: string; title: string; model: string }>();
  const titleOf = (name: string) => providers.find((p) => p.provider.name === name)?.provider.title ?? name;
  for (const t of tiers) {
    if (t.setting) {
      seen.set(`${t.setting.provider}\u0000${t.setting.model}`, { provider: t.setting.provider, title: titleOf(t.setting.provider), model: t.setting.model });
    }
  }
  for (const p of providers) {
    for (const price of p.provider.prices) {
      seen.set(`${p.provider.name}\u0000${price.model}`, { provider: p.provider.name, title: p.provider.title, model: price.model });
    }
  }
  return [...seen.values()];
}

function ModelPicker({ tiers, providers }: { tiers: TierView[]; providers: ProviderView[] }) {
  const view = useSteeringModel();
  const save = useSetSteeringModel();
  const id = useId();
  if (view.isPending) return <Spinner label="Loading the steering model" />;
  if (view.isError) return <InlineError lead="The steering model couldn't be loaded." error={view.error} onRetry={() => void view.refetch()} />;
  const choices = modelChoices(tiers, providers);
  const named = view.data.setting;
  const value = named ? `${named.provider}\u0000${named.model}` : BY_RULE;
  return (
    <div className="field">
      <label className="field-label" htmlFor={id}>
        Steering model
      </label>
      <select
        id={id}
        className="input select"
        value={value}
        disabled={save.isPending || choices.length === 0}
        onChange={(e) => {
          const [provider, model] = e.target.value.split("\u0000");
          save.mutate(e.target.value === BY_RULE || !model ? null : { provider, model });
        }}
        data-testid="steering-model"
      >
        <option value={BY_RULE}>The cheapest model you have set up</option>
        {choices.map((c) => (
          <option key={`${c.provider}\u0000${c.model}`} value={`${c.provider}\u0000${c.model}`}>
            {c.model} ({c.title})
          </option>
        ))}
      </select>
      <p className="field-hint" data-testid="steering-model-now">
        {view.data.summary}
      </p>
      <p className="field-hint">{view.data.rule}</p>
      {save.isError && <InlineError lead="The steering model wasn't saved." error={save.error} />}
    </div>
  );
}

/** The engine's default, when the stored settings name none. */
const DEFAULT_JUDGE_SECS = 15 * 60;

function IntervalForm({ settings, save }: { settings: SteeringSettings; save: ReturnType<typeof useSetSteeringSettings> }) {
  const every = settings.judge_every_secs ?? DEFAULT_JUDGE_SECS;
  const [minutes, setMinutes] = useState(() => String(Math.round(every / 60)));
  const [problem, setProblem] = useState<string | null>(null);
  const id = useId();
  const typed = Number(minutes.trim());
  const changed = typed * 60 !== every;

  function submit(event: FormEvent) {
    event.preventDefault();
    if (save.isPending) return;
    if (!/^\d+$/.test(minutes.trim()) || typed < 1) {
      setProblem("Write a whole number of minutes, 1 or more, like 15.");
      return;
    }
    setProblem(null);
    save.mutate({ ...settings, judge_every_secs: typed * 60 });
  }

  return (
    <form className="steering-interval" onSubmit={submit} noValidate>
      <div className="field">
        <label className="field-label" htmlFor={id}>
          Look at each task every
        </label>
        <div className="input-with-unit">
          <input
            id={id}
            className="input budget-input"
            inputMode="numeric"
            value={minutes}
            onChange={(e) => {
              setMinutes(e.target.value);
              setProblem(null);
            }}
            aria-invalid={problem !== null}
            autoComplete="off"
            data-testid="steering-interval"
          />
          <span className="unit">minutes</span>
        </div>
        <p className="field-hint">Counted for each task from the last look, so a restart does not make it look sooner.</p>
        {problem && (
          <p className="field-hint field-error-text" role="alert">
            {problem}
          </p>
        )}
      </div>
      {save.isError && <InlineError lead="The interval wasn't saved." error={save.error} />}
      <div className="action-row">
        <button type="submit" className="button button-primary" disabled={save.isPending || (!changed && !save.isError)} data-testid="save-steering">
          {save.isPending && <Spinner />}
          Save
        </button>
        {save.isSuccess && !changed && (
          <span className="saved-note" role="status">
            <CheckIcon size={16} />
            Saved
          </span>
        )}
      </div>
    </form>
  );
}

/** The steering model and how often it looks at each agent's progress. */
export function SteeringCard({ tiers, providers }: { tiers: TierView[]; providers: ProviderView[] }) {
  const settings = useSteeringSettings();
  // Here rather than in the form, which starts afresh when what is stored changes.
  const save = useSetSteeringSettings();
  const titleId = useId();
  return (
    <section className="card settings-section" aria-labelledby={titleId} data-testid="steering">
      <div className="section-head-text">
        <h2 className="section-title" id={titleId}>
          Steering
        </h2>
        <p className="muted">
          While an agent works on a task, a free check catches it going in circles after every step. Every few minutes a model also looks at its progress and
          lets it go on, tells it what to change, or replaces it.
        </p>
      </div>
      <ModelPicker tiers={tiers} providers={providers} />
      {settings.isPending && <Spinner label="Loading the steering settings" />}
      {settings.isError && (
        <InlineError lead="The steering settings couldn't be loaded." error={settings.error} onRetry={() => void settings.refetch()} />
      )}
      {settings.data && <IntervalForm key={settings.data.judge_every_secs} settings={settings.data} save={save} />}
    </section>
  );
}
