// Words a person reads for the decisions Healer makes on its own: rollbacks and the safety
// breakers that stop runaway healing. The engine names them by kind, a plain string that may
// grow; a kind not listed here still reads sensibly.
import type { Tone } from "./eventText";

export type DecisionWords = {
  /** What Healer did, as a headline. */
  title: string;
  tone: Tone;
  /** Why it does this, for a tooltip. */
  why: string;
};

const schedulerPaused: DecisionWords = {
  title: "Paused scheduled runs",
  tone: "bad",
  why: "Scripts left processes running after their runs ended, so no scheduled run starts until they end or you resume.",
};

const known: Record<string, DecisionWords> = {
  catastrophic_rollback: {
    title: "Rolled back to the last version that worked",
    tone: "contained",
    why: "Several repairs in a row did not hold, so Healer put back the last version of the script that ran without errors.",
  },
  fix_rolled_back: {
    title: "Undid a fix that made things worse",
    tone: "contained",
    why: "After an automatic fix the script failed earlier than before, or no longer started, so Healer put back the code from before the fix.",
  },
  fix_kept: {
    title: "Kept a fix that got the script further",
    tone: "working",
    why: "An automatic fix cured its error and the script got further before failing on the next one. Healer kept it and repairs the next error.",
  },
  rollback_escalated: {
    title: "Asked you instead of rolling back",
    tone: "bad",
    why: "Repairs did not hold, and no version of the script you saved last has worked (or it fails too), so there is nothing safe to go back to.",
  },
  repairs_held: {
    title: "Stopped repairing until you decide",
    tone: "bad",
    why: "An automatic repair gave up. Healer counts further failures with the same error on its message, without spending more on repairs.",
  },
  repairs_resumed: {
    title: "Repairs may start again",
    tone: "good",
    why: "You answered a repair that gave up: a new version, Try auto-fix again, or resuming the workflow.",
  },
  systemic: {
    title: "Paused repairs: the same error in several workflows",
    tone: "bad",
    why: "One error hit several workflows at once. A shared cause is more likely than separate bugs, so Healer asked you first.",
  },
  cost: {
    title: "Asked before spending more on repairs",
    tone: "working",
    why: "Repairing one workflow used its allowance of model tokens for today, so Healer asked you before going on.",
  },
  review: {
    title: "Flagged for review",
    tone: "working",
    why: "Healer had to repair this workflow many times lately. The repairs work, but something keeps changing under it.",
  },
  survivors: schedulerPaused,
  scheduler_paused: schedulerPaused,
  scheduler_resumed: {
    title: "Resumed scheduled runs",
    tone: "good",
    why: "Scheduled runs start again as usual.",
  },
};

/** "some_new_kind" → "Some new kind". */
function fromKind(kind: string): string {
  const words = kind.replace(/[_-]+/g, " ").trim();
  return words ? words.charAt(0).toUpperCase() + words.slice(1) : "A decision";
}

export function decisionWords(kind: string): DecisionWords {
  return Object.hasOwn(known, kind)
    ? known[kind]
    : { title: fromKind(kind), tone: "neutral", why: "A decision Healer made on its own." };
}

/** A decision's detail is folded away past this many characters or lines. */
export function isLongDetail(detail: string): boolean {
  return detail.length > 220 || detail.split("\n").length > 3;
}

/** The systemic breaker's detail is the error's signature: 16 hex characters. */
export function signatureIn(detail: string): string | null {
  const text = detail.trim();
  return /^[0-9a-f]{16}$/.test(text) ? text : null;
}
