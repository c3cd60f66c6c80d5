import { useSyncExternalStore } from "react";

export const pages = ["workflows", "projects", "sessions", "activity", "notifications", "checkpoints", "memory", "settings", "setup"] as const;
export type Page = (typeof pages)[number];

export const workflowTabs = ["runs", "autofix", "versions", "script", "dependencies", "chat"] as const;
export type WorkflowTab = (typeof workflowTabs)[number];

export const settingsSections = ["general", "models", "computers"] as const;
export type SettingsSection = (typeof settingsSections)[number];

/** Activity shows the engine's events, or the decisions Healer made on its own. */
export const activityViews = ["events", "decisions"] as const;
export type ActivityView = (typeof activityViews)[number];

/**
 * Where the person is: a sidebar page, and for Workflows which of its screens. On a workflow,
 * `item` is what the tab opens at (Runs: a run, Auto-fix: a task), and `focus` puts the cursor
 * in the chat's message box.
 */
export type Route =
  | { page: "workflows"; view: "list" }
  | { page: "workflows"; view: "new" }
  | { page: "workflows"; view: "workflow"; id: number; tab: WorkflowTab; item: number | null; focus: boolean }
  | { page: "workflows"; view: "edit"; id: number }
  /** Projects: the list, the add form, a project's board, its settings, one of its tasks. */
  | { page: "projects"; view: "list" }
  | { page: "projects"; view: "new" }
  | { page: "projects"; view: "project"; id: number }
  | { page: "projects"; view: "edit"; id: number }
  /** `session`: the session shown (else the latest). */
  | { page: "projects"; view: "task"; id: number; taskId: string; session?: number }
  | { page: "settings"; section: SettingsSection }
  | { page: "activity"; view: ActivityView }
  /** Memory's list of error signatures, or one of them (`signature`). */
  | { page: "memory"; signature: string | null }
  | { page: Exclude<Page, "workflows" | "projects" | "settings" | "activity" | "memory"> };

export function pageHref(page: Page): string {
  return `#/${page}`;
}

export const newWorkflowHref = "#/workflows/new";

/** The guided first step: a provider, its key, a test, models for the tiers. */
export const setupHref = "#/setup";

export function workflowHref(id: number, tab: WorkflowTab = "runs"): string {
  return tab === "runs" ? `#/workflows/${id}` : `#/workflows/${id}/${tab}`;
}

/** The Runs tab with run `runId` open. */
export function runHref(workflowId: number, runId: number): string {
  return `#/workflows/${workflowId}/runs/${runId}`;
}

/** One auto-fix task's thread; without a task, the list. */
export function autofixHref(workflowId: number, taskId?: number): string {
  return taskId === undefined ? workflowHref(workflowId, "autofix") : `#/workflows/${workflowId}/autofix/${taskId}`;
}

/** The chat with the planner; `focus` puts the cursor in the message box, ready to write. */
export function chatHref(workflowId: number, { focus = false } = {}): string {
  return focus ? `#/workflows/${workflowId}/chat?focus=message` : workflowHref(workflowId, "chat");
}

export function settingsHref(section: SettingsSection): string {
  return section === "general" ? pageHref("settings") : `#/settings/${section}`;
}

export function activityHref(view: ActivityView): string {
  return view === "events" ? pageHref("activity") : `#/activity/${view}`;
}

/** Memory's list; with a signature, that error and the fixes tried for it. */
export function memoryHref(signature?: string): string {
  return signature === undefined ? pageHref("memory") : `#/memory/${encodeURIComponent(signature)}`;
}

export const newProjectHref = "#/projects/new";

export function projectHref(id: number): string {
  return `#/projects/${id}`;
}

export function editProjectHref(id: number): string {
  return `#/projects/${id}/settings`;
}

export function projectTaskHref(id: number, taskId: string, session?: number): string {
  const task = `#/projects/${id}/tasks/${encodeURIComponent(taskId)}`;
  return session === undefined ? task : `${task}/sessions/${session}`;
}

function projectRoute(parts: string[]): Route {
  const [, second, third, fourth, fifth, sixth] = parts;
  if (second === "new") return { page: "projects", view: "new" };
  if (second && /^\d+$/.test(second)) {
    const id = Number(second);
    if (third === "settings") return { page: "projects", view: "edit", id };
    if (third === "tasks" && fourth) {
      const session = fifth === "sessions" && sixth && /^\d+$/.test(sixth) ? Number(sixth) : undefined;
      return { page: "projects", view: "task", id, taskId: safeDecode(fourth), session };
    }
    return { page: "projects", view: "project", id };
  }
  return { page: "projects", view: "list" };
}

export function editWorkflowHref(id: number): string {
  return `#/workflows/${id}/edit`;
}

/** Goes to `href` as a click on a link would. */
export function navigate(href: string) {
  window.location.hash = href;
}

export function routeFromHash(hash: string): Route {
  const [path, query = ""] = hash.replace(/^#\/?/, "").split("?");
  const parts = path.split("/").filter(Boolean);
  const page = pages.find((p) => p === parts[0]) ?? "workflows";
  if (page === "settings") return { page, section: settingsSections.find((s) => s === parts[1]) ?? "general" };
  if (page === "activity") return { page, view: activityViews.find((v) => v === parts[1]) ?? "events" };
  if (page === "memory") return { page, signature: parts[1] ? safeDecode(parts[1]) : null };
  if (page === "projects") return projectRoute(parts);
  if (page !== "workflows") return { page };
  const [, second, third, fourth] = parts;
  if (second === "new") return { page, view: "new" };
  if (second && /^\d+$/.test(second)) {
    const id = Number(second);
    if (third === "edit") return { page, view: "edit", id };
    const tab = workflowTabs.find((t) => t === third) ?? "runs";
    const opensItem = tab === "runs" || tab === "autofix";
    const item = opensItem && fourth && /^\d+$/.test(fourth) ? Number(fourth) : null;
    const focus = tab === "chat" && new URLSearchParams(query).get("focus") === "message";
    return { page, view: "workflow", id, tab, item, focus };
  }
  return { page, view: "list" };
}

function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/**
 * A screen with unsaved work can hold the window on itself: a link, the sidebar or a shortcut
 * that would leave is turned back, and `ask` is told where the person wanted to go.
 */
export type LeaveGuard = { stays: (hash: string) => boolean; ask: (hash: string) => void };

let leaveGuard: LeaveGuard | null = null;
let shownHash = typeof window === "undefined" ? "" : window.location.hash;

export function setLeaveGuard(guard: LeaveGuard | null) {
  leaveGuard = guard;
}

// Registered before React subscribes, so a turned-back change is never rendered.
if (typeof window !== "undefined") {
  window.addEventListener("hashchange", () => {
    const next = window.location.hash;
    if (leaveGuard && !leaveGuard.stays(next)) {
      window.history.replaceState(null, "", shownHash || "#/");
      leaveGuard.ask(next);
      return;
    }
    shownHash = next;
  });
}

function subscribe(onChange: () => void) {
  window.addEventListener("hashchange", onChange);
  return () => window.removeEventListener("hashchange", onChange);
}

function currentHash(): string {
  return window.location.hash;
}

/** The URL hash, which names the screen; anything unknown shows Workflows. */
export function useRoute(): Route {
  const hash = useSyncExternalStore(subscribe, currentHash);
  return routeFromHash(hash);
}

/** The sidebar page the current screen belongs to. */
export function usePage(): Page {
  return useRoute().page;
}

/** Changes whenever a different screen is shown (a tab change is not one). */
export function screenKey(route: Route): string {
  if (route.page === "memory") return route.signature === null ? "memory" : `memory/${route.signature}`;
  if (route.page === "projects") {
    switch (route.view) {
      case "list":
      case "new":
        return `projects/${route.view}`;
      case "project":
      case "edit":
        return `projects/${route.id}/${route.view}`;
      case "task":
        return `projects/${route.id}/task/${route.taskId}`;
    }
  }
  if (route.page !== "workflows") return route.page;
  switch (route.view) {
    case "list":
    case "new":
      return `workflows/${route.view}`;
    case "workflow":
    case "edit":
      return `workflows/${route.id}/${route.view}`;
  }
}
