import { useLayoutEffect, useRef, type ReactNode } from "react";
import type { Attempt } from "../../bindings";
import { HealerNoteIcon } from "../../components/icons";
import { InlineError } from "../../components/InlineError";
import { useExportFullLog } from "../../queries";
import { toast } from "../../toasts";
import { useLiveLog, type LiveLog } from "../../liveOutput";
import {
  attemptEnd,
  attemptStatusLabel,
  attemptStatusTone,
  classHint,
  classLabel,
  durationText,
  prettyJson,
  sizeText,
} from "../../workflowText";

type Stream = "stdout" | "stderr";

const streamTitle: Record<Stream, string> = { stdout: "Output", stderr: "Errors and warnings" };

/** A scrolling, monospace view of what the script printed. While live it follows the end. */
function LogPane({
  stream,
  text,
  cutBytes = 0,
  droppedChars = 0,
  live = false,
  startAtEnd = false,
  download,
}: {
  stream: Stream;
  text: string;
  cutBytes?: number;
  droppedChars?: number;
  live?: boolean;
  /** Open scrolled to the end: the stored log taking over from a live one stays where it was. */
  startAtEnd?: boolean;
  /** The attempt whose whole output can be downloaded. */
  download?: { runId: number; attempt: number };
}) {
  const pane = useRef<HTMLPreElement>(null);
  const following = useRef(true);
  const exportLog = useExportFullLog();

  // Keep the newest line in view as output arrives, unless the person scrolled up to read.
  useLayoutEffect(() => {
    const element = pane.current;
    if ((live || startAtEnd) && element && following.current) element.scrollTop = element.scrollHeight;
  }, [text, live, startAtEnd]);

  const empty = text.length === 0;
  return (
    <figure className={`log log-${stream}`}>
      <figcaption className="log-caption">
        <span className="log-title">{streamTitle[stream]}</span>
        <span className="log-stream">{stream}</span>
        {live && (
          <span className="log-live">
            <span className="live-dot" aria-hidden="true" />
            Live
          </span>
        )}
        {cutBytes > 0 && <span className="log-cut">{sizeText(cutBytes)} cut from the middle</span>}
        {droppedChars > 0 && <span className="log-cut">Earlier output not shown</span>}
        {download && text.length > 0 && (
          <button
            type="button"
            className="link-button log-download"
            data-testid={`download-${stream}`}
            disabled={exportLog.isPending}
            onClick={() =>
              exportLog.mutate(
                { ...download, stream },
                { onSuccess: (path) => toast(`The full log is saved as ${path}.`) },
              )
            }
          >
            Download full log
          </button>
        )}
      </figcaption>
      {exportLog.isError && <InlineError lead="The full log couldn't be saved." error={exportLog.error} />}
      <pre
        className={empty ? "log-text empty" : "log-text"}
        data-testid={stream}
        ref={pane}
        tabIndex={0}
        aria-label={`${streamTitle[stream]} (${stream})`}
        aria-live={live ? "off" : undefined}
        onScroll={(event) => {
          const el = event.currentTarget;
          following.current = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
        }}
      >
        {empty ? (live ? "Waiting for output…" : "Nothing was printed here.") : text}
      </pre>
    </figure>
  );
}

function LiveLogs({ log }: { log: LiveLog | undefined }) {
  return (
    <div className="logs">
      <LogPane stream="stdout" text={log?.stdout ?? ""} droppedChars={log?.droppedStdout} live />
      <LogPane stream="stderr" text={log?.stderr ?? ""} droppedChars={log?.droppedStderr} live />
    </div>
  );
}

function AttemptHeading({ number, children }: { number: number; children: ReactNode }) {
  return (
    <div className="attempt-heading">
      <h3 className="attempt-title">Attempt {number}</h3>
      {children}
    </div>
  );
}

/** One execution of the script: how it ended, why, what it printed and returned. */
export function AttemptView({ attempt, runId }: { attempt: Attempt; runId: number }) {
  const running = attempt.status === "running";
  const live = useLiveLog(runId, attempt.number);
  const end = attemptEnd(attempt);
  const cls = attempt.status === "succeeded" ? null : attempt.class;
  // The whole output is kept on this computer only for attempts that ran here.
  const download = attempt.worker ? undefined : { runId, attempt: attempt.number };

  return (
    <li className="attempt" data-testid="attempt" data-class={cls ?? ""} data-status={attempt.status}>
      <AttemptHeading number={attempt.number}>
        <span className={`status-text tone-${attemptStatusTone[attempt.status]}`}>
          {attemptStatusLabel[attempt.status]}
        </span>
        {end && <span className="attempt-fact">{end}</span>}
        {attempt.duration_ms !== null && <span className="attempt-fact">{durationText(attempt.duration_ms)}</span>}
        {attempt.worker && (
          <span className="attempt-fact" data-testid="attempt-worker" title="The computer of the cluster that ran it">
            on {attempt.worker}
          </span>
        )}
        {cls && (
          <span className={`class-badge class-${cls}`} title={classHint[cls]}>
            {classLabel[cls]}
          </span>
        )}
      </AttemptHeading>

      {attempt.evidence && (
        <div className="evidence">
          <p className="evidence-message">
            {attempt.evidence.error_type && <strong className="evidence-type">{attempt.evidence.error_type}</strong>}
            {attempt.evidence.error_type && attempt.evidence.message && ": "}
            {attempt.evidence.message}
          </p>
          {attempt.evidence.stack && <pre className="evidence-stack">{attempt.evidence.stack}</pre>}
        </div>
      )}

      {attempt.note && (
        <p className="healer-note">
          <HealerNoteIcon size={16} />
          <span>
            <span className="healer-note-who">Healer:</span> {attempt.note}
          </span>
        </p>
      )}

      {running ? (
        <LiveLogs log={live ?? { stdout: attempt.stdout, stderr: attempt.stderr, droppedStdout: 0, droppedStderr: 0 }} />
      ) : (
        <div className="logs">
          <LogPane stream="stdout" text={attempt.stdout} cutBytes={attempt.stdout_cut} startAtEnd={live !== undefined} download={download} />
          <LogPane stream="stderr" text={attempt.stderr} cutBytes={attempt.stderr_cut} startAtEnd={live !== undefined} download={download} />
        </div>
      )}

      {attempt.result !== null && (
        <figure className="log log-result">
          <figcaption className="log-caption">
            <span className="log-title">Result</span>
            <span className="log-stream">HEALER_RESULT</span>
          </figcaption>
          <pre className="log-text result-text" data-testid="result" tabIndex={0}>
            {prettyJson(attempt.result)}
          </pre>
        </figure>
      )}
    </li>
  );
}

/** An attempt the engine has started but not yet listed: what it prints so far. */
export function LiveAttemptView({ runId, number }: { runId: number; number: number }) {
  const live = useLiveLog(runId, number);
  return (
    <li className="attempt" data-testid="attempt" data-class="" data-status="running">
      <AttemptHeading number={number}>
        <span className="status-text tone-working">Running</span>
      </AttemptHeading>
      <LiveLogs log={live} />
    </li>
  );
}
