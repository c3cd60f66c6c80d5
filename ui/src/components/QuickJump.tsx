import { useEffect, useMemo, useState, type KeyboardEvent } from "react";
import { places } from "../places";
import { useWorkflows } from "../queries";
import { navigate, newWorkflowHref, workflowHref } from "../usePage";
import { Dialog } from "./Dialog";

/** Ctrl+N: a new workflow. Ctrl+K: jump to any workflow or page by typing part of its name. */
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
        navigate(newWorkflowHref);
      }
    }
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);
  return open ? <QuickJump onClose={() => setOpen(false)} /> : null;
}

function QuickJump({ onClose }: { onClose: () => void }) {
  const workflows = useWorkflows();
  const [words, setWords] = useState("");
  const [index, setIndex] = useState(0);
  const all = useMemo(
    () => [
      ...(workflows.data ?? []).map((w) => ({ label: w.title, href: workflowHref(w.id), words: w.name })),
      ...places,
    ],
    [workflows.data],
  );
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
        placeholder="A workflow or a page"
        aria-label="A workflow or a page"
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
