// What Healer did each time the task failed, newest first: what went wrong, each repair it
// tried and whether it worked, how it ended — with Restore for the work it put aside and a link
// to the follow-up task it wrote.
import type { HealerInvocation, SnapshotRecord } from "../../bindings";
import { InlineError } from "../../components/InlineError";
import { Spinner } from "../../components/Loading";
import { StatusBadge } from "../../components/StatusBadge";
import { outcomeSentence, outcomeTone, outcomeWords, scenarioInWords, spellInWords, spellResult } from "../../healerText";
import { useRestoreSnapshot } from "../../projectQueries";
import { relativeTime, useNow } from "../../time";
import { pageHref, projectTaskHref } from "../../usePage";

/** Whether a rewind of this invocation was carried out (not only offered, skipped or cut short). */
export function rewound(inv: HealerInvocation): boolean {
  return inv.spells.some((s) => s.spell.startsWith("rewind_") && s.success);
}

function Restore({ projectId, taskId, snapshot, undone }: { projectId: number; taskId: string; snapshot: SnapshotRecord; undone: boolean }) {
  const restore = useRestoreSnapshot(projectId, taskId);
  const now = useNow();
  return (
    <div className="healer-snapshot" data-testid="healer-snapshot">
      <p>
        {undone
          ? `The agent's work was put aside ${relativeTime(snapshot.created_at, now)} before Healer undid it.`
          : `Nothing was undone: the task's folder is as the agent left it. A copy of the work was kept ${relativeTime(snapshot.created_at, now)}.`}
        {snapshot.restored_at && ` You brought it back ${relativeTime(snapshot.restored_at, now)}.`}
      </p>
      <button
        type="button"
        className="button"
        disabled={restore.isPending}
        onClick={() => restore.mutate(snapshot.id)}
        data-testid="restore-snapshot"
      >
        {restore.isPending && <Spinner />}
        {snapshot.restored_at ? "Bring it back again" : undone ? "Bring the work back" : "Put this copy back"}
      </button>
      {restore.isSuccess && (
        <p className="muted" data-testid="restore-done">
          The agent's work is back in the task's folder; what was there is kept too.
        </p>
      )}
      {restore.isError && <InlineError lead="The work could not be brought back." error={restore.error} />}
    </div>
  );
}

function Card({ inv, projectId, snapshots }: { inv: HealerInvocation; projectId: number; snapshots: SnapshotRecord[] }) {
  const now = useNow();
  const snapshot = snapshots.find((s) => s.id === inv.snapshot_id);
  return (
    <li className="card healer-card" data-testid="healer-card" data-status={inv.status}>
      <div className="healer-head">
        <strong>{scenarioInWords(inv.scenario)}</strong>
        <StatusBadge tone={outcomeTone[inv.status]} label={outcomeWords[inv.status]} />
        <span className="muted">{relativeTime(inv.started_at, now)}</span>
      </div>
      {inv.spells.length > 0 && (
        <ol className="healer-spells">
          {inv.spells.map((s, i) => (
            <li key={i} data-success={s.success}>
              <span className="healer-spell">{spellInWords(s.spell)}</span>
              <span className={s.success ? "healer-worked" : "muted"}>{spellResult(s.spell, s.success)}</span>
            </li>
          ))}
        </ol>
      )}
      <p className="healer-outcome">{outcomeSentence(inv)}</p>
      {inv.status === "waiting" && (
        <p>
          <a href={pageHref("checkpoints")} data-testid="healer-question-link">
            Answer Healer's question
          </a>
        </p>
      )}
      {snapshot && inv.status !== "waiting" && <Restore projectId={projectId} taskId={inv.task_id} snapshot={snapshot} undone={rewound(inv)} />}
      {inv.followup_task && (
        <p>
          <a href={projectTaskHref(projectId, inv.followup_task)} data-testid="followup-link">
            Open the follow-up task
          </a>
        </p>
      )}
    </li>
  );
}

export function HealerCards({ projectId, heals, snapshots }: { projectId: number; heals: HealerInvocation[]; snapshots: SnapshotRecord[] }) {
  if (heals.length === 0) return null;
  return (
    <>
      <h2 className="section-label">What Healer did when it failed</h2>
      <ul className="healer-cards" data-testid="healer-cards">
        {heals.map((inv) => (
          <Card key={inv.id} inv={inv} projectId={projectId} snapshots={snapshots} />
        ))}
      </ul>
    </>
  );
}
