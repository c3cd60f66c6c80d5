// A project's healer settings: whether Healer steps in when a task fails, for which failures,
// how often, which repairs it may use, and whether it asks before undoing an agent's work. A
// section of the project's one settings form: its one Save button saves these too.
import type { HealerConfig, HealerScenarios } from "../../bindings";
import { spellAbility } from "../../healerText";

const SPELLS = [
  "fix_typecheck_errors",
  "retry_with_claude_code_resume",
  "retry_with_minimal_subagent",
  "rewind_uncommitted_changes",
  "rewind_to_last_green_commit",
  "mark_task_blocked_with_followup",
  "update_progress_with_guidance",
  "run_tasks_doctor_like_checks",
];

const scenarioRows: [keyof HealerScenarios, string][] = [
  ["onInitFailure", "The project's setup fails before the agent starts (type check, tests, missing tools)"],
  ["onVerificationFailure", "The agent's change does not pass the checks (here, or on its pull request)"],
  ["onSubtaskFailure", "The agent stops without finishing"],
  ["onRuntimeError", "The agent program itself fails"],
  ["onStuckSubtask", "A task looks stuck"],
];

function Toggle({ id, title, checked, onChange }: { id: string; title: string; checked: boolean; onChange: (on: boolean) => void }) {
  return (
    <label className="toggle-row" htmlFor={id}>
      <input id={id} type="checkbox" data-testid={id} checked={checked} onChange={(e) => onChange(e.target.checked)} />
      <span className="toggle-text">
        <span className="toggle-title">{title}</span>
      </span>
    </label>
  );
}

function NumberField({ id, label, hint, value, min, onChange }: { id: string; label: string; hint?: string; value: number; min: number; onChange: (n: number) => void }) {
  return (
    <div className="field">
      <label className="field-label" htmlFor={id}>
        {label}
      </label>
      <input
        id={id}
        className="input narrow"
        type="number"
        min={min}
        value={value}
        onChange={(e) => onChange(Math.max(min, Number(e.target.value) || min))}
        data-testid={id}
      />
      {hint && <p className="field-hint">{hint}</p>}
    </div>
  );
}

/** The settings as the engine sends them: every field is there (its defaults filled in). */
export type HealerForm = Required<Omit<HealerConfig, "scenarios">> & { scenarios: Required<HealerScenarios> };

/** Healer's part of the project's settings form (no form or Save of its own). */
export function HealerSettings({ value: form, onChange }: { value: HealerForm; onChange: (form: HealerForm) => void }) {
  const change = (c: Partial<HealerForm>) => onChange({ ...form, ...c });
  const allowed = (spell: string) => !form.forbiddenSpells.includes(spell);
  const allow = (spell: string, on: boolean) =>
    change({ forbiddenSpells: on ? form.forbiddenSpells.filter((s) => s !== spell) : [...form.forbiddenSpells, spell] });
  return (
    <div className="card form-card healer-settings" data-testid="healer-settings">
      <section className="form-section">
        <div className="form-section-head">
          <h2 className="section-title">When a task fails</h2>
          <p className="muted">Healer can step in, repair what it safely can, and tell you what it did.</p>
        </div>
        <div className="form-section-body">
          <Toggle id="healer-enabled" title="Let Healer step in when a task fails" checked={form.enabled} onChange={(on) => change({ enabled: on })} />
          {form.enabled && (
            <>
              <p className="field-label">Step in when</p>
              {scenarioRows.map(([key, title]) => (
                <Toggle
                  key={key}
                  id={`healer-${key}`}
                  title={title}
                  checked={form.scenarios[key]}
                  onChange={(on) => change({ scenarios: { ...form.scenarios, [key]: on } })}
                />
              ))}
              <p className="field-label">Before undoing an agent's work</p>
              <div className="choice-list" role="radiogroup" aria-label="Before undoing an agent's work">
                <label className={form.mode === "conservative" ? "choice checked" : "choice"} data-testid="healer-mode-conservative">
                  <input type="radio" name="healer-mode" checked={form.mode === "conservative"} onChange={() => change({ mode: "conservative" })} data-testid="healer-mode-conservative-radio" />
                  <span className="choice-title">Ask me first</span>
                  <span className="choice-hint">Healer puts the work aside and asks before it undoes anything.</span>
                </label>
                <label className={form.mode === "aggressive" ? "choice checked" : "choice"} data-testid="healer-mode-aggressive">
                  <input type="radio" name="healer-mode" checked={form.mode === "aggressive"} onChange={() => change({ mode: "aggressive" })} data-testid="healer-mode-aggressive-radio" />
                  <span className="choice-title">Go ahead without asking</span>
                  <span className="choice-hint">The work is still put aside first, and you can bring it back from the task's page.</span>
                </label>
              </div>
              <NumberField
                id="healer-per-task"
                label="Times Healer may try to repair one task"
                hint="After that, Healer still blocks a task that keeps failing (three failed sessions, or the same failure again) and writes a follow-up, so no task fails forever."
                value={form.maxInvocationsPerSubtask}
                min={0}
                onChange={(n) => change({ maxInvocationsPerSubtask: n })}
              />
              <NumberField id="healer-stuck-hours" label="Hours a task may stay in progress before it counts as stuck" value={form.stuckAfterHours} min={1} onChange={(n) => change({ stuckAfterHours: n })} />
              <p className="field-label">What Healer may do</p>
              {SPELLS.map((spell) => (
                <Toggle key={spell} id={`healer-may-${spell}`} title={spellAbility(spell)} checked={allowed(spell)} onChange={(on) => allow(spell, on)} />
              ))}
            </>
          )}
        </div>
      </section>
    </div>
  );
}
