// Checkpoints the person chose to decide later: they stay pending in the engine (their workflow
// waits), the dialog closes, and the sidebar count and a banner keep them in view. Kept for the
// session: after a restart Healer asks again, as it should about anything still waiting.
import { useSyncExternalStore } from "react";

let later: ReadonlySet<number> = new Set();
const listeners = new Set<() => void>();

function set(next: ReadonlySet<number>) {
  later = next;
  for (const listener of listeners) listener();
}

export function postpone(id: number) {
  set(new Set([...later, id]));
}

/** Brings every postponed question back. */
export function decideNow() {
  set(new Set());
}

function subscribe(listener: () => void) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function usePostponed(): ReadonlySet<number> {
  return useSyncExternalStore(subscribe, () => later);
}
