import { useEffect, useRef, useState } from "react";
import type { EventRecord } from "../bindings";
import { EmptyState } from "../components/EmptyState";
import { ActivityIcon } from "../components/icons";
import { InlineError } from "../components/InlineError";
import { SkeletonList, Spinner } from "../components/Loading";
import { PageHeader } from "../components/PageHeader";
import { RelativeTime } from "../components/RelativeTime";
import { describeEvent, technicalRecord } from "../eventText";
import { EVENT_PAGE_SIZE, useEvents, useOlderEvents } from "../queries";
import { useNow } from "../time";
import { activityHref, activityViews, type ActivityView } from "../usePage";
import { DecisionList } from "./DecisionList";

function ActivityRow({ record, now, technical }: { record: EventRecord; now: number; technical: boolean }) {
  const { title, detail, tone } = describeEvent(record.event);
  return (
    <li className="list-row" data-testid="activity-item" data-kind={record.event.kind}>
      <span className={`marker tone-${tone}`} aria-hidden="true" />
      <div className="row-text">
        <div className="row-title">{title}</div>
        {detail && <div className="row-detail">{detail}</div>}
        {technical && (
          <div className="row-detail activity-technical" data-testid="activity-technical">
            {technicalRecord(record.event)}
          </div>
        )}
      </div>
      <RelativeTime iso={record.at} now={now} />
    </li>
  );
}

/** Each step of a model's work and each try of a run: part of the record, not news for a person. */
const stepByStep = new Set<string>(["task_message_added", "attempt_finished"]);

function ActivityList() {
  const events = useEvents();
  const now = useNow();
  const [technical, setTechnical] = useState(false);
  if (events.isPending) return <SkeletonList rows={5} label="Loading activity" />;
  if (events.isError) {
    return <InlineError lead="Activity couldn't be loaded." error={events.error} onRetry={() => void events.refetch()} />;
  }
  if (events.data.length === 0) {
    return (
      <div className="card">
        <EmptyState icon={<ActivityIcon size={28} />} title="Nothing has happened yet">
          <p>
            When the engine starts or stops, heals a failure, tries a remedy or sends you a notification, it
            shows up here the moment it happens.
          </p>
        </EmptyState>
      </div>
    );
  }
  return (
    <>
      <label className="activity-toggle">
        <input type="checkbox" checked={technical} onChange={(e) => setTechnical(e.target.checked)} data-testid="activity-details" />
        Show every step and the technical record of each event
      </label>
      <ol className="card list" aria-label="What Healer did">
        {events.data.filter((record) => technical || !stepByStep.has(record.event.kind)).map((record) => (
          <ActivityRow key={record.id} record={record} now={now} technical={technical} />
        ))}
      </ol>
      <OlderEvents shown={events.data} />
    </>
  );
}

/**
 * The end of the list: older events load as it scrolls into view (or on the button), a page
 * at a time, until the store has no more.
 */
function OlderEvents({ shown }: { shown: EventRecord[] }) {
  const older = useOlderEvents();
  // The first page was full, so there may be more; a short page says there are not.
  const [exhausted, setExhausted] = useState(false);
  const oldest = shown[shown.length - 1]?.id;
  const more = !exhausted && shown.length >= EVENT_PAGE_SIZE && oldest !== undefined;
  const end = useRef<HTMLDivElement>(null);

  const { mutate, isPending } = older;
  const load = () => {
    if (oldest === undefined) return;
    mutate(oldest, { onSuccess: (page) => setExhausted(page.length < EVENT_PAGE_SIZE) });
  };

  useEffect(() => {
    const element = end.current;
    if (!more || isPending || !element || typeof IntersectionObserver === "undefined") return;
    const observer = new IntersectionObserver(
      (entries) => {
        if (!entries.some((e) => e.isIntersecting)) return;
        observer.disconnect();
        mutate(oldest, { onSuccess: (page) => setExhausted(page.length < EVENT_PAGE_SIZE) });
      },
      { rootMargin: "400px 0px" },
    );
    observer.observe(element);
    return () => observer.disconnect();
  }, [more, isPending, oldest, mutate]);

  if (older.isError) {
    return <InlineError lead="Older activity couldn't be loaded." error={older.error} onRetry={load} />;
  }
  if (!more) {
    return shown.length >= EVENT_PAGE_SIZE ? (
      <p className="muted list-end" data-testid="activity-end">
        That is everything Healer has recorded.
      </p>
    ) : null;
  }
  return (
    <div className="list-more" ref={end}>
      <button type="button" className="button" data-testid="older-events" onClick={load} disabled={isPending}>
        {isPending && <Spinner />}
        Show older events
      </button>
    </div>
  );
}

const viewLabels: Record<ActivityView, string> = { events: "Events", decisions: "Decisions" };

const viewDescriptions: Record<ActivityView, string> = {
  events: "What Healer has done, newest first.",
  decisions: "Decisions Healer made on its own to keep repairs safe, newest first.",
};

function ViewLinks({ current }: { current: ActivityView }) {
  return (
    <nav className="tabs" aria-label="Activity views">
      {activityViews.map((view) => (
        <a
          key={view}
          className="tab"
          href={activityHref(view)}
          aria-current={view === current ? "page" : undefined}
          data-testid={`activity-view-${view}`}
        >
          {viewLabels[view]}
        </a>
      ))}
    </nav>
  );
}

export function ActivityPage({ view = "events" }: { view?: ActivityView }) {
  return (
    <section className="page" data-testid="page-activity">
      <PageHeader
        title="Activity"
        description={viewDescriptions[view]}
        actions={
          <span className="live-pill">
            <span className="live-dot" aria-hidden="true" />
            Live
          </span>
        }
      />
      <ViewLinks current={view} />
      {view === "events" ? <ActivityList /> : <DecisionList />}
    </section>
  );
}
