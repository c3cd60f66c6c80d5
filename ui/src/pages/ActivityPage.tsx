import { useState } from "react";
import type { EventRecord } from "../bindings";
import { EmptyState } from "../components/EmptyState";
import { ActivityIcon } from "../components/icons";
import { InlineError } from "../components/InlineError";
import { SkeletonList } from "../components/Loading";
import { PageHeader } from "../components/PageHeader";
import { RelativeTime } from "../components/RelativeTime";
import { describeEvent, technicalRecord } from "../eventText";
import { useEvents } from "../queries";
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
    </>
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
