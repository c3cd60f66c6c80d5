import type { Notification } from "../bindings";
import { EmptyState } from "../components/EmptyState";
import { BellIcon, XIcon } from "../components/icons";
import { InlineError } from "../components/InlineError";
import { SkeletonList } from "../components/Loading";
import { PageHeader } from "../components/PageHeader";
import { RelativeTime } from "../components/RelativeTime";
import { failedSince } from "../eventText";
import { useDismissNotification, useMarkNotificationsRead, useNotifications, useWorkflows } from "../queries";
import { useNow } from "../time";
import { NotificationActions } from "./NotificationActions";
import { NotificationKindBadge } from "./NotificationKindBadge";

/**
 * Notifications in groups, one per workflow or project (Healer's own in one), each group newest
 * first, the groups in the order of their newest notification.
 */
export function groupByWorkflow(items: Notification[], titles: Map<number, string>): { key: string; title: string; items: Notification[] }[] {
  const groups = new Map<string, { key: string; title: string; items: Notification[] }>();
  for (const item of items) {
    const key = item.project_id !== null ? `p${item.project_id}` : item.workflow_id === null ? "healer" : `w${item.workflow_id}`;
    const title =
      item.project_id !== null
        ? `Project \u201c${item.project_name ?? "a removed project"}\u201d`
        : item.workflow_id === null
          ? "Healer"
          : (titles.get(item.workflow_id) ?? "A deleted workflow");
    const group = groups.get(key) ?? { key, title, items: [] };
    group.items.push(item);
    groups.set(key, group);
  }
  return [...groups.values()];
}

function NotificationRow({ item, now, onOpen, onDismiss }: { item: Notification; now: number; onOpen: () => void; onDismiss: () => void }) {
  return (
    <li className={item.read ? "notification-entry" : "notification-entry unread"} data-kind={item.kind} data-resolved={String(item.resolved)}>
      <button
        type="button"
        className={item.read ? "list-row notification" : "list-row notification unread"}
        data-testid="notification-item"
        data-read={String(item.read)}
        data-kind={item.kind}
        onClick={onOpen}
      >
        <span className={item.read ? "unread-dot read" : "unread-dot"} aria-label={item.read ? undefined : "Unread"} />
        <span className="row-text">
          <span className="row-title">{item.title}</span>
          <NotificationKindBadge kind={item.kind} />
          {item.resolved && (
            <span className="status-badge tone-good" data-testid="notification-resolved" title="The workflow ran green since">
              Resolved
            </span>
          )}
          <span className="row-detail notification-body">{item.body}</span>
          {item.repeats > 0 && (
            <span className="row-detail notification-repeats" data-testid="notification-repeats">
              {failedSince(item.repeats)}
              {item.repeated_at && (
                <>
                  {" "}
                  Last: <RelativeTime iso={item.repeated_at} now={now} />.
                </>
              )}
            </span>
          )}
        </span>
        <RelativeTime iso={item.created_at} now={now} />
      </button>
      <button
        type="button"
        className="icon-button notification-dismiss"
        aria-label={`Dismiss “${item.title}”`}
        title="Dismiss"
        data-testid="notification-dismiss"
        onClick={onDismiss}
      >
        <XIcon size={14} />
      </button>
      <NotificationActions item={item} onAct={onOpen} />
    </li>
  );
}

export function NotificationsPage() {
  const list = useNotifications();
  const markRead = useMarkNotificationsRead();
  const dismiss = useDismissNotification();
  const workflows = useWorkflows();
  const titles = new Map((workflows.data ?? []).map((w) => [w.id, w.title] as const));
  const now = useNow();
  const unread = list.data?.unread ?? 0;

  const markAll =
    unread > 0 ? (
      <button type="button" className="button" onClick={() => markRead.mutate([])} disabled={markRead.isPending}>
        Mark all read
      </button>
    ) : undefined;

  let body;
  if (list.isPending) {
    body = <SkeletonList rows={3} label="Loading notifications" />;
  } else if (list.isError) {
    body = <InlineError lead="Notifications couldn't be loaded." error={list.error} onRetry={() => void list.refetch()} />;
  } else if (list.data.items.length === 0) {
    body = (
      <div className="card">
        <EmptyState icon={<BellIcon size={28} />} title="No notifications">
          <p>When Healer repairs something, or needs you to step in, it leaves a message here.</p>
        </EmptyState>
      </div>
    );
  } else {
    body = groupByWorkflow(list.data.items, titles).map((group) => (
      <section key={group.key} className="notification-group" data-testid="notification-group" aria-label={group.title}>
        <h2 className="section-title notification-group-title">{group.title}</h2>
        <ul className="card list" aria-label={`Notifications about ${group.title}`}>
          {group.items.map((item) => (
            <NotificationRow
              key={item.id}
              item={item}
              now={now}
              onOpen={() => {
                if (!item.read) markRead.mutate([item.id]);
              }}
              onDismiss={() => dismiss.mutate(item.id)}
            />
          ))}
        </ul>
      </section>
    ));
  }

  return (
    <section className="page" data-testid="page-notifications">
      <PageHeader title="Notifications" description="Messages Healer left for you, by workflow and project, newest first." actions={markAll} />
      {markRead.isError && <InlineError lead="Couldn't mark as read." error={markRead.error} />}
      {dismiss.isError && <InlineError lead="Couldn't dismiss it." error={dismiss.error} />}
      {body}
    </section>
  );
}
