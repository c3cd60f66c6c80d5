import { toApiError } from "../api";
import { setupHref } from "../usePage";
import { AlertIcon } from "./icons";

/** A failed command, said in the backend's own words (they already say what to do). */
export function InlineError({ error, lead, onRetry }: { error: unknown; lead?: string; onRetry?: () => void }) {
  const { message, code } = toApiError(error);
  return (
    <div className="inline-error" role="alert">
      <AlertIcon size={18} />
      <div className="inline-error-text">
        {lead && <strong>{lead} </strong>}
        {message}
        {code === "no_model_configured" && (
          <>
            {" "}
            <a href={setupHref} data-testid="error-open-setup">
              Set up a model
            </a>
          </>
        )}
      </div>
      {onRetry && (
        <button type="button" className="button button-quiet" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}
