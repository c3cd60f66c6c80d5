import type { ReactNode } from "react";
import type { AutoFix } from "../../bindings";
import { AlertIcon, CheckIcon, HealerNoteIcon } from "../../components/icons";
import { Spinner } from "../../components/Loading";
import type { Tone } from "../../eventText";
import { chatHref, workflowHref } from "../../usePage";
import { versionText } from "../../workflowText";

type Said = { tone: Tone; icon: ReactNode; headline: string; detail: string; action?: ReactNode };

function said(fix: AutoFix, workflowId: number): Said {
  switch (fix.status) {
    case "working":
      return {
        tone: "info",
        icon: <Spinner />,
        headline: "Working on it…",
        detail: "Each step appears above as it happens.",
      };
    case "fixed": {
      const as = fix.to_version ? `Fixed as version ${versionText(fix.to_version)}` : "Fixed";
      if (fix.rerun === "failed" || fix.rerun === "interrupted") {
        return {
          tone: "bad",
          icon: <AlertIcon size={18} />,
          headline:
            fix.rerun === "failed" ? `${as}, but its re-run failed.` : `${as}; its re-run was interrupted before it ended.`,
          detail: fix.fix_comment ?? fix.summary,
          action: (
            <a className="button button-small" href={workflowHref(workflowId, "runs")}>
              See the runs
            </a>
          ),
        };
      }
      return {
        tone: "good",
        icon: <CheckIcon size={18} />,
        headline: fix.rerun === "succeeded" ? `${as}; its re-run passed.` : `${as} and re-running.`,
        detail: fix.fix_comment ?? fix.summary,
        action: (
          <a className="button button-small" href={workflowHref(workflowId, "runs")}>
            See the runs
          </a>
        ),
      };
    }
    case "stale":
      return {
        tone: "neutral",
        icon: <HealerNoteIcon size={18} />,
        headline: "Not applied: the script changed meanwhile.",
        detail: fix.summary,
      };
    case "gave_up":
      return {
        tone: "bad",
        icon: <AlertIcon size={18} />,
        headline: "No safe fix was found — it needs your answer.",
        detail: fix.summary,
        action: (
          <a className="button button-small" href={chatHref(workflowId, { focus: true })}>
            Answer in Re-plan
          </a>
        ),
      };
    case "interrupted":
      return {
        tone: "contained",
        icon: <HealerNoteIcon size={18} />,
        headline: "Interrupted: Healer stopped while it worked.",
        detail: fix.summary,
      };
  }
}

/** How an auto-fix ended (or that it is still working), at the end of its thread. */
export function FixOutcome({ fix, workflowId }: { fix: AutoFix; workflowId: number }) {
  const { tone, icon, headline, detail, action } = said(fix, workflowId);
  return (
    <section
      className={`result autofix-outcome tone-${tone}`}
      data-testid="autofix-outcome"
      data-status={fix.status}
      aria-label="Outcome"
      aria-live="polite"
    >
      {icon}
      <div className="outcome-text">
        <strong className="outcome-headline">{headline}</strong>
        {detail && detail !== headline && <p className="outcome-detail">{detail}</p>}
        {action && <div className="outcome-actions">{action}</div>}
      </div>
    </section>
  );
}
