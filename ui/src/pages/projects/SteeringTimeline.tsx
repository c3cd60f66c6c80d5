// What Healer's steering saw and did on a task, oldest first: loops it caught (the rule in
// words and the steps that show it), the steering model's looks at the progress (what it chose
// and said), messages it delivered, signs of life, a stuck agent ended.
import type { JudgeAction, LoopRule, MessageDelivery, SteeringEntry, SteeringKind } from "../../bindings";
import type { ReactNode } from "react";
import { relativeTime, useNow } from "../../time";

/** Text with `quoted code` shown as code, not as backticks. */
export function withCode(text: string): ReactNode[] {
  return text.split(/(`[^`\n]+`)/).map((part, i) =>
    part.length > 2 && part.startsWith("`") && part.endsWith("`") ? <code key={i}>{part.slice(1, -1)}</code> : part,
  );
}

const kindLabel: Record<SteeringKind, string> = {
  loop: "Going in circles",
  delivery: "Told the agent",
  heartbeat: "Still working",
  zombie: "Ended as stuck",
  judgement: "Progress checked",
  message: "You wrote the agent",
};

const actionLabel: Record<JudgeAction, string> = {
  continue: "Progress checked: going well",
  steer: "Progress checked: told the agent what to change",
  replace: "Progress checked: replaced the agent",
};

/** Where the entry's message to the agent is, in a sentence. */
function deliveryWords(delivery: MessageDelivery, now: number): string {
  if (delivery.state === "waiting") return "Waiting to reach the agent at its next chance.";
  if (delivery.state === "dropped") return "Not delivered: the agent's session ended first.";
  const how =
    delivery.via === "hook"
      ? "before its next step"
      : delivery.via === "resume"
        ? "when it was resumed after its turn"
        : delivery.via === "thread"
          ? "as the next message of its conversation"
          : delivery.via === "live"
            ? "in its session while it worked"
            : "";
  const when = delivery.delivered_at ? ` ${relativeTime(delivery.delivered_at, now)}` : "";
  return `Delivered to the agent ${how}${when}.`.replace("  ", " ");
}

export const ruleLabel: Record<LoopRule, string> = {
  repeat: "The same step with the same result, again and again",
  "repeated-error": "The same step failing again and again",
  monologue: "Talking without doing anything",
  alternation: "Going back and forth between two steps",
  cycle: "Repeating the same round of steps",
  compaction: "Running out of memory again and again without getting further",
};

function Entry({ entry, now }: { entry: SteeringEntry; now: number }) {
  const steerNotDelivered = entry.kind === "judgement" && entry.action === "steer" && entry.delivery && entry.delivery.state !== "delivered";
  const heading =
    entry.kind === "loop" && entry.rule
      ? ruleLabel[entry.rule]
      : steerNotDelivered
        ? entry.delivery?.state === "waiting"
          ? "Progress checked: a message for the agent is on its way"
          : "Progress checked: the agent ended before the message reached it"
        : entry.kind === "judgement" && entry.action
          ? actionLabel[entry.action]
          : kindLabel[entry.kind];
  return (
    <li className="steering-entry" data-kind={entry.kind}>
      <div className="steering-head">
        <strong>{heading}</strong>
        <span className="muted">{relativeTime(entry.at, now)}</span>
      </div>
      {entry.detail && <p className="steering-detail">{entry.detail}</p>}
      {entry.kind !== "heartbeat" && entry.message && <blockquote className="steering-message">{withCode(entry.message)}</blockquote>}
      {entry.delivery && (
        <p className="steering-delivery muted" data-testid="steering-delivery" data-state={entry.delivery.state}>
          {deliveryWords(entry.delivery, now)}
        </p>
      )}
      {entry.evidence.length > 0 && (
        <ul className="steering-evidence">
          {entry.evidence.map((line, i) => (
            <li key={i}>{withCode(line)}</li>
          ))}
        </ul>
      )}
    </li>
  );
}

/**
 * The timeline; `live`: an agent works on the task now. "Still working" says something only
 * while it does, and only its latest one.
 */
export function SteeringTimeline({ entries: all, live = true }: { entries: SteeringEntry[]; live?: boolean }) {
  const now = useNow();
  const lastBeat = all.reduce((last, e) => (e.kind === "heartbeat" ? e.id : last), -1);
  const entries = all.filter((e) => e.kind !== "heartbeat" || (live && e.id === lastBeat));
  if (entries.length === 0) return null;
  return (
    <>
      <h2 className="section-label">How Healer kept the agent moving</h2>
      <ul className="card list steering-timeline" data-testid="steering-timeline">
        {entries.map((e) => (
          <Entry key={e.id} entry={e} now={now} />
        ))}
      </ul>
    </>
  );
}
