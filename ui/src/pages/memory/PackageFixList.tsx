import type { PackageFix } from "../../bindings";
import { StatusBadge } from "../../components/StatusBadge";
import { verdictHint, verdictLabel, verdictTone } from "../../memoryText";
import { relativeTime } from "../../time";
import { workflowHref } from "../../usePage";

/**
 * The packages installed for a missing module with this error: the one that held is offered to
 * the next workflow with the same import when its script is saved.
 */
export function PackageFixList({ list, now }: { list: PackageFix[]; now: number }) {
  if (list.length === 0) return null;
  return (
    <>
      <h2 className="section-label">Packages installed for it, newest first</h2>
      <ol className="card list package-fixes" aria-label="Packages installed for it" data-testid="package-fixes">
        {list.map((fix) => (
          <li key={fix.id} className="package-fix" data-testid="package-fix" data-result={fix.result}>
            <StatusBadge tone={verdictTone[fix.result]} label={verdictLabel[fix.result]} title={verdictHint[fix.result]} live={fix.result === "pending"} />
            <span>
              <strong>{fix.package}</strong> <span className="muted">for</span> <code>{fix.module}</code>
            </span>
            {fix.workflow_id !== null ? (
              <a href={workflowHref(fix.workflow_id, "dependencies")}>“{fix.workflow_title ?? `Workflow ${fix.workflow_id}`}”</a>
            ) : (
              <span className="muted">a workflow since deleted</span>
            )}
            <span className="actions-spacer" />
            <span className="relative-time">{relativeTime(fix.created_at, now)}</span>
          </li>
        ))}
      </ol>
    </>
  );
}
