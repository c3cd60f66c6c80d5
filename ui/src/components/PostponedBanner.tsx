import type { Checkpoint } from "../bindings";
import { askingAgent, limitWords } from "../approvalText";
import { decideNow } from "../postponed";
import { FlagIcon } from "./icons";

/** Decisions put off with "Decide later": still waiting, still in view, one click from the dialog. */
export function PostponedBanner({ waiting }: { waiting: Checkpoint[] }) {
  if (waiting.length === 0) return null;
  const first = waiting[0];
  const task = first.project_task;
  const about = task
    ? ` about the task “${task.task_title}” of “${task.project_name}”`
    : first.workflow_title
      ? ` about “${first.workflow_title}”`
      : "";
  const waits =
    waiting.length > 1
      ? "What they are about waits until you decide."
      : first.agent_request
        ? `${askingAgent(first.agent_request)} waits for your answer; it is denied if nobody answers in time (${limitWords(
            Math.round((Date.parse(first.agent_request.deadline_at) - Date.parse(first.agent_request.created_at)) / 1000),
          )}).`
        : task
          ? "No agent works on this task until you decide."
        : first.workflow_id !== null || first.affected.length > 0
          ? "The workflow it is about does not run until you decide."
          : "Healer waits for your decision before it goes on.";
  const text =
    waiting.length === 1
      ? `Healer is waiting for your decision${about}: ${first.title}.`
      : `Healer is waiting for ${waiting.length} decisions from you.`;
  return (
    <section className="safety-banner postponed-banner" role="status" data-testid="postponed-banner">
      <span className="safety-banner-icon" aria-hidden="true">
        <FlagIcon size={18} />
      </span>
      <div className="safety-banner-text">
        <p className="safety-banner-reason">{text}</p>
        <p className="safety-banner-hint">{waits}</p>
      </div>
      <button type="button" className="button button-small button-primary" data-testid="decide-now" onClick={decideNow}>
        Decide now
      </button>
    </section>
  );
}
