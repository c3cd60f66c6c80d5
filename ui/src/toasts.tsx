// Short confirmations ("Saved as version 2.0") that come and go at the window's corner. A plain
// external store: any code may say something, one component shows it.
import { useSyncExternalStore } from "react";

export type Toast = { id: number; text: string };

/** How long a confirmation stays. */
export const TOAST_MS = 4000;

let toasts: Toast[] = [];
let nextId = 1;
const listeners = new Set<() => void>();

function changed(next: Toast[]) {
  toasts = next;
  for (const listener of listeners) listener();
}

/** Says `text` for a few seconds. */
export function toast(text: string) {
  const id = nextId++;
  changed([...toasts, { id, text }]);
  setTimeout(() => changed(toasts.filter((t) => t.id !== id)), TOAST_MS);
}

/** Takes every toast away at once. */
export function clearToasts() {
  changed([]);
}

function subscribe(listener: () => void) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function Toasts() {
  const shown = useSyncExternalStore(subscribe, () => toasts);
  return (
    <div className="toasts" role="status" aria-live="polite" data-testid="toasts">
      {shown.map((t) => (
        <div key={t.id} className="toast" data-testid="toast">
          {t.text}
        </div>
      ))}
    </div>
  );
}
