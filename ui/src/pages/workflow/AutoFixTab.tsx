import { autofixLine, autofixStatusHint, autofixStatusLabel, autofixStatusTone, versionChange } from "../../autofixText";
import type { AutoFix, Runtime } from "../../bindings";
import { EmptyState } from "../../components/EmptyState";
import { ChevronRightIcon, HealerNoteIcon } from "../../components/icons";
import { InlineError } from "../../components/InlineError";
import { SkeletonList } from "../../components/Loading";
import { StatusBadge } from "../../components/StatusBadge";
import { tokens } from "../../modelText";
import { useAutofixes } from "../../taskQueries";
import { fullTime, relativeTime, useNow } from "../../time";
import { autofixHref } from "../../usePage";
import { AutoFixThread } from "./AutoFixThread";

function AutoFixRow({ workflowId, fix, now }: { workflowId: number; fix: AutoFix; now: number }) {
  const change = versionChange(fix);
  const line = autofixLine(fix);
  return (
    <li>
      <a
        className="autofix-row"
        href={autofixHref(workflowId, fix.task_id)}
        data-testid="autofix-row"
        data-status={fix.status}
        data-task-id={fix.task_id}
      >
        <span className="autofix-main">
          <span className="autofix-title">
            <StatusBadge
              tone={autofixStatusTone[fix.status]}
              label={autofixStatusLabel[fix.status]}
              title={autofixStatusHint[fix.status]}
              live={fix.status === "working"}
            />
            {change && (
              <span className="autofix-versions" aria-label={`Version ${change}`}>
                {change}
              </span>
            )}
          </span>
          <span className="autofix-line" title={line}>
            {line}
          </span>
        </span>
        <span className="autofix-meta">
          <time dateTime={fix.created_at} title={fullTime(fix.created_at)}>
            {relativeTime(fix.created_at, now)}
          </time>
          <span className="autofix-meta-bottom">
            {fix.run_id !== null && <span>Run #{fix.run_number ?? fix.run_id}</span>}
            {fix.run_id !== null && <span aria-hidden="true">·</span>}
            <span>{tokens(fix.tokens)} tokens</span>
          </span>
        </span>
        <ChevronRightIcon size={16} />
      </a>
    </li>
  );
}

function AutoFixList({ workflowId }: { workflowId: number }) {
  const list = useAutofixes(workflowId);
  const now = useNow();
  if (list.isPending) return <SkeletonList rows={3} label="Loading auto-fixes" />;
  if (list.isError) {
    return <InlineError lead="The auto-fixes couldn't be loaded." error={list.error} onRetry={() => void list.refetch()} />;
  }
  if (list.data.length === 0) {
    return (
      <div className="card">
        <EmptyState icon={<HealerNoteIcon size={26} />} title="No automatic fixes yet">
          <p>
            When a run fails on an error in the script, Healer tries to repair it here. It reads what went wrong,
            tries a change on a safe copy, and saves the fix as a new version (1.0 → 1.1), then runs it again.
          </p>
          <p>Each repair is listed here, step by step, as it happens.</p>
        </EmptyState>
      </div>
    );
  }
  return (
    <ol className="card list autofix-list" aria-label="Auto-fixes, newest first">
      {list.data.map((fix) => (
        <AutoFixRow key={fix.task_id} workflowId={workflowId} fix={fix} now={now} />
      ))}
    </ol>
  );
}

/** The workflow's automatic repairs; with a task, that task's whole thread. */
export function AutoFixTab({ workflowId, runtime, taskId }: { workflowId: number; runtime: Runtime; taskId: number | null }) {
  if (taskId !== null) return <AutoFixThread key={taskId} workflowId={workflowId} taskId={taskId} runtime={runtime} />;
  return <AutoFixList workflowId={workflowId} />;
}
