import { useId, useState, type FormEvent } from "react";
import type { BoardTask, ProjectTaskEdit } from "../../bindings";
import { InlineError } from "../../components/InlineError";
import { Spinner } from "../../components/Loading";
import { UnsavedGuard } from "../../components/UnsavedGuard";
import { useAddTask, useEditTask } from "../../projectQueries";

const priorities: { value: number; label: string }[] = [
  { value: 0, label: "Urgent" },
  { value: 1, label: "High" },
  { value: 2, label: "Normal" },
  { value: 3, label: "Low" },
];

/** A new task, or changes to one: title, what it is about, when it is done, its priority. */
export function AddTaskForm({
  projectId,
  tasks,
  onDone,
  editing,
}: {
  projectId: number;
  tasks: BoardTask[];
  onDone: () => void;
  editing?: BoardTask;
}) {
  const start = editing?.task;
  const [title, setTitle] = useState(start?.title ?? "");
  const [description, setDescription] = useState(start?.description ?? "");
  const [acceptance, setAcceptance] = useState((start?.acceptance ?? []).join("\n"));
  const [priority, setPriority] = useState(start?.priority ?? 2);
  const [deps, setDeps] = useState<string[]>(
    (start?.deps ?? []).filter((d) => typeof d === "string" || (d.type ?? "blocks") === "blocks").map((d) => (typeof d === "string" ? d : d.id)),
  );
  const add = useAddTask(projectId);
  const edit = useEditTask(projectId, start?.id ?? "");
  const saving = editing ? edit : add;
  const ids = { title: useId(), description: useId(), acceptance: useId() };
  // The screen the form is on: moving anywhere else leaves it.
  const [here] = useState(() => window.location.hash);

  function submit(event: FormEvent) {
    event.preventDefault();
    const input: ProjectTaskEdit = {
      title,
      description,
      acceptance: acceptance.split("\n"),
      priority,
      labels: start?.labels ?? [],
      deps,
    };
    saving.mutate(input, { onSuccess: onDone });
  }

  const others = tasks.filter((t) => t.task.id !== start?.id && t.task.status !== "closed");
  const dirty =
    title !== (start?.title ?? "") ||
    description !== (start?.description ?? "") ||
    acceptance !== (start?.acceptance ?? []).join("\n") ||
    priority !== (start?.priority ?? 2);
  return (
    <form className="card task-form" onSubmit={submit} data-testid="task-form">
      <UnsavedGuard
        dirty={dirty && !saving.isPending && !saving.isSuccess}
        stays={(hash) => hash === here}
        what={editing ? "your changes to the task" : "the new task's details"}
        onDiscard={() => {}}
      />
      <div className="field">
        <label className="field-label" htmlFor={ids.title}>
          Task
        </label>
        <input id={ids.title} className="input" value={title} onChange={(e) => setTitle(e.target.value)} placeholder="Add a dark mode" autoFocus data-testid="task-title" />
      </div>
      <div className="field">
        <label className="field-label" htmlFor={ids.description}>
          What it is about <span className="field-optional">optional</span>
        </label>
        <textarea id={ids.description} className="input textarea" rows={3} value={description} onChange={(e) => setDescription(e.target.value)} data-testid="task-description" />
      </div>
      <div className="field">
        <label className="field-label" htmlFor={ids.acceptance}>
          Done when <span className="field-optional">one per line, optional</span>
        </label>
        <textarea id={ids.acceptance} className="input textarea" rows={2} value={acceptance} onChange={(e) => setAcceptance(e.target.value)} data-testid="task-acceptance" />
      </div>
      <div className="task-form-row">
        <label className="field-label">
          Priority{" "}
          <select className="select" value={priority} onChange={(e) => setPriority(Number(e.target.value))} data-testid="task-priority">
            {priorities.map((p) => (
              <option key={p.value} value={p.value}>
                {p.label}
              </option>
            ))}
          </select>
        </label>
        {others.length > 0 && (
          <label className="field-label">
            Waits for{" "}
            <select
              className="select"
              multiple
              value={deps}
              onChange={(e) => setDeps(Array.from(e.target.selectedOptions, (o) => o.value))}
              aria-label="Tasks this one waits for"
            >
              {others.map((t) => (
                <option key={t.task.id} value={t.task.id}>
                  {t.task.title}
                </option>
              ))}
            </select>
          </label>
        )}
      </div>
      {saving.isError && <InlineError lead="The task was not saved." error={saving.error} />}
      <div className="form-actions">
        {!title.trim() && (
          <span className="field-hint form-actions-why" data-testid="task-save-why">
            Give the task a title to {editing ? "save it" : "add it"}.
          </span>
        )}
        <button type="button" className="button" onClick={onDone}>
          Cancel
        </button>
        <button type="submit" className="button button-primary" disabled={saving.isPending || !title.trim()} data-testid="task-save">
          {saving.isPending && <Spinner />}
          {editing ? "Save" : "Add task"}
        </button>
      </div>
    </form>
  );
}
