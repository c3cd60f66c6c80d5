// Sessions: every agent at work right now — the ones Healer runs on projects' tasks and, when
// the person turns it on, the Claude Code sessions they run themselves — with when each last
// did something and whether it is going in circles.
import type { LiveSession, SteeringSettings } from "../bindings";
import { EmptyState } from "../components/EmptyState";
import { SessionsIcon } from "../components/icons";
import { InlineError } from "../components/InlineError";
import { SkeletonList } from "../components/Loading";
import { PageHeader } from "../components/PageHeader";
import { agentLabel } from "../projectText";
import { useLiveSessions, useSetSteeringSettings, useSteeringSettings } from "../queries";
import { relativeTime, useNow } from "../time";
import { projectTaskHref } from "../usePage";
import { Toggle } from "./BackgroundSettings";
import { ruleLabel } from "./projects/SteeringTimeline";

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
        title="Also watch the Claude Code sessions you run yourself"
        hint="Healer reads them to tell you when one goes in circles. It never writes into a session it did not start."
        checked={settings.watch_own_sessions ?? false}
        disabled={set.isPending}
        onChange={(on) => set.mutate({ ...settings, watch_own_sessions: on })}
      />
      {set.isError && <InlineError lead="The setting couldn't be changed." error={set.error} />}
    </>
  );
}

export function SessionsPage() {
  const sessions = useLiveSessions();
  const settings = useSteeringSettings();
  const now = useNow(5_000);
  const list = sessions.data ?? [];
  return (
    <section className="page" data-testid="page-sessions">
      <PageHeader title="Sessions" description="Every agent at work right now, when it last did something, and whether it is going in circles." />
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
      <section className="card settings-section" data-testid="own-sessions">
        {settings.data && <OwnSessionsToggle settings={settings.data} />}
        {settings.isError && <InlineError lead="The setting couldn't be loaded." error={settings.error} />}
      </section>
    </section>
  );
}
