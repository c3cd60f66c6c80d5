import { useId, useState } from "react";
import type { ConnectionTest, ProviderView } from "../../bindings";
import { AlertIcon, CheckIcon, KeyIcon, PencilIcon, PlusIcon, TrashIcon } from "../../components/icons";
import { InlineError } from "../../components/InlineError";
import { Spinner } from "../../components/Loading";
import { capitalised, describePrice, keyTone, providerKindLabel } from "../../modelText";
import { useKeepStatus, useTestProvider } from "../../queries";
import { ForgetKeyDialog, KeyDialog, RemoveProviderDialog } from "./ProviderDialogs";
import { ProviderForm } from "./ProviderForm";

function Models({ models }: { models: string[] }) {
  return (
    <ul className="model-chips" aria-label="Models">
      {models.map((model) => (
        <li key={model} className="model-chip">
          {model}
        </li>
      ))}
    </ul>
  );
}

/** The models the provider listed, or its error word for word. */
function ConnectionResult({ test }: { test: ConnectionTest }) {
  if (test.ok) {
    const count = test.models.length;
    return (
      <div className="result tone-good connection-result" data-testid="connection-result" role="status">
        <CheckIcon size={18} />
        <div className="connection-text">
          <p>
            {count === 0
              ? "Connected, but it lists no models."
              : `Connected. It offers ${count === 1 ? "1 model" : `${count} models`}:`}
          </p>
          {count > 0 && <Models models={test.models} />}
        </div>
      </div>
    );
  }
  return (
    <div className="result tone-bad connection-result" data-testid="connection-result" role="alert">
      <AlertIcon size={18} />
      <div className="connection-text">
        <p className="connection-lead">The connection failed.</p>
        <p className="connection-error">{test.error?.message ?? "The provider gave no reason."}</p>
      </div>
    </div>
  );
}

type Open = null | "edit" | "key" | "forget" | "remove";

function ProviderRow({ view }: { view: ProviderView }) {
  const { provider, key } = view;
  const [open, setOpen] = useState<Open>(null);
  const test = useTestProvider(provider.name);
  const close = () => setOpen(null);
  const kept = key.source === "keyring" || key.source === "file";
  const canHaveKey = provider.kind !== "ollama" || kept || provider.key_env !== null;

  if (open === "edit") {
    return (
      <li className="provider-row editing" data-testid="provider-row" data-name={provider.name}>
        <ProviderForm
          provider={provider}
          takenNames={[]}
          onCancel={close}
          onDone={() => {
            close();
            test.reset();
          }}
        />
      </li>
    );
  }

  return (
    <li className="provider-row" data-testid="provider-row" data-name={provider.name}>
      <div className="provider-main">
        <div className="provider-text">
          <div className="provider-title">
            <span className="provider-name">{provider.title}</span>
            <span className="kind-chip">{providerKindLabel[provider.kind]}</span>
          </div>
          <code className="provider-url">{provider.base_url}</code>
          <div className={`key-line tone-${keyTone[key.source]}`}>
            <KeyIcon size={15} />
            <span className="key-text" data-testid="key-source">
              {capitalised(view.key_text)}
            </span>
            {canHaveKey && (
              <button type="button" className="link-button" onClick={() => setOpen("key")} data-testid="set-key">
                {kept ? "Replace key" : "Set key"}
              </button>
            )}
            {kept && (
              <button
                type="button"
                className="link-button link-button-danger"
                onClick={() => setOpen("forget")}
                data-testid="forget-key"
              >
                Forget key
              </button>
            )}
          </div>
          {provider.prices.length > 0 && (
            <p className="provider-prices">
              Per million tokens: {provider.prices.map(describePrice).join(" · ")}
            </p>
          )}
        </div>
        <div className="provider-actions">
          <button
            type="button"
            className="button button-small"
            onClick={() => test.mutate()}
            disabled={test.isPending}
            data-testid="test-connection"
          >
            {test.isPending && <Spinner />}
            {test.isPending ? "Testing…" : "Test connection"}
          </button>
          <button type="button" className="button button-small" onClick={() => setOpen("edit")} data-testid="edit-provider">
            <PencilIcon size={15} />
            Edit
          </button>
          <button
            type="button"
            className="icon-button"
            onClick={() => setOpen("remove")}
            aria-label={`Remove ${provider.title}`}
            title="Remove"
            data-testid="remove-provider"
          >
            <TrashIcon size={16} />
          </button>
        </div>
      </div>
      {test.isSuccess && <ConnectionResult test={test.data} />}
      {test.isError && (
        <div data-testid="connection-result">
          <InlineError lead="The connection couldn't be tested." error={test.error} />
        </div>
      )}
      {open === "key" && <KeyDialog view={view} onDone={close} onCancel={close} />}
      {open === "forget" && <ForgetKeyDialog view={view} onCancel={close} />}
      {open === "remove" && <RemoveProviderDialog view={view} onCancel={close} />}
    </li>
  );
}

export function ProvidersCard({ providers }: { providers: ProviderView[] }) {
  const [adding, setAdding] = useState(false);
  const place = useKeepStatus().data?.newValuesGoTo;
  const keptWhere =
    place === "file"
      ? "A key you enter is kept in Healer's own secrets file (this computer has no keyring service)."
      : place === "keyring"
        ? "A key you enter is kept in this computer's keyring."
        : "This computer has no keyring service: when you enter a key, Healer asks where to keep it.";
  const titleId = useId();
  return (
    <section className="card settings-section" aria-labelledby={titleId} data-testid="providers">
      <div className="section-head">
        <div className="section-head-text">
          <h2 className="section-title" id={titleId}>
            Providers
          </h2>
          <p className="muted">The services Healer asks. {keptWhere}</p>
        </div>
        <button
          type="button"
          className="button button-small"
          onClick={() => setAdding(true)}
          disabled={adding}
          data-testid="add-provider"
        >
          <PlusIcon size={15} />
          Add provider
        </button>
      </div>
      {adding && (
        <div className="provider-new">
          <ProviderForm
            takenNames={providers.map((p) => p.provider.name)}
            onDone={() => setAdding(false)}
            onCancel={() => setAdding(false)}
          />
        </div>
      )}
      {providers.length > 0 ? (
        <ul className="provider-list">
          {providers.map((view) => (
            <ProviderRow key={view.provider.name} view={view} />
          ))}
        </ul>
      ) : (
        !adding && (
          <p className="empty-note" data-testid="no-providers">
            No providers yet. Add one, or use Ollama if it runs on this computer.
          </p>
        )
      )}
    </section>
  );
}
