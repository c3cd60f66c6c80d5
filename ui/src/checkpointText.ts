// Words a person reads about checkpoints: the questions Healer stops to ask, and what was decided.
import type { Checkpoint, CheckpointOption, CheckpointTrigger } from "./bindings";
import type { Tone } from "./eventText";

/** The question's title, as the engine titles it (CheckpointTrigger::title). */
export const triggerTitle: Record<CheckpointTrigger, string> = {
  hiccup: "A run keeps failing",
  cost: "Healing is getting expensive",
  systemic: "The same error in several workflows",
  environment: "Something is missing on this machine",
  approval: "Your approval is needed",
};

export const triggerTone: Record<CheckpointTrigger, Tone> = {
  hiccup: "bad",
  cost: "working",
  systemic: "bad",
  environment: "bad",
  approval: "info",
};

/** The option a decision chose; null when the number names none (it never should). */
export function chosenOption(checkpoint: Checkpoint): CheckpointOption | null {
  if (!checkpoint.decision) return null;
  return checkpoint.options[checkpoint.decision.option - 1] ?? null;
}

/** The recommended option's index (0-based); the first when none is marked, as the engine does. */
export function recommendedIndex(checkpoint: Checkpoint): number {
  const index = checkpoint.options.findIndex((o) => o.recommended);
  return index < 0 ? 0 : index;
}

/** The line before the diagnostics in an environment checkpoint (src/recovery.rs). */
const REPORT_LEAD = "What this machine has:";

/**
 * A checkpoint's context split into what a person reads as prose and the report of what this
 * machine has that may follow it. `report` is null when there is none.
 */
export function splitContext(context: string): { prose: string; report: string | null } {
  const at = context.indexOf(REPORT_LEAD);
  if (at < 0) return { prose: context.trim(), report: null };
  return { prose: context.slice(0, at).trim(), report: context.slice(at + REPORT_LEAD.length).trim() };
}

/** "1 more waiting", "3 more waiting". */
export function moreWaiting(count: number): string {
  return `${count} more waiting`;
}

/** What keys do in the dialog, for a person who has n options. */
export function keyHint(count: number): string {
  const keys = count <= 1 ? "1" : count === 2 ? "1 or 2" : `1 to ${count}`;
  return `Press ${keys} to choose an option, or Enter for the highlighted one.`;
}
