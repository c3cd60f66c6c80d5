import { useQueryClient, type QueryClient } from "@tanstack/react-query";
import { useEffect } from "react";
import { events, type Event, type EventRecord } from "./bindings";
import { checkpointKeys } from "./checkpointQueries";
import { clusterKeys } from "./clusterQueries";
import { mergeEvents } from "./eventList";
import type { LiveOutput } from "./liveOutput";
import type { LiveThreads } from "./liveThreads";
import { memoryKeys } from "./memoryQueries";
import { appendLiveStep, projectKeys } from "./projectQueries";
import { modelKeys, queryKeys, workflowKeys } from "./queries";
import { showsTask, taskKeys } from "./taskQueries";

/** The cached answers an engine event makes out of date. */
function staleKeys(event: Event): (readonly unknown[])[] {
  switch (event.kind) {
    case "notification_created":
    case "notification_updated":
      return [queryKeys.notifications];
    case "workflow_created":
      return [workflowKeys.list];
    case "workflow_changed":
    case "workflow_deleted":
      // Where it runs is part of a workflow's settings.
      return [workflowKeys.list, workflowKeys.detail(event.workflow_id), clusterKeys.runsOn(event.workflow_id)];
    case "version_saved":
      return [
        workflowKeys.list,
        workflowKeys.detail(event.workflow_id),
        workflowKeys.versions(event.workflow_id),
        workflowKeys.dependencies(event.workflow_id),
      ];
    case "environment_built":
      return [workflowKeys.dependencies(event.workflow_id)];
    case "run_started":
    case "attempt_finished":
    case "run_finished":
      return [
        workflowKeys.list,
        workflowKeys.detail(event.workflow_id),
        workflowKeys.runs(event.workflow_id),
        workflowKeys.run(event.run_id),
        // A run installs what its version declares before its script starts.
        workflowKeys.dependencies(event.workflow_id),
        // A fix's re-run: its auto-fix says how the re-run went (each open one, below).
        taskKeys.autofixes(event.workflow_id),
      ];
    case "breaker_tripped": {
      // A breaker logs a decision, may pause the scheduler, flag a workflow, roll one back or notify.
      const keys = [memoryKeys.decisions, memoryKeys.schedulerPause, workflowKeys.list, queryKeys.notifications];
      return event.workflow_id === null ? keys : [...keys, workflowKeys.detail(event.workflow_id)];
    }
    case "scheduler_paused":
      return [memoryKeys.schedulerPause];
    case "llm_settings_changed":
      // A notice about a missing model offers the repair once one is set up.
      return [modelKeys.providers, modelKeys.tiers, modelKeys.budgets, modelKeys.usage, queryKeys.notifications];
    case "cluster_changed":
      return [clusterKeys.status, ["runs-on"]];
    case "task_message_added":
    case "task_finished":
      // A step's model call has been counted; the thread itself is found by its task below.
      return [modelKeys.usage, taskKeys.autofix(event.task_id)];
    case "maintenance_started":
      return [
        workflowKeys.list,
        workflowKeys.detail(event.workflow_id),
        taskKeys.autofixes(event.workflow_id),
        taskKeys.autofix(event.task_id),
      ];
    case "maintenance_finished": {
      const keys = [workflowKeys.list, workflowKeys.detail(event.workflow_id), taskKeys.autofixes(event.workflow_id)];
      return event.task_id === null ? keys : [...keys, taskKeys.autofix(event.task_id)];
    }
    case "planner_replied":
      return [taskKeys.chat(event.workflow_id)];
    case "session_finished":
      return [projectKeys.session(event.session_id)];
    case "checkpoint_created":
    case "checkpoint_updated":
      return [checkpointKeys.list];
    case "checkpoint_decided": {
      // Skip marks the run skipped and may make the workflow active again, with no event of its own.
      const id = event.workflow_id;
      return id === null
        ? [checkpointKeys.list]
        : [checkpointKeys.list, workflowKeys.list, workflowKeys.detail(id), workflowKeys.runs(id)];
    }
    default:
      return [];
  }
}

/**
 * Whether the event may change what Memory shows. The engine announces no event of its own for
 * that: an error is remembered when its heal starts, a fix when its repair ends, and a fix is
 * judged by its re-run (or undone by a breaker).
 */
function touchesMemory(event: Event): boolean {
  switch (event.kind) {
    case "heal_started":
    case "maintenance_finished":
    case "run_finished":
    case "breaker_tripped":
      return true;
    default:
      return false;
  }
}

function touchesProjects(event: Event): boolean {
  switch (event.kind) {
    case "project_added":
    case "project_changed":
    case "project_removed":
    case "project_tasks_changed":
    case "session_started":
    case "session_finished":
    case "healer_invocation_start":
    case "healer_spell_applied":
    case "healer_invocation_complete":
      return true;
    default:
      return false;
  }
}

/** Streamed text gives way to what the engine stored; a thread event names its task. */
function threadTask(event: Event, threads: LiveThreads): number | null {
  if (event.kind === "task_message_added") {
    threads.stored(event.task_id, event.message_id);
    return event.task_id;
  }
  if (event.kind === "task_finished") {
    threads.ended(event.task_id);
    return event.task_id;
  }
  return null;
}

function receive(queryClient: QueryClient, threads: LiveThreads, record: EventRecord) {
  const known = queryClient.getQueryData<EventRecord[]>(queryKeys.events);
  if (known) {
    queryClient.setQueryData(queryKeys.events, mergeEvents([record], known));
  } else {
    // A first load may be in flight and have read the log before this event was stored;
    // restarting it guarantees the event is in what the page shows.
    void queryClient.invalidateQueries({ queryKey: queryKeys.events });
  }
  for (const queryKey of staleKeys(record.event)) {
    void queryClient.invalidateQueries({ queryKey, exact: true });
  }
  if (touchesMemory(record.event)) void queryClient.invalidateQueries({ queryKey: memoryKeys.all });
  if (record.event.kind === "run_finished") void queryClient.invalidateQueries({ queryKey: ["autofix"] });
  // Boards, task pages and the list all read the task lists and sessions.
  if (touchesProjects(record.event)) void queryClient.invalidateQueries({ queryKey: projectKeys.all });
  const taskId = threadTask(record.event, threads);
  if (taskId !== null) void queryClient.invalidateQueries({ predicate: (query) => showsTask(query, taskId) });
}

/**
 * Starts listening; the returned function stops, even if listening has not started yet.
 * `listening` runs once events are being received.
 */
function follow(listen: () => Promise<() => void>, what: string, listening?: () => void): () => void {
  let stopped = false;
  let unlisten: (() => void) | undefined;
  listen()
    .then((stop) => {
      // The effect may have been cleaned up before listening finished.
      if (stopped) stop();
      else {
        unlisten = stop;
        listening?.();
      }
    })
    .catch((error: unknown) => console.error(`Healer: cannot follow ${what}`, error));
  return () => {
    stopped = true;
    unlisten?.();
  };
}

/**
 * Feeds engine events, what running scripts print, what models write and the steps of agent
 * sessions into the app while the frame is shown.
 */
export function useLiveEvents(output: LiveOutput, threads: LiveThreads) {
  const queryClient = useQueryClient();
  useEffect(
    () =>
      follow(
        () => events.healerEvent.listen(({ payload }) => receive(queryClient, threads, payload)),
        "engine events",
        // What the window read before it was listening may have changed in between (another
        // program's request answered while the window was opening): everything shown is read
        // again once no change can be missed.
        () => void queryClient.invalidateQueries(),
      ),
    [queryClient, threads],
  );
  useEffect(
    () => follow(() => events.eventsMissed.listen(() => void queryClient.invalidateQueries()), "missed events"),
    [queryClient],
  );
  useEffect(() => follow(() => events.runOutput.listen(({ payload }) => output.append(payload)), "script output"), [output]);
  useEffect(
    () => follow(() => events.threadTextEvent.listen(({ payload }) => threads.append(payload)), "model text"),
    [threads],
  );
  useEffect(
    () => follow(() => events.sessionStepEvent.listen(({ payload }) => appendLiveStep(queryClient, payload)), "agent sessions"),
    [queryClient],
  );
}
