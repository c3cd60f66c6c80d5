import type { RunsOn } from "../../bindings";
import { useClusterStatus, useRunsOn, useSetRunsOn } from "../../clusterQueries";
import { InlineError } from "../../components/InlineError";
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
  return (
    <>
      <select
        className="input runs-on-select"
        aria-label="Where it runs"
        value={onCluster ? "cluster" : "local"}
        disabled={choose.isPending}
        onChange={(e) => choose.mutate(e.target.value === "cluster" ? { kind: "cluster", queue: "" } : { kind: "local" })}
        data-testid="runs-on"
      >
        <option value="local">This computer</option>
        <option value="cluster">Other computers ({queue})</option>
      </select>
      {choose.isError && <InlineError lead="Where it runs wasn't changed." error={choose.error} />}
    </>
  );
}
