import type { Tone } from "../eventText";
import { Spinner } from "./Loading";

/** A coloured word for a state: "Active", "Failed", "Needs attention". `live`: its dot pulses. */
export function StatusBadge({
  tone,
  label,
  title,
  live = false,
  testId,
}: {
  tone: Tone;
  label: string;
  title?: string;
  live?: boolean;
  testId?: string;
}) {
  return (
    <span className={live ? `status-badge tone-${tone} live` : `status-badge tone-${tone}`} title={title} data-testid={testId}>
      <span className="status-dot" aria-hidden="true" />
      {label}
    </span>
  );
}

/** Shown while a workflow has a run queued or running. */
export function RunningBadge() {
  return (
    <span className="status-badge tone-working running-badge">
      <Spinner />
      Running
    </span>
  );
}
