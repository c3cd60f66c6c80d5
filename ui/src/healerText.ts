// The healer service in words a person reads: what went wrong, what Healer tried, how it ended.
// No repair names, ids or commands reach the window.
import type { HealerInvocation, InvocationStatus } from "./bindings";

const scenarioWords: Record<string, string> = {
  InitScriptTypecheckFailure: "The project's type check failed before the agent started",
  InitScriptTestFailure: "The project's tests failed before the agent started",
  InitScriptEnvironmentFailure: "The project could not be prepared on this machine",
  VerificationFailed: "The agent's change did not pass the checks",
  SubtaskFailed: "The agent stopped without finishing",
  SubtaskStuck: "The task looked stuck",
  RuntimeError: "The agent itself failed",
  PullRequestCheckFailed: "A check failed on the task's pull request",
};

export function scenarioInWords(scenario: string): string {
  return scenarioWords[scenario] ?? "The task failed";
}

const spellWords: Record<string, string> = {
  verify_again: "Ran the failing check again, to tell a flaky failure from a real one",
  rewind_uncommitted_changes: "Put the files back as they were at the last save point",
  rewind_to_last_green_commit: "Went back to the last version that passed the checks",
  mark_task_blocked_with_followup: "Paused the task and wrote a follow-up task",
  retry_with_minimal_subagent: "Tried again with Healer's own agent",
  retry_with_claude_code_resume: "Asked the agent to continue, with what went wrong",
  fix_typecheck_errors: "Asked the agent to fix the type errors first",
  update_progress_with_guidance: "Wrote a summary and next steps in the progress notes",
  run_tasks_doctor_like_checks: "Checked the task list for problems",
};

export function spellInWords(spell: string): string {
  return spellWords[spell] ?? "Tried a repair";
}

/** What Healer may do, as a settings list says it: present tense, before anything happened. */
const spellAbilities: Record<string, string> = {
  rewind_uncommitted_changes: "Put the files back as they were at the last save point (the work is kept as a snapshot first)",
  rewind_to_last_green_commit: "Go back to the last version that passed the checks (the work is kept as a snapshot first)",
  mark_task_blocked_with_followup: "Pause a task that keeps failing and write a follow-up task",
  retry_with_minimal_subagent: "Try again with Healer's own agent when the project's agent cannot run",
  retry_with_claude_code_resume: "Ask the agent to continue, telling it what went wrong",
  fix_typecheck_errors: "Ask the agent to fix type errors first",
  update_progress_with_guidance: "Write a summary and next steps in the progress notes",
  run_tasks_doctor_like_checks: "Check the task list for problems and repair what is safe",
};

export function spellAbility(spell: string): string {
  return spellAbilities[spell] ?? spellInWords(spell);
}

/** How a step ended, in a word or two: the check run again passes or fails; a repair helps or not. */
export function spellResult(spell: string, success: boolean): string {
  if (spell === "verify_again") return success ? "passed: it was flaky" : "failed again";
  return success ? "done" : "didn't help";
}

export const outcomeWords: Record<InvocationStatus, string> = {
  running: "Working on it",
  waiting: "Waiting for your answer",
  resolved: "Fixed",
  contained: "Made safe",
  unresolved: "Not fixed",
  skipped: "Left alone",
};

export const outcomeTone: Record<InvocationStatus, "good" | "bad" | "working" | "neutral"> = {
  running: "working",
  waiting: "working",
  resolved: "good",
  contained: "neutral",
  unresolved: "bad",
  skipped: "neutral",
};

/** One sentence on why it was left alone or how it ended, without Healer's internal names. */
export function outcomeSentence(inv: HealerInvocation): string {
  if (inv.status === "running") return "Healer is working on it now.";
  if (inv.status === "waiting")
    return "Healer asked you a question and waits for your answer; nothing has been undone yet, and no agent works on this task until you answer.";
  if (inv.status === "skipped") return `Healer did not step in: ${lowerFirst(inv.reason)}.`.replace("..", ".");
  if (inv.status === "resolved") return "The failing check passes now.";
  if (inv.status === "contained") return "Nothing is lost, and the task is waiting for a person.";
  return "Nothing Healer tried helped; the task needs a person.";
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}
