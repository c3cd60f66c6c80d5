import { useCheckpoints } from "../checkpointQueries";
import { EmptyState } from "../components/EmptyState";
import { FlagIcon } from "../components/icons";
import { InlineError } from "../components/InlineError";
import { SkeletonList } from "../components/Loading";
import { PageHeader } from "../components/PageHeader";
import { useNow } from "../time";
import { DecidedCheckpointRow, PendingCheckpointRow } from "./CheckpointRow";

function CheckpointLists() {
  const list = useCheckpoints();
  const now = useNow();
  if (list.isPending) return <SkeletonList rows={3} label="Loading checkpoints" />;
  if (list.isError) {
    return <InlineError lead="Checkpoints couldn't be loaded." error={list.error} onRetry={() => void list.refetch()} />;
  }
  const { pending, decided } = list.data;
  if (pending.length === 0 && decided.length === 0) {
    return (
      <div className="card">
        <EmptyState icon={<FlagIcon size={28} />} title="No checkpoints yet">
          <p>
            When Healer can't get past a problem on its own — a run that keeps failing, something missing on this
            computer — it stops and asks you what to do.
          </p>
          <p>Your answers, and what Healer did about them, are kept here.</p>
        </EmptyState>
      </div>
    );
  }
  return (
    <>
      {pending.length > 0 && (
        <>
          <h2 className="section-label">Waiting for you</h2>
          <ul className="card list" aria-label="Waiting for you, oldest first">
            {pending.map((checkpoint) => (
              <PendingCheckpointRow key={checkpoint.id} checkpoint={checkpoint} now={now} />
            ))}
          </ul>
        </>
      )}
      <h2 className="section-label">Decided</h2>
      {decided.length === 0 ? (
        <p className="muted">Nothing decided yet.</p>
      ) : (
        <ul className="card list" aria-label="Decided, newest first">
          {decided.map((checkpoint) => (
            <DecidedCheckpointRow key={checkpoint.id} checkpoint={checkpoint} now={now} />
          ))}
        </ul>
      )}
    </>
  );
}

export function CheckpointsPage() {
  return (
    <section className="page" data-testid="page-checkpoints">
      <PageHeader
        title="Checkpoints"
        description="Questions Healer stopped to ask you, and what it did with your answers, newest first."
      />
      <CheckpointLists />
    </section>
  );
}
