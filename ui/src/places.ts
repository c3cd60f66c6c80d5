// The places the quick jump (Ctrl+K) offers besides workflows: one line per page. A new page
// adds its line here and is found at once.
import { activityHref, memoryHref, newWorkflowHref, pageHref, settingsHref, setupHref } from "./usePage";

export type Place = { label: string; href: string; words?: string };

export const places: Place[] = [
  { label: "Workflows", href: pageHref("workflows") },
  { label: "New workflow", href: newWorkflowHref, words: "create add" },
  { label: "Projects", href: pageHref("projects"), words: "repositories agents tasks board" },
  { label: "Sessions", href: pageHref("sessions"), words: "agents live running claude loops steering" },
  { label: "Activity", href: activityHref("events"), words: "events log history" },
  { label: "Decisions Healer made", href: activityHref("decisions"), words: "rollback breaker" },
  { label: "Notifications", href: pageHref("notifications"), words: "alerts messages" },
  { label: "Checkpoints", href: pageHref("checkpoints"), words: "decisions questions" },
  { label: "Memory", href: memoryHref(), words: "patterns errors signatures" },
  { label: "Settings", href: settingsHref("general") },
  { label: "Settings → Models", href: settingsHref("models"), words: "providers tiers budgets keys" },
  { label: "Settings → More computers", href: settingsHref("computers"), words: "cluster temporal workers remote run on" },
  { label: "Set up a model", href: setupHref, words: "first run provider key" },
];
