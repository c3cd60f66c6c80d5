import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useId, useRef, useState, type FormEvent, type ReactNode } from "react";
import type { FieldProblem, Schedule, Workflow, WorkflowDetail, WorkflowInput } from "../../bindings";
import { ArrowLeftIcon, PlusIcon, XIcon } from "../../components/icons";
import { InlineError } from "../../components/InlineError";
import { CodeEditor } from "../../components/LazyCode";
import { PackageOffers, usePackageOffers } from "../workflow/PackageOffers";
import { ScriptVariablesHelp } from "../../components/ScriptVariablesHelp";
import { SkeletonList, Spinner } from "../../components/Loading";
import {
  useAppInfo,
  useCreateWorkflow,
  useSchedulePreview,
  useUpdateWorkflow,
  useValidation,
  useWorkflow,
  validationQuery,
} from "../../queries";
import { dayAndTime } from "../../time";
import { navigate, pageHref, setLeaveGuard, workflowHref } from "../../usePage";
import { UnsavedGuard } from "../../components/UnsavedGuard";
import { toast } from "../../toasts";
import { runtimeLabel } from "../../workflowText";
import {
  blankForm,
  describeRetry,
  envRow,
  formFrom,
  isTemplate,
  templates,
  CRON_EXAMPLE,
  scheduleOf,
  toInput,
  type EnvRow,
  type Field,
  type FormState,
  type IntervalUnit,
  type RuntimeKind,
} from "./formModel";
import { FieldProblems } from "../../components/FieldProblems";
import { SecretsSection } from "./SecretsSection";

const VALIDATE_AFTER_MS = 300;

const allFields: Field[] = ["title", "code", "schedule", "runtime", "entry", "timeout_secs", "env", "retry"];

/** `value` once it has stopped changing for `ms`; `settleNow` sets it at once. */
function useSettled(value: string, ms: number): [string, (now: string) => void] {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = window.setTimeout(() => setSettled(value), ms);
    return () => window.clearTimeout(timer);
  }, [value, ms]);
  return [settled, setSettled];
}

/** What is checked: the input, and the fields the person has worked on (sorted, for a stable key). */
type Checked = { input: WorkflowInput; shown: Field[] };

function FieldError({ field, problems, id }: { field: Field; problems: FieldProblem[]; id: string }) {
  return <FieldProblems problems={problems.filter((p) => p.field === field)} id={id} testId={`field-error-${field}`} />;
}

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

const runtimeChoices: { kind: RuntimeKind; title: string; hint: string }[] = [
  { kind: "python3", title: runtimeLabel.python3, hint: "python3" },
  { kind: "node", title: runtimeLabel.node, hint: "node" },
  { kind: "bash", title: runtimeLabel.bash, hint: "bash" },
  { kind: "custom", title: "Custom", hint: "Your own command" },
];

function EnvRows({
  rows,
  onChange,
  errorId,
  invalid,
  error,
}: {
  rows: EnvRow[];
  onChange: (rows: EnvRow[]) => void;
  errorId: string;
  invalid: boolean;
  error: ReactNode;
}) {
  const set = (key: number, change: Partial<EnvRow>) => onChange(rows.map((r) => (r.key === key ? { ...r, ...change } : r)));
  return (
    <div className="env">
      {rows.length > 0 && (
        <div className="env-rows">
          <span className="env-head">Name</span>
          <span className="env-head">Value</span>
          <span />
          {rows.map((row, i) => (
            <div className="env-row" key={row.key}>
              <input
                className="input mono"
                value={row.name}
                onChange={(e) => set(row.key, { name: e.target.value })}
                placeholder="API_BASE_URL"
                aria-label={`Name of variable ${i + 1}`}
                aria-describedby={invalid ? errorId : undefined}
                spellCheck={false}
                autoCapitalize="off"
                autoComplete="off"
              />
              <input
                className="input mono"
                value={row.value}
                onChange={(e) => set(row.key, { value: e.target.value })}
                placeholder="https://example.org"
                aria-label={`Value of variable ${i + 1}`}
                spellCheck={false}
                autoComplete="off"
              />
              <button
                type="button"
                className="icon-button"
                onClick={() => onChange(rows.filter((r) => r.key !== row.key))}
                aria-label={`Remove variable ${row.name || i + 1}`}
                title="Remove"
              >
                <XIcon size={16} />
              </button>
            </div>
          ))}
        </div>
      )}
      {error}
      <button type="button" className="button button-small" onClick={() => onChange([...rows, envRow()])}>
        <PlusIcon size={15} />
        Add variable
      </button>
    </div>
  );
}

type Mode = { kind: "create" } | { kind: "edit"; detail: WorkflowDetail };

function WorkflowForm({ mode }: { mode: Mode }) {
  const base = mode.kind === "edit" ? mode.detail : undefined;
  const [form, setForm] = useState<FormState>(() => (base ? formFrom(base) : blankForm()));
  const [initial] = useState(() => JSON.stringify(form));
  // The engine's limit, so a title is never cut in one place and refused in another.
  const maxTitle = useAppInfo().data?.max_title_chars;
  const dirty = JSON.stringify(form) !== initial;
  // Problems show under a field once the person has worked on it (or tried to save).
  const [touched, setTouched] = useState<Set<Field>>(() => new Set(base ? allFields : []));
  const queryClient = useQueryClient();
  const create = useCreateWorkflow();
  const update = useUpdateWorkflow(base?.workflow.id ?? 0);
  const saving = mode.kind === "create" ? create : update;
  const [checking, setChecking] = useState(false);
  const [checkError, setCheckError] = useState<unknown>(null);
  const exampleSelected = useRef(false);
  const ids = { title: useId(), summary: useId(), command: useId(), every: useId(), cron: useId(), timeout: useId(), errors: useId() };
  const errorId = (field: Field) => `${ids.errors}-${field}`;

  const busy = checking || saving.isPending;
  const input = toInput(form, base);
  const current: Checked = { input, shown: allFields.filter((f) => touched.has(f)) };
  const [settled, settleNow] = useSettled(JSON.stringify(current), VALIDATE_AFTER_MS);
  const asked = JSON.parse(settled) as Checked;
  const validation = useValidation(asked.input, asked.shown);
  const problems = validation.data?.problems ?? [];
  const visible = new Set(validation.data?.shownFields ?? []);
  const shown = problems.filter((p) => visible.has(p.field));
  const has = (field: Field) => shown.some((p) => p.field === field);
  const packages = usePackageOffers(input.runtime, mode.kind === "create" && form.code.trim() ? form.code : null, null);

  function change(fields: Partial<FormState>, field?: Field) {
    setForm((current) => ({ ...current, ...fields }));
    if (field && !touched.has(field)) setTouched(new Set(touched).add(field));
  }

  function chooseRuntime(kind: RuntimeKind) {
    const fields: Partial<FormState> = { runtime: kind };
    // A template nobody has edited follows the runtime; a person's own code is never replaced.
    if (mode.kind === "create" && kind !== "custom" && isTemplate(form.code)) fields.code = templates[kind];
    change(fields, "runtime");
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (busy) return;
    setTouched(new Set(allFields));
    settleNow(JSON.stringify({ input, shown: allFields } satisfies Checked));
    setChecking(true);
    setCheckError(null);
    let found: FieldProblem[];
    try {
      // Asked afresh, under the key the form reads, so the messages on screen are this answer.
      found = (await queryClient.fetchQuery(validationQuery(input, allFields))).problems;
    } catch (error) {
      setCheckError(error);
      return;
    } finally {
      setChecking(false);
    }
    if (found.length > 0) return;
    const done = (workflow: Workflow) => {
      // Saved: nothing is lost by going on.
      setLeaveGuard(null);
      toast(mode.kind === "create" ? `“${workflow.title}” was created.` : "The settings were saved.");
      navigate(workflowHref(workflow.id));
    };
    if (mode.kind === "create") create.mutate({ input, requirements: packages.chosen }, { onSuccess: done });
    else update.mutate(input, { onSuccess: done });
  }

  const cancelHref = base ? workflowHref(base.workflow.id) : pageHref("workflows");
  const formRef = useRef<HTMLFormElement>(null);
  // Ctrl+S saves here too, as on the Script tab.
  useEffect(() => {
    function onKey(event: KeyboardEvent) {
      if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "s") {
        event.preventDefault();
        formRef.current?.requestSubmit();
      }
    }
    window.addEventListener("keydown", onKey, true);
    return () => window.removeEventListener("keydown", onKey, true);
  }, []);

  return (
    <form className="workflow-form" onSubmit={(e) => void submit(e)} noValidate ref={formRef}>
      <UnsavedGuard
        dirty={dirty && !saving.isSuccess}
        what={mode.kind === "create" ? "the new workflow's settings" : "your changes to the settings"}
        stays={() => false}
        onDiscard={() => undefined}
      />
      <div className="card form-card">
        <Section title="About">
          <div className="field">
            <label className="field-label" htmlFor={ids.title}>
              Title
            </label>
            <input
              id={ids.title}
              className="input"
              value={form.title}
              onChange={(e) => change({ title: e.target.value }, "title")}
              placeholder="Daily sales report"
              aria-invalid={has("title")}
              aria-describedby={has("title") ? errorId("title") : undefined}
              data-testid="field-title"
              maxLength={maxTitle}
              autoFocus={mode.kind === "create"}
            />
            <FieldError field="title" problems={shown} id={errorId("title")} />
          </div>
          <div className="field">
            <label className="field-label" htmlFor={ids.summary}>
              Summary <span className="field-optional">optional</span>
            </label>
            <input
              id={ids.summary}
              className="input"
              value={form.summary}
              onChange={(e) => change({ summary: e.target.value })}
              placeholder="One line on what the script does"
              maxLength={200}
              data-testid="field-summary"
            />
          </div>
        </Section>

        <Section title="How it runs">
          <fieldset className="field">
            <legend className="field-label">Runs with</legend>
            <div className="choice-grid" role="radiogroup" aria-label="Runs with">
              {runtimeChoices.map(({ kind, title, hint }) => (
                <label key={kind} className={form.runtime === kind ? "choice checked" : "choice"}>
                  <input
                    type="radio"
                    name="runtime"
                    value={kind}
                    checked={form.runtime === kind}
                    onChange={() => chooseRuntime(kind)}
                    data-testid={`runtime-${kind}`}
                  />
                  <span className="choice-title">{title}</span>
                  <span className="choice-hint">{hint}</span>
                </label>
              ))}
            </div>
            {form.runtime === "custom" && (
              <div className="field nested">
                <label className="field-label" htmlFor={ids.command}>
                  Command
                </label>
                <input
                  id={ids.command}
                  className="input mono"
                  value={form.command}
                  onChange={(e) => change({ command: e.target.value }, "runtime")}
                  placeholder="deno run {file}"
                  spellCheck={false}
                  autoCapitalize="off"
                  aria-invalid={has("runtime")}
                  aria-describedby={`${ids.command}-hint${has("runtime") ? ` ${errorId("runtime")}` : ""}`}
                  data-testid="field-command"
                />
                <p className="field-hint" id={`${ids.command}-hint`}>
                  Write <code>{"{file}"}</code> where the script's path goes, for example <code>deno run {"{file}"}</code>.
                </p>
              </div>
            )}
            {mode.kind === "edit" && form.runtime !== base?.workflow.runtime.kind && (
              <p className="field-hint">The script stays as it is; check that it suits {runtimeLabel[form.runtime]}.</p>
            )}
            <FieldError field="runtime" problems={shown} id={errorId("runtime")} />
          </fieldset>

          <div className="field">
            <label className="field-label" htmlFor={ids.timeout}>
              Time limit
            </label>
            <div className="input-with-unit">
              <input
                id={ids.timeout}
                className="input narrow"
                inputMode="numeric"
                value={form.timeout}
                onChange={(e) => change({ timeout: e.target.value }, "timeout_secs")}
                aria-invalid={has("timeout_secs")}
                aria-describedby={`${ids.timeout}-hint${has("timeout_secs") ? ` ${errorId("timeout_secs")}` : ""}`}
                data-testid="field-timeout"
              />
              <span className="unit">seconds</span>
            </div>
            <p className="field-hint" id={`${ids.timeout}-hint`}>
              A run that takes longer is stopped and counted as failed.
            </p>
            <FieldError field="timeout_secs" problems={shown} id={errorId("timeout_secs")} />
          </div>
          <p className="field-hint retry-note">{describeRetry(base ? base.workflow.retry : null)}</p>
        </Section>

        <Section title="When it runs">
          <fieldset className="field">
            <legend className="visually-hidden">Schedule</legend>
            <div className="schedule-choices">
              <label className="schedule-choice">
                <input
                  type="radio"
                  name="schedule"
                  checked={form.schedule === "manual"}
                  onChange={() => change({ schedule: "manual" }, "schedule")}
                  data-testid="schedule-manual"
                />
                <span>Only when I run it</span>
              </label>
              <div className="schedule-choice">
                <input
                  type="radio"
                  name="schedule"
                  id={`${ids.every}-radio`}
                  checked={form.schedule === "interval"}
                  onChange={() => change({ schedule: "interval" }, "schedule")}
                  data-testid="schedule-interval"
                />
                <label htmlFor={`${ids.every}-radio`}>Every</label>
                <input
                  id={ids.every}
                  className="input tiny"
                  inputMode="numeric"
                  value={form.every}
                  aria-label="How many"
                  onFocus={() => form.schedule !== "interval" && change({ schedule: "interval" }, "schedule")}
                  onChange={(e) => change({ every: e.target.value, schedule: "interval" }, "schedule")}
                  data-testid="field-every"
                />
                <select
                  className="select"
                  value={form.unit}
                  aria-label="Unit"
                  onChange={(e) => change({ unit: e.target.value as IntervalUnit, schedule: "interval" }, "schedule")}
                  data-testid="field-unit"
                >
                  {form.unit === "seconds" && <option value="seconds">seconds</option>}
                  <option value="minutes">minutes</option>
                  <option value="hours">hours</option>
                </select>
                {form.schedule === "interval" && <FieldError field="schedule" problems={shown} id={errorId("schedule")} />}
              </div>
              <div className="schedule-choice">
                <input
                  type="radio"
                  name="schedule"
                  id={`${ids.cron}-radio`}
                  checked={form.schedule === "cron"}
                  onChange={() => change({ schedule: "cron" }, "schedule")}
                  data-testid="schedule-cron"
                />
                <label htmlFor={`${ids.cron}-radio`}>On a cron schedule</label>
                <input
                  id={ids.cron}
                  className="input mono cron"
                  value={form.cron}
                  aria-label="Cron expression"
                  aria-describedby={`${ids.cron}-hint`}
                  spellCheck={false}
                  onFocus={(e) => {
                    // The example it starts with is replaced by what is typed, not added to.
                    if (form.cron === CRON_EXAMPLE) {
                      e.currentTarget.select();
                      exampleSelected.current = true;
                    }
                    if (form.schedule !== "cron") change({ schedule: "cron" }, "schedule");
                  }}
                  onMouseUp={(e) => {
                    // The click that focused it would otherwise put the caret back at its end.
                    if (exampleSelected.current) e.preventDefault();
                    exampleSelected.current = false;
                  }}
                  onChange={(e) => change({ cron: e.target.value, schedule: "cron" }, "schedule")}
                  data-testid="field-cron"
                />
                {form.schedule === "cron" && <FieldError field="schedule" problems={shown} id={errorId("schedule")} />}
              </div>
              {form.schedule !== "manual" && <ScheduleMeaning schedule={scheduleOf(form)} />}
              {form.schedule === "cron" && (
                <p className="field-hint cron-hint" id={`${ids.cron}-hint`}>
                  Five fields: <code>minute hour day month weekday</code>. For example <code>0 7 * * *</code> is every
                  day at 07:00, and <code>30 8 * * 1-5</code> is 08:30 on weekdays.
                </p>
              )}
            </div>
          </fieldset>
        </Section>

        <Section
          title="Environment variables"
          description="Settings the script reads from its environment. They are stored in plain text: put passwords and keys under Secrets."
        >
          <EnvRows
            rows={form.env}
            onChange={(env) => change({ env }, "env")}
            errorId={errorId("env")}
            invalid={has("env")}
            error={<FieldError field="env" problems={shown} id={errorId("env")} />}
          />
        </Section>

        <Section
          title="Secrets"
          description="Values such as an API token the script reads from its environment. Healer keeps them out of its database, logs and versions, and hides them if the script prints one."
        >
          {mode.kind === "edit" ? (
            <SecretsSection workflowId={mode.detail.workflow.id} />
          ) : (
            <p className="muted">You can add secrets once the workflow is created, here in its settings.</p>
          )}
        </Section>

        {mode.kind === "create" && (
          <Section title="Script" description="What the workflow runs. It writes its result as JSON to the file named in HEALER_RESULT.">
            <CodeEditor
              value={form.code}
              onChange={(code) => change({ code }, "code")}
              runtime={toInput(form).runtime}
              label="Script"
              describedBy={has("code") ? errorId("code") : undefined}
              invalid={has("code")}
            />
            <FieldError field="code" problems={shown} id={errorId("code")} />
            <PackageOffers offers={packages.offers} declined={packages.declined} onToggle={packages.toggle} version={null} />
            <ScriptVariablesHelp />
          </Section>
        )}
      </div>

      <div className="form-footer">
        <div className="form-footer-text">
          {/* Beside the greyed-out button, every reason it is greyed out: a field's own message may be out of view. */}
          {problems.length > 0 && (
            <p className="muted" data-testid="form-waiting">
              Before saving: {problems.map((p) => p.message.replace(/\.$/, "")).join("; ")}.
            </p>
          )}
          {(checkError ?? validation.error) && (
            <InlineError lead="The settings couldn't be checked." error={checkError ?? validation.error} />
          )}
          {saving.isError && (
            <InlineError lead={mode.kind === "create" ? "The workflow couldn't be created." : "The settings couldn't be saved."} error={saving.error} />
          )}
        </div>
        <a className="button" href={cancelHref}>
          Cancel
        </a>
        <button type="submit" className="button button-primary" data-testid="save-workflow" disabled={busy || problems.length > 0}>
          {busy && <Spinner />}
          {mode.kind === "create" ? "Create workflow" : "Save settings"}
        </button>
      </div>
    </form>
  );
}

function BackTo({ href, label }: { href: string; label: string }) {
  return (
    <a className="back-link" href={href}>
      <ArrowLeftIcon size={16} />
      {label}
    </a>
  );
}

export function NewWorkflowPage() {
  return (
    <section className="page" data-testid="page-new-workflow">
      <BackTo href={pageHref("workflows")} label="Workflows" />
      <header className="page-header">
        <div>
          <h1 className="page-title">New workflow</h1>
          <p className="page-description">A script Healer runs for you, on a schedule or when you ask.</p>
        </div>
      </header>
      <WorkflowForm mode={{ kind: "create" }} />
    </section>
  );
}

export function EditWorkflowPage({ id }: { id: number }) {
  const detail = useWorkflow(id);
  let body;
  if (detail.isPending) body = <SkeletonList rows={4} label="Loading the settings" />;
  else if (detail.isError) {
    body = <InlineError lead="The workflow couldn't be loaded." error={detail.error} onRetry={() => void detail.refetch()} />;
  } else body = <WorkflowForm mode={{ kind: "edit", detail: detail.data }} />;

  return (
    <section className="page" data-testid="page-edit-workflow">
      <BackTo href={workflowHref(id)} label={detail.data?.workflow.title ?? "Workflow"} />
      <header className="page-header">
        <div>
          <h1 className="page-title">Settings</h1>
          <p className="page-description">How and when it runs. To change the script itself, use its Script tab.</p>
        </div>
      </header>
      {body}
    </section>
  );
}

/** What the schedule as typed means, and its next two runs, before it is saved. */
function ScheduleMeaning({ schedule }: { schedule: Schedule }) {
  const preview = useSchedulePreview(schedule).data;
  if (!preview?.valid) return null;
  const [first, second] = preview.next;
  return (
    <p className="field-hint schedule-meaning" data-testid="schedule-meaning" aria-live="polite">
      {preview.meaning}.{first && ` Next: ${dayAndTime(first)}`}
      {second && `, then ${dayAndTime(second)}`}
      {first && "."}
    </p>
  );
}
