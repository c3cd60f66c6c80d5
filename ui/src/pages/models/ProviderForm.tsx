import { useId, useState, type FormEvent } from "react";
import { toApiError } from "../../api";
import type { ModelPrice, Provider, ProviderInput, ProviderKind } from "../../bindings";
import { PlusIcon, XIcon } from "../../components/icons";
import { Spinner } from "../../components/Loading";
import { capitalised, defaultBaseUrl, defaultKeyEnv, providerKindHint, providerKindLabel, providerKinds, slugOf } from "../../modelText";
import { useSaveProvider } from "../../queries";
import { FieldProblems } from "../../components/FieldProblems";

type PriceRow = { key: number; model: string; input: string; output: string; cached: string };

type FormState = { name: string; kind: ProviderKind; baseUrl: string; keyEnv: string; prices: PriceRow[] };

/** The fields a problem can belong to; `null`: the provider as a whole. */
type Field = "name" | "base_url" | "key_env" | "prices";

export type Problem = { field: Field | null; message: string };

let nextRowKey = 1;

function priceRow(price?: ModelPrice): PriceRow {
  const text = (n: number | null | undefined) => (n === null || n === undefined ? "" : String(n));
  return {
    key: nextRowKey++,
    model: price?.model ?? "",
    input: text(price?.input_per_mtok),
    output: text(price?.output_per_mtok),
    cached: text(price?.cached_input_per_mtok),
  };
}

function formFrom(provider?: Provider): FormState {
  if (!provider) return { name: "", kind: "openai_compatible", baseUrl: "", keyEnv: "", prices: [] };
  return {
    name: provider.title,
    kind: provider.kind,
    // The usual address is shown as the placeholder; keep the field for a different one.
    baseUrl: provider.base_url === defaultBaseUrl[provider.kind] ? "" : provider.base_url,
    keyEnv: provider.key_env ?? "",
    prices: provider.prices.map(priceRow),
  };
}

const NUMBER = /^\d*\.?\d+$|^-\d*\.?\d+$/;

/** The input, or what stops it being one. Prices must be numbers before the engine can see them. */
function toInput(form: FormState, editing: Provider | undefined): { input: ProviderInput; problems: Problem[] } {
  const problems: Problem[] = [];
  const prices: ModelPrice[] = [];
  for (const row of form.prices) {
    const texts = [row.model, row.input, row.output, row.cached].map((t) => t.trim());
    if (texts.every((t) => !t)) continue;
    const [model, input, output, cached] = texts;
    if (!model) {
      problems.push({ field: "prices", message: "Name the model each price is for." });
      continue;
    }
    if (!NUMBER.test(input) || !NUMBER.test(output) || (cached && !NUMBER.test(cached))) {
      problems.push({
        field: "prices",
        message: `Give the prices of “${model}” as dollars per million tokens, like 0.15 (input and output are needed).`,
      });
      continue;
    }
    prices.push({
      model,
      input_per_mtok: Number(input),
      output_per_mtok: Number(output),
      cached_input_per_mtok: cached ? Number(cached) : null,
    });
  }
  const input: ProviderInput = {
    // Any name a person likes ("My OpenAI"); the engine keeps its slug.
    name: editing ? editing.name : slugOf(form.name),
    title: editing ? null : form.name.trim(),
    kind: form.kind,
    base_url: form.baseUrl.trim() || null,
    key_env: form.keyEnv.trim() || null,
    prices,
  };
  return { input, problems };
}

function asSentence(text: string): string {
  const trimmed = capitalised(text.trim());
  return /[.!?]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}

/**
 * The engine refuses a provider with its problems joined by "; ", each naming its field first
 * ("the base URL … must start with http:// or https://"); each goes under its field.
 */
export function problemsFrom(error: unknown): Problem[] {
  const { code, message } = toApiError(error);
  if (code !== "invalid_input") return [{ field: null, message }];
  return message
    .replace(/\.$/, "")
    .split("; ")
    .map((part) => {
      const lower = part.toLowerCase();
      const field: Field | null = lower.startsWith("the name")
        ? "name"
        : lower.startsWith("the base url")
          ? "base_url"
          : lower.startsWith("the key variable")
            ? "key_env"
            : lower.startsWith("the price")
              ? "prices"
              : null;
      return { field, message: asSentence(part) };
    });
}

export function ProviderForm({
  provider,
  takenNames,
  onDone,
  onCancel,
}: {
  /** The provider being changed; none: a new one. */
  provider?: Provider;
  /** Names a new provider may not take (saving under one would change that provider). */
  takenNames: string[];
  onDone: (saved: Provider) => void;
  onCancel: () => void;
}) {
  const [form, setForm] = useState(() => formFrom(provider));
  const [problems, setProblems] = useState<Problem[]>([]);
  const save = useSaveProvider();
  const id = useId();
  const ids = { name: `${id}-name`, url: `${id}-url`, keyEnv: `${id}-key-env`, errors: `${id}-errors` };
  const editing = provider !== undefined;

  const of = (field: Field | null) => problems.filter((p) => p.field === field);
  const describedBy = (field: Field, hint?: string) =>
    [hint, of(field).length ? `${ids.errors}-${field}` : undefined].filter(Boolean).join(" ") || undefined;

  function change(fields: Partial<FormState>, field: Field) {
    setForm((current) => ({ ...current, ...fields }));
    // A message goes once its field is worked on; the next save says what is still wrong.
    setProblems((current) => current.filter((p) => p.field !== field && p.field !== null));
  }

  function chooseKind(kind: ProviderKind) {
    // An address typed for another kind would be wrong for this one; the placeholder says the usual one.
    const baseUrl = Object.values(defaultBaseUrl).includes(form.baseUrl.trim()) ? "" : form.baseUrl;
    setForm((current) => ({ ...current, kind, baseUrl }));
  }

  function setPrice(key: number, change: Partial<PriceRow>) {
    setForm((current) => ({ ...current, prices: current.prices.map((r) => (r.key === key ? { ...r, ...change } : r)) }));
    setProblems((current) => current.filter((p) => p.field !== "prices"));
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    if (save.isPending) return;
    const { input, problems: found } = toInput(form, editing ? provider : undefined);
    if (!editing && takenNames.includes(input.name)) {
      found.unshift({ field: "name", message: `There is already a provider named “${form.name.trim()}”. Edit that one, or choose another name.` });
    }
    setProblems(found);
    if (found.length > 0) return;
    save.mutate(input, { onSuccess: onDone, onError: (error) => setProblems(problemsFrom(error)) });
  }

  const keyVar = defaultKeyEnv[form.kind];

  return (
    <form className="provider-form" onSubmit={submit} noValidate data-testid="provider-form">
      <h3 className="provider-form-title">{editing ? `Edit “${provider.title}”` : "New provider"}</h3>

      <fieldset className="field">
        <legend className="field-label">Speaks</legend>
        <div className="choice-grid kind-choices" role="radiogroup" aria-label="Speaks">
          {providerKinds.map((kind) => (
            <label key={kind} className={form.kind === kind ? "choice checked" : "choice"}>
              <input
                type="radio"
                name={`${id}-kind`}
                value={kind}
                checked={form.kind === kind}
                onChange={() => chooseKind(kind)}
                data-testid={`provider-kind-${kind}`}
              />
              <span className="choice-title">{providerKindLabel[kind]}</span>
              <span className="kind-hint">{providerKindHint[kind]}</span>
            </label>
          ))}
        </div>
      </fieldset>

      <div className="provider-form-grid">
        <div className="field">
          <label className="field-label" htmlFor={ids.name}>
            Name
          </label>
          <input
            id={ids.name}
            className="input"
            value={form.name}
            onChange={(e) => change({ name: e.target.value }, "name")}
            placeholder={form.kind === "openai_compatible" ? "openai" : form.kind}
            readOnly={editing}
            aria-invalid={of("name").length > 0}
            aria-describedby={describedBy("name", editing ? `${ids.name}-hint` : undefined)}
            spellCheck={false}
            autoCapitalize="off"
            autoComplete="off"
            autoFocus={!editing}
            data-testid="provider-name"
          />
          {editing ? (
            <p className="field-hint" id={`${ids.name}-hint`}>
              Tiers refer to it by name, so it stays.
            </p>
          ) : null}
          <FieldProblems problems={of("name")} id={`${ids.errors}-name`} testId="provider-error-name" />
        </div>

        <div className="field">
          <label className="field-label" htmlFor={ids.keyEnv}>
            Key variable <span className="field-optional">optional</span>
          </label>
          <input
            id={ids.keyEnv}
            className="input mono"
            value={form.keyEnv}
            onChange={(e) => change({ keyEnv: e.target.value }, "key_env")}
            placeholder={keyVar ?? "None"}
            aria-invalid={of("key_env").length > 0}
            aria-describedby={describedBy("key_env", `${ids.keyEnv}-hint`)}
            spellCheck={false}
            autoCapitalize="off"
            autoComplete="off"
            data-testid="provider-key-env"
          />
          <p className="field-hint" id={`${ids.keyEnv}-hint`}>
            {keyVar
              ? `Read when the keyring has no key. Empty: ${keyVar}.`
              : "Ollama needs no key. Name a variable only if your server asks for one."}
          </p>
          <FieldProblems problems={of("key_env")} id={`${ids.errors}-key_env`} testId="provider-error-key_env" />
        </div>
        <div className="field field-wide">
          <label className="field-label" htmlFor={ids.url}>
            Base URL <span className="field-optional">optional</span>
          </label>
          <input
            id={ids.url}
            className="input mono"
            value={form.baseUrl}
            onChange={(e) => change({ baseUrl: e.target.value }, "base_url")}
            placeholder={defaultBaseUrl[form.kind]}
            aria-invalid={of("base_url").length > 0}
            aria-describedby={describedBy("base_url", `${ids.url}-hint`)}
            spellCheck={false}
            autoCapitalize="off"
            autoComplete="off"
            data-testid="provider-base-url"
          />
          <p className="field-hint" id={`${ids.url}-hint`}>
            Leave it empty for {defaultBaseUrl[form.kind]}.
          </p>
          <FieldProblems problems={of("base_url")} id={`${ids.errors}-base_url`} testId="provider-error-base_url" />
        </div>

      </div>

      <div className="field">
        <span className="field-label">
          Prices <span className="field-optional">optional</span>
        </span>
        <p className="field-hint">
          In US dollars per million tokens, so that today's cost can be counted. A model without a price is counted in
          tokens only.
        </p>
        {form.prices.length > 0 && (
          <div className="price-rows">
            <span className="env-head">Model</span>
            <span className="env-head">Input</span>
            <span className="env-head">Output</span>
            <span className="env-head">Cached input</span>
            <span />
            {form.prices.map((row, i) => (
              <div className="env-row" key={row.key}>
                <input
                  className="input mono"
                  value={row.model}
                  onChange={(e) => setPrice(row.key, { model: e.target.value })}
                  placeholder="gpt-4o-mini"
                  aria-label={`Model of price ${i + 1}`}
                  spellCheck={false}
                  autoComplete="off"
                />
                {(["input", "output", "cached"] as const).map((which) => (
                  <input
                    key={which}
                    className="input mono"
                    inputMode="decimal"
                    value={row[which]}
                    onChange={(e) => setPrice(row.key, { [which]: e.target.value })}
                    placeholder={which === "input" ? "0.15" : which === "output" ? "0.60" : "same as input"}
                    aria-label={`${which === "cached" ? "Cached input" : capitalised(which)} price of ${row.model || `price ${i + 1}`}`}
                    autoComplete="off"
                  />
                ))}
                <button
                  type="button"
                  className="icon-button"
                  onClick={() => setForm((current) => ({ ...current, prices: current.prices.filter((r) => r.key !== row.key) }))}
                  aria-label={`Remove the price of ${row.model || `price ${i + 1}`}`}
                  title="Remove"
                >
                  <XIcon size={16} />
                </button>
              </div>
            ))}
          </div>
        )}
        <FieldProblems problems={of("prices")} id={`${ids.errors}-prices`} testId="provider-error-prices" />
        <div>
          <button
            type="button"
            className="button button-small"
            onClick={() => setForm((current) => ({ ...current, prices: [...current.prices, priceRow()] }))}
          >
            <PlusIcon size={15} />
            Add a price
          </button>
        </div>
      </div>

      <FieldProblems problems={of(null)} id={`${ids.errors}-provider`} testId="provider-error" />

      <div className="provider-form-actions">
        <button type="submit" className="button button-primary" disabled={save.isPending} data-testid="save-provider">
          {save.isPending && <Spinner />}
          {editing ? "Save changes" : "Add provider"}
        </button>
        <button type="button" className="button" onClick={onCancel} disabled={save.isPending}>
          Cancel
        </button>
      </div>
    </form>
  );
}
