import { useId, useState } from "react";
import type { Checkpoint } from "../bindings";
import { chosenOption, triggerTone } from "../checkpointText";
import { CheckpointContext } from "../components/CheckpointContext";
import { RelativeTime } from "../components/RelativeTime";
import { StatusBadge } from "../components/StatusBadge";
import { projectHref, projectTaskHref, runHref, workflowHref } from "../usePage";

/** The workflow it is about, and the run, as links. */
function About({ checkpoint }: { checkpoint: Checkpoint }) {
  const { workflow_id, workflow_title, run_id, affected, project_task } = checkpoint;
  if (project_task) {
    return (
      <span className="checkpoint-about" data-testid="checkpoint-project-task">
        <a href={projectTaskHref(project_task.project_id, project_task.task_id)}>“{project_task.task_title}”</a> of the project{" "}
        <a href={projectHref(project_task.project_id)}>“{project_task.project_name}”</a>
      </span>
    );
  }
  if (workflow_id === null && affected.length > 0) {
    return (
      <span className="checkpoint-about" data-testid="checkpoint-affected">
        {affected.map((a, i) => (
          <span key={a.workflow_id}>
            {i > 0 && ", "}
            <a href={workflowHref(a.workflow_id)}>“{a.title}”</a>
          </span>
        ))}
      </span>
    );
  }
  if (workflow_id === null) return <span className="checkpoint-about">About Healer itself</span>;
  return (
    <span className="checkpoint-about">
      <a href={workflowHref(workflow_id)}>“{workflow_title ?? `Workflow ${workflow_id}`}”</a>
      {run_id !== null && (
        <>
          <span aria-hidden="true"> · </span>
          <a href={runHref(workflow_id, run_id)}>Run #{checkpoint.run_number ?? run_id}</a>
        </>
      )}
    </span>
  );
}

/** What Healer saw, folded away until asked for. */
function WhatHappened({ context }: { context: string }) {
  const [open, setOpen] = useState(false);
  const id = useId();
  return (
    <div className="checkpoint-what">
      <button type="button" className="link-button" aria-expanded={open} aria-controls={id} onClick={() => setOpen(!open)}>
        {open ? "Hide what happened" : "Show what happened"}
      </button>
      {open && <CheckpointContext context={context} id={id} />}
    </div>
  );
}

/** A question still waiting: it is open in the dialog, so this only shows what it offers. */
export function PendingCheckpointRow({ checkpoint, now }: { checkpoint: Checkpoint; now: number }) {
  return (
    <li className="list-row checkpoint-row" data-testid="checkpoint-row" data-status="pending" data-checkpoint-id={checkpoint.id}>
      <span className={`marker tone-${triggerTone[checkpoint.trigger]}`} aria-hidden="true" />
      <div className="row-text">
        <span className="row-title checkpoint-row-title">
          {checkpoint.title}
          <StatusBadge tone="working" label="Waiting for you" live />
        </span>
        <About checkpoint={checkpoint} />
        <span className="row-detail">
          Options: {checkpoint.options.map((o) => (o.recommended ? `${o.label} (recommended)` : o.label)).join(", ")}
        </span>
        <span className="row-detail">Healer recommends: {checkpoint.recommendation}</span>
        <WhatHappened context={checkpoint.context} />
      </div>
      <RelativeTime iso={checkpoint.created_at} now={now} />
    </li>
  );
}

/** A past decision: what was chosen, the notes, and what Healer did. */
export function DecidedCheckpointRow({ checkpoint, now }: { checkpoint: Checkpoint; now: number }) {
  const { decision } = checkpoint;
  if (!decision) return null;
  const chosen = chosenOption(checkpoint);
  return (
    <li className="list-row checkpoint-row" data-testid="checkpoint-row" data-status="decided" data-checkpoint-id={checkpoint.id}>
      <span className="marker tone-neutral" aria-hidden="true" />
      <div className="row-text">
        <span className="row-title">{checkpoint.title}</span>
        <About checkpoint={checkpoint} />
        <span className="checkpoint-choice" data-testid="checkpoint-choice">
          You chose <strong>{chosen?.label ?? `option ${decision.option}`}</strong>
          {chosen?.recommended ? ", as Healer recommended." : "."}
        </span>
        {decision.notes && (
          <span className="row-detail checkpoint-notes-text" data-testid="checkpoint-notes">
            Your notes: {decision.notes}
          </span>
        )}
        <span className="row-detail" data-testid="checkpoint-outcome">
          What Healer did: {decision.outcome || "Nothing yet."}
        </span>
        <WhatHappened context={checkpoint.context} />
      </div>
      <RelativeTime iso={decision.decided_at} now={now} />
    </li>
  );
}
