//! Escalation: the maintainer could not (or may no longer) repair a workflow, so the person
//! decides. One path for "gave up", "too many fixes in a row" and "the repair broke down".
//! From then on the workflow stops costing money: failures with the same error are counted on
//! the notification (`HeldForPerson`) until the person acts, and the give-up is remembered as
//! a failed approach.

use crate::error::Result;
use crate::events::{Bus, Event};
use crate::memory::DecisionKind;
use crate::notification::{NewNotification, Notification, NotificationAction, NotificationKind};
use crate::store::Store;
use crate::workflow::WorkflowStatus;

use super::AutoFixStatus;

/// Settings key: whether a workflow whose repair gave up keeps running on its schedule while it
/// waits for the person (default: yes, without repairs).
pub const KEEP_SCHEDULE_AFTER_GIVE_UP: &str = "maintainer.keep_schedule_after_give_up";

/// Mark the workflow as needing the person (maintenance cleared, fix count reset, the task
/// given up) and tell them, with the explanation, Re-plan and Try auto-fix again. With the
/// failure's `signature`, repairs of it are held until the person acts.
pub fn escalate(
    store: &Store,
    bus: &Bus,
    workflow_id: i64,
    run_id: Option<i64>,
    task_id: Option<i64>,
    signature: Option<&str>,
    explanation: &str,
) -> Result<Notification> {
    store.escalate_maintenance(workflow_id, task_id, explanation.trim())?;
    if let Some(signature) = signature {
        store.remember_give_up(signature, workflow_id, task_id, &first_line(explanation))?;
    }
    let title = match store.workflow(workflow_id) {
        Ok(w) => format!(
            "\u{201c}{}\u{201d} needs you: automatic repair failed",
            w.title
        ),
        Err(_) => "A workflow needs you: automatic repair failed".to_string(),
    };
    let keep_schedule = store
        .setting::<bool>(KEEP_SCHEDULE_AFTER_GIVE_UP)?
        .unwrap_or(true);
    let mut body = explanation.trim().to_string();
    if signature.is_some() {
        body.push_str(if keep_schedule {
            "\n\nIt keeps running on its schedule, but Healer will not try to repair this error \
             again until you Re-plan it or choose Try auto-fix again."
        } else {
            "\n\nIt is paused, and Healer will not try to repair this error again until you \
             Re-plan it, choose Try auto-fix again, or resume it."
        });
    }
    let mut new = NewNotification::new(NotificationKind::MaintenanceFailed, title, body);
    new.workflow_id = Some(workflow_id);
    new.run_id = run_id;
    new.task_id = task_id;
    new.actions = vec![NotificationAction::Replan];
    if signature.is_some() {
        new.actions.push(NotificationAction::RetryAutofix);
    }
    let notification = store.insert_notification(&new)?;
    bus.emit(Event::NotificationCreated {
        notification: notification.clone(),
    })?;
    if let Some(signature) = signature {
        store.hold_repairs(workflow_id, signature, Some(notification.id))?;
        let paused =
            !keep_schedule && store.workflow(workflow_id)?.status != WorkflowStatus::Paused;
        if paused {
            store.set_workflow_status(workflow_id, WorkflowStatus::Paused)?;
        }
        let summary = format!(
            "Repairs of this error wait for you{}",
            if paused {
                "; the workflow is paused"
            } else {
                ""
            }
        );
        store.log_decision(
            Some(workflow_id),
            DecisionKind::RepairsHeld,
            &summary,
            signature,
        )?;
        bus.emit(Event::BreakerTripped {
            breaker: DecisionKind::RepairsHeld,
            workflow_id: Some(workflow_id),
            detail: summary,
        })?;
        if paused {
            bus.emit(Event::WorkflowChanged {
                workflow_id,
                title: store.workflow(workflow_id)?.title,
                what: "paused".to_string(),
            })?;
        }
    }
    bus.emit(Event::MaintenanceFinished {
        workflow_id,
        task_id,
        status: AutoFixStatus::GaveUp,
        summary: first_line(explanation),
    })?;
    Ok(notification)
}

/// The first line of a text, at most 200 characters, for one-line summaries.
pub(crate) fn first_line(text: &str) -> String {
    let line = text.trim().lines().next().unwrap_or_default();
    match line.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_string(),
    }
}
