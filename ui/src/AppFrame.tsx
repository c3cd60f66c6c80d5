import { useEffect, useRef, useState } from "react";
import type { AppInfo } from "./bindings";
import { useCheckpoints } from "./checkpointQueries";
import { CheckpointPrompt } from "./CheckpointPrompt";
import { PostponedBanner } from "./components/PostponedBanner";
import { Shortcuts } from "./components/QuickJump";
import { SchedulerPauseBanner } from "./components/SchedulerPauseBanner";
import { usePostponed } from "./postponed";
import { Toasts } from "./toasts";
import { LiveOutput, LiveOutputContext } from "./liveOutput";
import { LiveThreads, LiveThreadsContext } from "./liveThreads";
import { ActivityPage } from "./pages/ActivityPage";
import { CheckpointsPage } from "./pages/CheckpointsPage";
import { SessionsPage } from "./pages/SessionsPage";
import { MemoryPage } from "./pages/memory/MemoryPage";
import { NotificationsPage } from "./pages/NotificationsPage";
import { AddProjectPage, EditProjectPage } from "./pages/projects/ProjectFormPage";
import { ProjectPage } from "./pages/projects/ProjectPage";
import { ProjectsPage } from "./pages/projects/ProjectsPage";
import { TaskPage } from "./pages/projects/TaskPage";
import { SettingsPage } from "./pages/SettingsPage";
import { SetupPage } from "./pages/setup/SetupPage";
import { WorkflowPage } from "./pages/workflow/WorkflowPage";
import { EditWorkflowPage, NewWorkflowPage } from "./pages/workflowForm/WorkflowFormPage";
import { WorkflowsPage } from "./pages/WorkflowsPage";
import { Sidebar } from "./Sidebar";
import { useLiveEvents } from "./useLiveEvents";
import { screenKey, useRoute, type Route } from "./usePage";
import { useRememberView, useRestoreScroll } from "./viewMemory";

function CurrentScreen({ route, info }: { route: Route; info: AppInfo }) {
  switch (route.page) {
    case "workflows":
      switch (route.view) {
        case "list":
          return <WorkflowsPage />;
        case "new":
          return <NewWorkflowPage />;
        case "workflow":
          return <WorkflowPage key={route.id} id={route.id} tab={route.tab} item={route.item} focus={route.focus} />;
        case "edit":
          return <EditWorkflowPage key={route.id} id={route.id} />;
      }
      break;
    case "projects":
      switch (route.view) {
        case "list":
          return <ProjectsPage />;
        case "new":
          return <AddProjectPage />;
        case "project":
          return <ProjectPage key={route.id} id={route.id} />;
        case "edit":
          return <EditProjectPage key={route.id} id={route.id} />;
        case "task":
          return <TaskPage key={`${route.id}/${route.taskId}/${route.session ?? ""}`} projectId={route.id} taskId={route.taskId} session={route.session} />;
      }
      break;
    case "activity":
      return <ActivityPage view={route.view} />;
    case "notifications":
      return <NotificationsPage />;
    case "checkpoints":
      return <CheckpointsPage />;
    case "sessions":
      return <SessionsPage />;
    case "memory":
      return <MemoryPage key={route.signature ?? ""} signature={route.signature} />;
    case "settings":
      return <SettingsPage info={info} section={route.section} />;
    case "setup":
      return <SetupPage />;
  }
}

export function AppFrame({ info }: { info: AppInfo }) {
  const route = useRoute();
  const [output] = useState(() => new LiveOutput());
  const [threads] = useState(() => new LiveThreads());
  useLiveEvents(output, threads);
  // While Healer waits for a decision, its question is the only thing that can be used —
  // unless the person chose to decide later.
  const waiting = useCheckpoints().data?.pending ?? [];
  const later = usePostponed();
  const pending = waiting.filter((c) => !later.has(c.id));
  const putOff = waiting.filter((c) => later.has(c.id));

  // Each screen starts at its top, as a new window would; switching tabs keeps the place.
  const key = screenKey(route);
  const main = useRef<HTMLElement>(null);
  useEffect(() => {
    if (main.current) main.current.scrollTop = 0;
  }, [key]);
  // A window made again after a close opens where the last one was.
  useRestoreScroll(main);
  useRememberView(main);

  return (
    <LiveOutputContext value={output}>
      <LiveThreadsContext value={threads}>
        <div className="app-frame" inert={pending.length > 0}>
          <Sidebar current={route.page} version={info.version} />
          <main className="content" ref={main}>
            <div className="content-inner">
              <SchedulerPauseBanner />
              <PostponedBanner waiting={putOff} />
              <CurrentScreen route={route} info={info} />
            </div>
          </main>
        </div>
        <CheckpointPrompt pending={pending} />
        <Toasts />
        <Shortcuts />
      </LiveThreadsContext>
    </LiveOutputContext>
  );
}
