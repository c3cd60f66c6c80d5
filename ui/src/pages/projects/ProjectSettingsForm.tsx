// The project's settings as the person confirms or edits them, with the engine's own check of
// each field shown under it.
import { useEffect, useId, useState, type FormEvent, type ReactNode } from "react";
import type { AcceptHow, FieldProblem, InstalledAgent, ProjectInput } from "../../bindings";
import { acceptHowWords } from "../../projectText";
import { FieldProblems } from "../../components/FieldProblems";
import { PlusIcon, XIcon } from "../../components/icons";
import { InlineError } from "../../components/InlineError";
import { Spinner } from "../../components/Loading";
import { UnsavedGuard } from "../../components/UnsavedGuard";
import { useProjectValidation } from "../../projectQueries";
import { AgentFields } from "./AgentFields";
import { ApprovalFields } from "./ApprovalFields";
import { fieldOf, toInput, verifyRow, type ProjectForm } from "./projectFormModel";

const CHECK_AFTER_MS = 300;

function Section({ title, description, children }: { title: string; description?: string; children: ReactNode }) {
  return (
    <section className="form-section">
      <div className="form-section-head">
        <h2 className="section-title">{title}</h2>
        {description && <p className="muted">{description}</p>}
      </div>
      <div className="form-section-body">{children}</div>
    </section>
  );
}

/** The input, once it has stopped changing for a moment. */
function useSettled(input: ProjectInput): ProjectInput {
  const text = JSON.stringify(input);
  const [settled, setSettled] = useState(text);
  useEffect(() => {
    const timer = window.setTimeout(() => setSettled(text), CHECK_AFTER_MS);
    return () => window.clearTimeout(timer);
  }, [text]);
  return JSON.parse(settled) as ProjectInput;
}

/** A checkbox with its sentence, as the form's yes/no choices are shown. */
function ToggleRow({ id, testId, checked, onChange, title }: { id: string; testId: string; checked: boolean; onChange: (on: boolean) => void; title: string }) {
  return (
    <label className="toggle-row" htmlFor={id}>
      <input id={id} type="checkbox" checked={checked} onChange={(e) => onChange(e.target.checked)} data-testid={testId} />
      <span className="toggle-text">
        <span className="toggle-title">{title}</span>
      </span>
    </label>
  );
}

export function ProjectSettingsForm({
  initial,
  agents,
  projectId,
  saveLabel,
  saving,
  saveError,
  onSave,
  cancelHref,
  more,
  moreDirty = false,
}: {
  initial: ProjectForm;
  agents: InstalledAgent[];
  projectId: number | null;
  saveLabel: string;
  saving: boolean;
  saveError: unknown;
  onSave: (input: ProjectInput) => void;
  cancelHref: string;
  /** More sections of the same form (Healer's settings), saved by its one Save button. */
  more?: ReactNode;
  /** The `more` sections hold changes not saved yet. */
  moreDirty?: boolean;
}) {
  const [form, setForm] = useState(initial);
  const ids = { name: useId(), branch: useId(), init: useId(), unchecked: useId(), restart: useId(), errors: useId() };
  const input = toInput(form);
  const settled = useSettled(input);
  const validation = useProjectValidation(settled, projectId);
  const problems: FieldProblem[] = validation.data ?? [];
  // A check row the person just added and has not typed in yet shows no problems until they
  // type in it or try to save: an empty row is not yet a mistake.
  const [typedIn, setTypedIn] = useState<Set<number>>(() => new Set());
  const [triedToSave, setTriedToSave] = useState(false);
  const quiet = (field: string) => {
    const at = /^verify\.(\d+)$/.exec(field);
    const row = at ? form.verify[Number(at[1])] : undefined;
    return !triedToSave && row !== undefined && !typedIn.has(row.key) && !row.name.trim() && !row.command.trim();
  };
  const under = (field: string) => (quiet(field) ? [] : problems.filter((p) => (fieldOf[p.field] ?? p.field) === field));
  const invalid = (field: string) => under(field).length > 0;
  const change = (fields: Partial<ProjectForm>) => setForm((f) => ({ ...f, ...fields }));
  const [initialText] = useState(() => JSON.stringify(toInput(initial)));
  // The screen the form is on: moving anywhere else leaves it.
  const [here] = useState(() => window.location.hash);
  const dirty = moreDirty || JSON.stringify(input) !== initialText;

  function submit(event: FormEvent) {
    event.preventDefault();
    setTriedToSave(true);
    if (!saving && problems.length === 0 && !validation.isFetching) onSave(input);
  }

  const setRow = (key: number, fields: { name?: string; command?: string }) => {
    setTypedIn((typed) => new Set(typed).add(key));
    change({ verify: form.verify.map((r) => (r.key === key ? { ...r, ...fields } : r)) });
  };

  return (
    <form className="workflow-form" onSubmit={submit} noValidate data-testid="project-form">
      <UnsavedGuard
        dirty={dirty && !saving}
        stays={(hash) => hash === here}
        what={projectId === null ? "the new project's settings" : "your changes to the project's settings"}
        onDiscard={() => {}}
      />
      <div className="card form-card">
        <Section title="About">
          <div className="field">
            <label className="field-label" htmlFor={ids.name}>
              Name
            </label>
            <input
              id={ids.name}
              className="input"
              value={form.name}
              onChange={(e) => change({ name: e.target.value })}
              aria-invalid={invalid("name")}
              data-testid="field-name"
            />
            <FieldProblems problems={under("name")} id={`${ids.errors}-name`} testId="field-error-name" />
          </div>
          <div className="field">
            <label className="field-label" htmlFor={ids.branch}>
              Main branch
            </label>
            <input
              id={ids.branch}
              className="input mono narrow-wide"
              value={form.mainBranch}
              onChange={(e) => change({ mainBranch: e.target.value })}
              aria-invalid={invalid("mainBranch")}
              spellCheck={false}
              data-testid="field-branch"
            />
            <p className="field-hint">Each task starts from this branch's last commit.</p>
            <FieldProblems problems={under("mainBranch")} id={`${ids.errors}-branch`} testId="field-error-branch" />
          </div>
        </Section>

        <Section title="Agent" description="Who works on the tasks.">
          <div className="choice-list" role="radiogroup" aria-label="Agent">
            {agents.map((agent) => (
              <label key={agent.kind} className={form.agent === agent.kind ? "choice checked" : agent.usable ? "choice" : "choice unusable"}>
                <input
                  type="radio"
                  name="agent"
                  value={agent.kind}
                  checked={form.agent === agent.kind}
                  // Another agent's provider, program and model do not fit this one: its own sign-in
                  // and program until the person chooses.
                  onChange={() => change({ agent: agent.kind, agentProvider: "", agentProgram: "", model: "" })}
                  data-testid={`agent-${agent.kind}`}
                />
                <span className="choice-title">{agent.name}</span>
                <span className="choice-hint">{agent.message}</span>
              </label>
            ))}
          </div>
          <FieldProblems problems={under("agent")} id={`${ids.errors}-agent`} testId="field-error-agent" />
          {form.agent !== "builtin" && (
            <AgentFields form={form} installed={agents.find((a) => a.kind === form.agent)} change={change} under={under} />
          )}
        </Section>

        <Section
          title="Checks"
          description="Commands that must pass before an agent's work is committed. Healer runs them in the task's worktree."
        >
          <div className="verify-rows">
            {form.verify.map((row, i) => (
              <div className="verify-row-wrap" key={row.key}>
                <div className="verify-row">
                  <input
                    className="input"
                    value={row.name}
                    onChange={(e) => setRow(row.key, { name: e.target.value })}
                    placeholder="test"
                    aria-label={`Name of check ${i + 1}`}
                    data-testid={`verify-name-${i}`}
                  />
                  <input
                    className="input mono"
                    value={row.command}
                    onChange={(e) => setRow(row.key, { command: e.target.value })}
                    placeholder="npm test"
                    title={row.command || undefined}
                    spellCheck={false}
                    aria-label={`Command of check ${i + 1}`}
                    aria-invalid={invalid(`verify.${i}`)}
                    data-testid={`verify-command-${i}`}
                  />
                  <button
                    type="button"
                    className="icon-button"
                    onClick={() => change({ verify: form.verify.filter((r) => r.key !== row.key) })}
                    aria-label={`Remove check ${row.name || i + 1}`}
                    title="Remove"
                  >
                    <XIcon size={16} />
                  </button>
                </div>
                <FieldProblems problems={under(`verify.${i}`)} id={`${ids.errors}-verify-${i}`} testId={`field-error-verify-${i}`} />
              </div>
            ))}
          </div>
          {form.verify.length === 0 && (
            <div className="field" data-testid="no-checks">
              <p className="field-hint">
                This project has no check yet. Add one (its tests, a type check) so an agent's work is committed only when it passes — or say that it may be committed without checks.
              </p>
              <ToggleRow
                id={ids.unchecked}
                testId="commit-without-checks"
                checked={form.commitWithoutChecks}
                onChange={(on) => change({ commitWithoutChecks: on })}
                title="Commit an agent's work without checks, when it says it is done"
              />
              <FieldProblems problems={under("verify")} id={`${ids.errors}-verify`} testId="field-error-verify" />
            </div>
          )}
          <button type="button" className="button button-small" onClick={() => change({ verify: [...form.verify, verifyRow()] })}>
            <PlusIcon size={15} />
            Add a check
          </button>
          <div className="field">
            <label className="field-label" htmlFor={ids.init}>
              Prepare each worktree with <span className="field-optional">optional</span>
            </label>
            <input
              id={ids.init}
              className="input mono"
              value={form.initScript}
              onChange={(e) => change({ initScript: e.target.value })}
              placeholder="npm ci"
              spellCheck={false}
              data-testid="field-init"
            />
            <p className="field-hint">Runs before the agent starts, for example to install dependencies.</p>
            <FieldProblems problems={under("initScript")} id={`${ids.errors}-init`} testId="field-error-init" />
          </div>
        </Section>

        <Section
          title="What the agent may do without asking"
          description="Anything else, it asks you in a dialog first; your answers are remembered."
        >
          <ApprovalFields form={form} projectId={projectId} change={change} under={under} />
        </Section>

        <Section title="When a task passes its checks">
          <div className="schedule-choices" role="radiogroup" aria-label="When a task passes">
            <label className="schedule-choice">
              <input type="radio" name="merge" checked={form.merge === "fast_forward"} onChange={() => change({ merge: "fast_forward" })} data-testid="merge-ff" />
              <span>Add the commit to {form.mainBranch || "the main branch"}</span>
            </label>
            <label className="schedule-choice">
              <input type="radio" name="merge" checked={form.merge === "leave_branch"} onChange={() => change({ merge: "leave_branch" })} data-testid="merge-branch" />
              <span>Leave it on the task's own branch for me to review</span>
            </label>
          </div>
          <div className="field">
            <label htmlFor={`${ids.errors}-accept-how`}>When you accept work from its branch</label>
            <select
              id={`${ids.errors}-accept-how`}
              value={form.acceptHow}
              onChange={(e) => change({ acceptHow: e.target.value as AcceptHow })}
              data-testid="accept-how-setting"
            >
              {(Object.keys(acceptHowWords) as AcceptHow[]).map((h) => (
                <option key={h} value={h}>
                  {acceptHowWords[h]}
                </option>
              ))}
            </select>
          </div>
          <div className="schedule-choices" role="radiogroup" aria-label={`When ${form.mainBranch || "the main branch"} moved on meanwhile`}>
            <span className="field-label">When {form.mainBranch || "the main branch"} moved on meanwhile, before the checks run again</span>
            <label className="schedule-choice">
              <input type="radio" name="bring-main" checked={form.bringMainIn === "rebase"} onChange={() => change({ bringMainIn: "rebase" })} data-testid="bring-rebase" />
              <span>Replay the agent's commits on top of it</span>
            </label>
            <label className="schedule-choice">
              <input type="radio" name="bring-main" checked={form.bringMainIn === "merge"} onChange={() => change({ bringMainIn: "merge" })} data-testid="bring-merge" />
              <span>Merge it into the task's branch</span>
            </label>
          </div>
        </Section>

        <Section title="When Healer replaces an agent">
          <ToggleRow
            id={ids.restart}
            testId="start-reopened"
            checked={form.startReopened}
            onChange={(on) => change({ startReopened: on })}
            title="Start the task again by itself, with a new agent in a fresh copy of the project"
          />
        </Section>

        <Section
          title="Where its tasks run"
          description="On the cluster's workers, the agent works on another computer: it fetches the repository from its remote, and pushes the task's branch when it is done. You follow and steer it here as if it ran on this computer."
        >
          <div className="schedule-choices" role="radiogroup" aria-label="Where its tasks run">
            <label className="schedule-choice">
              <input type="radio" name="runs-on" checked={form.runsOn === "local"} onChange={() => change({ runsOn: "local" })} data-testid="project-runs-here" />
              <span>On this computer</span>
            </label>
            <label className="schedule-choice">
              <input type="radio" name="runs-on" checked={form.runsOn === "cluster"} onChange={() => change({ runsOn: "cluster" })} data-testid="project-runs-on-cluster" />
              <span>On the cluster's workers</span>
            </label>
          </div>
          <FieldProblems problems={under("runsOn")} id={`${ids.errors}-runs-on`} testId="field-error-runs-on" />
        </Section>

        <Section title="Limits" description="Every run is bounded; these are the bounds.">
          <div className="limits-grid">
            <Limit label="Tasks at once" unit="" value={form.maxParallel} onChange={(v) => change({ maxParallel: v })} problems={under("maxParallel")} testId="field-parallel" />
            <Limit label="An agent may work for" unit="minutes" value={form.agentMinutes} onChange={(v) => change({ agentMinutes: v })} problems={under("agentMinutes")} testId="field-agent-minutes" />
            <Limit label="Each check may take" unit="minutes" value={form.commandMinutes} onChange={(v) => change({ commandMinutes: v })} problems={under("commandMinutes")} testId="field-command-minutes" />
            {form.agent === "builtin" && (
              <Limit label="Tokens per task" unit="tokens" value={form.tokenBudget} onChange={(v) => change({ tokenBudget: v })} problems={under("tokenBudget")} testId="field-tokens" />
            )}
          </div>
        </Section>
      </div>
      {more}
      <div className="form-footer">
        <div className="form-footer-text">
          <FieldProblems problems={under("path")} id={`${ids.errors}-path`} testId="field-error-path" />
          {validation.isError && <InlineError lead="The settings couldn't be checked." error={validation.error} />}
          {saveError !== null && saveError !== undefined && <InlineError lead="The settings were not saved." error={saveError} />}
        </div>
        <a className="button" href={cancelHref}>
          Cancel
        </a>
        <button
          type="submit"
          className="button button-primary"
          // Enabled while the only problem is a row not typed in yet: pressing Save shows it.
          disabled={saving || problems.some((p) => !quiet(fieldOf[p.field] ?? p.field)) || validation.isPending}
          data-testid="save-project"
        >
          {saving && <Spinner />}
          {saveLabel}
        </button>
      </div>
    </form>
  );
}

function Limit({
  label,
  unit,
  value,
  onChange,
  problems,
  testId,
}: {
  label: string;
  unit: string;
  value: string;
  onChange: (value: string) => void;
  problems: FieldProblem[];
  testId: string;
}) {
  const id = useId();
  return (
    <div className="field">
      <label className="field-label" htmlFor={id}>
        {label}
      </label>
      <div className="input-with-unit">
        <input id={id} className="input narrow" inputMode="numeric" value={value} onChange={(e) => onChange(e.target.value)} aria-invalid={problems.length > 0} data-testid={testId} />
        {unit && <span className="unit">{unit}</span>}
      </div>
      <FieldProblems problems={problems} id={`${id}-error`} testId={`${testId}-error`} />
    </div>
  );
}
