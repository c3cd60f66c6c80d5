// Finding a workflow in a long list: what needs the person first, then by name in the order a
// person counts ("Report 2" before "Report 10"), narrowed by words and by status.
import type { WorkflowSummary } from "./bindings";

export const statusFilters = ["all", "needs_you", "healing", "healthy", "paused"] as const;
export type StatusFilter = (typeof statusFilters)[number];

export const statusFilterLabel: Record<StatusFilter, string> = {
  all: "All",
  needs_you: "Needs you",
  healing: "Healing",
  healthy: "Healthy",
  paused: "Paused",
};

/** Whether a workflow waits for the person (a failure Healer could not repair, or a review). */
export function needsYou(w: WorkflowSummary): boolean {
  return (w.status === "needs_attention" && !w.healing) || w.review;
}

function matchesStatus(w: WorkflowSummary, filter: StatusFilter): boolean {
  switch (filter) {
    case "all":
      return true;
    case "needs_you":
      return needsYou(w);
    case "healing":
      return w.healing;
    case "healthy":
      // Healthy is something a run showed: a workflow that never ran is not counted.
      return w.status === "active" && !w.healing && !w.review && w.last_run !== null;
    case "paused":
      return w.status === "paused";
  }
}

const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });

export function findWorkflows(list: WorkflowSummary[], words: string, filter: StatusFilter): WorkflowSummary[] {
  const terms = words.trim().toLowerCase().split(/\s+/).filter(Boolean);
  return list
    .filter((w) => matchesStatus(w, filter))
    .filter((w) => {
      const text = `${w.title} ${w.name} ${w.schedule_text}`.toLowerCase();
      return terms.every((t) => text.includes(t));
    })
    .sort((a, b) => Number(needsYou(b)) - Number(needsYou(a)) || collator.compare(a.title, b.title));
}
