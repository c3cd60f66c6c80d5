import type { EventRecord } from "./bindings";

// A window left open for weeks must not grow without bound; older events stay in the store.
// A list the person has scrolled further back keeps its length: the oldest make room.
const MAX_KEPT = 1000;

/** Newest first, one entry per id. */
export function mergeEvents(incoming: EventRecord[], known: EventRecord[]): EventRecord[] {
  return byIdNewestFirst([...known, ...incoming]).slice(0, Math.max(MAX_KEPT, known.length));
}

/** `older` (a page loaded on scroll) after what is shown, one entry per id. */
export function appendOlderEvents(known: EventRecord[], older: EventRecord[]): EventRecord[] {
  return byIdNewestFirst([...known, ...older]);
}

function byIdNewestFirst(records: EventRecord[]): EventRecord[] {
  const byId = new Map<number, EventRecord>();
  for (const record of records) byId.set(record.id, record);
  return [...byId.values()].sort((a, b) => b.id - a.id);
}
