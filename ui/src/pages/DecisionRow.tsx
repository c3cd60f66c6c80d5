import type { LoggedDecision } from "../bindings";
import { Collapsible } from "../components/Collapsible";
import { RelativeTime } from "../components/RelativeTime";
import { decisionWords, isLongDetail, signatureIn } from "../decisionText";
import { memoryHref, workflowHref } from "../usePage";

/** The workflow it was about, as a link; or that it was about Healer as a whole. */
function About({ decision }: { decision: LoggedDecision }) {
  const { workflow_id, workflow_title } = decision;
  if (workflow_id === null) {
    return <span className="decision-about">{workflow_title ? `“${workflow_title}”` : "About Healer itself"}</span>;
  }
  return (
    <span className="decision-about">
      <a href={workflowHref(workflow_id)}>“{workflow_title ?? `Workflow ${workflow_id}`}”</a>
    </span>
  );
}

/** The detail as the engine wrote it; an error's signature becomes a link to what Memory knows of it. */
function Detail({ detail }: { detail: string }) {
  const signature = signatureIn(detail);
  if (signature) {
    return (
      <span className="row-detail decision-detail">
        The error: <a href={memoryHref(signature)}>see it in Memory</a>
      </span>
    );
  }
  return (
    <Collapsible long={isLongDetail(detail)} more="Show the details" less="Show less">
      <span className="row-detail decision-detail" data-testid="decision-detail">
        {detail}
      </span>
    </Collapsible>
  );
}

/** One thing Healer decided on its own: what, about which workflow, when, and the details. */
export function DecisionRow({ decision, now }: { decision: LoggedDecision; now: number }) {
  const { title, tone, why } = decisionWords(decision.kind);
  const detail = decision.detail.trim();
  return (
    <li className="list-row decision-row" data-testid="decision-row" data-kind={decision.kind}>
      <span className={`marker tone-${tone}`} aria-hidden="true" />
      <div className="row-text">
        <span className="row-title" title={why} data-testid="decision-title">
          {title}
        </span>
        <About decision={decision} />
        {decision.summary && <span className="decision-summary">{decision.summary}</span>}
        {detail && detail !== decision.summary.trim() && <Detail detail={detail} />}
      </div>
      <RelativeTime iso={decision.created_at} now={now} />
    </li>
  );
}
