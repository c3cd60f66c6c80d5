import { useState, type FormEvent } from "react";
import { useForgetWorkerToken, useMakeWorkerToken, useOpenGatewayToWorkers, useWorkerGateway } from "../clusterQueries";
import { CopyText } from "../components/CopyText";
import { InlineError } from "../components/InlineError";
import { Spinner } from "../components/Loading";
import { RelativeTime } from "../components/RelativeTime";
import { useNow } from "../time";

/**
 * Settings → "Run on more computers" → agents on workers: the address workers reach this
 * computer's model gateway on, and a token per worker. An agent on a worker never holds a model
 * key: it asks the model through Healer here.
 */
export function WorkerGateway() {
  const gateway = useWorkerGateway();
  const open = useOpenGatewayToWorkers();
  const make = useMakeWorkerToken();
  const forget = useForgetWorkerToken();
  const [listen, setListen] = useState<string | null>(null);
  const [name, setName] = useState("");
  const now = useNow();
  const shownListen = listen ?? gateway.data?.listen ?? "";

  function save(e: FormEvent) {
    e.preventDefault();
    open.mutate(shownListen.trim(), { onSuccess: () => setListen(null) });
  }

  function newToken(e: FormEvent) {
    e.preventDefault();
    make.mutate(name.trim());
  }

  return (
    <div className="worker-gateway" data-testid="worker-gateway">
      <h3 className="cluster-queue-title">Coding agents on workers</h3>
      <p className="muted">
        A project can send its tasks to the workers. The agent there never gets a model key: it asks the model through Healer on
        this computer, which workers reach at the address below, each with a token of its own.
      </p>
      {gateway.isError && <InlineError lead="Healer couldn't read these settings." error={gateway.error} />}
      <form className="field" onSubmit={save}>
        <label className="field-label" htmlFor="worker-gateway-listen">
          Address workers reach this computer on
        </label>
        <div className="input-with-unit">
          <input
            id="worker-gateway-listen"
            className="input mono"
            value={shownListen}
            onChange={(e) => setListen(e.target.value)}
            placeholder="0.0.0.0:7480"
            spellCheck={false}
            data-testid="worker-gateway-listen"
          />
          <button type="submit" className="button" disabled={open.isPending || shownListen.trim() === ""} data-testid="worker-gateway-save">
            {open.isPending && <Spinner />}
            Save
          </button>
        </div>
        <p className="field-hint">An IP address of this computer and a free port. 0.0.0.0 listens on every network.</p>
        {open.isError && <InlineError lead="The address wasn't saved." error={open.error} />}
      </form>
      <form className="field" onSubmit={newToken}>
        <label className="field-label" htmlFor="worker-token-name">
          Give a worker its token
        </label>
        <div className="input-with-unit">
          <input
            id="worker-token-name"
            className="input"
            value={name}
            onChange={(e) => setName(e.target.value)}
            placeholder="rack-2"
            data-testid="worker-token-name"
          />
          <button type="submit" className="button" disabled={make.isPending || name.trim() === ""} data-testid="worker-token-make">
            {make.isPending && <Spinner />}
            Make a token
          </button>
        </div>
        {make.isError && <InlineError lead="No token was made." error={make.error} />}
      </form>
      {make.isSuccess && (
        <div className="result worker-token-made" role="status" data-testid="worker-token-made">
          <p>
            Copy this token now: Healer keeps only a fingerprint of it and can't show it again. On that worker, put it in the
            HEALER_GATEWAY_TOKEN variable.
          </p>
          <CopyText label="Token" text={make.data} testId="worker-token" />
        </div>
      )}
      {gateway.data && gateway.data.workers.length > 0 && (
        <ul className="cluster-workers" data-testid="gateway-workers">
          {gateway.data.workers.map((worker) => (
            <li key={worker.name} className="cluster-worker" data-testid="gateway-worker">
              <span className="cluster-worker-name">{worker.name}</span>
              <span className="muted">
                token made <RelativeTime iso={worker.made_at} now={now} />
              </span>
              <span className="actions-spacer" />
              <button
                type="button"
                className="button button-small button-quiet-danger"
                disabled={forget.isPending}
                onClick={() => forget.mutate(worker.name)}
                data-testid="gateway-worker-forget"
              >
                Take the token back
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
