// What running attempts print, as it arrives. The engine does not keep these chunks (the attempt
// stores its whole log when it ends), so the app gathers them from the moment it opens, whether
// or not the run is on screen yet.
import { createContext, useCallback, useContext, useSyncExternalStore } from "react";
import type { OutputChunk, OutputStream } from "./bindings";

export type LiveLog = {
  stdout: string;
  stderr: string;
  /** Characters dropped from the start of each stream to keep the window's memory bounded. */
  droppedStdout: number;
  droppedStderr: number;
};

/** Per stream of one attempt; older text is dropped first. */
const MAX_CHARS = 256 * 1024;
/** Runs whose output is kept; the stored log takes over once an attempt ends. */
const MAX_RUNS = 12;

const key = (runId: number, attempt: number) => `${runId}:${attempt}`;

/**
 * How often the screen learns of new output at most. A script printing thousands of lines a
 * second arrives as thousands of chunks; drawing each one would freeze the window, so chunks
 * are gathered and the screen is told once per interval.
 */
export const LIVE_BATCH_MS = 100;

export class LiveOutput {
  private logs = new Map<string, LiveLog>();
  private latest = new Map<number, number>();
  private listeners = new Set<() => void>();
  private pending: ReturnType<typeof setTimeout> | null = null;

  append({ run_id, attempt, stream, text }: OutputChunk) {
    const k = key(run_id, attempt);
    const log = this.logs.get(k) ?? { stdout: "", stderr: "", droppedStdout: 0, droppedStderr: 0 };
    // A new object per change, so a snapshot taken before stays what it was.
    this.logs.set(k, appendTo(log, stream, text));
    this.latest.set(run_id, Math.max(attempt, this.latest.get(run_id) ?? 0));
    this.forgetOldRuns();
    if (this.pending === null) {
      this.pending = setTimeout(() => this.flush(), LIVE_BATCH_MS);
    }
  }

  /** Tells the screen about everything gathered so far, now. */
  flush() {
    if (this.pending !== null) clearTimeout(this.pending);
    this.pending = null;
    for (const listener of this.listeners) listener();
  }

  log(runId: number, attempt: number): LiveLog | undefined {
    return this.logs.get(key(runId, attempt));
  }

  /** The highest attempt of `runId` that printed anything, or 0. */
  latestAttempt(runId: number): number {
    return this.latest.get(runId) ?? 0;
  }

  subscribe = (listener: () => void) => {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  };

  private forgetOldRuns() {
    while (this.latest.size > MAX_RUNS) {
      const oldest = Math.min(...this.latest.keys());
      const attempts = this.latest.get(oldest) ?? 0;
      for (let a = 1; a <= attempts; a++) this.logs.delete(key(oldest, a));
      this.latest.delete(oldest);
    }
  }
}

function appendTo(log: LiveLog, stream: OutputStream, text: string): LiveLog {
  const field = stream === "stdout" ? "stdout" : "stderr";
  const dropped = stream === "stdout" ? "droppedStdout" : "droppedStderr";
  let next = log[field] + text;
  let cut = 0;
  if (next.length > MAX_CHARS) {
    cut = next.length - MAX_CHARS;
    next = next.slice(cut);
  }
  return { ...log, [field]: next, [dropped]: log[dropped] + cut };
}

export const LiveOutputContext = createContext<LiveOutput | null>(null);

function useStore(): LiveOutput {
  const store = useContext(LiveOutputContext);
  if (!store) throw new Error("LiveOutputContext is not provided");
  return store;
}

/** What attempt `attempt` of run `runId` has printed so far, live. */
export function useLiveLog(runId: number, attempt: number): LiveLog | undefined {
  const store = useStore();
  const read = useCallback(() => store.log(runId, attempt), [store, runId, attempt]);
  return useSyncExternalStore(store.subscribe, read);
}

export function useLatestLiveAttempt(runId: number): number {
  const store = useStore();
  const read = useCallback(() => store.latestAttempt(runId), [store, runId]);
  return useSyncExternalStore(store.subscribe, read);
}
