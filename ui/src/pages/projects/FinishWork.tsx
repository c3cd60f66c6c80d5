// A task's work waiting on its own branch: accept it into the main branch (the main branch's new
// changes brought in and the checks run again first when it moved), or discard it (a copy is
// kept). A conflict opens a dialog that names the files and offers the agent to resolve it.
import { useState } from "react";
import type { AcceptHow, Acceptance, PullRequestRecord, Unaccepted } from "../../bindings";
import { asSentence } from "../../api";
import { CopyText } from "../../components/CopyText";
import { Dialog } from "../../components/Dialog";
import { InlineError } from "../../components/InlineError";
import { SecretsFileChoice } from "../../components/SecretsFileChoice";
import { Spinner } from "../../components/Loading";
import { useAcceptTask, useDiscardTaskWork, useOpenPullRequest, useResolveConflict } from "../../projectQueries";
import { acceptHowWords } from "../../projectText";
import { toast } from "../../toasts";

const hostNames: Record<string, string> = { github: "GitHub", gitlab: "GitLab", forgejo: "Forgejo" };

/** What the pull request's checks said when Healer last asked the host, in a sentence. */
export function checksWords(pr: PullRequestRecord): string {
  if (pr.state !== "open") return pr.state === "merged" ? "It was merged on the host." : "It was closed on the host.";
  switch (pr.checks) {
    case "passing":
      return `Its checks pass: ${pr.checks_said || "all passed"}.`;
    case "failing":
      return pr.healed_commit === pr.pushed_commit
        ? `Its checks fail: ${pr.checks_said}. Healer sent the agent the check's log and pushes its fix once it passes the project's checks here.`
        : `Its checks fail: ${pr.checks_said}.`;
    default:
      return pr.checks_said ? `Its checks: ${pr.checks_said}.` : "Healer looks at its checks every minute.";
  }
}

/** Push the branch and open a pull request. The host's token, and for a host whose kind its
 * address does not tell the address of its API, are asked for right here the first time. */
function PullRequest({ projectId, taskId, existing }: { projectId: number; taskId: string; existing: PullRequestRecord | null }) {
  const open = useOpenPullRequest(projectId, taskId);
  const [token, setToken] = useState("");
  const [apiUrl, setApiUrl] = useState("");
  // The API address given once is sent with every try after it.
  const [givenApi, setGivenApi] = useState<string | null>(null);
  const needsToken = open.isError && (/no token/i.test(open.error.message) || (open.error as { code?: string }).code === "no_keyring");
  const needsApi = open.isError && /cannot tell whether/i.test(open.error.message);
  const host = existing ? (hostNames[existing.host] ?? existing.host) : null;
  const submit = (next: { token: string | null; apiUrl: string | null }) =>
    open.mutate(next, {
      onSuccess: () => {
        setToken("");
      },
    });
  return (
    <div className="finish-pr" data-testid="pull-request">
      {existing && (
        <CopyText
          label={existing.host === "gitlab" ? `Merge request ${existing.number} on ${host} (${existing.state})` : `Pull request ${existing.number} on ${host} (${existing.state})`}
          text={existing.url}
          testId="pull-request-url"
        />
      )}
      {existing && (
        <p className="muted" data-testid="pull-request-checks" data-checks={existing.checks}>
          {checksWords(existing)}
        </p>
      )}
      <button
        type="button"
        className="button"
        disabled={open.isPending}
        onClick={() => submit({ token: null, apiUrl: givenApi })}
        data-testid="open-pull-request"
      >
        {open.isPending && <Spinner />}
        {existing ? "Push the latest work" : "Push and open a pull request"}
      </button>
      {needsApi ? (
        <form
          className="finish-token"
          onSubmit={(e) => {
            e.preventDefault();
            const given = apiUrl.trim();
            if (!given) return;
            setGivenApi(given);
            submit({ token: null, apiUrl: given });
          }}
        >
          <p>Healer cannot tell from the repository&apos;s address whether its host runs GitHub, GitLab or Forgejo. Give the address of the host&apos;s API.</p>
          <label>
            <span>The host&apos;s API address</span>
            <input
              type="url"
              value={apiUrl}
              onChange={(e) => setApiUrl(e.target.value)}
              placeholder="https://git.example.com/api/v4"
              autoComplete="off"
              data-testid="host-api-url"
            />
          </label>
          <p className="field-hint">GitLab: …/api/v4 · Forgejo or Gitea: …/api/v1 · GitHub Enterprise: …/api/v3</p>
          <button type="submit" className="button button-primary" disabled={!apiUrl.trim() || open.isPending}>
            Open the pull request
          </button>
        </form>
      ) : needsToken ? (
        <form
          className="finish-token"
          onSubmit={(e) => {
            e.preventDefault();
            if (token.trim()) submit({ token: token.trim(), apiUrl: givenApi });
          }}
        >
          <p>{asSentence(open.error.message)}</p>
          <SecretsFileChoice what="secrets" variable={null} />
          <label>
            <span>The host&apos;s token</span>
            <input type="password" value={token} onChange={(e) => setToken(e.target.value)} autoComplete="off" data-testid="host-token" />
          </label>
          <button type="submit" className="button button-primary" disabled={!token.trim() || open.isPending}>
            Keep it and open the pull request
          </button>
        </form>
      ) : (
        open.isError && <InlineError lead="The pull request was not opened." error={open.error} />
      )}
    </div>
  );
}

export function FinishWork({
  projectId,
  taskId,
  waiting,
  pullRequest,
}: {
  projectId: number;
  taskId: string;
  waiting: Unaccepted;
  pullRequest: PullRequestRecord | null;
}) {
  const accept = useAcceptTask(projectId, taskId);
  const resolve = useResolveConflict(projectId, taskId);
  const discard = useDiscardTaskWork(projectId, taskId);
  const [how, setHow] = useState<AcceptHow>(waiting.how);
  const [outcome, setOutcome] = useState<Acceptance | null>(null);
  const [confirmDiscard, setConfirmDiscard] = useState(false);
  const main = waiting.main_branch;
  const busy = accept.isPending || resolve.isPending || discard.isPending;

  function onAccept() {
    setOutcome(null);
    // The card goes once the work is accepted (the task refreshes), so what it came to is said
    // from the promise, which settles whether or not the card is still there.
    accept
      .mutateAsync(how)
      .then((result) => {
        if (result.kind === "accepted") toast(result.said);
        else setOutcome(result);
      })
      .catch(() => {});
  }

  return (
    <div className="card finish-work" data-testid="finish-work">
      <h2 className="section-title">The work is ready to go into {main}</h2>
      <p>
        The agent&apos;s work passed its checks and waits on its own branch; {main} does not have it yet.
        {waiting.main_moved &&
          ` ${main} has changed since the agent started: accepting brings those changes in first and runs the checks again.`}
      </p>
      <div className="finish-actions">
        <label className="finish-how">
          <span>How</span>
          <select value={how} onChange={(e) => setHow(e.target.value as AcceptHow)} disabled={busy} data-testid="accept-how">
            {(Object.keys(acceptHowWords) as AcceptHow[]).map((h) => (
              <option key={h} value={h}>
                {acceptHowWords[h]}
              </option>
            ))}
          </select>
        </label>
        <button type="button" className="button button-primary" disabled={busy} onClick={onAccept} data-testid="accept-work">
          {accept.isPending && <Spinner />}
          {accept.isPending && waiting.main_moved ? "Bringing in the changes and checking…" : `Accept into ${main}`}
        </button>
        <button type="button" className="button" disabled={busy} onClick={() => setConfirmDiscard(true)} data-testid="discard-work">
          Discard the work…
        </button>
      </div>
      <PullRequest projectId={projectId} taskId={taskId} existing={pullRequest} />
      {accept.isError && <InlineError lead="The work was not accepted." error={accept.error} />}
      {resolve.isError && <InlineError lead="The agent did not start." error={resolve.error} />}
      {discard.isError && <InlineError lead="The work was not discarded." error={discard.error} />}
      {outcome?.kind === "checks_failed" && (
        <div className="finish-failed" data-testid="accept-checks-failed">
          <p>{outcome.said}</p>
          <pre className="fenced-code">{outcome.output}</pre>
        </div>
      )}
      {outcome?.kind === "left" && (
        <p className="task-card-note" data-testid="accept-left">
          {outcome.said}
        </p>
      )}
      {outcome?.kind === "conflict" && (
        <Dialog
          title={`The work and ${main} changed the same lines`}
          onCancel={() => setOutcome(null)}
          actions={
            <>
              <button
                type="button"
                className="button button-primary"
                data-autofocus
                disabled={resolve.isPending}
                onClick={() =>
                  resolve.mutate(how, {
                    onSuccess: () => {
                      setOutcome(null);
                      toast("The agent is resolving the conflict; its work is accepted once the checks pass.");
                    },
                  })
                }
                data-testid="resolve-with-agent"
              >
                {resolve.isPending && <Spinner />}
                Ask the agent to resolve it
              </button>
              <button type="button" className="button" onClick={() => setOutcome(null)} data-testid="leave-on-branch">
                Leave it on its branch
              </button>
            </>
          }
        >
          <p>
            Since the agent started, {main} changed {outcome.files.length === 1 ? "a file" : "files"} the agent changed too, in the same
            places:
          </p>
          <ul className="conflict-files" data-testid="conflict-files">
            {outcome.files.map((f) => (
              <li key={f}>
                <code>{f}</code>
              </li>
            ))}
          </ul>
          <p>
            Nothing was changed. The agent can resolve it in its own folder with both versions in front of it; the checks run, and the
            result goes into {main}. Or leave the work on its branch for now.
          </p>
        </Dialog>
      )}
      {confirmDiscard && (
        <Dialog
          title="Discard the agent's work?"
          tone="danger"
          onCancel={() => setConfirmDiscard(false)}
          actions={
            <>
              <button type="button" className="button" data-autofocus onClick={() => setConfirmDiscard(false)}>
                Keep it
              </button>
              <button
                type="button"
                className="button button-danger"
                disabled={discard.isPending}
                onClick={() =>
                  discard
                    .mutateAsync()
                    .then((done) => {
                      setConfirmDiscard(false);
                      toast(done.said);
                    })
                    .catch(() => {})
                }
                data-testid="confirm-discard"
              >
                {discard.isPending && <Spinner />}
                Discard
              </button>
            </>
          }
        >
          <p>
            Its branch and folder are removed and the task is open again. A copy is kept in the task&apos;s snapshots, so you can bring it
            back.
          </p>
        </Dialog>
      )}
    </div>
  );
}
