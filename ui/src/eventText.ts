// Words a person reads for what the engine reports. Kept apart from the components so the
// phrasing can be read (and tested) in one place.
import { agentLabel, sessionStatusLabel, sessionStatusTone } from "./projectText";
import { outcomeTone as invocationTone, outcomeWords, scenarioInWords, spellInWords } from "./healerText";
import type { AutoFixStatus, Event, FailureClass, HealRecord, Outcome, RemedyStatus, RunTrigger } from "./bindings";
import { decisionWords } from "./decisionText";

/** Drives the colour of an event's marker. */
export type Tone = "neutral" | "working" | "good" | "contained" | "bad" | "info";

export type EventText = { title: string; detail: string; tone: Tone };

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
  gave_up: "Auto-fix stopped and asks you",
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
  const detail = `After a failed run: ${event.detail}`;
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
      return { title: "Healer decided how to go on after a failure", detail, tone: "neutral" };
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

/** What each remedy did, as the person would say it (the engine's names stay in the details). */
const remedyWords: Record<string, { did: string; failed: string }> = {
  rollback_bad_fix: { did: "Healer undid a repair that made things worse", failed: "Healer could not undo a repair" },
  systemic_breaker: { did: "Healer paused repairs of an error seen in several workflows", failed: "Healer could not check for a wider problem" },
  known_fix: { did: "Healer applied a fix that worked before", failed: "A fix that worked before did not apply here" },
  cost_breaker: { did: "Healer stopped repairs that were getting expensive", failed: "Healer could not check the repair costs" },
  maintain: { did: "Healer started repairing the script", failed: "Healer could not start a repair" },
  install_module: { did: "Healer saw to a missing package", failed: "Healer found no missing package to install" },
  level2: { did: "Healer looked deeper into the failure", failed: "Healer could not look deeper into the failure" },
  checkpoint: { did: "Healer asked you what to do", failed: "Healer could not ask you" },
  record_and_notify: { did: "Healer told you about it", failed: "Healer could not tell you about it" },
  superseded: { did: "Healer waited for the run of a newer repair", failed: "Healer could not check for a newer repair" },
  rollback_failed_too: { did: "Healer asked you, as the version it put back fails too", failed: "Healer could not check the version it put back" },
  held_for_person: { did: "Healer counted the failure on the open question, spending nothing", failed: "Healer could not check for an open question" },
};

function remedySentence(remedy: string, status: RemedyStatus): string {
  const words = remedyWords[remedy];
  if (!words) return status === "failed" || status === "not_resolved" ? "A step of the repair did not work" : "Healer took a step to repair it";
  return status === "failed" || status === "not_resolved" ? words.failed : words.did;
}

const outcomeSentence: Record<Outcome, string> = {
  resolved: "The failure is repaired",
  contained: "The failure is handled for now",
  unresolved: "Healer could not repair the failure",
  skipped: "Healer left the failure alone",
};

const runStatusWords: Record<string, string> = {
  succeeded: "ran fine",
  failed: "failed",
  interrupted: "was interrupted",
  queued: "is waiting to run",
  running: "is running",
};

export function describeEvent(event: Event): EventText {
  switch (event.kind) {
    case "engine_started":
      return { title: "Healer started", detail: `Version ${event.version}.`, tone: "neutral" };
    case "engine_stopped":
      return { title: "Healer stopped", detail: "", tone: "neutral" };
    case "recovered_at_startup":
      return { title: "Healer tidied up after an unexpected stop", detail: event.summary, tone: "working" };
    case "heal_started":
      return {
        title: "Healer is looking into a failure",
        detail: `${failureClassLabel[event.class]}: ${event.summary}`,
        tone: "working",
      };
    case "remedy_applied":
      return { title: remedySentence(event.remedy, event.status), detail: capitalised(event.detail), tone: remedyTone[event.status] };
    case "heal_finished":
      return { title: outcomeSentence[event.outcome], detail: event.summary, tone: outcomeTone[event.outcome] };
    case "heal_resolved":
      return {
        title: `The failure is repaired: version ${event.version.major}.${event.version.minor} ran past it`,
        detail: "The run of the repaired version got further than the failure.",
        tone: "good",
      };
    case "notification_created":
      return { title: `Healer told you: ${event.notification.title}`, detail: event.notification.body, tone: "info" };
    case "notification_updated":
      return {
        title: `It happened again: ${event.notification.title}`,
        detail: failedSince(event.notification.repeats),
        tone: "bad",
      };
    case "workflow_created":
      return { title: `Workflow “${event.title}” created`, detail: "Its first version, 1.0, is saved.", tone: "info" };
    case "workflow_changed":
      return { title: `Workflow “${event.title}” ${event.what}`, detail: "", tone: "neutral" };
    case "workflow_deleted":
      return { title: `Workflow “${event.title}” deleted`, detail: "Its versions and runs were deleted with it.", tone: "neutral" };
    case "version_saved":
      if (event.author.kind === "healer" && event.comment.startsWith("installed ")) {
        return {
          title: `Healer ${event.comment} for “${event.title}”, as version ${event.version.major}.${event.version.minor}`,
          detail: "The package went into the workflow's own environment; the workflow runs again.",
          tone: "good",
        };
      }
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
      return { title: `“${event.title}” started running`, detail: triggerDetail[event.trigger], tone: "working" };
    case "attempt_finished":
      return {
        title: event.succeeded ? `Try ${event.attempt} of a run went fine` : `Try ${event.attempt} of a run failed`,
        detail: event.retry_in_ms != null ? `${event.summary}. Trying again in ${Math.round(event.retry_in_ms / 100) / 10} s.` : event.summary,
        tone: event.succeeded ? "good" : event.retry_in_ms != null ? "working" : "bad",
      };
    case "run_finished":
      return {
        title: `“${event.title}” ${runStatusWords[event.status] ?? event.status}`,
        detail: event.summary,
        tone: event.status === "succeeded" ? "good" : event.status === "interrupted" ? "contained" : "bad",
      };
    case "task_started":
      return {
        title: event.task_kind === "planner" ? "The planner started on your message" : event.task_kind === "maintainer" ? "An automatic repair started" : "Healer asked its model",
        detail: fixedWorkflow(event.title),
        tone: "working",
      };
    case "task_message_added":
      return { title: "The model said something", detail: event.summary, tone: "neutral" };
    case "task_finished":
      return {
        title: event.status === "finished" ? "The model finished its work" : event.status === "stopped" ? "The model's work was stopped" : event.status === "running" ? "The model is working" : "The model's work failed",
        detail: event.summary,
        tone: event.status === "finished" ? "good" : event.status === "stopped" ? "contained" : event.status === "running" ? "working" : "bad",
      };
    case "maintenance_started":
      return {
        title: `Auto-fix started for “${fixedWorkflow(event.title)}”`,
        detail: "A run failed on an error in the script; Healer is repairing it.",
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
        title: `Healer asks: ${checkpoint.title}`,
        detail: `${about} for your decision. Healer recommends ${checkpoint.recommendation}`,
        tone: "info",
      };
    }
    case "checkpoint_updated":
      return {
        title: `Healer asks: ${event.checkpoint.title}`,
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
      return { title: "Model settings changed", detail: capitalised(event.what), tone: "neutral" };
    case "cluster_changed":
      return { title: "Other computers", detail: capitalised(event.what), tone: "neutral" };
    case "scheduler_paused":
      return { title: "Scheduled runs paused", detail: capitalised(event.reason), tone: "contained" };
    case "environment_built":
      return {
        title: event.ok ? `Packages installed for “${event.title}”` : `Packages could not be installed for “${event.title}”`,
        detail: capitalised(event.summary),
        tone: event.ok ? "good" : "bad",
      };
    case "project_added":
      return { title: `Project “${event.name}” added`, detail: "Its tasks can be run from its board.", tone: "info" };
    case "project_changed":
      return { title: `Project “${event.name}”: ${event.what}`, detail: "", tone: "neutral" };
    case "project_removed":
      return { title: `Project “${event.name}” removed`, detail: "Its repository was left as it was.", tone: "neutral" };
    case "project_tasks_changed":
      return {
        title: `Tasks of “${event.name}” changed`,
        detail: event.problems > 0 ? `${capitalised(event.what)}; ${event.problems} line(s) of the task list need fixing.` : capitalised(event.what),
        tone: event.problems > 0 ? "bad" : "neutral",
      };
    case "session_started":
      return { title: `${agentLabel[event.agent]} started on “${event.task_title}”`, detail: "", tone: "working" };
    case "session_finished":
      return {
        title: `“${event.task_title}”: ${sessionStatusLabel[event.status].toLowerCase()}`,
        detail: event.summary,
        tone: sessionStatusTone[event.status],
      };
    case "healer_invocation_start":
      return { title: `Healer stepped in on a task`, detail: scenarioInWords(event.scenario), tone: "working" };
    case "healer_spell_applied":
      return { title: spellInWords(event.spell), detail: event.summary, tone: event.success ? "good" : "neutral" };
    case "healer_invocation_complete":
      return {
        title: `Healer on a task: ${outcomeWords[event.status].toLowerCase()}`,
        detail: scenarioInWords(event.scenario),
        tone: invocationTone[event.status],
      };
  }
}

/** "It failed 3 more times since." for a notification whose failure came back. */
export function failedSince(repeats: number): string {
  return `It failed ${repeats === 1 ? "once more" : `${repeats} more times`} since.`;
}

/** The technical record behind an event, for the details toggle: ids, names, states. */
export function technicalRecord(event: Event): string {
  const parts: string[] = [event.kind.replace(/_/g, " ")];
  for (const [key, value] of Object.entries(event)) {
    if (key === "kind" || value === null || value === undefined) continue;
    if (typeof value === "object") continue;
    parts.push(`${key.replace(/_/g, " ")}: ${String(value)}`);
  }
  return parts.join(" · ");
}

/** One sentence for a test alert's heal: what Healer did with it. */
export function describeHeal(heal: HealRecord): string {
  if (heal.resolved_by) {
    const { major, minor } = heal.resolved_by;
    return `The failure is repaired: version ${major}.${minor} ran past it.`;
  }
  const state = heal.outcome ? outcomeSentence[heal.outcome] : heal.interrupted ? "The check was interrupted" : "The check is still running";
  const done = heal.remedies.map((r) => remedySentence(r.remedy, r.status).replace(/^Healer /, "")).join(", then ");
  return done ? `${state}: Healer ${done}.` : `${state}.`;
}

export function healTone(heal: HealRecord): Tone {
  return heal.outcome ? outcomeTone[heal.outcome] : "bad";
}
