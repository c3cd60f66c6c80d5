import type { RunsOn } from "../../bindings";
import { useClusterStatus, useRunsOn, useSetRunsOn } from "../../clusterQueries";
import { InlineError } from "../../components/InlineError";
import { Spinner } from "../../components/Loading";
import { toast } from "../../toasts";
import { settingsHref } from "../../usePage";

/** "Runs on": this computer, or the cluster; the choice is made here, on the workflow's page. */
export function RunsOnFact({ workflowId }: { workflowId: number }) {
  const runsOn = useRunsOn(workflowId);
  const cluster = useClusterStatus();
  const choose = useSetRunsOn(workflowId);
  const connected = cluster.data?.settings ?? null;
  const current: RunsOn | undefined = runsOn.data;
  const onCluster = current?.kind === "cluster";

  if (!current) return <span className="muted">…</span>;
  if (!connected && !onCluster) {
    return (
      <span data-testid="runs-on">
        This computer · <a href={settingsHref("computers")}>run on more computers…</a>
      </span>
    );
  }
  const queue = onCluster ? current.queue : (connected?.queue ?? "");
  const pick = (cluster: boolean) => {
    if (cluster === onCluster || choose.isPending) return;
    choose.mutate(cluster ? { kind: "cluster", queue: "" } : { kind: "local" }, {
      onSuccess: (now) =>
        toast(
          now.kind === "cluster"
            ? `It runs on other computers now: its next run goes to the work sent to “${now.queue}”.`
            : "It runs on this computer again from its next run.",
        ),
    });
  };
  return (
    <>
      <div className="runs-on-choices" role="radiogroup" aria-label="Where it runs" data-testid="runs-on">
        <label className="schedule-choice">
          <input
            type="radio"
            name={`runs-on-${workflowId}`}
            checked={!onCluster}
            disabled={choose.isPending}
            onChange={() => pick(false)}
            data-testid="runs-on-local"
          />
          <span>This computer</span>
        </label>
        <label className="schedule-choice">
          <input
            type="radio"
            name={`runs-on-${workflowId}`}
            checked={onCluster}
            disabled={choose.isPending}
            onChange={() => pick(true)}
            data-testid="runs-on-cluster"
          />
          <span>
            Other computers <span className="muted">({queue})</span>
          </span>
          {choose.isPending && <Spinner label="Moving it" />}
        </label>
      </div>
      {choose.isError && <InlineError lead="Where it runs wasn't changed." error={choose.error} />}
    </>
  );
}
