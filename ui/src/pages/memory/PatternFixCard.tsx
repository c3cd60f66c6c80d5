import type { PatternFix } from "../../bindings";
import { StatusBadge } from "../../components/StatusBadge";
import { UnifiedDiff } from "../../components/UnifiedDiff";
import { verdictHint, verdictLabel, verdictTone } from "../../memoryText";
import { fullTime, relativeTime } from "../../time";
import { autofixHref, workflowHref } from "../../usePage";

/** The workflow the fix was made for, as a link while it still exists. */
function FixWorkflow({ fix }: { fix: PatternFix }) {
  if (fix.workflow_id === null) {
    return <span className="fix-workflow">{fix.workflow_title ? `“${fix.workflow_title}”` : "A workflow since deleted"}</span>;
  }
  return (
    <a className="fix-workflow" href={workflowHref(fix.workflow_id)} data-testid="pattern-fix-workflow">
      “{fix.workflow_title ?? `Workflow ${fix.workflow_id}`}”
    </a>
  );
}

/** One fix tried for an error: where, whether it held, what it said it did, and the change itself. */
export function PatternFixCard({ fix, now }: { fix: PatternFix; now: number }) {
  const settled = fix.settled_at ? ` · decided ${relativeTime(fix.settled_at, now)}` : "";
  return (
    <li className="card pattern-fix" data-testid="pattern-fix" data-result={fix.result} data-fix-id={fix.id}>
      <div className="pattern-fix-head">
        <StatusBadge
          tone={verdictTone[fix.result]}
          label={verdictLabel[fix.result]}
          title={verdictHint[fix.result]}
          live={fix.result === "pending"}
          testId="pattern-fix-result"
        />
        <FixWorkflow fix={fix} />
        {fix.workflow_id !== null && fix.task_id !== null && (
          <a className="pattern-fix-task" href={autofixHref(fix.workflow_id, fix.task_id)}>
            See the repair
          </a>
        )}
        <span className="actions-spacer" />
        <time className="relative-time" dateTime={fix.created_at} title={`${fullTime(fix.created_at)}${settled}`}>
          {relativeTime(fix.created_at, now)}
        </time>
      </div>
      {fix.description && <p className="pattern-fix-description">{fix.description}</p>}
      <UnifiedDiff diff={fix.diff} label="What the fix changed" />
    </li>
  );
}
