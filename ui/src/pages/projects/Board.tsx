// The board: a column per status, tasks in the order they would run. Cards are dragged between
// open, blocked and closed (the same rules as the buttons: a task an agent works on stays where
// it is, and nothing is dropped into "In progress", which only a run sets) and within a column
// to reorder (a task dropped on another goes before it and takes its priority). Labels filter.
import { useState, type DragEvent } from "react";
import type { BoardTask, ProjectDetail, ProjectTaskStatus } from "../../bindings";
import { InlineError } from "../../components/InlineError";
import { useMoveTask, useSetTaskStatus } from "../../projectQueries";
import { columnOrder, columnTitle } from "../../projectText";
import { TASK_DRAG, TaskCard } from "./TaskCard";

/** A column's tasks in the order they would run: priority, then the file's order. */
function columnTasks(detail: ProjectDetail, status: ProjectTaskStatus, label: string | null): BoardTask[] {
  return detail.tasks
    .map((t, i) => ({ t, i }))
    .filter(({ t }) => t.task.status === status && (label === null || (t.task.labels ?? []).includes(label)))
    .sort((a, b) => (a.t.task.priority ?? 2) - (b.t.task.priority ?? 2) || a.i - b.i)
    .map(({ t }) => t);
}

/** Where a card may be dropped. */
function accepts(status: ProjectTaskStatus): boolean {
  return status !== "in_progress";
}

function LabelFilter({ labels, chosen, onChoose }: { labels: string[]; chosen: string | null; onChoose: (l: string | null) => void }) {
  if (labels.length === 0) return null;
  return (
    <div className="label-filter" role="group" aria-label="Show tasks with the label" data-testid="label-filter">
      <span className="muted">Labels:</span>
      <button type="button" className={chosen === null ? "chip chip-on" : "chip"} aria-pressed={chosen === null} onClick={() => onChoose(null)}>
        All
      </button>
      {labels.map((label) => (
        <button
          type="button"
          key={label}
          className={chosen === label ? "chip chip-on" : "chip"}
          aria-pressed={chosen === label}
          onClick={() => onChoose(chosen === label ? null : label)}
          data-testid="label-chip"
        >
          {label}
        </button>
      ))}
    </div>
  );
}

export function Board({ detail }: { detail: ProjectDetail }) {
  const projectId = detail.project.id;
  const [label, setLabel] = useState<string | null>(null);
  const [over, setOver] = useState<ProjectTaskStatus | null>(null);
  const move = useMoveTask(projectId);
  const status = useSetTaskStatus(projectId);
  const labels = [...new Set(detail.tasks.flatMap((t) => t.task.labels ?? []))].sort();
  const shownLabel = label !== null && labels.includes(label) ? label : null;

  function dropped(event: DragEvent, column: ProjectTaskStatus, before: string | null) {
    event.preventDefault();
    event.stopPropagation();
    setOver(null);
    const id = event.dataTransfer.getData(TASK_DRAG);
    const task = detail.tasks.find((t) => t.task.id === id)?.task;
    if (!task || !accepts(column) || task.status === "in_progress") return;
    if (task.status !== column) {
      status.mutate({ taskId: id, status: column, reason: column === "closed" ? "Closed by hand" : null });
    } else if (before !== id) {
      move.mutate({ taskId: id, before });
    }
  }

  return (
    <>
      <LabelFilter labels={labels} chosen={shownLabel} onChoose={setLabel} />
      {(move.isError || status.isError) && <InlineError lead="The task didn't move." error={move.error ?? status.error} />}
      <div className="board" data-testid="board">
        {columnOrder.map((column) => {
          const tasks = columnTasks(detail, column, shownLabel);
          return (
            <section
              className={over === column ? "board-column drop-target" : "board-column"}
              key={column}
              data-testid={`column-${column}`}
              aria-label={columnTitle[column]}
              onDragOver={(e) => {
                if (!accepts(column) || !e.dataTransfer.types.includes(TASK_DRAG)) return;
                e.preventDefault();
                e.dataTransfer.dropEffect = "move";
                setOver(column);
              }}
              onDragLeave={(e) => {
                if (!e.currentTarget.contains(e.relatedTarget as Node | null)) setOver(null);
              }}
              onDrop={(e) => dropped(e, column, null)}
            >
              <h2 className="board-column-title">
                {columnTitle[column]} <span className="board-count">{tasks.length}</span>
              </h2>
              <ul className="board-cards">
                {tasks.map((t, i) => (
                  <TaskCard
                    key={t.task.id}
                    projectId={projectId}
                    item={t}
                    next={detail.next === t.task.id}
                    above={tasks[i - 1]?.task.id ?? null}
                    belowNext={tasks[i + 2]?.task.id ?? null}
                    last={i === tasks.length - 1}
                    onDropBefore={(e) => dropped(e, column, t.task.id)}
                  />
                ))}
                {tasks.length === 0 && <li className="board-empty">{shownLabel ? `Nothing labelled ${shownLabel}` : "Nothing here"}</li>}
              </ul>
            </section>
          );
        })}
      </div>
    </>
  );
}
