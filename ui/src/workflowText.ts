// Words and numbers a person reads about workflows, runs and versions, kept in one place.
import type {
  Attempt,
  AttemptStatus,
  Author,
  FailureClass,
  RunStatus,
  RunTrigger,
  Runtime,
  Version,
  WorkflowStatus,
} from "./bindings";
import type { Tone } from "./eventText";

/** "1.0", "2.1". */
export function versionText(version: Version): string {
  return `${version.major}.${version.minor}`;
}

export function sameVersion(a: Version, b: Version): boolean {
  return a.major === b.major && a.minor === b.minor;
}

export const runtimeLabel: Record<Runtime["kind"], string> = {
  python3: "Python 3",
  node: "Node.js",
  bash: "Bash",
  custom: "Custom command",
};

/** "Python 3", or the custom command itself. */
export function describeRuntime(runtime: Runtime): string {
  return runtime.kind === "custom" ? runtime.command : runtimeLabel[runtime.kind];
}

export const workflowStatusLabel: Record<WorkflowStatus, string> = {
  active: "Active",
  paused: "Paused",
  needs_attention: "Needs attention",
};

export const workflowStatusTone: Record<WorkflowStatus, Tone> = {
  active: "good",
  paused: "neutral",
  needs_attention: "bad",
};

export const runStatusLabel: Record<RunStatus, string> = {
  queued: "Queued",
  running: "Running",
  succeeded: "Succeeded",
  failed: "Failed",
  interrupted: "Interrupted",
};

export const runStatusTone: Record<RunStatus, Tone> = {
  queued: "neutral",
  running: "working",
  succeeded: "good",
  failed: "bad",
  interrupted: "contained",
};

export const attemptStatusLabel: Record<AttemptStatus, string> = {
  running: "Running",
  succeeded: "Succeeded",
  failed: "Failed",
  interrupted: "Interrupted",
};

export const attemptStatusTone: Record<AttemptStatus, Tone> = {
  running: "working",
  succeeded: "good",
  failed: "bad",
  interrupted: "contained",
};

export const triggerLabel: Record<RunTrigger, string> = {
  schedule: "Scheduled",
  manual: "By hand",
  catch_up: "Catch-up",
  fix: "After a fix",
  checkpoint: "After your decision",
  recovery: "Recovery re-run",
  rollback: "After a rollback",
};

export const triggerHint: Record<RunTrigger, string> = {
  schedule: "Started by its schedule",
  manual: "Started with Run now",
  catch_up: "Was due while Healer was closed, so it ran when Healer started",
  fix: "Re-run after an automatic fix",
  checkpoint: "Run again because you chose Proceed when Healer asked",
  recovery: "Healer's recovery ran it again, with a hint or after clearing what blocked it",
  rollback: "Healer put back the last version of this major that worked, and ran it to prove it",
};

export const classLabel: Record<FailureClass, string> = {
  transient: "Transient",
  logic: "Logic error",
  environment: "Environment",
  resource: "Resource",
  timeout: "Timed out",
  unknown: "Unclassified",
};

export const classHint: Record<FailureClass, string> = {
  transient: "A passing problem, like a network hiccup: worth trying again",
  logic: "A mistake in the script or a change in the data it reads: the script needs a fix",
  environment: "Something missing on this computer, like a module or a permission",
  resource: "The script was killed or ran out of memory",
  timeout: "The script ran past its time limit",
  unknown: "Healer could not tell what kind of failure this is",
};

export function authorLabel(author: Author): string {
  switch (author.kind) {
    case "person":
      return "You";
    case "planner":
      return "Planner";
    case "healer":
      return "Healer";
    case "task":
      return "Auto-fix";
  }
}

/** Who made a version, inside a sentence: "2.1 by auto-fix". */
export function authorBy(author: Author): string {
  switch (author.kind) {
    case "person":
      return "by you";
    case "planner":
      return "by the planner";
    case "healer":
      return "by Healer";
    case "task":
      return "by auto-fix";
  }
}

/** "320 ms", "1.4 s", "2 min 5 s". */
export function durationText(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(Math.round(ms / 100) / 10).toLocaleString()} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  return seconds ? `${minutes} min ${seconds} s` : `${minutes} min`;
}

/** "812 bytes", "14 KB", "2.3 MB". */
export function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** How an attempt ended, in a few words: "Exit code 1", "Timed out", "Stopped by signal 9". */
export function attemptEnd(attempt: Attempt): string | null {
  if (attempt.timed_out) return "Timed out";
  if (attempt.signal !== null) return `Stopped by signal ${attempt.signal}`;
  if (attempt.exit_code !== null) return `Exit code ${attempt.exit_code}`;
  return null;
}

/** The JSON result indented for reading; the text as it is when it is not JSON. */
export function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** When something will happen: "in 4 min", "today at 14:00", "tomorrow at 07:00", "Mon at 09:00". */
export function futureTime(iso: string, now: number): string {
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return iso;
  const ahead = at - now;
  if (ahead < MINUTE) return "in under a minute";
  if (ahead < HOUR) return `in ${Math.round(ahead / MINUTE)} min`;
  const date = new Date(at);
  // 24-hour, as the schedule itself is said ("Every Monday at 09:00"): never "09:00 AM" beside it.
  const clock = date.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
  const days = calendarDaysBetween(new Date(now), date);
  if (days === 0) return `today at ${clock}`;
  if (days === 1) return `tomorrow at ${clock}`;
  if (ahead < 6 * DAY) return `${date.toLocaleDateString(undefined, { weekday: "short" })} at ${clock}`;
  return date.toLocaleDateString(undefined, { day: "numeric", month: "short" }) + ` at ${clock}`;
}

function calendarDaysBetween(from: Date, to: Date): number {
  const start = new Date(from.getFullYear(), from.getMonth(), from.getDate()).getTime();
  const end = new Date(to.getFullYear(), to.getMonth(), to.getDate()).getTime();
  return Math.round((end - start) / DAY);
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
