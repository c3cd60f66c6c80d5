// Sessions: every agent at work right now — the ones Healer runs on projects' tasks and, when
// the person turns it on, the Claude Code and opencode sessions they run themselves — with when each last
// did something and whether it is going in circles.
import { useState } from "react";
import type { LiveSession, PastSession, SessionStatus, SteeringSettings } from "../bindings";
import { EmptyState } from "../components/EmptyState";
import { SessionsIcon } from "../components/icons";
import { InlineError } from "../components/InlineError";
import { SkeletonList } from "../components/Loading";
import { PageHeader } from "../components/PageHeader";
import { StatusBadge } from "../components/StatusBadge";
import { tokens, usd } from "../modelText";
import { agentLabel, durationText, sessionStatusLabel, sessionStatusTone } from "../projectText";
import { useLiveSessions, useOwnPastSessions, usePastSessions, useSetSteeringSettings, useSteeringSettings } from "../queries";
import { relativeTime, useNow } from "../time";
import { projectTaskHref } from "../usePage";
import { Toggle } from "./BackgroundSettings";
import { ruleLabel, withCode } from "./projects/SteeringTimeline";

function Verdict({ session }: { session: LiveSession }) {
  if (!session.loop_rule) {
    return (
      <span className="session-verdict" data-verdict="progressing">
        Making progress
      </span>
    );
  }
  return (
    <span className="session-verdict" data-verdict="looping">
      Going in circles: {ruleLabel[session.loop_rule].toLowerCase()}
    </span>
  );
}

function Row({ session, now }: { session: LiveSession; now: number }) {
  const who = session.origin === "healer" ? `${agentLabel[session.agent]}, started by Healer` : `${agentLabel[session.agent]}, started by you`;
  const title =
    session.origin === "healer" && session.project_id !== null && session.task_id !== null ? (
      <a href={projectTaskHref(session.project_id, session.task_id)}>{session.title}</a>
    ) : (
      <span className="mono">{session.title}</span>
    );
  return (
    <li className="live-session" data-testid="live-session" data-origin={session.origin}>
      <div className="live-session-main">
        <strong>{title}</strong>
        <span className="muted">{who}</span>
      </div>
      <div className="live-session-side">
        <Verdict session={session} />
        <span className="muted">{session.last_activity_at ? `Last active ${relativeTime(session.last_activity_at, now)}` : "Nothing yet"}</span>
      </div>
    </li>
  );
}

function OwnSessionsToggle({ settings }: { settings: SteeringSettings }) {
  const set = useSetSteeringSettings();
  return (
    <>
      <Toggle
        id="watch-own-sessions"
        title="Also watch the Claude Code and opencode sessions you run yourself"
        hint="Healer reads them to tell you when one goes in circles. It never writes into a session it did not start."
        checked={settings.watch_own_sessions ?? false}
        disabled={set.isPending}
        onChange={(on) => set.mutate({ ...settings, watch_own_sessions: on })}
      />
      {set.isError && <InlineError lead="The setting couldn't be changed." error={set.error} />}
    </>
  );
}

const statusFilters: { value: SessionStatus | "all"; label: string }[] = [
  { value: "all", label: "Any outcome" },
  { value: "finished", label: "Finished" },
  { value: "failed", label: "Failed" },
  { value: "stopped", label: "Stopped" },
  { value: "timed_out", label: "Out of time" },
  { value: "running", label: "Working now" },
];

/** The person's own Claude Code and opencode sessions Healer watched, with what it noticed in each. */
function OwnHistory({ terms, now }: { terms: string[]; now: number }) {
  const own = useOwnPastSessions();
  const shown = (own.data ?? []).filter((s) => terms.every((t) => `${s.title} ${agentLabel[s.agent]} yours`.toLowerCase().includes(t)));
  if (shown.length === 0) return null;
  return (
    <>
      <h3 className="section-label">Your own sessions</h3>
      <ul className="card list past-sessions" data-testid="own-past-sessions">
        {shown.map((s) => (
          <li key={`${s.title}/${s.last_activity_at}`} className="past-session own" data-testid="own-past-session">
            <div className="past-session-main">
              <strong className="mono">{s.title}</strong>
              <span className="muted">
                {agentLabel[s.agent]}, started by you{s.last_activity_at && ` · last active ${relativeTime(s.last_activity_at, now)}`}
              </span>
              {s.loop_message && <p className="own-loop-note">{withCode(s.loop_message)}</p>}
            </div>
            <span className="past-session-side">
              <Verdict session={s} />
            </span>
          </li>
        ))}
      </ul>
    </>
  );
}

/** Past sessions of every project, newest first: filterable, each opening its task's page. */
function History() {
  const past = usePastSessions();
  const now = useNow(30_000);
  const [words, setWords] = useState("");
  const [status, setStatus] = useState<SessionStatus | "all">("all");
  const terms = words.trim().toLowerCase().split(/\s+/).filter(Boolean);
  const shown = (past.data ?? []).filter(
    (p: PastSession) =>
      (status === "all" || p.session.status === status) &&
      terms.every((t) => `${p.project_name} ${p.session.task_title} ${agentLabel[p.session.agent]}`.toLowerCase().includes(t)),
  );
  return (
    <section className="session-history" data-testid="session-history">
      <h2 className="section-label">Past sessions</h2>
      <div className="history-filters">
        <input
          className="input"
          value={words}
          onChange={(e) => setWords(e.target.value)}
          placeholder="Find by project, task or agent"
          aria-label="Find by project, task or agent"
          data-testid="history-search"
        />
        <select className="select" value={status} onChange={(e) => setStatus(e.target.value as SessionStatus | "all")} aria-label="Outcome" data-testid="history-status">
          {statusFilters.map((f) => (
            <option key={f.value} value={f.value}>
              {f.label}
            </option>
          ))}
        </select>
      </div>
      {past.isError && <InlineError lead="The past sessions couldn't be loaded." error={past.error} onRetry={() => void past.refetch()} />}
      {past.isPending && <SkeletonList rows={2} label="Loading past sessions" />}
      {past.data && shown.length === 0 && <p className="muted">{past.data.length === 0 ? "No agent has worked on a task yet." : "No session matches."}</p>}
      {shown.length > 0 && (
        <ul className="card list past-sessions">
          {shown.map(({ session: s, project_name, tokens: used, cost_usd }) => (
            <li key={s.id} className="past-session" data-testid="past-session" data-status={s.status}>
              <a className="past-session-main" href={projectTaskHref(s.project_id, s.task_id, s.id)}>
                <strong>{s.task_title}</strong>
                <span className="muted">
                  {project_name} · {agentLabel[s.agent]} · {relativeTime(s.started_at, now)}
                </span>
              </a>
              <span className="past-session-side">
                <StatusBadge tone={sessionStatusTone[s.status]} label={sessionStatusLabel[s.status]} />
                <span className="muted">
                  {s.status === "running" ? `for ${durationText(s.started_at, null)}` : durationText(s.started_at, s.ended_at)}
                  {used > 0 && ` · ${tokens(used)} tokens`}
                  {cost_usd !== null && ` · ${usd(cost_usd)}`}
                </span>
              </span>
            </li>
          ))}
        </ul>
      )}
      <OwnHistory terms={terms} now={now} />
    </section>
  );
}

export function SessionsPage() {
  const sessions = useLiveSessions();
  const settings = useSteeringSettings();
  const now = useNow(5_000);
  const list = sessions.data ?? [];
  return (
    <section className="page" data-testid="page-sessions">
      <PageHeader title="Sessions" description="Every agent at work right now, when it last did something, whether it is going in circles — and the sessions before." />
      {sessions.isError && <InlineError lead="The sessions couldn't be loaded." error={sessions.error} onRetry={() => void sessions.refetch()} />}
      {sessions.isPending && <SkeletonList rows={2} label="Loading sessions" />}
      {sessions.data && list.length === 0 && (
        <div className="card" data-testid="no-sessions">
          <EmptyState icon={<SessionsIcon size={28} />} title="No agent is at work right now">
            <p>Start one on a project's task; it shows here while it works.</p>
          </EmptyState>
        </div>
      )}
      {list.length > 0 && (
        <ul className="card list live-sessions">
          {list.map((s) => (
            <Row key={s.session_id ?? `${s.title}/${s.last_activity_at}`} session={s} now={now} />
          ))}
        </ul>
      )}
      <History />
      <section className="card settings-section" data-testid="own-sessions">
        {settings.data && <OwnSessionsToggle settings={settings.data} />}
        {settings.isError && <InlineError lead="The setting couldn't be loaded." error={settings.error} />}
      </section>
    </section>
  );
}
