import type { NotificationKind } from "../bindings";
import type { Tone } from "../eventText";
import { StatusBadge } from "../components/StatusBadge";

type KindBadge = { label: string; tone: Tone; title: string };

/** Kinds that say more than their title does: Healer acted on its own, or wants a person to look. */
const badges: Partial<Record<NotificationKind, KindBadge>> = {
  review: {
    label: "Needs review",
    tone: "working",
    title: "Healer repaired this workflow many times lately; a person should look at why",
  },
  repaired: {
    label: "Repaired",
    tone: "good",
    title: "Healer repaired this workflow and its next run passed",
  },
  safety: {
    label: "Healer stepped in",
    tone: "contained",
    title: "Healer stopped something on its own to keep things safe, such as a rollback or pausing scheduled runs",
  },
};

export function NotificationKindBadge({ kind }: { kind: NotificationKind }) {
  const badge = badges[kind];
  if (!badge) return null;
  return (
    <span className="notification-kind">
      <StatusBadge tone={badge.tone} label={badge.label} title={badge.title} testId="notification-kind" />
    </span>
  );
}
