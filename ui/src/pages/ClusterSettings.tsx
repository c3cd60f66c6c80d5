import { useEffect, useId, useState, type FormEvent } from "react";
import type { ClusterSettings as Settings, ClusterStatus, QueueWorkers } from "../bindings";
import { toApiError } from "../api";
import { useClusterStatus, useConnectCluster, useDisconnectCluster, useExportClusterKey, useTestCluster } from "../clusterQueries";
import { Dialog } from "../components/Dialog";
import { AlertIcon, CheckIcon } from "../components/icons";
import { InlineError } from "../components/InlineError";
import { CopyText } from "../components/CopyText";
import { SecretsFileChoice } from "../components/SecretsFileChoice";
import { pickKeyFile } from "../folderPicker";
import { Spinner } from "../components/Loading";
import { RelativeTime } from "../components/RelativeTime";
import { useNow } from "../time";
import { toast } from "../toasts";
import { plural } from "../workflowText";
import { WorkerGateway } from "./WorkerGateway";

const blank: Settings = { address: "", namespace: "default", queue: "healer", tls: false, api_key_env: null };
/** The line that starts a worker for this connection on another computer. */
function workerCommand(settings: Settings): string {
  const parts = ["healer worker", `--temporal ${settings.address}`, `--queue ${settings.queue}`];
  if (settings.namespace !== "default") parts.push(`--namespace ${settings.namespace}`);
  if (settings.tls) parts.push("--tls");
  if (settings.api_key_env) parts.push(`--api-key-env ${settings.api_key_env}`);
  parts.push("--key-file ~/healer-cluster.key");
  return parts.join(" ");
}

/** What the person typed, kept while they look at another Settings tab and come back. */
let draft: Settings = blank;

/** How long a worker may be silent before it is shown as stopped (it polls every few seconds). */
const STOPPED_AFTER_MS = 90_000;

/** The computers taking work from one queue, as the cluster last saw them. */
function QueueList({ queue, now }: { queue: QueueWorkers; now: number }) {
  return (
    <div className="cluster-queue" data-testid="cluster-queue" data-queue={queue.queue}>
      <h3 className="cluster-queue-title">
        Work sent to “{queue.queue}”
      </h3>
      {queue.workers.length === 0 ? (
        <p className="muted" data-testid="no-workers">
          No computer is taking this work yet. Runs sent here wait until one does.
        </p>
      ) : (
        <ul className="cluster-workers">
          {queue.workers.map((worker) => {
            // A worker asks for work every few seconds while it runs; one silent for longer
            // has stopped (Temporal keeps listing it for a few minutes).
            const stopped = worker.last_seen !== null && now - Date.parse(worker.last_seen) > STOPPED_AFTER_MS;
            return (
              <li
                key={worker.name}
                className="cluster-worker"
                data-testid="cluster-worker"
                data-state={stopped ? "stopped" : "taking-work"}
              >
                <span className="cluster-worker-name">{worker.name}</span>
                {worker.last_seen && (
                  <span className={stopped ? "tone-warn" : "muted"}>
                    {stopped ? "stopped: it last asked for work " : "asked for work "}
                    <RelativeTime iso={worker.last_seen} now={now} />
                  </span>
                )}
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}

function ConnectForm() {
  const [settings, setSettings] = useState<Settings>(draft);
  useEffect(() => {
    draft = settings;
  }, [settings]);
  const test = useTestCluster();
  const connect = useConnectCluster();
  // The cluster answered, but its key has nowhere to be kept yet: asked right here.
  const needsPlace = connect.isError && toApiError(connect.error).code === "no_keyring";
  const testError = test.isError ? toApiError(test.error) : null;
  const ids = { address: useId(), namespace: useId(), queue: useId(), tls: useId(), key: useId() };
  const set = (change: Partial<Settings>) => {
    setSettings((s) => ({ ...s, ...change }));
    test.reset();
    connect.reset();
  };
  const ready = settings.address.trim() !== "" && !connect.isPending;

  function submit(event: FormEvent) {
    event.preventDefault();
    if (!ready) return;
    connect.mutate(settings, {
      onSuccess: () => {
        draft = blank;
        toast("Connected. Choose “the cluster” on a workflow's page to run it there.");
      },
    });
  }

  return (
    <form className="cluster-form" onSubmit={submit} data-testid="cluster-form">
      <div className="field">
        <label className="field-label" htmlFor={ids.address}>
          Address
        </label>
        <input
          id={ids.address}
          className="input mono"
          value={settings.address}
          placeholder="temporal.example.com:7233"
          spellCheck={false}
          autoCapitalize="off"
          onChange={(e) => set({ address: e.target.value })}
          data-testid="cluster-address"
        />
        <span className="field-hint">Where your team's Temporal server answers, or your Temporal Cloud namespace's address.</span>
      </div>
      <div className="cluster-row">
        <div className="field">
          <label className="field-label" htmlFor={ids.namespace}>
            Namespace
          </label>
          <input
            id={ids.namespace}
            className="input mono"
            value={settings.namespace}
            spellCheck={false}
            autoCapitalize="off"
            onChange={(e) => set({ namespace: e.target.value })}
            data-testid="cluster-namespace"
          />
        </div>
        <div className="field">
          <label className="field-label" htmlFor={ids.queue}>
            Work goes to
          </label>
          <input
            id={ids.queue}
            className="input mono"
            value={settings.queue}
            spellCheck={false}
            autoCapitalize="off"
            onChange={(e) => set({ queue: e.target.value })}
            data-testid="cluster-queue-name"
          />
        </div>
      </div>
      <span className="field-hint">
        The name the other computers take work from (a task queue). One name for all of them is fine; give a group of
        computers its own name when only they have what some scripts need.
      </span>
      <label className="toggle-row" htmlFor={ids.tls}>
        <input id={ids.tls} type="checkbox" checked={settings.tls} onChange={(e) => set({ tls: e.target.checked })} data-testid="cluster-tls" />
        <span className="toggle-text">
          <span className="toggle-title">Connect securely (TLS)</span>
          <span className="muted">Temporal Cloud and most shared servers need it.</span>
        </span>
      </label>
      <div className="field">
        <label className="field-label" htmlFor={ids.key}>
          API key variable (optional)
        </label>
        <input
          id={ids.key}
          className="input mono"
          value={settings.api_key_env ?? ""}
          placeholder="TEMPORAL_API_KEY"
          spellCheck={false}
          autoCapitalize="off"
          onChange={(e) => set({ api_key_env: e.target.value.trim() === "" ? null : e.target.value.trim() })}
          data-testid="cluster-api-key-env"
        />
        <span className="field-hint">
          For Temporal Cloud: the name of the environment variable that holds your API key. Healer reads the key from it and
          never stores it.
        </span>
      </div>
      <div className="action-row">
        <button
          type="button"
          className="button"
          disabled={!ready || test.isPending}
          onClick={() => test.mutate(settings)}
          data-testid="cluster-test"
        >
          {test.isPending && <Spinner />}
          Test
        </button>
        <button type="submit" className="button button-primary" disabled={!ready} data-testid="cluster-connect">
          {connect.isPending && <Spinner />}
          Connect
        </button>
      </div>
      {test.isSuccess && (
        <div className="result tone-good" data-testid="cluster-test-result">
          <CheckIcon size={16} />
          <span>
            The cluster answers.{" "}
            {test.data.workers.length === 0
              ? "No computer is taking work from it yet."
              : `${plural(test.data.workers.length, "computer")} ready to take work: ${test.data.workers.map((w) => w.name).join(", ")}.`}
          </span>
        </div>
      )}
      {testError && (
        <InlineError lead={testError.code === "cluster" ? "The cluster didn't answer." : "Not tested."} error={test.error} />
      )}
      {needsPlace ? (
        <>
          <p className="field-hint" data-testid="cluster-key-needs-place">
            The cluster answers. Healer makes a key that seals what it sends there, and needs a place to keep it.
          </p>
          <SecretsFileChoice what="the cluster's key" onChosen={() => connect.mutate(settings)} />
        </>
      ) : (
        connect.isError && <InlineError lead="Not connected." error={connect.error} />
      )}
    </form>
  );
}

function DisconnectDialog({ onCancel }: { onCancel: () => void }) {
  const disconnect = useDisconnectCluster();
  return (
    <Dialog
      title="Stop using the cluster?"
      onCancel={() => !disconnect.isPending && onCancel()}
      actions={
        <>
          <button type="button" className="button" onClick={onCancel} disabled={disconnect.isPending} data-autofocus>
            Cancel
          </button>
          <button
            type="button"
            className="button button-primary"
            data-testid="confirm-disconnect"
            disabled={disconnect.isPending}
            onClick={() =>
              disconnect.mutate(undefined, {
                onSuccess: (back) => {
                  toast(
                    back.length === 0
                      ? "Disconnected. Everything runs on this computer."
                      : `Disconnected. ${plural(back.length, "workflow")} run on this computer again.`,
                  );
                  onCancel();
                },
              })
            }
          >
            {disconnect.isPending && <Spinner />}
            Stop using it
          </button>
        </>
      }
    >
      <p>
        Every workflow comes back to this computer, and Healer takes the schedules it put on the cluster off so they stop
        starting runs. A run in progress there finishes there.
      </p>
      {disconnect.isError && <InlineError lead="Still connected." error={disconnect.error} />}
    </Dialog>
  );
}

function Connected({ status }: { status: ClusterStatus & { settings: Settings } }) {
  const now = useNow();
  const exportKey = useExportClusterKey();
  const [leaving, setLeaving] = useState(false);
  const { settings } = status;
  const onIt = `${plural(status.workflows_on_cluster, "workflow")} run${status.workflows_on_cluster === 1 ? "s" : ""} there`;
  return (
    <div className="cluster-connected" data-testid="cluster-connected">
      {status.reachable ? (
        <div className="result tone-good" data-testid="cluster-reachable">
          <CheckIcon size={16} />
          <span>
            Connected to <span className="mono">{settings.address}</span>
            {settings.namespace !== "default" && (
              <>
                {" "}
                (namespace <span className="mono">{settings.namespace}</span>)
              </>
            )}
            . {onIt}.
          </span>
        </div>
      ) : (
        <div className="result tone-bad" data-testid="cluster-unreachable">
          <AlertIcon size={16} />
          <span>
            Connected to <span className="mono">{settings.address}</span>, but it isn't answering right now:{" "}
            {status.problem ?? "no reason given"}. Runs sent there wait until it answers; {onIt}.
          </span>
        </div>
      )}
      {status.queues.map((queue) => (
        <QueueList key={queue.queue} queue={queue} now={now} />
      ))}
      <div className="cluster-key">
        <p className="muted">
          Each computer that takes work runs Healer's worker with the cluster key. Everything Healer sends to the cluster is
          encrypted with that key, so the cluster itself can't read your scripts, their output or their secrets.
        </p>
        <details className="worker-steps" data-testid="worker-steps">
          <summary>How to start a worker on another computer</summary>
          <ol>
            <li>Save the key for workers (below) and copy the file to that computer. Keep it private: it opens everything sent to the cluster.</li>
            <li>Install Healer there, the same way as here.</li>
            <li>
              On that computer, start the worker with this line, naming where you put the key:
              <CopyText
                label="Type"
                text={workerCommand(settings)}
                testId="worker-command"
              />
            </li>
            <li>Within a few seconds it shows above, under the work it takes.</li>
          </ol>
        </details>
        <div className="action-row">
          <button
            type="button"
            className="button"
            disabled={exportKey.isPending}
            onClick={() => {
              void pickKeyFile().then((path) => path !== null && exportKey.mutate(path));
            }}
            data-testid="cluster-export-key"
          >
            {exportKey.isPending && <Spinner />}
            Save the key for workers
          </button>
          <span className="actions-spacer" />
          <button type="button" className="button button-quiet-danger" onClick={() => setLeaving(true)} data-testid="cluster-disconnect">
            Stop using the cluster
          </button>
        </div>
        {exportKey.isSuccess && (
          <p className="result tone-good" role="status" data-testid="cluster-key-saved">
            The key is saved as <span className="mono">{exportKey.data}</span>. Copy it to each computer that takes work,
            and keep it private.
          </p>
        )}
        {exportKey.isError && <InlineError lead="The key wasn't saved." error={exportKey.error} />}
      </div>
      <WorkerGateway />
      {leaving && <DisconnectDialog onCancel={() => setLeaving(false)} />}
    </div>
  );
}

/** Settings → "Run on more computers": the connection to a Temporal cluster and its workers. */
export function ClusterSettings() {
  const status = useClusterStatus({ poll: true });
  const id = useId();
  const settings = status.data?.settings ?? null;
  return (
    <section className="card settings-section" aria-labelledby={`${id}-title`} data-testid="cluster-settings">
      <h2 className="section-title" id={`${id}-title`}>
        Run on more computers
      </h2>
      <p className="muted">
        Healer can hand workflows to a Temporal cluster, so that they run on other computers — on schedule even while this
        one is closed or asleep. Healer still keeps every run, repairs what fails, and asks you here. A workflow you don't
        move keeps running on this computer.
      </p>
      {status.isPending && <Spinner label="Asking the cluster" />}
      {status.isError && <InlineError lead="Healer couldn't say how the cluster is." error={status.error} onRetry={() => void status.refetch()} />}
      {status.data && (settings ? <Connected status={{ ...status.data, settings }} /> : <ConnectForm />)}
    </section>
  );
}
