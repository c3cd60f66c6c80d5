//! Remedies: the things the pipeline can do about a failure. Each is a small type implementing
//! [`Remedy`]; the planner chooses which and in what order.

use async_trait::async_trait;

use crate::error::Result;
use crate::events::Event;
use crate::failure::{Failure, FailureSource};
use crate::notification::{NewNotification, NotificationKind};

use super::{HealContext, RemedyStatus};

/// What a remedy reports back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemedyReport {
    pub status: RemedyStatus,
    /// One sentence for a person: what it did or why it could not.
    pub detail: String,
}

#[async_trait]
pub trait Remedy: Send + Sync {
    /// A stable snake_case name, stored with every attempt.
    fn name(&self) -> &'static str;

    async fn apply(
        &self,
        cx: &HealContext<'_>,
        heal_id: i64,
        failure: &Failure,
    ) -> Result<RemedyReport>;
}

/// Store the failure (the heal record already does) and tell the person: a notification in the
/// notification centre, which the desktop shell also shows as a desktop notification.
pub struct RecordAndNotify;

#[async_trait]
impl Remedy for RecordAndNotify {
    fn name(&self) -> &'static str {
        "record_and_notify"
    }

    async fn apply(
        &self,
        cx: &HealContext<'_>,
        heal_id: i64,
        failure: &Failure,
    ) -> Result<RemedyReport> {
        let mut about = None;
        let (kind, title, body) = match &failure.source {
            FailureSource::SelfCheck => (
                NotificationKind::Info,
                "Test alert: healing works".to_string(),
                "This alert went through the whole failure pipeline (policy, memory, plan, \
                 remedies) like a real failure would. Nothing is wrong."
                    .to_string(),
            ),
            FailureSource::ScriptRun {
                workflow_id,
                run_id,
            } => {
                let title = match cx.store.workflow(*workflow_id) {
                    Ok(w) => {
                        about = Some((w.id, *run_id));
                        format!("\u{201c}{}\u{201d} failed", w.title)
                    }
                    Err(_) => format!("Workflow {workflow_id} failed"),
                };
                (
                    NotificationKind::Heal,
                    title,
                    format!(
                        "{} — {} (run {})",
                        failure.summary(),
                        class_in_words(failure.class),
                        cx.store.run_name(*run_id)
                    ),
                )
            }
            FailureSource::ProjectTask {
                project_id,
                task_id,
                ..
            } => project_notice(cx, failure, *project_id, task_id),
        };
        let mut new = NewNotification::new(kind, title, body);
        if let FailureSource::ProjectTask {
            project_id,
            task_id,
            ..
        } = &failure.source
        {
            new = new.about_task(*project_id, task_id);
        }
        new.heal_id = Some(heal_id);
        if let Some((workflow_id, run_id)) = about {
            new.workflow_id = Some(workflow_id);
            new.run_id = Some(run_id);
        }
        let notification = cx.store.insert_notification(&new)?;
        cx.bus.emit(Event::NotificationCreated { notification })?;
        Ok(RemedyReport {
            status: RemedyStatus::Contained,
            detail: "the person was told in a notification".to_string(),
        })
    }
}

/// A project's task failed: which task of which project, and what happened, in words.
fn project_notice(
    cx: &HealContext<'_>,
    failure: &Failure,
    project_id: i64,
    task_id: &str,
) -> (NotificationKind, String, String) {
    let project = cx.store.project(project_id).ok();
    // The task by its title, as the board shows it (its id only when the list cannot be read).
    let title = project
        .as_ref()
        .and_then(|p| {
            crate::tasklist::read_file(
                &std::path::Path::new(&p.path).join(crate::tasklist::TASKS_FILE),
            )
            .ok()
        })
        .and_then(|file| file.task(task_id).map(|t| t.title.clone()))
        .unwrap_or_else(|| format!("task {task_id}"));
    let project = project.map_or_else(|| format!("project {project_id}"), |p| p.name);
    let what = crate::failure::ProjectScenario::parse(&failure.scenario)
        .map_or("it failed", |s| s.describe());
    (
        NotificationKind::Heal,
        format!("\u{201c}{title}\u{201d} in \u{201c}{project}\u{201d} needs a look"),
        format!(
            "{}: {}",
            crate::workflow::capitalise(what),
            failure.summary().trim_end_matches('.')
        ),
    )
}

fn class_in_words(class: crate::failure::FailureClass) -> &'static str {
    use crate::failure::FailureClass;
    match class {
        FailureClass::Transient => "a passing problem that retries did not get past",
        FailureClass::Logic => "an error in the script or the shape of its data",
        FailureClass::Environment => "something missing on this machine",
        FailureClass::Resource => "the script ran out of memory or was killed",
        FailureClass::Timeout => "it ran past its time limit",
        FailureClass::Unknown => "it failed without saying why",
    }
}
