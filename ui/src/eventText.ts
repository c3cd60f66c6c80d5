// Words a person reads for what the engine reports. Kept apart from the components so the
// phrasing can be read (and tested) in one place.
import type { AutoFixStatus, Event, FailureClass, HealRecord, Outcome, RemedyStatus, RunTrigger } from "./bindings";
import { triggerTitle } from "./checkpointText";
import { decisionWords } from "./decisionText";

/** Drives the colour of an event's marker. */
export type Tone = "neutral" | "working" | "good" | "contained" | "bad" | "info";

export type EventText = { title: string; detail: string; tone: Tone };

const remedyStatusLabel: Record<RemedyStatus, string> = {
  resolved: "resolved",
  contained: "contained",
  not_resolved: "not resolved",
  failed: "failed",
};

const remedyTone: Record<RemedyStatus, Tone> = {
  resolved: "good",
  contained: "contained",
  not_resolved: "bad",
  failed: "bad",
};

const outcomeTone: Record<Outcome, Tone> = {
  resolved: "good",
  contained: "contained",
  unresolved: "bad",
  skipped: "neutral",
};

const failureClassLabel: Record<FailureClass, string> = {
  transient: "Transient failure",
  logic: "Logic error",
  environment: "Environment problem",
  resource: "Resource shortage",
  timeout: "Timed out",
  unknown: "Unclassified failure",
};

const triggerDetail: Record<RunTrigger, string> = {
  schedule: "Started by its schedule",
  manual: "Started by hand",
  catch_up: "It was due while Healer was closed",
  fix: "Re-run after an automatic fix",
  checkpoint: "You chose to run it again when Healer asked",
  recovery: "Healer's recovery ran it again",
  rollback: "Healer put back the last version that worked, and runs it to prove it",
};

const maintenanceTitle: Record<AutoFixStatus, string> = {
  working: "Auto-fix still working",
  fixed: "Auto-fix repaired the script — re-running",
  stale: "Auto-fix not applied: the script changed meanwhile",
  gave_up: "Auto-fix gave up",
  interrupted: "Auto-fix interrupted",
};

const maintenanceTone: Record<AutoFixStatus, Tone> = {
  working: "working",
  fixed: "good",
  stale: "neutral",
  gave_up: "bad",
  interrupted: "contained",
};

/** An engine phrase as the start of a sentence. */
function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** What Healer's recovery decided after a failed run, by the engine's action name. */
function describeRecovery(event: Extract<Event, { kind: "recovery_decided" }>): EventText {
  const detail = `After run ${event.run_id} failed: ${event.detail}`;
  switch (event.action) {
    case "alternative": {
      // The engine quotes the hint: run again with the hint “…” (run 12).
      const hint = /“(.+)”/.exec(event.detail)?.[1];
      return { title: hint ? `Running again with a hint: ${hint}` : "Running again with a hint", detail, tone: "working" };
    }
    case "diagnostics":
      return { title: "Collected diagnostics", detail, tone: "info" };
    case "unblock":
      return { title: "Unblocked and running again", detail, tone: "working" };
    case "escalate":
      return { title: "Asked you what to do", detail, tone: "info" };
    default:
      return { title: `Recovery: ${event.action}`, detail, tone: "neutral" };
  }
}

/** A safety breaker stopped runaway healing (or the scheduler was let go again), by breaker. */
function describeBreaker(event: Extract<Event, { kind: "breaker_tripped" }>): EventText {
  const { title, tone } = decisionWords(event.breaker);
  return { title, detail: capitalised(event.detail), tone };
}

/** The workflow's title from a maintainer task's ("Auto-fix: Weekly report" → "Weekly report"). */
function fixedWorkflow(taskTitle: string): string {
  return taskTitle.replace(/^Auto-fix:\s*/, "");
}

export function describeEvent(event: Event): EventText {
  switch (event.kind) {
    case "engine_started":
      return { title: "Engine started", detail: `Version ${event.version} · process ${event.pid}`, tone: "neutral" };
    case "engine_stopped":
      return { title: "Engine stopped", detail: `Process ${event.pid}`, tone: "neutral" };
    case "recovered_at_startup":
      return { title: "Recovered after an unexpected stop", detail: event.summary, tone: "working" };
    case "heal_started":
      return {
        title: `Heal ${event.heal_id} started`,
        detail: `${failureClassLabel[event.class]} · ${event.summary}`,
        tone: "working",
      };
    case "remedy_applied":
      return {
        title: `Remedy ${event.remedy} → ${remedyStatusLabel[event.status]}`,
        detail: event.detail,
        tone: remedyTone[event.status],
      };
    case "heal_finished":
      return { title: `Heal ${event.heal_id} ${event.outcome}`, detail: event.summary, tone: outcomeTone[event.outcome] };
    case "heal_resolved":
      return {
        title: `Heal ${event.heal_id} resolved by ${event.version.major}.${event.version.minor}`,
        detail: `Run ${event.run_id} of that version got past the failure.`,
        tone: "good",
      };
    case "notification_created":
      return { title: `Notification: ${event.notification.title}`, detail: event.notification.body, tone: "info" };
    case "notification_updated":
      return {
        title: `Again: ${event.notification.title}`,
        detail: failedSince(event.notification.repeats),
        tone: "bad",
      };
    case "workflow_created":
      return { title: `Workflow “${event.title}” created`, detail: "It runs on its schedule from now on.", tone: "info" };
    case "workflow_changed":
      return { title: `Workflow “${event.title}” ${event.what}`, detail: "", tone: "neutral" };
    case "workflow_deleted":
      return { title: `Workflow “${event.title}” deleted`, detail: "Its versions and runs were deleted with it.", tone: "neutral" };
    case "version_saved":
      return event.author.kind === "healer"
        ? {
            title: `Healer rolled “${event.title}” back, as version ${event.version.major}.${event.version.minor}`,
            detail: event.comment,
            tone: "contained",
          }
        : {
            title: `“${event.title}” version ${event.version.major}.${event.version.minor} saved`,
            detail: event.comment,
            tone: "info",
          };
    case "run_started":
      return { title: `Run ${event.run_id} of “${event.title}” started`, detail: triggerDetail[event.trigger], tone: "working" };
    case "attempt_finished":
      return {
        title: `Run ${event.run_id}, attempt ${event.attempt} ${event.succeeded ? "succeeded" : "failed"}`,
        detail: event.retry_in_ms != null ? `${event.summary} · retrying in ${Math.round(event.retry_in_ms / 100) / 10} s` : event.summary,
        tone: event.succeeded ? "good" : event.retry_in_ms != null ? "working" : "bad",
      };
    case "run_finished":
      return {
        title: `Run ${event.run_id} of “${event.title}” ${event.status}`,
        detail: event.summary,
        tone: event.status === "succeeded" ? "good" : event.status === "interrupted" ? "contained" : "bad",
      };
    case "task_started":
      return { title: `Task ${event.task_id} started`, detail: `${event.task_kind} · ${event.title}`, tone: "working" };
    case "task_message_added":
      return { title: `Task ${event.task_id}`, detail: event.summary, tone: "neutral" };
    case "task_finished":
      return {
        title: `Task ${event.task_id} ${event.status}`,
        detail: event.summary,
        tone: event.status === "finished" ? "good" : event.status === "stopped" ? "contained" : event.status === "running" ? "working" : "bad",
      };
    case "maintenance_started":
      return {
        title: `Auto-fix started for “${fixedWorkflow(event.title)}”`,
        detail: `Run ${event.run_id} failed on an error in the script; Healer is repairing it.`,
        tone: "working",
      };
    case "maintenance_finished":
      return { title: maintenanceTitle[event.status], detail: event.summary, tone: maintenanceTone[event.status] };
    case "planner_replied":
      return event.question
        ? { title: "The planner asked you something", detail: event.question, tone: "info" }
        : { title: "The planner answered", detail: event.summary, tone: "info" };
    case "checkpoint_created": {
      const { checkpoint } = event;
      const about = checkpoint.workflow_title ? `“${checkpoint.workflow_title}” waits` : "It waits";
      return {
        title: `Healer asks: ${triggerTitle[checkpoint.trigger]}`,
        detail: `${about} for your decision. Healer recommends ${checkpoint.recommendation}`,
        tone: "info",
      };
    }
    case "checkpoint_updated":
      return {
        title: `Healer asks: ${triggerTitle[event.checkpoint.trigger]}`,
        detail: `It now concerns ${event.checkpoint.affected.length} workflows.`,
        tone: "info",
      };
    case "checkpoint_decided":
      return { title: `You chose ${event.choice}`, detail: capitalised(event.outcome), tone: "neutral" };
    case "recovery_decided":
      return describeRecovery(event);
    case "breaker_tripped":
      return describeBreaker(event);
    case "llm_settings_changed":
      return { title: "Model settings changed", detail: event.what, tone: "neutral" };
  }
}

/** "It failed 3 more times since." for a notification whose failure came back. */
export function failedSince(repeats: number): string {
  return `It failed ${repeats === 1 ? "once more" : `${repeats} more times`} since.`;
}

/** One line for a finished heal, e.g. "Heal 12 contained — record_and_notify: the person was told". */
export function describeHeal(heal: HealRecord): string {
  if (heal.resolved_by) {
    const { major, minor } = heal.resolved_by;
    return `Heal ${heal.id} resolved by ${major}.${minor}`;
  }
  const state = heal.outcome ?? (heal.interrupted ? "interrupted" : "still running");
  const remedies = heal.remedies.map((r) => `${r.remedy}: ${r.detail}`).join("; ");
  return remedies ? `Heal ${heal.id} ${state} — ${remedies}` : `Heal ${heal.id} ${state}`;
}

export function healTone(heal: HealRecord): Tone {
  return heal.outcome ? outcomeTone[heal.outcome] : "bad";
}
