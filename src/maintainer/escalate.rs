//! Escalation: the maintainer could not (or may no longer) repair a workflow, so the person
//! decides. One path for "gave up", "too many fixes in a row" and "the repair broke down".

use crate::error::Result;
use crate::events::{Bus, Event};
use crate::notification::{NewNotification, Notification, NotificationAction, NotificationKind};
use crate::store::Store;

use super::AutoFixStatus;

/// Mark the workflow as needing the person (maintenance cleared, fix count reset, the task
/// given up) and tell them, with the explanation and a Re-plan button.
pub fn escalate(
    store: &Store,
    bus: &Bus,
    workflow_id: i64,
    run_id: Option<i64>,
    task_id: Option<i64>,
    explanation: &str,
) -> Result<Notification> {
    store.escalate_maintenance(workflow_id, task_id, explanation.trim())?;
    let title = match store.workflow(workflow_id) {
        Ok(w) => format!(
            "\u{201c}{}\u{201d} needs you: automatic repair failed",
            w.title
        ),
        Err(_) => "A workflow needs you: automatic repair failed".to_string(),
    };
    let mut new = NewNotification::new(
        NotificationKind::MaintenanceFailed,
        title,
        explanation.trim().to_string(),
    );
    new.workflow_id = Some(workflow_id);
    new.run_id = run_id;
    new.task_id = task_id;
    new.actions = vec![NotificationAction::Replan];
    let notification = store.insert_notification(&new)?;
    bus.emit(Event::NotificationCreated {
        notification: notification.clone(),
    })?;
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
