//! How a session that steering ended as stuck (no activity for too long) is written down: the
//! task is open again with its worktree kept and a comment saying why, and a `SubtaskStuck`
//! failure goes to the healer service's pipeline, which tells the person.

use super::run::Ctx;
use super::worktree::branch_name;
use crate::error::Result;
use crate::events::Event;
use crate::failure::{Evidence, Failure, FailureSource, ProjectScenario};
use crate::session::SessionStatus;
use crate::store::{now, NewSteeringEntry, SessionOutcome, SteeringKind};
use crate::tasklist::TaskStatus;

/// Who Healer's comments on a task are by.
pub(super) const HEALER_AUTHOR: &str = "healer";

pub(super) async fn stuck(ctx: &Ctx<'_>, reason: &str) -> Result<()> {
    let services = &ctx.projects.services;
    let task = &ctx.task;
    let branch = branch_name(&task.id);
    let summary = format!(
        "{}; Healer ended it as stuck. The worktree is kept (branch {branch})",
        reason.trim_end_matches('.')
    );
    services.store.finish_session(
        ctx.session_id,
        SessionStatus::Failed,
        &SessionOutcome {
            summary: summary.clone(),
            ..SessionOutcome::default()
        },
    )?;
    let at = now();
    let note = format!("Stuck: {summary}");
    let comment = format!("Healer ended the agent as stuck: {summary}.");
    let changed = ctx
        .projects
        .modify_tasks(&ctx.project, "a stuck session ended", |file| {
            file.update(&task.id, &at, |t| {
                t.status = TaskStatus::Open;
                t.assignee = None;
                t.note = Some(note);
                t.comment(&at, HEALER_AUTHOR, &comment);
            })
        });
    if let Err(e) = changed {
        tracing::warn!(
            session_id = ctx.session_id,
            "the task list was not updated: {e}"
        );
    }
    let mut record = NewSteeringEntry::new(
        ctx.project.id,
        &task.id,
        Some(ctx.session_id),
        SteeringKind::Zombie,
    );
    record.message = Some(reason.to_string());
    record.detail = "The session was ended and the task is open again; the healer service was told (stuck task).".to_string();
    services.store.record_steering(&record)?;
    finished(ctx, SessionStatus::Failed, summary.clone())?;
    let failure = Failure::new(
        FailureSource::ProjectTask {
            project_id: ctx.project.id,
            task_id: task.id.clone(),
            session_id: ctx.session_id,
        },
        ProjectScenario::SubtaskStuck.as_str(),
        ProjectScenario::SubtaskStuck.class(),
        Evidence {
            error_type: None,
            message: summary,
            stack: None,
        },
    );
    services.heal(failure).await?;
    Ok(())
}

fn finished(ctx: &Ctx<'_>, status: SessionStatus, summary: String) -> Result<()> {
    ctx.projects.services.bus.emit(Event::SessionFinished {
        session_id: ctx.session_id,
        project_id: ctx.project.id,
        task_id: ctx.task.id.clone(),
        task_title: ctx.task.title.clone(),
        status,
        summary,
        commit: None,
    })?;
    Ok(())
}
