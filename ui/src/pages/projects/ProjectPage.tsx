// A project: its board (open / in progress / blocked / closed), a form to add a task, what is
// wrong in its task list, and its progress log.
import { useEffect, useState } from "react";
import type { ProjectDetail } from "../../bindings";
import { ArrowLeftIcon, PlayIcon, SettingsIcon } from "../../components/icons";
import { InlineError } from "../../components/InlineError";
import { NEW_TASK_EVENT } from "../../components/QuickJump";
import { SkeletonList, Spinner } from "../../components/Loading";
import { Markdown } from "../../components/Markdown";
import { PageHeader } from "../../components/PageHeader";
import { useProject, useRunTask } from "../../projectQueries";
import { workedBy } from "../../projectText";
import { editProjectHref, navigate, pageHref, projectTaskHref } from "../../usePage";
import { AddTaskForm } from "./AddTaskForm";
import { Board } from "./Board";

function Problems({ detail }: { detail: ProjectDetail }) {
  if (detail.problems.length === 0) return null;
  return (
    <div className="card task-problems" role="alert" data-testid="task-problems">
      <h2 className="section-title">Some lines of the task list need fixing</h2>
      <p className="muted">Healer keeps these lines as they are in the file; fix them there and the board follows.</p>
      <ul>
        {detail.problems.map((p, i) => (
          <li key={i}>{p.message}</li>
        ))}
      </ul>
    </div>
  );
}

function RunNext({ detail }: { detail: ProjectDetail }) {
  const run = useRunTask(detail.project.id);
  const next = detail.tasks.find((t) => t.task.id === detail.next);
  return (
    <>
      <button
        type="button"
        className="button button-primary"
        disabled={!next || run.isPending}
        title={next ? `Start on “${next.task.title}”` : "No task is ready to start"}
        onClick={() => run.mutate(null, { onSuccess: (s) => navigate(projectTaskHref(detail.project.id, s.task_id)) })}
        data-testid="run-next"
      >
        {run.isPending ? <Spinner /> : <PlayIcon size={16} />}
        Run next task
      </button>
      {run.isError && <InlineError error={run.error} />}
    </>
  );
}

export function ProjectPage({ id }: { id: number }) {
  const project = useProject(id);
  const [adding, setAdding] = useState(false);
  // Ctrl+N on a board: a new task.
  useEffect(() => {
    const add = () => setAdding(true);
    window.addEventListener(NEW_TASK_EVENT, add);
    return () => window.removeEventListener(NEW_TASK_EVENT, add);
  }, []);
  if (project.isPending) return <SkeletonList rows={4} label="Loading the project" />;
  if (project.isError) return <InlineError lead="The project couldn't be loaded." error={project.error} onRetry={() => void project.refetch()} />;
  const detail = project.data;
  const p = detail.project;
  return (
    <section className="page" data-testid="page-project" data-name={p.name}>
      <a className="back-link" href={pageHref("projects")}>
        <ArrowLeftIcon size={16} /> Projects
      </a>
      <PageHeader
        title={p.name}
        description={p.path}
        actions={
          <>
            <RunNext detail={detail} />
            <a className="button" href={editProjectHref(id)} data-testid="project-settings">
              <SettingsIcon size={16} />
              Settings
            </a>
          </>
        }
      />
      <p className="muted project-agent" data-testid="project-agent">
        {workedBy(p.settings)}
      </p>
      {detail.repo.state.kind !== "ready" && <InlineError lead="The repository needs a look." error={new Error(detail.repo.message)} />}
      {detail.repo.notes.map((note) => (
        <p className="folder-note" key={note}>
          {note}
        </p>
      ))}
      <Problems detail={detail} />
      <div className="board-toolbar">
        {adding ? (
          <AddTaskForm projectId={id} tasks={detail.tasks} onDone={() => setAdding(false)} />
        ) : (
          <button type="button" className="button" onClick={() => setAdding(true)} data-testid="add-task">
            Add a task
            <kbd className="shortcut-hint">Ctrl+N</kbd>
          </button>
        )}
      </div>
      <Board detail={detail} />
      <h2 className="section-label">Progress log</h2>
      <div className="card progress-log">
        {detail.progress.trim() ? (
          <Markdown text={detail.progress} testId="progress-log" />
        ) : (
          <p className="muted">Nothing yet. Healer and the agents write here as tasks are done.</p>
        )}
      </div>
    </section>
  );
}
