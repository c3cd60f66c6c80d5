import { useId, useState, type FormEvent } from "react";
import type { Budgets } from "../../bindings";
import { CheckIcon } from "../../components/icons";
import { InlineError } from "../../components/InlineError";
import { Spinner } from "../../components/Loading";
import { tokens } from "../../modelText";
import { useBudgets, useSetBudgets } from "../../queries";

type Form = { perCall: string; perTask: string; perDayTokens: string; perDayCost: string };

/** Dollars as typed: "5.00", or every digit of a finer cap. */
function dollars(amount: number): string {
  return Number.isInteger(Math.round(amount * 1e6) / 1e4) ? amount.toFixed(2) : String(amount);
}

function formFrom(budgets: Budgets): Form {
  return {
    perCall: tokens(budgets.max_tokens_per_call),
    perTask: tokens(budgets.per_task_tokens),
    perDayTokens: tokens(budgets.per_day_tokens),
    perDayCost: budgets.per_day_cost_usd === null ? "" : dollars(budgets.per_day_cost_usd),
  };
}

/** A count as typed ("60,000" too); anything else is 0, which the engine refuses with its reason. */
function count(text: string): number {
  const bare = text.trim().replace(/[,_\s]/g, "");
  return /^\d+$/.test(bare) ? Number(bare) : 0;
}

type Problems = Partial<Record<keyof Form, string>>;

/** What is wrong with each field as typed, said under that field. */
function problemsOf(form: Form): Problems {
  const problems: Problems = {};
  for (const key of ["perCall", "perTask", "perDayTokens"] as const) {
    if (count(form[key]) <= 0) problems[key] = "Write a whole number of tokens above 0, like 60,000.";
  }
  const cost = form.perDayCost.trim().replace(/^\$/, "");
  if (cost && !/^\d*\.?\d+$/.test(cost)) problems.perDayCost = "A number of US dollars, like 5 or 2.50. Leave it empty for no cap.";
  return problems;
}

function toBudgets(form: Form): Budgets {
  const cost = form.perDayCost.trim().replace(/^\$/, "");
  return {
    max_tokens_per_call: count(form.perCall),
    per_task_tokens: count(form.perTask),
    per_day_tokens: count(form.perDayTokens),
    per_day_cost_usd: cost ? Number(cost) : null,
  };
}

const fields: { key: keyof Form; label: string; hint: string; unit: string; testId: string }[] = [
  { key: "perCall", label: "Per call", hint: "The most one answer may write.", unit: "tokens", testId: "budget-per-call" },
  { key: "perTask", label: "Per task", hint: "All attempts of one task together.", unit: "tokens", testId: "budget-per-task" },
  { key: "perDayTokens", label: "Per day", hint: "Every task of the day, in local time.", unit: "tokens", testId: "budget-per-day" },
  {
    key: "perDayCost",
    label: "Cost per day",
    hint: "Priced models only. Empty: no cap.",
    unit: "US dollars",
    testId: "budget-cost",
  },
];

function BudgetsForm({ budgets, save }: { budgets: Budgets; save: ReturnType<typeof useSetBudgets> }) {
  const [form, setForm] = useState(() => formFrom(budgets));
  const [problems, setProblems] = useState<Problems>({});
  const id = useId();
  const changed = JSON.stringify(formFrom(budgets)) !== JSON.stringify(form);

  function change(key: keyof Form, value: string) {
    setForm((current) => ({ ...current, [key]: value }));
    setProblems((current) => ({ ...current, [key]: undefined }));
    if (!save.isPending) save.reset();
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    if (save.isPending) return;
    const found = problemsOf(form);
    setProblems(found);
    if (Object.keys(found).length > 0) return;
    save.mutate(toBudgets(form));
  }

  return (
    <form className="budgets-form" onSubmit={submit} noValidate>
      <div className="budget-fields">
        {fields.map(({ key, label, hint, unit, testId }) => (
          <div className="field" key={key}>
            <label className="field-label" htmlFor={`${id}-${key}`}>
              {label}
            </label>
            <div className="input-with-unit">
              {key === "perDayCost" && <span className="unit">$</span>}
              <input
                id={`${id}-${key}`}
                className="input budget-input"
                inputMode={key === "perDayCost" ? "decimal" : "numeric"}
                value={form[key]}
                onChange={(e) => change(key, e.target.value)}
                aria-describedby={problems[key] ? `${id}-${key}-problem` : `${id}-${key}-hint`}
                aria-invalid={problems[key] !== undefined}
                placeholder={key === "perDayCost" ? "No cap" : undefined}
                autoComplete="off"
                data-testid={testId}
              />
              {key !== "perDayCost" && <span className="unit">{unit}</span>}
            </div>
            <p className="field-hint" id={`${id}-${key}-hint`}>
              {hint}
            </p>
            {problems[key] && (
              <p className="field-hint field-error-text" id={`${id}-${key}-problem`} role="alert" data-testid={`${testId}-problem`}>
                {problems[key]}
              </p>
            )}
          </div>
        ))}
      </div>
      {save.isError && <InlineError lead="The budgets weren't saved." error={save.error} />}
      <div className="action-row">
        <button
          type="submit"
          className="button button-primary"
          disabled={save.isPending || (!changed && !save.isError)}
          data-testid="save-budgets"
        >
          {save.isPending && <Spinner />}
          Save budgets
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

export function BudgetsCard() {
  const budgets = useBudgets();
  // Here rather than in the form, which starts afresh when what is stored changes.
  const save = useSetBudgets();
  const titleId = useId();
  return (
    <section className="card settings-section" aria-labelledby={titleId} data-testid="budgets">
      <div className="section-head-text">
        <h2 className="section-title" id={titleId}>
          Budgets
        </h2>
        <p className="muted">Caps on what models may use. A call that would cross one is not made, and the task says which cap stopped it.</p>
      </div>
      {budgets.isPending && <Spinner label="Loading budgets" />}
      {budgets.isError && <InlineError lead="The budgets couldn't be loaded." error={budgets.error} onRetry={() => void budgets.refetch()} />}
      {/* Keyed on what is stored, so a change made elsewhere (the CLI) shows once saved there. */}
      {budgets.data && <BudgetsForm key={JSON.stringify(budgets.data)} budgets={budgets.data} save={save} />}
    </section>
  );
}
