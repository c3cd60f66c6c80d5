// What the project's agent may do without asking: the preset, the commands it may run, how long
// a question waits, and what the person allowed for good by answering (which can be taken back).
import { useId } from "react";
import type { FieldProblem, Preset } from "../../bindings";
import { presetHint, presetLabel } from "../../approvalText";
import { FieldProblems } from "../../components/FieldProblems";
import { InlineError } from "../../components/InlineError";
import { useApprovalRules, useRemoveApprovalRule } from "../../projectQueries";
import { cannotAsk } from "../../projectText";
import type { ProjectForm } from "./projectFormModel";

const PRESETS: Preset[] = ["ask_risky", "ask_every", "never_ask"];

export function ApprovalFields({
  form,
  projectId,
  change,
  under,
}: {
  form: ProjectForm;
  projectId: number | null;
  change: (fields: Partial<ProjectForm>) => void;
  under: (field: string) => FieldProblem[];
}) {
  const ids = { allowed: useId(), minutes: useId(), hint: useId() };
  return (
    <>
      <div className="schedule-choices" role="radiogroup" aria-label="What the agent may do without asking" data-testid="approval-presets">
        {PRESETS.map((preset) => (
          <label key={preset} className="schedule-choice approval-preset">
            <input
              type="radio"
              name="approval-preset"
              checked={form.preset === preset}
              onChange={() => change({ preset })}
              data-testid={`preset-${preset}`}
            />
            <span className="approval-preset-text">
              <span className="approval-preset-label">
                {presetLabel[preset]}
                {preset === "ask_risky" && <span className="muted"> (recommended)</span>}
              </span>
              <span className="field-hint">{presetHint[preset]}</span>
            </span>
          </label>
        ))}
      </div>
      {cannotAsk(form.agent, form.preset) && (
        <p className="field-hint approval-cannot-ask" data-testid="agent-cannot-ask">
          {cannotAsk(form.agent, form.preset)}
        </p>
      )}
      {form.preset === "never_ask" && (
        <p className="tone-warn approval-risk" data-testid="never-ask-warning">
          Anything the agent decides to run — downloads, installs, deleting files anywhere your account can — runs without you seeing
          it first.
        </p>
      )}
      {form.preset !== "never_ask" && (
        <>
          <div className="field">
            <label className="field-label" htmlFor={ids.allowed}>
              Commands it may run without asking <span className="field-optional">optional</span>
            </label>
            <textarea
              id={ids.allowed}
              className="input mono"
              rows={3}
              value={form.allowedCommands}
              onChange={(e) => change({ allowedCommands: e.target.value })}
              placeholder={"One per line, as it starts: npm test, make, python3 tools/gen.py"}
              spellCheck={false}
              aria-describedby={ids.hint}
              data-testid="field-allowed-commands"
            />
            <p className="field-hint" id={ids.hint}>
              Besides these, the project's checks and commands that only look at files run freely. A command here still asks when it
              would install something or reach the network.
            </p>
            <FieldProblems problems={under("allowedCommands")} id={`${ids.allowed}-error`} testId="field-error-allowed-commands" />
          </div>
          <div className="field">
            <label className="field-label" htmlFor={ids.minutes}>
              A question waits for your answer for
            </label>
            <div className="input-with-unit">
              <input
                id={ids.minutes}
                className="input narrow"
                inputMode="numeric"
                value={form.askMinutes}
                onChange={(e) => change({ askMinutes: e.target.value })}
                aria-invalid={under("askMinutes").length > 0}
                data-testid="field-ask-minutes"
              />
              <span className="unit">minutes, then it is denied</span>
            </div>
            <FieldProblems problems={under("askMinutes")} id={`${ids.minutes}-error`} testId="field-error-ask-minutes" />
          </div>
          {projectId !== null && <AllowedByAnswering projectId={projectId} />}
        </>
      )}
    </>
  );
}

/** "npm install" → "Run “npm install …”"; "write /etc/x" → "Change /etc/x". */
function ruleWords(rule: string): string {
  for (const [prefix, verb] of [
    ["write ", "Change"],
    ["read ", "Read"],
    ["delete ", "Delete"],
  ] as const) {
    if (rule.startsWith(prefix)) return `${verb} ${rule.slice(prefix.length)}`;
  }
  return `Run “${rule}”`;
}

function AllowedByAnswering({ projectId }: { projectId: number }) {
  const rules = useApprovalRules(projectId);
  const remove = useRemoveApprovalRule(projectId);
  const list = rules.data ?? [];
  if (list.length === 0) return null;
  return (
    <div className="field" data-testid="approval-rules">
      <span className="field-label">Allowed by your answers</span>
      <ul className="approval-rules">
        {list.map((rule) => (
          <li key={rule.id} className="approval-rule" data-testid="approval-rule">
            <span className="approval-rule-text">
              <code>{ruleWords(rule.rule)}</code>
              <span className="muted">{rule.task_id === null ? " in every task" : " in one task"}</span>
            </span>
            <button
              type="button"
              className="button button-small"
              disabled={remove.isPending}
              onClick={() => remove.mutate(rule.id)}
              data-testid="approval-rule-remove"
            >
              Take back
            </button>
          </li>
        ))}
      </ul>
      {remove.isError && <InlineError lead="It wasn't taken back." error={remove.error} />}
    </div>
  );
}
