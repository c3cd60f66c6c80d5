import { useId } from "react";
import type { LocalServerStatus, ProviderView } from "../../bindings";
import { CheckIcon, RefreshIcon } from "../../components/icons";
import { InlineError } from "../../components/InlineError";
import { Spinner } from "../../components/Loading";
import { StatusBadge } from "../../components/StatusBadge";
import { useLlamaCpp, useOllama, useSaveProvider } from "../../queries";

function sameUrl(a: string, b: string): boolean {
  const bare = (url: string) => url.trim().replace(/\/+$/, "");
  return bare(a) === bare(b);
}

/** The provider that already stands for this Ollama, if any. */
export function ollamaProvider(status: LocalServerStatus, providers: ProviderView[]): ProviderView | undefined {
  return providers.find((p) => p.provider.kind === "ollama" && sameUrl(p.provider.base_url, status.base_url));
}

/** "ollama", or "ollama-2" when that name is taken by another provider. */
function freeName(providers: ProviderView[]): string {
  const names = new Set(providers.map((p) => p.provider.name));
  let name = "ollama";
  for (let n = 2; names.has(name); n++) name = `ollama-${n}`;
  return name;
}

function Found({ status, providers }: { status: LocalServerStatus; providers: ProviderView[] }) {
  const save = useSaveProvider();
  const added = ollamaProvider(status, providers);
  const count = status.models.length;
  return (
    <>
      <div className="ollama-line">
        <StatusBadge tone="good" label="Running" />
        <span>
          Ollama answers at <code className="inline-code">{status.base_url}</code>
          {count === 0 ? ", but has no models yet." : ` with ${count === 1 ? "1 model" : `${count} models`}.`}
        </span>
      </div>
      {count > 0 ? (
        <ul className="model-chips" aria-label="Local models">
          {status.models.map((model) => (
            <li key={model} className="model-chip">
              {model}
            </li>
          ))}
        </ul>
      ) : (
        <p className="field-hint">
          Pull one in a terminal, for example <code className="inline-code nowrap">ollama pull qwen2.5-coder</code>, then
          look again.
        </p>
      )}
      {added ? (
        <p className="ollama-added" data-testid="ollama-added">
          <CheckIcon size={16} />
          In use as the provider “{added.provider.title}”. Choose its models under Tiers.
        </p>
      ) : (
        <div className="action-row">
          <button
            type="button"
            className="button button-primary"
            onClick={() => save.mutate({ name: freeName(providers), kind: "ollama", base_url: status.base_url, key_env: null, prices: [] })}
            disabled={save.isPending}
            data-testid="use-ollama"
          >
            {save.isPending && <Spinner />}
            Use Ollama
          </button>
          <span className="muted">Adds it as a provider. It needs no key, and nothing leaves this computer.</span>
        </div>
      )}
      {save.isError && <InlineError lead="Ollama couldn't be added." error={save.error} />}
    </>
  );
}

/** The provider that already stands for this llama.cpp server, if any. */
function llamaCppProvider(status: LocalServerStatus, providers: ProviderView[]): ProviderView | undefined {
  return providers.find(
    (p) => p.provider.kind === "openai_compatible" && sameUrl(p.provider.base_url.replace(/\/v1\/?$/, ""), status.base_url),
  );
}

/** "llama-cpp", or "llama-cpp-2" when that name is taken by another provider. */
function freeLlamaName(providers: ProviderView[]): string {
  const names = new Set(providers.map((p) => p.provider.name));
  let name = "llama-cpp";
  for (let n = 2; names.has(name); n++) name = `llama-cpp-${n}`;
  return name;
}

/** llama.cpp's own server, running here: its model, and a way to use it. */
function LlamaCppFound({ status, providers }: { status: LocalServerStatus; providers: ProviderView[] }) {
  const save = useSaveProvider();
  const added = llamaCppProvider(status, providers);
  return (
    <div className="local-server" data-testid="llama-cpp-status">
      <div className="ollama-line">
        <StatusBadge tone="good" label="Running" />
        <span>
          llama.cpp's server answers at <code className="inline-code">{status.base_url}</code>
          {status.models.length === 0 ? "." : status.models.length === 1 ? " with 1 model." : ` with ${status.models.length} models.`}
        </span>
      </div>
      {status.models.length > 0 && (
        <ul className="model-chips" aria-label="llama.cpp models">
          {status.models.map((model) => (
            <li key={model} className="model-chip">
              {model}
            </li>
          ))}
        </ul>
      )}
      {added ? (
        <p className="ollama-added" data-testid="llama-cpp-added">
          <CheckIcon size={16} />
          In use as the provider “{added.provider.title}”. Choose its model under Tiers.
        </p>
      ) : (
        <div className="action-row">
          <button
            type="button"
            className="button button-primary"
            onClick={() =>
              save.mutate({
                name: freeLlamaName(providers),
                kind: "openai_compatible",
                base_url: `${status.base_url.replace(/\/+$/, "")}/v1`,
                key_env: null,
                prices: [],
              })
            }
            disabled={save.isPending}
            data-testid="use-llama-cpp"
          >
            {save.isPending && <Spinner />}
            Use llama.cpp
          </button>
          <span className="muted">Adds it as a provider. It needs no key, and nothing leaves this computer.</span>
        </div>
      )}
      {save.isError && <InlineError lead="llama.cpp's server couldn't be added." error={save.error} />}
    </div>
  );
}

/** No Ollama here: said quietly, as a possibility (nobody asked for it), with no error text. */
function NotFound() {
  return (
    <p className="field-hint" data-testid="ollama-absent">
      Ollama is not running on this computer. To run models here without a key, install Ollama from ollama.com and pull
      a model, for example <code className="inline-code nowrap">ollama pull qwen2.5-coder</code>, then look again.
    </p>
  );
}

/** A local Ollama, found or not, and a way to use it. */
export function LocalModelsCard({ providers }: { providers: ProviderView[] }) {
  const ollama = useOllama();
  const llamaCpp = useLlamaCpp();
  const titleId = useId();
  const looking = ollama.isFetching || llamaCpp.isFetching;
  const status = ollama.data;
  return (
    <section
      className="card settings-section"
      aria-labelledby={titleId}
      data-testid="ollama-status"
      data-state={status ? (status.running ? "running" : "not-found") : "unknown"}
    >
      <div className="section-head">
        <div className="section-head-text">
          <h2 className="section-title" id={titleId}>
            Local models
          </h2>
          <p className="muted">
            A model that runs on this computer, through Ollama or llama.cpp's server, needs no key and no account.
          </p>
        </div>
        <button
          type="button"
          className="button button-small"
          onClick={() => {
            void ollama.refetch();
            void llamaCpp.refetch();
          }}
          disabled={looking}
          data-testid="detect-ollama"
        >
          {looking ? <Spinner /> : <RefreshIcon size={15} />}
          Look again
        </button>
      </div>
      {ollama.isPending && (
        <p className="muted" role="status">
          Looking for Ollama…
        </p>
      )}
      {ollama.isError && !looking && <InlineError lead="Healer couldn't look for Ollama." error={ollama.error} />}
      {status && (status.running ? <Found status={status} providers={providers} /> : <NotFound />)}
      {llamaCpp.data?.running && <LlamaCppFound status={llamaCpp.data} providers={providers} />}
    </section>
  );
}
