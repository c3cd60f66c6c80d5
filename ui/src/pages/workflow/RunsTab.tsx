import { useEffect, useRef, useState } from "react";
import type { Run } from "../../bindings";
import { EmptyState } from "../../components/EmptyState";
import { ChevronRightIcon, PlayIcon } from "../../components/icons";
import { InlineError } from "../../components/InlineError";
import { SkeletonList, Spinner } from "../../components/Loading";
import { StatusBadge } from "../../components/StatusBadge";
import { useLatestLiveAttempt } from "../../liveOutput";
import { useClusterStatus, useRunsOn, useStopRun } from "../../clusterQueries";
import { isOpenRun, useRun, type useRuns } from "../../queries";
import { fullTime, relativeTime, useNow } from "../../time";
import { plural, runStatusLabel, runStatusTone, triggerHint, triggerLabel, versionText } from "../../workflowText";
import { AttemptView, LiveAttemptView } from "./AttemptView";

type RunsQuery = ReturnType<typeof useRuns>;

/**
 * A run sent to the cluster: its attempts arrive when it ends; it can be stopped meanwhile.
 * While no computer takes the queue's work (or the cluster does not answer), it says so: the
 * run is waiting, not running.
 */
function ClusterWaiting({ run, queue }: { run: Run; queue: string }) {
  const stop = useStopRun(run.workflow_id);
  const status = useClusterStatus({ poll: true }).data;
  const workers = status?.queues.find((q) => q.queue === queue)?.workers;
  const state = !status ? "running" : !status.reachable ? "unreachable" : workers?.length === 0 ? "no-worker" : "running";
  return (
    <div className="run-waiting cluster-waiting" data-testid="cluster-waiting" data-state={state}>
      <span className="muted">
        {state === "unreachable" && "Waiting for the cluster, which isn't answering right now. The run starts there once it answers."}
        {state === "no-worker" && (
          <>
            Waiting: no computer is taking the cluster's work yet, so nothing has started this run. It starts as soon as
            one does; <a href="#/settings/computers">More computers</a> says how to start one.
          </>
        )}
        {state === "running" && "Running on another computer. What it prints is shown here when it ends."}
      </span>
      <button
        type="button"
        className="button button-small"
        disabled={stop.isPending || stop.isSuccess}
        onClick={() => stop.mutate(run.id)}
        data-testid="stop-run"
      >
        {stop.isPending && <Spinner />}
        {stop.isSuccess ? "Stopping…" : "Stop"}
      </button>
      {stop.isError && <InlineError lead="It wasn't stopped." error={stop.error} />}
    </div>
  );
}

function RunDetails({ run }: { run: Run }) {
  const detail = useRun(run.id);
  const runsOn = useRunsOn(run.workflow_id).data;
  const clusterQueue = runsOn?.kind === "cluster" ? runsOn.queue : null;
  const liveAttempt = useLatestLiveAttempt(run.id);
  const stored = detail.data?.attempts ?? [];
  const lastStored = stored.length ? stored[stored.length - 1].number : 0;
  const open = isOpenRun(detail.data?.run.status ?? run.status);
  // An attempt that started after a retry wait prints before the engine says anything about it.
  const unseenAttempt = open && liveAttempt > lastStored ? liveAttempt : null;
  const { refetch } = detail;
  useEffect(() => {
    if (unseenAttempt !== null) void refetch();
  }, [unseenAttempt, refetch]);

  if (detail.isPending) return <div className="run-details-loading"><Spinner label="Loading the attempts" /></div>;
  if (detail.isError) {
    return <InlineError lead="The attempts couldn't be loaded." error={detail.error} onRetry={() => void refetch()} />;
  }
  const setup = detail.data?.setup ?? null;
  if (stored.length === 0 && unseenAttempt === null) {
    if (open && clusterQueue !== null) return <ClusterWaiting run={run} queue={clusterQueue} />;
    return (
      <p className="muted run-waiting">
        {open ? "Getting its packages and starting the script…" : "This run has no attempts."}
      </p>
    );
  }
  return (
    <>
      {setup && (
        <details className="package-details run-setup" data-testid="run-setup">
          <summary>Before this run, Healer installed its packages — what the installer printed</summary>
          <pre className="log-text" tabIndex={0}>
            {setup}
          </pre>
        </details>
      )}
      <ol className="attempts">
        {stored.map((attempt) => (
          <AttemptView key={attempt.id} attempt={attempt} runId={run.id} />
        ))}
        {unseenAttempt !== null && <LiveAttemptView runId={run.id} number={unseenAttempt} />}
      </ol>
    </>
  );
}

function RunRow({
  run,
  expanded,
  onToggle,
  now,
  target = false,
}: {
  run: Run;
  expanded: boolean;
  onToggle: () => void;
  now: number;
  /** The run a link pointed at: brought into view. */
  target?: boolean;
}) {
  const at = run.started_at ?? run.queued_at;
  const detailsId = `run-${run.id}-details`;
  const row = useRef<HTMLLIElement>(null);
  useEffect(() => {
    // jsdom has no scrollIntoView.
    if (target) row.current?.scrollIntoView?.({ block: "start", behavior: "smooth" });
  }, [target]);
  return (
    <li
      className={expanded ? "run expanded" : "run"}
      data-testid="run-row"
      data-status={run.status}
      data-run-id={run.id}
      data-target={target ? "true" : undefined}
      ref={row}
    >
      <button type="button" className="run-summary" aria-expanded={expanded} aria-controls={detailsId} onClick={onToggle}>
        <ChevronRightIcon size={16} />
        <span className="run-main">
          <span className="run-title">
            <span className="run-number">Run #{run.number}</span>
            <StatusBadge tone={runStatusTone[run.status]} label={runStatusLabel[run.status]} />
            {run.skipped && (
              <span className="chip run-chip" data-testid="run-skipped" title="You chose Skip when Healer asked about this run">
                Skipped by you
              </span>
            )}
          </span>
          <span className="run-line" title={run.summary}>
            {run.summary || (isOpenRun(run.status) ? "In progress" : "")}
          </span>
          {run.hint && (
            <span className="run-hint" data-testid="run-hint">
              Ran with the hint: “{run.hint}”
            </span>
          )}
        </span>
        <span className="run-meta">
          <span className="run-meta-top">
            <time dateTime={at} title={fullTime(at)}>
              {relativeTime(at, now)}
            </time>
          </span>
          <span className="run-meta-bottom">
            <span title={triggerHint[run.trigger]}>{triggerLabel[run.trigger]}</span>
            <span aria-hidden="true">·</span>
            <span>v{versionText(run.version)}</span>
            <span aria-hidden="true">·</span>
            <span>{plural(run.attempts, "attempt")}</span>
          </span>
        </span>
      </button>
      {expanded && (
        <div className="run-details" id={detailsId}>
          <RunDetails run={run} />
        </div>
      )}
    </li>
  );
}

export function RunsTab({ runs, openRun = null }: { workflowId: number; runs: RunsQuery; openRun?: number | null }) {
  const now = useNow();
  const list = runs.data?.pages.flat() ?? [];
  // The person's own choices, by run id; without one, a run opens while it is running and stays open.
  // A run a link pointed at (a notification's "See the failed run") starts open.
  const [toggled, setToggled] = useState<Map<number, boolean>>(() => new Map(openRun === null ? [] : [[openRun, true]]));
  const [pointedAt, setPointedAt] = useState(openRun);
  if (openRun !== pointedAt) {
    setPointedAt(openRun);
    if (openRun !== null) setToggled(new Map(toggled).set(openRun, true));
  }
  const [autoOpened, setAutoOpened] = useState<number[]>([]);
  const newlyOpen = list.filter((run) => isOpenRun(run.status) && !autoOpened.includes(run.id)).map((run) => run.id);
  if (newlyOpen.length > 0) setAutoOpened([...autoOpened, ...newlyOpen]);

  if (runs.isPending) return <SkeletonList rows={3} label="Loading runs" />;
  // A failed "load older" keeps what was loaded, with its own message below.
  if (runs.isError && !runs.data) {
    return <InlineError lead="The runs couldn't be loaded." error={runs.error} onRetry={() => void runs.refetch()} />;
  }
  if (list.length === 0) {
    return (
      <div className="card">
        <EmptyState icon={<PlayIcon size={26} />} title="No runs yet">
          <p>Runs appear here as soon as the schedule starts one, or when you press Run now.</p>
        </EmptyState>
      </div>
    );
  }

  const isExpanded = (run: Run) => toggled.get(run.id) ?? autoOpened.includes(run.id);
  return (
    <>
      <ol className="card runs" aria-label="Runs, newest first">
        {list.map((run) => (
          <RunRow
            key={run.id}
            run={run}
            now={now}
            expanded={isExpanded(run)}
            target={run.id === openRun}
            onToggle={() => setToggled((known) => new Map(known).set(run.id, !isExpanded(run)))}
          />
        ))}
      </ol>
      {runs.hasNextPage && (
        <div className="load-more">
          <button
            type="button"
            className="button"
            data-testid="load-older-runs"
            onClick={() => void runs.fetchNextPage()}
            disabled={runs.isFetchingNextPage}
          >
            {runs.isFetchingNextPage && <Spinner />}
            Load older runs
          </button>
        </div>
      )}
      {runs.isFetchNextPageError && <InlineError lead="Older runs couldn't be loaded." error={runs.error} />}
    </>
  );
}
