import type { Notification } from "../bindings";
import { EmptyState } from "../components/EmptyState";
import { BellIcon } from "../components/icons";
import { InlineError } from "../components/InlineError";
import { SkeletonList } from "../components/Loading";
import { PageHeader } from "../components/PageHeader";
import { RelativeTime } from "../components/RelativeTime";
import { failedSince } from "../eventText";
import { useMarkNotificationsRead, useNotifications } from "../queries";
import { useNow } from "../time";
import { NotificationActions } from "./NotificationActions";
import { NotificationKindBadge } from "./NotificationKindBadge";

function NotificationRow({ item, now, onOpen }: { item: Notification; now: number; onOpen: () => void }) {
  return (
    <li className={item.read ? "notification-entry" : "notification-entry unread"} data-kind={item.kind}>
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
          {item.heal_id !== null && <span className="chip">Heal {item.heal_id}</span>}
        </span>
        <RelativeTime iso={item.created_at} now={now} />
      </button>
      <NotificationActions item={item} onAct={onOpen} />
    </li>
  );
}

export function NotificationsPage() {
  const list = useNotifications();
  const markRead = useMarkNotificationsRead();
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
    body = (
      <ul className="card list" aria-label="Notifications">
        {list.data.items.map((item) => (
          <NotificationRow
            key={item.id}
            item={item}
            now={now}
            onOpen={() => {
              if (!item.read) markRead.mutate([item.id]);
            }}
          />
        ))}
      </ul>
    );
  }

  return (
    <section className="page" data-testid="page-notifications">
      <PageHeader title="Notifications" description="Messages Healer left for you, newest first." actions={markAll} />
      {markRead.isError && <InlineError lead="Couldn't mark as read." error={markRead.error} />}
      {body}
    </section>
  );
}
