import { useChooseSecretsFile, useKeepStatus } from "../queries";
import { InlineError } from "./InlineError";
import { Spinner } from "./Loading";

/**
 * Shown where a secret is typed on a computer with no keyring service, until the person
 * chooses Healer's own secrets file: what that file protects against and what not, the button
 * that chooses it, and the other way (an environment variable) in one sentence.
 */
export function SecretsFileChoice({
  what,
  onChosen,
  variable,
}: {
  what: "keys" | "secrets" | "the cluster's key";
  onChosen?: () => void;
  /** For a key: the environment variable that would be read instead (`undefined`: the field below names it; `null`: there is none). */
  variable?: string | null;
}) {
  const status = useKeepStatus();
  const choose = useChooseSecretsFile();
  if (!status.data || status.data.newValuesGoTo !== null) return null;
  return (
    <div className="result tone-warn secrets-file-choice" role="status" data-testid="secrets-file-choice">
      <p>
        <strong>This computer has no keyring service</strong>, where Healer would keep{" "}
        {what === "the cluster's key" ? what : `your ${what}`}. It can keep{" "}
        {what === "the cluster's key" ? "it" : "them"} in its own secrets file instead.
      </p>
      <p className="muted">{status.data.fileProtects}</p>
      {what === "keys" && variable !== null && (
        <p className="muted">
          Or leave this and put the key in the environment variable{" "}
          {variable === undefined ? "named below" : <code>{variable}</code>} where Healer starts, then restart Healer.
        </p>
      )}
      <div className="form-actions setup-actions-left">
        <button
          type="button"
          className="button button-primary"
          data-testid="secrets-file-accept"
          disabled={choose.isPending}
          onClick={() => choose.mutate(undefined, { onSuccess: () => onChosen?.() })}
        >
          {choose.isPending && <Spinner />}
          {what === "the cluster's key" ? "Keep it in Healer's own file" : "Keep them in Healer's own file"}
        </button>
      </div>
      {choose.error != null && <InlineError lead="That did not work." error={choose.error} />}
    </div>
  );
}

/** Where a value typed now is kept, for a field's hint. */
export function useKeptWhere(): string {
  const status = useKeepStatus();
  switch (status.data?.newValuesGoTo) {
    case "file":
      return "Kept in Healer's own secrets file, never in its database or logs.";
    case "keyring":
      return "Kept in this computer's keyring, never in Healer's files or logs.";
    default:
      return "Kept in this computer's keyring or Healer's own secrets file, never in its database or logs.";
  }
}
