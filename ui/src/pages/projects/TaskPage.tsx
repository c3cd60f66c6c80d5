// One task of a project: what it asks, where it stands, and its agent sessions — the newest
// shown as it happens, with a Stop button while it runs.
import { useState } from "react";
import type { SessionRecord } from "../../bindings";
import { ArrowLeftIcon, PlayIcon } from "../../components/icons";
import { InlineError } from "../../components/InlineError";
import { SkeletonList, Spinner } from "../../components/Loading";
import { StatusBadge } from "../../components/StatusBadge";
import { useProjectTask, useRunTask, useSetTaskStatus } from "../../projectQueries";
import { columnTitle, priorityLabel, sessionStatusLabel, sessionStatusTone, shortCommit } from "../../projectText";
import { relativeTime, useNow } from "../../time";
import { projectHref } from "../../usePage";
import { AddTaskForm } from "./AddTaskForm";
import { TaskChange } from "./ChangeReview";
import { FinishWork } from "./FinishWork";
import { SessionView } from "./SessionView";
import { HealerCards } from "./HealerCards";
import { SteeringTimeline } from "./SteeringTimeline";

const statusTone = { open: "neutral", in_progress: "working", blocked: "bad", closed: "good" } as const;

function EarlierSessions({ sessions, shown, onShow }: { sessions: SessionRecord[]; shown: number | null; onShow: (id: number) => void }) {
  const now = useNow();
  if (sessions.length < 2) return null;
  return (
    <>
      <h2 className="section-label">Sessions on this task</h2>
      <ul className="card list session-list">
        {sessions.map((s) => (
          <li key={s.id}>
            <button type="button" className={s.id === shown ? "session-row current" : "session-row"} onClick={() => onShow(s.id)}>
              <StatusBadge tone={sessionStatusTone[s.status]} label={sessionStatusLabel[s.status]} />
              <span className="cell-detail">{s.summary || "Working"}</span>
              <span className="muted">{relativeTime(s.started_at, now)}</span>
            </button>
          </li>
        ))}
      </ul>
    </>
  );
}

/** A task's description as written; output between ``` fences shows as code that scrolls inside the card. */
/** The line after which a follow-up's description is for the agent, not the person (src/spells/blocked.rs). */
const FOR_THE_AGENT = "For the agent that picks this up:";

function Description({ text }: { text: string }) {
  const at = text.indexOf(FOR_THE_AGENT);
  const forPerson = at < 0 ? text : text.slice(0, at);
  const forAgent = at < 0 ? "" : text.slice(at + FOR_THE_AGENT.length).trim();
  const parts = forPerson.split(/^```[^\n]*\n?/m);
  return (
    <div className="task-description" data-testid="task-description-text">
      {parts.map((part, i) =>
        i % 2 === 1 ? (
          <pre key={i} className="fenced-code task-description-code" tabIndex={0}>
            {part.replace(/\n$/, "")}
          </pre>
        ) : (
          part.trim() && <p key={i}>{part.trim()}</p>
        ),
      )}
      {forAgent && (
        <details className="task-for-agent" data-testid="task-for-agent">
          <summary>What the agent that picks this up is given</summary>
          <pre className="fenced-code task-description-code">{forAgent}</pre>
        </details>
      )}
    </div>
  );
}

export function TaskPage({ projectId, taskId, session }: { projectId: number; taskId: string; session?: number }) {
  const detail = useProjectTask(projectId, taskId);
  const run = useRunTask(projectId);
  const status = useSetTaskStatus(projectId);
  const [chosen, setChosen] = useState<number | null>(session ?? null);
  const [editing, setEditing] = useState(false);
  if (detail.isPending) return <SkeletonList rows={3} label="Loading the task" />;
  if (detail.isError) return <InlineError lead="The task couldn't be loaded." error={detail.error} onRetry={() => void detail.refetch()} />;
  const { project, task: item, sessions, steering, heals, snapshots, unaccepted, pull_request: pullRequest } = detail.data;
  const task = item.task;
  const shown = chosen ?? sessions[0]?.id ?? null;
  const running = sessions.some((s) => s.status === "running");
  return (
    <section className="page" data-testid="task-page" data-status={task.status}>
      <a className="back-link" href={projectHref(projectId)}>
        <ArrowLeftIcon size={16} /> {project.name}
      </a>
      <header className="page-header">
        <div>
          <h1 className="page-title">{task.title}</h1>
          <p className="page-description task-line">
            <StatusBadge tone={statusTone[task.status]} label={columnTitle[task.status]} testId="task-status" />
            <span>{priorityLabel(task.priority ?? 2)} priority</span>
          </p>
        </div>
        <div className="page-actions">
          {task.status === "open" && !running && (
            <button
              type="button"
              className="button button-primary"
              disabled={!item.ready || run.isPending || editing}
              title={editing ? "Save or cancel your changes to the task first" : item.waiting ? `It can't start: ${item.waiting}` : undefined}
              onClick={() => run.mutate(task.id, { onSuccess: (s) => setChosen(s.id) })}
              data-testid="run-task"
            >
              {run.isPending ? <Spinner /> : <PlayIcon size={16} />}
              {sessions.length ? "Run again" : "Run this task"}
            </button>
          )}
          {task.status !== "in_progress" && (
            <button type="button" className="button" onClick={() => setEditing(!editing)} data-testid="edit-task">
              Edit
            </button>
          )}
          {task.status !== "closed" && task.status !== "in_progress" && (
            <button type="button" className="button" onClick={() => status.mutate({ taskId: task.id, status: "closed", reason: "Closed by hand" })}>
              Close
            </button>
          )}
        </div>
      </header>
      {run.isError && <InlineError lead="The agent did not start." error={run.error} />}
      {status.isError && <InlineError error={status.error} />}
      {editing ? (
        <AddTaskForm projectId={projectId} tasks={[]} editing={item} onDone={() => setEditing(false)} />
      ) : (
        <div className="card task-about">
          {task.description ? <Description text={task.description} /> : <p className="muted">No description.</p>}
          {(task.acceptance ?? []).length > 0 && (
            <>
              <h2 className="section-title">Done when</h2>
              <ul className="acceptance">
                {(task.acceptance ?? []).map((a) => (
                  <li key={a}>{a}</li>
                ))}
              </ul>
            </>
          )}
          {item.waiting && <p className="task-card-note">It can't start yet: {item.waiting}.</p>}
          {task.status !== "closed" && task.note && <p className="task-card-note">{task.note}</p>}
          {task.status === "closed" && (
            <p className="task-closed" data-testid="task-closed">
              {task.closed_reason}
              {task.commit && !(task.closed_reason ?? "").includes(shortCommit(task.commit)) && ` (${shortCommit(task.commit)})`}
            </p>
          )}
        </div>
      )}
      {unaccepted && !running && task.status !== "in_progress" && <FinishWork projectId={projectId} taskId={task.id} waiting={unaccepted} pullRequest={pullRequest} />}
      {sessions.length > 0 && <TaskChange projectId={projectId} taskId={task.id} running={running} />}
      {shown !== null ? (
        <>
          <h2 className="section-label">{shown === sessions[0]?.id ? "Latest session" : "Session"}</h2>
          <SessionView key={shown} sessionId={shown} review={shown !== sessions[0]?.id || session !== undefined} />
        </>
      ) : (
        <p className="muted">No agent has worked on this task yet.</p>
      )}
      <HealerCards projectId={projectId} heals={heals} snapshots={snapshots} />
      <SteeringTimeline entries={steering} live={running} />
      <EarlierSessions sessions={sessions} shown={shown} onShow={setChosen} />
    </section>
  );
}
