import { useState, type ReactNode } from "react";
import { toApiError } from "../../api";
import type { WorkflowDetail } from "../../bindings";
import { CopyText } from "../../components/CopyText";
import { Dialog } from "../../components/Dialog";
import { AlertIcon, ArrowLeftIcon, PauseIcon, PencilIcon, PlayIcon, TrashIcon } from "../../components/icons";
import { InlineError } from "../../components/InlineError";
import { Spinner } from "../../components/Loading";
import { REVIEW_CLEARS, REVIEW_EXPLANATION, ReviewBadge } from "../../components/ReviewBadge";
import { RunningBadge } from "../../components/StatusBadge";
import { WorkflowStatusBadge } from "../../components/WorkflowStatusBadge";
import { useCheckpoints } from "../../checkpointQueries";
import { decideNow } from "../../postponed";
import { useDeleteWorkflow, useRunNow, useSetPaused } from "../../queries";
import { fullTime, useNow } from "../../time";
import { autofixHref, chatHref, editWorkflowHref, navigate, pageHref } from "../../usePage";
import { describeRuntime, futureTime, versionText } from "../../workflowText";
import { RunsOnFact } from "./RunsOnFact";

export function BackLink() {
  return (
    <a className="back-link" href={pageHref("workflows")}>
      <ArrowLeftIcon size={16} />
      Workflows
    </a>
  );
}

function FolderPath({ folder }: { folder: string }) {
  return <CopyText label="Folder" text={folder} testId="workflow-folder" className="folder-row" />;
}

function DeleteDialog({ detail, onCancel }: { detail: WorkflowDetail; onCancel: () => void }) {
  const remove = useDeleteWorkflow(detail.workflow.id);
  const { workflow, folder } = detail;
  return (
    <Dialog
      title={`Delete “${workflow.title}”?`}
      tone="danger"
      onCancel={() => !remove.isPending && onCancel()}
      actions={
        <>
          <button type="button" className="button" onClick={onCancel} disabled={remove.isPending} data-autofocus>
            Cancel
          </button>
          <button
            type="button"
            className="button button-danger"
            data-testid="confirm-delete"
            disabled={remove.isPending}
            onClick={() => remove.mutate(undefined, { onSuccess: () => navigate(pageHref("workflows")) })}
          >
            {remove.isPending && <Spinner />}
            Delete workflow
          </button>
        </>
      }
    >
      <p>
        Every version of its script, all of its runs with their logs, and its folder are deleted too. This can't be
        undone.
      </p>
      <code className="path dialog-path">{folder}</code>
      {remove.isError && <InlineError lead="It couldn't be deleted." error={remove.error} />}
    </Dialog>
  );
}

/** Why the workflow is flagged, and where to look. */
function ReviewNote({ id }: { id: number }) {
  return (
    <div className="result tone-working review-note" data-testid="review-note">
      <AlertIcon size={18} />
      <span>
        <strong>Needs review.</strong> {REVIEW_EXPLANATION} Look at its <a href={autofixHref(id)}>automatic fixes</a>, or{" "}
        <a href={chatHref(id, { focus: true })}>re-plan it</a> with the planner. {REVIEW_CLEARS}
      </span>
    </div>
  );
}

function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="header-fact">
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

export function WorkflowHeader({
  detail,
  busy,
  unsaved = false,
  onRunStarted,
}: {
  detail: WorkflowDetail;
  busy: boolean;
  /** The Script tab holds edits not saved yet: "Run now" runs the saved version, and says so. */
  unsaved?: boolean;
  onRunStarted: () => void;
}) {
  const { workflow, active } = detail;
  const now = useNow();
  const runNow = useRunNow(workflow.id);
  const pause = useSetPaused(workflow.id);
  const [deleting, setDeleting] = useState(false);
  const paused = workflow.status === "paused";
  const running = busy || runNow.isPending;
  const runError = runNow.isError ? toApiError(runNow.error) : null;
  // A question about this workflow waits: it does not run until it is decided, so Run now
  // brings the question back instead of going past it.
  const waitingOn = (useCheckpoints().data?.pending ?? []).find(
    (c) => c.workflow_id === workflow.id || c.affected.some((a) => a.workflow_id === workflow.id),
  );

  let nextRun = "—";
  let nextRunTitle: string | undefined;
  if (paused) nextRun = "Paused";
  else if (detail.next_run_at) {
    nextRun = futureTime(detail.next_run_at, now);
    nextRunTitle = fullTime(detail.next_run_at);
  } else if (workflow.schedule.kind === "manual") nextRun = "When you run it";

  return (
    <header className="workflow-header">
      <BackLink />
      <div className="workflow-heading">
        <h1 className="page-title" title={workflow.title}>
          {workflow.title}
        </h1>
        <div className="workflow-badges">
          <WorkflowStatusBadge status={workflow.status} healing={workflow.healing} />
          {workflow.review && <ReviewBadge />}
          {running && <RunningBadge />}
        </div>
      </div>
      {active.summary && <p className="page-description">{active.summary}</p>}
      {workflow.review && <ReviewNote id={workflow.id} />}

      <div className="workflow-actions">
        <button
          type="button"
          className="button button-primary"
          data-testid="run-now"
          disabled={running}
          onClick={() => (waitingOn ? decideNow() : runNow.mutate(undefined, { onSuccess: onRunStarted }))}
        >
          {running ? <Spinner /> : <PlayIcon size={16} />}
          {running ? "Running…" : "Run now"}
        </button>
        <button
          type="button"
          className="button"
          data-testid="pause-resume"
          disabled={pause.isPending}
          onClick={() => pause.mutate(!paused)}
        >
          {pause.isPending ? <Spinner /> : paused ? <PlayIcon size={16} /> : <PauseIcon size={16} />}
          {paused ? "Resume" : "Pause"}
        </button>
        <a className="button" href={editWorkflowHref(workflow.id)} data-testid="edit-settings">
          <PencilIcon size={16} />
          Edit settings
        </a>
        <span className="actions-spacer" />
        <button type="button" className="button button-quiet-danger" data-testid="delete-workflow" onClick={() => setDeleting(true)}>
          <TrashIcon size={16} />
          Delete
        </button>
      </div>
      {waitingOn && (
        <p className="field-hint" data-testid="run-waits-hint">
          This workflow waits for your decision: {waitingOn.title.replace(/\.$/, "")}. Run now shows you the question; choosing
          Proceed there runs it.
        </p>
      )}
      {unsaved && !waitingOn && (
        <p className="field-hint" data-testid="run-unsaved-hint">
          Run now runs version {versionText(active.version)}, the saved one. Your edits on the Script tab are not saved yet.
        </p>
      )}
      {runError && (
        <InlineError
          lead={runError.code === "invalid_input" ? "Not started." : "The run couldn't be started."}
          error={runError}
        />
      )}
      {pause.isError && <InlineError lead={paused ? "Couldn't resume." : "Couldn't pause."} error={pause.error} />}

      <div className="card workflow-facts">
        <dl className="header-facts">
          <Fact label="Runs with">{describeRuntime(workflow.runtime)}</Fact>
          <Fact label="Schedule">{detail.schedule_text}</Fact>
          <Fact label="Next run">
            <span title={nextRunTitle}>{nextRun}</span>
          </Fact>
          <Fact label="Version">v{versionText(active.version)}</Fact>
          <Fact label="Runs on">
            <RunsOnFact workflowId={workflow.id} />
          </Fact>
        </dl>
        <FolderPath folder={detail.folder} />
      </div>

      {deleting && <DeleteDialog detail={detail} onCancel={() => setDeleting(false)} />}
    </header>
  );
}
