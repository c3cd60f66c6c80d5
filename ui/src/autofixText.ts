// Words a person reads about auto-fix tasks, kept in one place.
import type { AutoFix, AutoFixStatus } from "./bindings";
import type { Tone } from "./eventText";
import { versionText } from "./workflowText";

export const autofixStatusLabel: Record<AutoFixStatus, string> = {
  working: "Working",
  fixed: "Fixed",
  stale: "Not applied",
  gave_up: "Needs your answer",
  interrupted: "Interrupted",
};

export const autofixStatusTone: Record<AutoFixStatus, Tone> = {
  working: "info",
  fixed: "good",
  stale: "neutral",
  gave_up: "bad",
  interrupted: "contained",
};

export const autofixStatusHint: Record<AutoFixStatus, string> = {
  working: "Healer is repairing the script now",
  fixed: "The fix was saved as a new version and the workflow ran again",
  stale: "Not applied: the script changed meanwhile",
  gave_up: "Healer found no fix and asked you to decide",
  interrupted: "Healer stopped while it worked on this",
};

/** "1.0 → 1.1" for a fix that was stored, "1.0" for one that was not, "" when unknown. */
export function versionChange(fix: AutoFix): string {
  if (!fix.from_version) return fix.to_version ? versionText(fix.to_version) : "";
  const from = versionText(fix.from_version);
  return fix.to_version ? `${from} → ${versionText(fix.to_version)}` : from;
}

/** One line for a list row: the fix's comment, or how the task stands. */
export function autofixLine(fix: AutoFix): string {
  if (fix.fix_comment) return fix.fix_comment;
  switch (fix.status) {
    case "working":
      // A repair waiting for its model provider says so, and when it asks again.
      return fix.summary || "Working on a repair…";
    case "stale":
      return "Not applied: the script changed meanwhile.";
    default:
      return fix.summary;
  }
}

/** The thread's opening sentence: what failed and what came of the repair, before any step. */
export function autofixSummary(fix: AutoFix, tests: number): string {
  const failed = fix.from_version ? `Version ${versionText(fix.from_version)} failed` : "A run failed";
  const tried = tests === 0 ? "" : tests === 1 ? " It ran one test in a safe copy of the workflow." : ` It ran ${tests} tests in a safe copy of the workflow.`;
  switch (fix.status) {
    case "working":
      return fix.summary
        ? `${failed} on an error in the script. ${fix.summary}`
        : `${failed} on an error in the script. Healer's repair assistant is working on it now.`;
    case "fixed":
      return `${failed} on an error in the script. Healer's repair assistant fixed it as version ${fix.to_version ? versionText(fix.to_version) : "a new version"}, which ran again.${tried}`;
    case "stale":
      return `${failed}. Healer's repair assistant found a fix, but the script had been changed meanwhile, so the fix was not applied.`;
    case "gave_up":
      return `${failed} and Healer's repair assistant found no safe fix. It left you a question below; answer it in Re-plan.${tried}`;
    case "interrupted":
      return `${failed}. Healer stopped while its repair assistant was working on it.`;
  }
}
