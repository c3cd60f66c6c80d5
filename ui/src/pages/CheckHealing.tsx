import { AlertIcon, CheckIcon } from "../components/icons";
import { InlineError } from "../components/InlineError";
import { Spinner } from "../components/Loading";
import { describeHeal, healTone } from "../eventText";
import { useSendTestAlert } from "../queries";

/** Runs a real heal on a harmless failure, so a person can see the whole loop work. */
export function CheckHealing() {
  const send = useSendTestAlert();
  return (
    <section className="card settings-section" aria-labelledby="check-title">
      <h2 className="section-title" id="check-title">Test the alerts</h2>
      <p className="muted">
        Healer raises a harmless test failure, takes it through the same steps as a failed script (there is nothing to
        repair in it), and sends you the notification you would get.
      </p>
      <div className="action-row">
        <button
          type="button"
          className="button button-primary"
          data-testid="send-test-alert"
          onClick={() => send.mutate()}
          disabled={send.isPending}
        >
          {send.isPending && <Spinner />}
          Send a test alert
        </button>
        {send.isPending && (
          <span className="muted" role="status">
            Healing the test failure…
          </span>
        )}
      </div>
      {send.isSuccess && (
        <div className={`result tone-${healTone(send.data)}`}>
          {healTone(send.data) === "bad" ? <AlertIcon size={18} /> : <CheckIcon size={18} />}
          <span data-testid="test-alert-result">{describeHeal(send.data)}</span>
        </div>
      )}
      {send.isError && <InlineError lead="The test alert failed." error={send.error} />}
    </section>
  );
}
