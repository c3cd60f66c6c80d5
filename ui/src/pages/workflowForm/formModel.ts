// The create/edit form's state, and how it becomes the engine's WorkflowInput.
import type { RetryPolicy, Runtime, Schedule, WorkflowDetail, WorkflowInput } from "../../bindings";

export type RuntimeKind = Runtime["kind"];
export type ScheduleKind = Schedule["kind"];
export type IntervalUnit = "seconds" | "minutes" | "hours";

export type EnvRow = { key: number; name: string; value: string };

export type FormState = {
  title: string;
  summary: string;
  runtime: RuntimeKind;
  command: string;
  schedule: ScheduleKind;
  every: string;
  unit: IntervalUnit;
  cron: string;
  timeout: string;
  env: EnvRow[];
  code: string;
};

/** The fields the engine names in its problems, as FieldProblem.field. */
export type Field = "title" | "code" | "schedule" | "runtime" | "entry" | "timeout_secs" | "env" | "retry";

export const DEFAULT_TIMEOUT_SECS = 300;
const U32_MAX = 4_294_967_295;

const unitSeconds: Record<IntervalUnit, number> = { seconds: 1, minutes: 60, hours: 3600 };

const RESULT_NOTE = "Healer keeps this JSON as the run's result.";

/** A small working script per runtime that prints a line and leaves a JSON result. */
export const templates: Record<RuntimeKind, string> = {
  python3: `"""Say here what this workflow does."""
import json
import os

result = {"ok": True}
print("Hello from Healer")

# ${RESULT_NOTE}
with open(os.environ["HEALER_RESULT"], "w") as f:
    json.dump(result, f)
`,
  node: `// Say here what this workflow does.
const fs = require("fs");

const result = { ok: true };
console.log("Hello from Healer");

// ${RESULT_NOTE}
fs.writeFileSync(process.env.HEALER_RESULT, JSON.stringify(result));
`,
  bash: `#!/usr/bin/env bash
# Say here what this workflow does.
set -euo pipefail

echo "Hello from Healer"

# ${RESULT_NOTE}
echo '{"ok": true}' > "$HEALER_RESULT"
`,
  custom: `# Say here what this workflow does.
# Healer runs your command with {file} replaced by this script's path.
echo "Hello from Healer"

# ${RESULT_NOTE}
echo '{"ok": true}' > "$HEALER_RESULT"
`,
};

/** Whether `code` is still one of the templates (so switching runtime may replace it). */
export function isTemplate(code: string): boolean {
  return code.trim() === "" || Object.values(templates).includes(code);
}

let nextKey = 1;
export function envRow(name = "", value = ""): EnvRow {
  return { key: nextKey++, name, value };
}

export function blankForm(): FormState {
  return {
    title: "",
    summary: "",
    runtime: "python3",
    command: "",
    schedule: "manual",
    every: "1",
    unit: "hours",
    cron: CRON_EXAMPLE,
    timeout: String(DEFAULT_TIMEOUT_SECS),
    env: [],
    code: templates.python3,
  };
}

/** The form as it stands for an existing workflow. */
export function formFrom(detail: WorkflowDetail): FormState {
  const { workflow, active } = detail;
  const form = blankForm();
  form.title = workflow.title;
  form.summary = active.summary;
  form.runtime = workflow.runtime.kind;
  if (workflow.runtime.kind === "custom") form.command = workflow.runtime.command;
  form.schedule = workflow.schedule.kind;
  if (workflow.schedule.kind === "interval") {
    const seconds = workflow.schedule.seconds;
    form.unit = seconds % 3600 === 0 ? "hours" : seconds % 60 === 0 ? "minutes" : "seconds";
    form.every = String(seconds / unitSeconds[form.unit]);
  }
  if (workflow.schedule.kind === "cron") form.cron = workflow.schedule.expression;
  form.timeout = String(workflow.timeout_secs);
  form.env = workflow.env.map((v) => envRow(v.name, v.value));
  form.code = active.code;
  return form;
}

/** A whole number as typed; 0 for anything else (the engine then names the problem). */
function wholeNumber(text: string): number {
  const trimmed = text.trim();
  if (!/^\d+$/.test(trimmed)) return 0;
  return Math.min(Number(trimmed), U32_MAX);
}

function runtimeOf(form: FormState): Runtime {
  return form.runtime === "custom" ? { kind: "custom", command: form.command.trim() } : { kind: form.runtime };
}

/** What the cron field holds until the person types their own. */
export const CRON_EXAMPLE = "0 7 * * *";

export function scheduleOf(form: FormState): Schedule {
  switch (form.schedule) {
    case "manual":
      return { kind: "manual" };
    case "interval":
      return { kind: "interval", seconds: Math.min(wholeNumber(form.every) * unitSeconds[form.unit], U32_MAX) };
    case "cron":
      return { kind: "cron", expression: form.cron.trim() };
  }
}

/**
 * What is sent to the engine. `base` is the workflow being edited: its script file and retry
 * policy are kept as they are, and its code stands in for the script (which this form can't change).
 */
export function toInput(form: FormState, base?: WorkflowDetail): WorkflowInput {
  return {
    title: form.title,
    runtime: runtimeOf(form),
    entry: base ? base.workflow.entry : null,
    schedule: scheduleOf(form),
    // A row left completely empty is not a variable yet.
    env: form.env.filter((v) => v.name.trim() || v.value).map((v) => ({ name: v.name.trim(), value: v.value })),
    timeout_secs: wholeNumber(form.timeout),
    retry: base ? base.workflow.retry : null,
    code: base ? base.active.code : form.code,
    summary: form.summary.trim(),
  };
}

const DEFAULT_RETRY: RetryPolicy = {
  initial_ms: 1000,
  coefficient: 2,
  max_interval_ms: 100_000,
  max_attempts: 3,
  jitter: true,
  retry_on: ["transient"],
};

function seconds(ms: number): string {
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}

/** What Healer does when a run fails for a passing reason, in one sentence. */
export function describeRetry(retry: RetryPolicy | null): string {
  const policy = retry ?? DEFAULT_RETRY;
  if (policy.max_attempts <= 1 || policy.retry_on.length === 0) {
    return "When a run fails, Healer does not try it again by itself; it looks into the failure at once.";
  }
  const second = Math.min(policy.initial_ms * (policy.coefficient ?? 1), policy.max_interval_ms);
  const waits =
    policy.max_attempts > 2 ? `about ${seconds(policy.initial_ms)}, then ${seconds(second)}` : `about ${seconds(policy.initial_ms)}`;
  const reasons = policy.retry_on.includes("transient") && policy.retry_on.length === 1 ? "a passing reason, like a network hiccup" : "a reason worth retrying";
  return `When a run fails for ${reasons}, Healer tries again up to ${policy.max_attempts - 1} more times, waiting ${waits} between tries.`;
}
