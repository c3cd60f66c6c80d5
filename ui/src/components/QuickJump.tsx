import { useQueries } from "@tanstack/react-query";
import { useEffect, useState, type KeyboardEvent } from "react";
import { api } from "../api";
import { places } from "../places";
import { projectKeys, useProjects } from "../projectQueries";
import { useWorkflows } from "../queries";
import { navigate, newWorkflowHref, projectHref, projectTaskHref, routeFromHash, workflowHref } from "../usePage";
import { Dialog } from "./Dialog";

/** The event a board listens to for its own "new task" (Ctrl+N while a project is shown). */
export const NEW_TASK_EVENT = "healer:new-task";

/**
 * Ctrl+N: something new where the person is — a task on a project's page, else a workflow.
 * Ctrl+K: jump to any workflow, project, task or page by typing part of its name.
 */
export function Shortcuts() {
  const [open, setOpen] = useState(false);
  useEffect(() => {
    function onKey(event: globalThis.KeyboardEvent) {
      if (!(event.ctrlKey || event.metaKey) || event.altKey) return;
      const key = event.key.toLowerCase();
      if (key === "k") {
        event.preventDefault();
        setOpen(true);
      } else if (key === "n") {
        event.preventDefault();
        const route = routeFromHash(window.location.hash);
        if (route.page === "projects" && "view" in route && route.view === "project") {
          window.dispatchEvent(new CustomEvent(NEW_TASK_EVENT));
        } else {
          navigate(newWorkflowHref);
        }
      }
    }
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);
  return open ? <QuickJump onClose={() => setOpen(false)} /> : null;
}

function QuickJump({ onClose }: { onClose: () => void }) {
  const workflows = useWorkflows();
  const projects = useProjects();
  const boards = useQueries({
    queries: (projects.data ?? []).map((p) => ({ queryKey: projectKeys.detail(p.project.id), queryFn: () => api.getProject(p.project.id) })),
  });
  const [words, setWords] = useState("");
  const [index, setIndex] = useState(0);
  const boardData = boards.map((b) => b.data);
  const all = [
      ...(workflows.data ?? []).map((w) => ({ label: w.title, href: workflowHref(w.id), words: w.name })),
      ...(projects.data ?? []).map((p) => ({ label: `Project \u201c${p.project.name}\u201d`, href: projectHref(p.project.id), words: p.project.path })),
      ...boardData.flatMap((board) =>
        (board?.tasks ?? []).map((t) => ({
          label: `${t.task.title} \u2014 ${board?.project.name ?? ""}`,
          href: projectTaskHref(board?.project.id ?? 0, t.task.id),
          words: (t.task.labels ?? []).join(" "),
        })),
      ),
      ...places,
  ];
  const terms = words.trim().toLowerCase().split(/\s+/).filter(Boolean);
  const found = all.filter((p) => terms.every((t) => `${p.label} ${p.words ?? ""}`.toLowerCase().includes(t))).slice(0, 30);
  const chosen = Math.min(index, Math.max(0, found.length - 1));

  function go(href: string) {
    onClose();
    navigate(href);
  }

  function onKeyDown(event: KeyboardEvent) {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      const step = event.key === "ArrowDown" ? 1 : -1;
      setIndex((chosen + step + found.length) % Math.max(1, found.length));
    } else if (event.key === "Enter" && found[chosen]) {
      event.preventDefault();
      go(found[chosen].href);
    }
  }

  return (
    <Dialog title="Go to" onCancel={onClose} actions={<button type="button" className="button" onClick={onClose}>Close</button>}>
      <input
        className="input"
        data-autofocus
        placeholder="A workflow, a project, a task or a page"
        aria-label="A workflow, a project, a task or a page"
        value={words}
        onChange={(e) => {
          setWords(e.target.value);
          setIndex(0);
        }}
        onKeyDown={onKeyDown}
        data-testid="quick-jump-input"
      />
      <ul className="quick-jump-list" role="listbox" aria-label="Places">
        {found.map((p, i) => (
          <li key={p.href}>
            <button type="button" role="option" aria-selected={i === chosen} title={p.label} onClick={() => go(p.href)} data-testid="quick-jump-item">
              {p.label}
            </button>
          </li>
        ))}
        {found.length === 0 && <li className="muted">Nothing by that name.</li>}
      </ul>
    </Dialog>
  );
}
