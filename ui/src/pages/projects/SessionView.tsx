// An agent's session as it happens: Healer's notes, what the agent was asked, what it said,
// each tool it used with what came back, the checks — streamed while it runs.
import { useState, type FormEvent } from "react";
import type { SessionDetail, SessionModelUse, StoredStep } from "../../bindings";
import { Collapsible } from "../../components/Collapsible";
import { InlineError } from "../../components/InlineError";
import { SkeletonList, Spinner } from "../../components/Loading";
import { StatusBadge } from "../../components/StatusBadge";
import { useExportTrajectory, useSayToSession, useSession, useStopSession } from "../../projectQueries";
import { toast } from "../../toasts";
import { SessionChange } from "./ChangeReview";
import {
  agentLabel,
  agentVersion,
  callInWords,
  commandOutput,
  durationText,
  modelUseText,
  quietWhenDone,
  sessionStatusLabel,
  sessionStatusTone,
  shortCommit,
} from "../../projectText";
import { StopIcon } from "../../components/icons";
import { askingAgent, deadlineSentence, visible, wantsLine } from "../../approvalText";
import { decideNow } from "../../postponed";
import { useNow } from "../../time";
import type { AgentAsk } from "../../bindings";

/** How a steering message starts when it reaches an agent (the engine's `session::steering_text`). */
const STEERING_PREFIX = "Healer, which watches this session, says:";
/** How the person's own message starts when it reaches an agent (`session::person_text`). */
const PERSON_PREFIX = "The person you are working for writes (through Healer):";

/** A message box on a live session: what the person writes reaches the agent at its next chance. */
function SayToAgent({ sessionId }: { sessionId: number }) {
  const say = useSayToSession();
  const [text, setText] = useState("");
  const [sent, setSent] = useState(false);
  function submit(event: FormEvent) {
    event.preventDefault();
    if (!text.trim()) return;
    say.mutate(
      { sessionId, text },
      {
        onSuccess: () => {
          setText("");
          setSent(true);
        },
      },
    );
  }
  return (
    <form className="say-to-agent" onSubmit={submit} data-testid="say-to-agent">
      <label className="field-label" htmlFor={`say-${sessionId}`}>
        Tell the agent something
      </label>
      <div className="say-row">
        <textarea
          id={`say-${sessionId}`}
          className="input textarea"
          rows={2}
          value={text}
          onChange={(e) => {
            setText(e.target.value);
            setSent(false);
          }}
          onKeyDown={(e) => {
            if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) submit(e);
          }}
          placeholder="Use the existing date helper instead of writing a new one."
          data-testid="say-text"
        />
        <button type="submit" className="button button-primary" disabled={say.isPending || !text.trim()} data-testid="say-send">
          {say.isPending && <Spinner />}
          Send
        </button>
      </div>
      {sent && (
        <p className="muted" role="status" data-testid="say-sent">
          Sent. It reaches the agent at its next chance; the task's timeline shows when it was delivered.
        </p>
      )}
      {say.isError && <InlineError lead="The message was not sent." error={say.error} />}
    </form>
  );
}

const LONG_LINES = 12;
const long = (text: string) => text.split("\n").length > LONG_LINES || text.length > 1500;

function Output({ text }: { text: string }) {
  if (!text.trim()) return null;
  return (
    <Collapsible long={long(text)} more="Show all of it" less="Show less">
      <pre className="fenced-code session-output" tabIndex={0}>
        {text}
      </pre>
    </Collapsible>
  );
}

function StepItem({ step, result }: { step: StoredStep; result: StoredStep | undefined }) {
  const s = step.step;
  if (s.kind === "tool_call") {
    const { title, code } = callInWords(s);
    return (
      <li className="session-step step-call" data-testid="session-step" data-kind="call">
        <p className="session-step-title">{title}</p>
        {code && <pre className="fenced-code session-command">{code}</pre>}
        {result ? (
          quietWhenDone.has(s.tool ?? "") && !result.step.is_error ? null : (
            <div className={result.step.is_error ? "session-result error" : "session-result"}>
              {result.step.is_error && <p className="session-result-label">It did not work:</p>}
              <Output text={code !== null && !result.step.is_error ? commandOutput(result.step.text) : result.step.text} />
            </div>
          )
        ) : (
          <p className="step-pending">
            <Spinner /> Working…
          </p>
        )}
      </li>
    );
  }
  if (s.kind === "tool_result") {
    // A check Healer ran (not paired with a call of the agent).
    const [head, ...rest] = s.text.split("\n");
    return (
      <li className={s.is_error ? "session-step step-check failed" : "session-step step-check"} data-testid="session-step" data-kind="check">
        <p className="session-step-title">Check {head}</p>
        <Output text={rest.join("\n")} />
      </li>
    );
  }
  if (s.source === "user" && s.text.startsWith(PERSON_PREFIX)) {
    return (
      <li className="session-step step-healer" data-testid="session-step" data-kind="person">
        <p className="session-step-title">You told the agent</p>
        <blockquote className="steering-message">{s.text.slice(PERSON_PREFIX.length).trim()}</blockquote>
      </li>
    );
  }
  if (s.source === "user" && s.text.startsWith(STEERING_PREFIX)) {
    return (
      <li className="session-step step-healer" data-testid="session-step" data-kind="steered">
        <p className="session-step-title">Healer told the agent</p>
        <blockquote className="steering-message">{s.text.slice(STEERING_PREFIX.length).trim()}</blockquote>
      </li>
    );
  }
  if (s.source === "user") {
    return (
      <li className="session-step step-prompt" data-testid="session-step" data-kind="prompt">
        <details>
          <summary className="session-step-title">What the agent was asked</summary>
          <pre className="fenced-code session-output">{s.text}</pre>
        </details>
      </li>
    );
  }
  if (s.source === "system") {
    if (s.text.startsWith("You are Healer's coding agent")) return null;
    return (
      <li className="session-step step-healer" data-testid="session-step" data-kind="healer">
        <p className="session-note">{s.text}</p>
      </li>
    );
  }
  return (
    <li className="session-step step-said" data-testid="session-step" data-kind="said">
      <p className="session-said">{s.text}</p>
    </li>
  );
}

function Steps({ detail }: { detail: SessionDetail }) {
  const results = new Map<string, StoredStep>();
  for (const step of detail.steps) {
    if (step.step.kind === "tool_result" && step.step.call_id) results.set(step.step.call_id, step);
  }
  const paired = new Set<string>();
  for (const step of detail.steps) {
    if (step.step.kind === "tool_call" && step.step.call_id && results.has(step.step.call_id)) paired.add(step.step.call_id);
  }
  return (
    <ol className="session-steps" data-testid="session-steps">
      {detail.steps
        .filter((s) => !(s.step.kind === "tool_result" && s.step.call_id && paired.has(s.step.call_id)))
        .map((s) => (
          <StepItem key={s.seq} step={s} result={s.step.call_id ? results.get(s.step.call_id) : undefined} />
        ))}
    </ol>
  );
}

/** While the agent waits for the person: what it asked, and the way back to the question. */
function WaitingForYou({ ask }: { ask: AgentAsk }) {
  const now = useNow(15_000);
  return (
    <div className="session-waiting tone-warn" role="status" data-testid="session-waiting">
      <p>
        <strong>Waiting for you.</strong> {askingAgent(ask)} asked before it goes on: <code>{visible(wantsLine(ask.request))}</code>
      </p>
      <p className="muted">{deadlineSentence(ask, now)} Its time waiting is not counted against it.</p>
      <button type="button" className="button button-small button-primary" onClick={decideNow} data-testid="session-answer">
        Answer it
      </button>
    </div>
  );
}

/** What the session used of its model, counted by Healer on the way to the provider. */
function ModelUse({ use, running }: { use: SessionModelUse; running: boolean }) {
  return (
    <p className="muted session-model-use" data-testid="session-model-use">
      {modelUseText(use, running)}
    </p>
  );
}

/** A session: its steps, the box to talk to it while it works, how it ended, and (`review`) what it changed. */
export function SessionView({ sessionId, review = false }: { sessionId: number; review?: boolean }) {
  const session = useSession(sessionId);
  const stop = useStopSession();
  const trajectory = useExportTrajectory();
  if (session.isPending) return <SkeletonList rows={3} label="Loading the session" />;
  if (session.isError) return <InlineError lead="The session couldn't be loaded." error={session.error} />;
  const detail = session.data;
  const s = detail.session;
  const running = s.status === "running";
  return (
    <div className="card session" data-testid="session" data-status={s.status}>
      <div className="session-head">
        <div>
          <h2 className="section-title">{agentLabel[s.agent]}</h2>
          <p className="muted">
            {running ? `Working for ${durationText(s.started_at, null)}` : `Worked for ${durationText(s.started_at, s.ended_at)}`} · on branch {s.branch}
            {agentVersion(s.agent_version) && ` · version ${agentVersion(s.agent_version)}`}
            {s.raw_lines > 0 && ` · ${s.raw_lines === 1 ? "1 line" : `${s.raw_lines} lines`} of its output not understood`}
          </p>
        </div>
        <div className="session-actions">
          <StatusBadge tone={sessionStatusTone[s.status]} label={sessionStatusLabel[s.status]} live={running} testId="session-status" />
          {running && (
            <button type="button" className="button button-quiet-danger" onClick={() => stop.mutate(s.id)} disabled={stop.isPending} data-testid="stop-session">
              {stop.isPending ? <Spinner /> : <StopIcon size={16} />}
              Stop
            </button>
          )}
        </div>
      </div>
      {stop.isError && <InlineError error={stop.error} />}
      {detail.questions
        .filter((q) => q.status === "waiting")
        .slice(0, 1)
        .map((q) => (
          <WaitingForYou key={q.id} ask={q} />
        ))}
      <Steps detail={detail} />
      {detail.model_use && <ModelUse use={detail.model_use} running={running} />}
      {running && <SayToAgent sessionId={s.id} />}
      {review && <SessionChange sessionId={s.id} running={running} />}
      {!running && (
        <div className={`session-end tone-${sessionStatusTone[s.status]}`} data-testid="session-end">
          <p>{s.summary}</p>
          {s.commit_id && (
            <p className="muted" data-testid="session-commit">
              Commit {shortCommit(s.commit_id)} on {s.branch}
              {s.merged ? ", added to the main branch." : "."}
            </p>
          )}
          <button
            type="button"
            className="link-button"
            disabled={trajectory.isPending}
            onClick={() =>
              trajectory.mutate(s.id, {
                onSuccess: () => toast("The steps were saved as a trajectory file, shown in your file manager."),
              })
            }
            data-testid="export-trajectory"
          >
            Save the steps as a trajectory file
          </button>
          {trajectory.isError && <InlineError lead="The file wasn't saved." error={trajectory.error} />}
        </div>
      )}
    </div>
  );
}
