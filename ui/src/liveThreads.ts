// What a model is writing in a task's thread, as it arrives. The engine stores each step once it
// is complete (and says so with task_message_added); until then the pieces live only here. Once
// stored, the text stays until the thread on screen has the stored step, so it never blinks out.
import { createContext, useCallback, useContext, useSyncExternalStore } from "react";
import type { ThreadText } from "./bindings";

/** Per task; older text is dropped first. */
const MAX_CHARS = 64 * 1024;
/** Tasks whose text is kept at once. */
const MAX_TASKS = 12;

/** A step's text so far; `storedAs`: the id of the message that stores it, once it is stored. */
type Entry = { text: string; storedAs: number | null };

export class LiveThreads {
  private entries = new Map<number, Entry>();
  private listeners = new Set<() => void>();

  append({ task_id, text }: ThreadText) {
    const entry = this.entries.get(task_id);
    // Text after a stored step belongs to the next one.
    const next = (entry && entry.storedAs === null ? entry.text : "") + text;
    // Re-inserted, so the map's order is least recently written first.
    this.entries.delete(task_id);
    this.entries.set(task_id, { text: next.length > MAX_CHARS ? next.slice(next.length - MAX_CHARS) : next, storedAs: null });
    while (this.entries.size > MAX_TASKS) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
    this.changed();
  }

  /** A step of the task was stored as message `messageId`: that message shows the text from now on. */
  stored(taskId: number, messageId: number) {
    const entry = this.entries.get(taskId);
    if (entry && entry.storedAs === null) {
      this.entries.set(taskId, { ...entry, storedAs: messageId });
      this.changed();
    }
  }

  /** The task ended: text that was never stored was abandoned. */
  ended(taskId: number) {
    if (this.entries.get(taskId)?.storedAs === null) {
      this.entries.delete(taskId);
      this.changed();
    }
  }

  /** What to show after a thread whose newest message is `shownUpTo`. */
  text(taskId: number, shownUpTo: number): string {
    const entry = this.entries.get(taskId);
    if (!entry || (entry.storedAs !== null && shownUpTo >= entry.storedAs)) return "";
    return entry.text;
  }

  subscribe = (listener: () => void) => {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  };

  private changed() {
    for (const listener of this.listeners) listener();
  }
}

export const LiveThreadsContext = createContext<LiveThreads | null>(null);

/**
 * What the model is writing in task `taskId`'s next step, live, for a thread shown up to message
 * `shownUpTo`; empty when nothing is.
 */
export function useLiveThreadText(taskId: number | null, shownUpTo: number): string {
  const store = useContext(LiveThreadsContext);
  if (!store) throw new Error("LiveThreadsContext is not provided");
  const read = useCallback(() => (taskId === null ? "" : store.text(taskId, shownUpTo)), [store, taskId, shownUpTo]);
  return useSyncExternalStore(store.subscribe, read);
}

/** The id of the newest of `messages`, or 0. */
export function newestId(messages: { id: number }[]): number {
  return messages.reduce((max, m) => Math.max(max, m.id), 0);
}
