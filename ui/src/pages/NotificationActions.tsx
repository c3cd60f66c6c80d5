import type { Notification, NotificationAction } from "../bindings";
import { InlineError } from "../components/InlineError";
import { useRetryAutofix } from "../queries";
import { autofixHref, chatHref, navigate, pageHref, projectTaskHref, runHref, settingsHref, setupHref, workflowHref } from "../usePage";

const actionLabel: Record<NotificationAction, string> = {
  replan: "Re-plan",
  open_settings: "Open settings",
  retry_autofix: "Try auto-fix again",
  open_task: "Open the task",
  answer_question: "Answer the question",
};

/**
 * Where an action goes; null when the notification lacks what it needs (a workflow to re-plan).
 * "Try auto-fix again" first asks the engine to start the repair, then shows it.
 */
function actionHref(action: NotificationAction, item: Notification): string | null {
  switch (action) {
    case "replan":
      return item.workflow_id === null ? null : chatHref(item.workflow_id, { focus: true });
    case "open_settings":
      return settingsHref("models");
    case "retry_autofix":
      return item.workflow_id === null ? null : autofixHref(item.workflow_id);
    case "open_task":
      return item.project_id === null || item.project_task === null ? null : projectTaskHref(item.project_id, item.project_task);
    case "answer_question":
      return item.checkpoint_id === null ? null : pageHref("checkpoints");
  }
}

/** Where Healer's own safety decisions can be looked at: the repairs, or the version it rolled back to. */
function seeMore(item: Notification): { href: string; label: string } | null {
  if (item.workflow_id === null) return null;
  switch (item.kind) {
    case "review":
      return { href: autofixHref(item.workflow_id), label: "See its repairs" };
    case "safety":
      return { href: workflowHref(item.workflow_id, "versions"), label: "See its versions" };
    case "repaired":
      return item.task_id === null ? null : { href: autofixHref(item.workflow_id, item.task_id), label: "See what was repaired" };
    default:
      return null;
  }
}

/**
 * The buttons a notification offers, and a link to the run it is about. Acting on one reads it
 * (`onAct`), as opening it would.
 */
export function NotificationActions({ item, onAct }: { item: Notification; onAct: () => void }) {
  const retry = useRetryAutofix();
  // An alert whose cause is gone keeps its words, not its buttons: they would only mislead.
  const offered = item.resolved ? [] : item.actions;
  const actions = offered.flatMap((action) => {
    const href = actionHref(action, item);
    return href ? [{ action, href }] : [];
  });
  const run =
    item.workflow_id !== null && item.run_id !== null && item.kind !== "repaired" ? runHref(item.workflow_id, item.run_id) : null;
  const setup = !item.resolved && item.kind === "no_model" && item.actions.includes("open_settings");
  const more = seeMore(item);
  if (actions.length === 0 && !run && !more && !setup) return null;

  return (
    <div className="notification-actions">
      {actions.map(({ action, href }, i) => (
        <button
          key={action}
          type="button"
          className={i === 0 ? "button button-small button-primary" : "button button-small"}
          data-testid={`notification-action-${action}`}
          disabled={action === "retry_autofix" && retry.isPending}
          onClick={() => {
            onAct();
            if (action === "retry_autofix" && item.workflow_id !== null) {
              retry.mutate(item.workflow_id, { onSuccess: () => navigate(href) });
            } else {
              navigate(href);
            }
          }}
        >
          {action === "retry_autofix" && item.kind === "no_model" ? "Repair it now" : actionLabel[action]}
        </button>
      ))}
      {setup && (
        <a className="notification-link" href={setupHref} onClick={onAct}>
          Set up a model step by step
        </a>
      )}
      {run && (
        <a className="notification-link" href={run} onClick={onAct}>
          See the failed run
        </a>
      )}
      {more && (
        <a className="notification-link" href={more.href} onClick={onAct}>
          {more.label}
        </a>
      )}
      {retry.isError && <InlineError lead="The repair could not start." error={retry.error} />}
    </div>
  );
}
