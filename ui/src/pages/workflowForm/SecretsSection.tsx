import { useId, useRef, useState, type KeyboardEvent } from "react";
import { XIcon } from "../../components/icons";
import { InlineError } from "../../components/InlineError";
import { Spinner } from "../../components/Loading";
import { SecretsFileChoice } from "../../components/SecretsFileChoice";
import { useRemoveWorkflowSecret, useSetWorkflowSecret, useWorkflowSecrets } from "../../queries";
import { relativeTime, useNow } from "../../time";

const keptIn = { keyring: "in this computer's keyring", file: "in Healer's own secrets file" } as const;

/**
 * A workflow's secrets: saved one at a time, apart from the form's Save (the value leaves the
 * window at once and is never shown again). The value field is uncontrolled and emptied as the
 * value is sent, so the secret lives only in the field until then.
 */
export function SecretsSection({ workflowId }: { workflowId: number }) {
  const secrets = useWorkflowSecrets(workflowId);
  const save = useSetWorkflowSecret(workflowId);
  const remove = useRemoveWorkflowSecret(workflowId);
  const [name, setName] = useState("");
  const [typed, setTyped] = useState(false);
  const valueField = useRef<HTMLInputElement>(null);
  const ids = { name: useId(), value: useId() };
  const now = useNow();

  function submit() {
    const field = valueField.current;
    if (!field || !name.trim() || !typed || save.isPending) return;
    const value = field.value;
    field.value = "";
    setTyped(false);
    save.mutate(
      { name: name.trim(), value },
      {
        onSuccess: () => setName(""),
        // Refused (a name the engine will not take, no place to keep it): what was pasted is not lost.
        onError: () => {
          if (valueField.current && !valueField.current.value) {
            valueField.current.value = value;
            setTyped(true);
          }
        },
      },
    );
  }

  function onKeyDown(event: KeyboardEvent) {
    // Inside the settings form: Enter saves the secret, not the form.
    if (event.key === "Enter") {
      event.preventDefault();
      submit();
    }
  }

  const list = secrets.data ?? [];
  return (
    <div className="secrets" data-testid="workflow-secrets">
      {list.length > 0 && (
        <ul className="secret-list">
          {list.map((secret) => (
            <li key={secret.name} className="secret-row" data-testid="secret-row" data-name={secret.name}>
              <code className="secret-name">{secret.name}</code>
              <span className="muted">
                Saved {relativeTime(secret.saved_at, now)}, kept {keptIn[secret.kept_in]}. Not shown again.
              </span>
              <button
                type="button"
                className="icon-button"
                aria-label={`Remove the secret ${secret.name}`}
                title="Remove"
                disabled={remove.isPending}
                onClick={() => remove.mutate(secret.name)}
                data-testid="secret-remove"
              >
                <XIcon size={16} />
              </button>
            </li>
          ))}
        </ul>
      )}
      <SecretsFileChoice what="secrets" onChosen={() => save.reset()} />
      <div className="secret-add">
        <div className="field">
          <label className="field-label" htmlFor={ids.name}>
            Name
          </label>
          <input
            id={ids.name}
            className="input mono"
            value={name}
            placeholder="API_TOKEN"
            spellCheck={false}
            autoCapitalize="off"
            autoComplete="off"
            onChange={(e) => setName(e.target.value)}
            onKeyDown={onKeyDown}
            data-testid="secret-name"
          />
        </div>
        <div className="field">
          <label className="field-label" htmlFor={ids.value}>
            Value
          </label>
          <input
            id={ids.value}
            ref={valueField}
            type="password"
            className="input mono"
            placeholder="Paste the secret"
            autoComplete="off"
            spellCheck={false}
            onChange={(e) => setTyped(e.target.value !== "")}
            onKeyDown={onKeyDown}
            data-testid="secret-value"
          />
        </div>
        <button
          type="button"
          className="button"
          disabled={!name.trim() || !typed || save.isPending}
          onClick={submit}
          data-testid="secret-save"
        >
          {save.isPending && <Spinner />}
          Save secret
        </button>
      </div>
      {save.isError && <InlineError lead="The secret wasn't saved." error={save.error} />}
      {remove.isError && <InlineError lead="The secret wasn't removed." error={remove.error} />}
      {secrets.isError && <InlineError lead="The secrets couldn't be listed." error={secrets.error} />}
    </div>
  );
}
