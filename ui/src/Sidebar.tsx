import type { ReactNode } from "react";
import { useCheckpoints } from "./checkpointQueries";
import { ActivityIcon, BellIcon, FlagIcon, MemoryIcon, ProjectsIcon, SessionsIcon, SettingsIcon, WorkflowsIcon } from "./components/icons";
import { HeartbeatLogo } from "./components/HeartbeatLogo";
import { useNotifications } from "./queries";
import { pageHref, type Page } from "./usePage";

function NavLink({ page, current, icon, label, badge }: { page: Page; current: Page; icon: ReactNode; label: string; badge?: ReactNode }) {
  return (
    <a
      className="nav-link"
      href={pageHref(page)}
      data-testid={`nav-${page}`}
      aria-current={page === current ? "page" : undefined}
    >
      {icon}
      <span className="nav-label">{label}</span>
      {badge}
    </a>
  );
}

function UnreadBadge() {
  const unread = useNotifications().data?.unread ?? 0;
  if (unread <= 0) return null;
  return (
    <span className="badge" data-testid="unread-count" aria-label={`${unread} unread`}>
      {unread}
    </span>
  );
}

function PendingBadge() {
  const pending = useCheckpoints().data?.pending.length ?? 0;
  if (pending <= 0) return null;
  return (
    <span className="badge" data-testid="checkpoint-count" aria-label={`${pending} waiting for you`}>
      {pending}
    </span>
  );
}

export function Sidebar({ current, version }: { current: Page; version: string }) {
  return (
    <nav className="sidebar" aria-label="Main">
      <div className="brand">
        <HeartbeatLogo />
        <span className="brand-name">Healer</span>
      </div>
      <div className="nav-list">
        <NavLink page="workflows" current={current} icon={<WorkflowsIcon />} label="Workflows" />
        <NavLink page="projects" current={current} icon={<ProjectsIcon />} label="Projects" />
        <NavLink page="sessions" current={current} icon={<SessionsIcon />} label="Sessions" />
        <NavLink page="activity" current={current} icon={<ActivityIcon />} label="Activity" />
        <NavLink page="notifications" current={current} icon={<BellIcon />} label="Notifications" badge={<UnreadBadge />} />
        <NavLink page="checkpoints" current={current} icon={<FlagIcon />} label="Checkpoints" badge={<PendingBadge />} />
        <NavLink page="memory" current={current} icon={<MemoryIcon />} label="Memory" />
        <NavLink page="settings" current={current} icon={<SettingsIcon />} label="Settings" />
      </div>
      <div className="sidebar-footer">Version {version}</div>
    </nav>
  );
}
