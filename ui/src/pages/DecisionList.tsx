import { EmptyState } from "../components/EmptyState";
import { ShieldIcon } from "../components/icons";
import { InlineError } from "../components/InlineError";
import { SkeletonList } from "../components/Loading";
import { useDecisions } from "../memoryQueries";
import { useNow } from "../time";
import { DecisionRow } from "./DecisionRow";

/** The decisions log: what Healer decided on its own, newest first. */
export function DecisionList() {
  const decisions = useDecisions();
  const now = useNow();
  if (decisions.isPending) return <SkeletonList rows={3} label="Loading decisions" />;
  if (decisions.isError) {
    return (
      <InlineError lead="Decisions couldn't be loaded." error={decisions.error} onRetry={() => void decisions.refetch()} />
    );
  }
  if (decisions.data.length === 0) {
    return (
      <div className="card">
        <EmptyState icon={<ShieldIcon size={28} />} title="Healer hasn't had to step in yet">
          <p>
            When repairs go wrong or too far, Healer steps in by itself: it undoes a fix that made things worse, goes
            back to the last version that worked, pauses repairs when one error spreads to several workflows, or asks
            before spending more.
          </p>
          <p>Each time it does, the decision and the reason for it are kept here.</p>
        </EmptyState>
      </div>
    );
  }
  return (
    <ol className="card list" aria-label="Decisions Healer made, newest first">
      {decisions.data.map((decision) => (
        <DecisionRow key={decision.id} decision={decision} now={now} />
      ))}
    </ol>
  );
}
