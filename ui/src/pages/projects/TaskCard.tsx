import type { DragEvent } from "react";
import type { BoardTask } from "../../bindings";
import { ArrowDownIcon, ArrowUpIcon } from "../../components/icons";
import { InlineError } from "../../components/InlineError";
import { useMoveTask, useSetTaskStatus } from "../../projectQueries";
import { priorityLabel, shortCommit } from "../../projectText";
import { projectTaskHref } from "../../usePage";

/** The drag's payload type: a task's id. */
export const TASK_DRAG = "application/x-healer-task";

/** One task on the board: what it is, why it waits, and what can be done with it here. */
export function TaskCard({
  projectId,
  item,
  next,
  above,
  belowNext,
  last,
  onDropBefore,
}: {
  projectId: number;
  item: BoardTask;
  next: boolean;
  /** The task above it in its column (moving up puts it before that one). */
  above: string | null;
  /** The task two below it (moving down puts it before that one; none: to the end). */
  belowNext: string | null;
  last: boolean;
  /** A card dropped on this one: it goes before it. */
  onDropBefore: (event: DragEvent) => void;
}) {
  const { task } = item;
  const move = useMoveTask(projectId);
  const status = useSetTaskStatus(projectId);
  const busy = move.isPending || status.isPending;
  const priority = task.priority ?? 2;
  return (
    <li
      className={next ? "task-card next" : "task-card"}
      data-testid="task-card"
      data-title={task.title}
      data-status={task.status}
      data-id={task.id}
      draggable={task.status !== "in_progress"}
      onDragStart={(e) => {
        e.dataTransfer.setData(TASK_DRAG, task.id);
        e.dataTransfer.effectAllowed = "move";
      }}
      onDrop={onDropBefore}
    >
      <a className="task-card-title" href={projectTaskHref(projectId, task.id)}>
        {task.title}
      </a>
      <div className="task-card-meta">
        <span className={`priority priority-${Math.min(priority, 3)}`}>{priorityLabel(priority)}</span>
        {(task.labels ?? []).map((label) => (
          <span className="task-label" key={label}>
            {label}
          </span>
        ))}
        {next && <span className="task-next">Runs next</span>}
      </div>
      {item.waits_for.length > 0 && <p className="task-card-note">Waits for {item.waits_for.map((t) => `“${t}”`).join(", ")}</p>}
      {task.status === "closed" && task.commit && (
        <p className="task-card-note" data-testid="task-card-commit">
          Committed {shortCommit(task.commit)}
        </p>
      )}
      {task.status !== "closed" && task.note && <p className="task-card-note">{task.note}</p>}
      <div className="task-card-actions">
        <button
          type="button"
          className="icon-button quiet"
          disabled={busy || above === null}
          onClick={() => move.mutate({ taskId: task.id, before: above })}
          aria-label={`Move “${task.title}” up`}
          title="Move up"
        >
          <ArrowUpIcon size={15} />
        </button>
        <button
          type="button"
          className="icon-button quiet"
          disabled={busy || last}
          onClick={() => move.mutate({ taskId: task.id, before: belowNext })}
          aria-label={`Move “${task.title}” down`}
          title="Move down"
        >
          <ArrowDownIcon size={15} />
        </button>
        {(task.status === "open" || task.status === "blocked") && (
          <button
            type="button"
            className="link-button"
            disabled={busy}
            onClick={() => status.mutate({ taskId: task.id, status: "closed", reason: "Marked done by hand" })}
            data-testid="close-task"
          >
            Mark done
          </button>
        )}
        {task.status === "open" && (
          <button type="button" className="link-button" disabled={busy} onClick={() => status.mutate({ taskId: task.id, status: "blocked", reason: null })}>
            Mark blocked
          </button>
        )}
        {(task.status === "closed" || task.status === "blocked") && (
          <button type="button" className="link-button" disabled={busy} onClick={() => status.mutate({ taskId: task.id, status: "open", reason: null })}>
            Reopen
          </button>
        )}
      </div>
      {(move.isError || status.isError) && <InlineError error={move.error ?? status.error} />}
    </li>
  );
}
