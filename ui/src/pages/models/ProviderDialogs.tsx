import { useId, useRef, useState, type FormEvent } from "react";
import type { ProviderView } from "../../bindings";
import { Dialog } from "../../components/Dialog";
import { InlineError } from "../../components/InlineError";
import { Spinner } from "../../components/Loading";
import { SecretsFileChoice, useKeptWhere } from "../../components/SecretsFileChoice";
import { useForgetProviderKey, useRemoveProvider, useSetProviderKey } from "../../queries";

/** The variable the engine reads when the keyring has no key, if any. */
function keyVariable(view: ProviderView): string | null {
  const { key } = view;
  if (key.source === "env" || key.source === "missing") return key.var || null;
  return view.provider.key_env;
}

/**
 * Asks for a key and sends it once. The field is uncontrolled and emptied as the key is sent,
 * so the key lives only in the field, and only until Save.
 */
export function KeyDialog({ view, onDone, onCancel }: { view: ProviderView; onDone: () => void; onCancel: () => void }) {
  const { name } = view.provider;
  const field = useRef<HTMLInputElement>(null);
  // Whether there is anything to save; the key itself is not kept.
  const [typed, setTyped] = useState(false);
  const setKey = useSetProviderKey(name);
  const formId = useId();
  const inputId = useId();
  const variable = keyVariable(view);
  const replacing = view.key.source === "keyring" || view.key.source === "file";
  const keptWhere = useKeptWhere();

  function submit(event: FormEvent) {
    event.preventDefault();
    if (!field.current || !typed || setKey.isPending) return;
    setTyped(false);
    setKey.mutate(field.current, { onSuccess: onDone });
  }

  return (
    <Dialog
      title={replacing ? `Replace the key for “${name}”` : `Set the key for “${name}”`}
      onCancel={() => !setKey.isPending && onCancel()}
      actions={
        <>
          <button type="button" className="button" onClick={onCancel} disabled={setKey.isPending}>
            Cancel
          </button>
          <button
            type="submit"
            form={formId}
            className="button button-primary"
            disabled={!typed || setKey.isPending}
            data-testid="save-key"
          >
            {setKey.isPending && <Spinner />}
            Save key
          </button>
        </>
      }
    >
      <p>
        {keptWhere} Healer won't show it again.
        {variable && view.key.source === "env" && ` From then on it is used instead of ${variable}.`}
      </p>
      <form id={formId} className="key-form" onSubmit={submit} noValidate>
        <label className="field-label" htmlFor={inputId}>
          API key
        </label>
        <input
          id={inputId}
          ref={field}
          type="password"
          className="input mono"
          autoComplete="off"
          spellCheck={false}
          autoCapitalize="off"
          onChange={(e) => setTyped(e.target.value.trim() !== "")}
          disabled={setKey.isPending}
          data-autofocus
          data-testid="provider-key-input"
        />
      </form>
      <SecretsFileChoice what="keys" variable={variable ?? null} onChosen={() => setKey.reset()} />
      {setKey.isError && <InlineError lead="The key wasn't saved." error={setKey.error} />}
    </Dialog>
  );
}

export function ForgetKeyDialog({ view, onCancel }: { view: ProviderView; onCancel: () => void }) {
  const { name } = view.provider;
  const forget = useForgetProviderKey(name);
  const variable = keyVariable(view);
  return (
    <Dialog
      title={`Forget the key for “${name}”?`}
      tone="danger"
      onCancel={() => !forget.isPending && onCancel()}
      actions={
        <>
          <button type="button" className="button" onClick={onCancel} disabled={forget.isPending} data-autofocus>
            Cancel
          </button>
          <button
            type="button"
            className="button button-danger"
            disabled={forget.isPending}
            onClick={() => forget.mutate(undefined, { onSuccess: onCancel })}
            data-testid="confirm-forget-key"
          >
            {forget.isPending && <Spinner />}
            Forget key
          </button>
        </>
      }
    >
      <p>
        It is removed from {view.key.source === "file" ? "Healer's own secrets file" : "this computer's keyring"}.{" "}
        {variable ? `Healer then reads the key from ${variable}, if it is set.` : "Healer then calls it without a key."}
      </p>
      {forget.isError && <InlineError lead="The key couldn't be forgotten." error={forget.error} />}
    </Dialog>
  );
}

export function RemoveProviderDialog({ view, onCancel }: { view: ProviderView; onCancel: () => void }) {
  const { name } = view.provider;
  const remove = useRemoveProvider();
  return (
    <Dialog
      title={`Remove “${name}”?`}
      tone="danger"
      onCancel={() => !remove.isPending && onCancel()}
      actions={
        <>
          <button type="button" className="button" onClick={onCancel} disabled={remove.isPending} data-autofocus>
            Cancel
          </button>
          <button
            type="button"
            className="button button-danger"
            disabled={remove.isPending}
            onClick={() => remove.mutate(name)}
            data-testid="confirm-remove-provider"
          >
            {remove.isPending && <Spinner />}
            Remove provider
          </button>
        </>
      }
    >
      <p>
        Tiers that use it are cleared
        {view.key.source === "file"
          ? ", and its key is removed from Healer's own secrets file"
          : view.key.source === "keyring"
            ? ", and its key is removed from this computer's keyring"
            : ""}
        . Calls for those tiers go to another configured model, if there is one.
      </p>
      {remove.isError && <InlineError lead="It couldn't be removed." error={remove.error} />}
    </Dialog>
  );
}
