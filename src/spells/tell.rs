//! What the service tells the person: how an invocation ended, and the question it waits on —
//! notifications under the project, with buttons that open the task or the question.

use super::context::InvocationContext;
use crate::error::Result;
use crate::events::Event;
use crate::notification::{NewNotification, NotificationKind};
use crate::project::Project;
use crate::services::Services;
use crate::store::InvocationStatus;

/// The person hears of an invocation that did not fix the failure (the window shows its card).
pub(super) fn tell_person(
    services: &Services,
    project: &Project,
    context: &InvocationContext,
    status: InvocationStatus,
    reason: &str,
) -> Result<()> {
    let title = context
        .task
        .as_ref()
        .map_or(context.task_id.clone(), |t| t.title.clone());
    let (heading, head) = match status {
        InvocationStatus::Resolved => ("Healer fixed", "Fixed"),
        InvocationStatus::Contained => ("Healer made safe", "Made safe, and waiting for you"),
        _ => ("Healer could not fix", "Not fixed, and waiting for you"),
    };
    // The pipeline told the person of the failure already; this says how the repair ended,
    // under the task's own title and its project.
    let notification = services.store.insert_notification(
        &NewNotification::new(
            NotificationKind::Heal,
            format!(
                "{heading} \u{201c}{title}\u{201d} in \u{201c}{}\u{201d}",
                project.name
            ),
            format!("{head}: {}.", reason.trim_end_matches('.')),
        )
        .about_task(project.id, &context.task_id),
    )?;
    services
        .bus
        .emit(Event::NotificationCreated { notification })?;
    Ok(())
}

/// Healer waits for the person's answer: a notification under the project whose first button
/// opens the question, the second the task.
pub(super) fn ask_person(
    services: &Services,
    project: &Project,
    context: &InvocationContext,
    checkpoint: i64,
    summary: &str,
) -> Result<()> {
    let title = context
        .task
        .as_ref()
        .map_or(context.task_id.clone(), |t| t.title.clone());
    let notification = services.store.insert_notification(
        &NewNotification::new(
            NotificationKind::Heal,
            format!(
                "Healer asks you about \u{201c}{title}\u{201d} in \u{201c}{}\u{201d}",
                project.name
            ),
            format!(
                "{}. No agent works on this task until you decide.",
                summary.trim_end_matches('.')
            ),
        )
        .about_task(project.id, &context.task_id)
        .asking(checkpoint),
    )?;
    services
        .bus
        .emit(Event::NotificationCreated { notification })?;
    Ok(())
}
