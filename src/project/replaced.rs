//! How a session the steering judge replaced is written down: its work is pinned as a
//! snapshot (as the rewind spell does), its worktree and task branch removed so the next
//! agent starts fresh, the task open again with no assignee and a comment with the reason,
//! and the person told.

use super::run::Ctx;
use super::steered::HEALER_AUTHOR;
use super::worktree::{branch_name, remove};
use crate::error::{Error, Result};
use crate::events::Event;
use crate::notification::{NewNotification, NotificationKind};
use crate::session::SessionStatus;
use crate::store::{now, SessionOutcome};
use crate::tasklist::TaskStatus;

pub(super) async fn replaced(ctx: &Ctx<'_>, reason: &str) -> Result<()> {
    let services = &ctx.projects.services;
    let task = &ctx.task;
    let reason = reason.trim().trim_end_matches('.').to_string();
    let (store, project_id, repo, worktree, task_id, why) = (
        services.store.clone(),
        ctx.project.id,
        ctx.repo.clone(),
        ctx.worktree.clone(),
        task.id.clone(),
        format!("replaced by steering: {reason}"),
    );
    // The work first: nothing is removed unless it is pinned.
    let kept = tokio::task::spawn_blocking(move || -> Result<String> {
        let snapshot = super::snapshot::take(&store, project_id, &worktree, &task_id, &why)?;
        remove(&repo, &worktree)?;
        let git = git2::Repository::open(&repo)
            .map_err(|e| Error::Internal(format!("cannot open the repository: {e}")))?;
        if let Ok(mut branch) = git.find_branch(&branch_name(&task_id), git2::BranchType::Local) {
            let _ = branch.delete();
        }
        Ok(snapshot.ref_name)
    })
    .await
    .map_err(|e| Error::Internal(format!("the replace task stopped: {e}")))?;
    let (summary, comment) = match &kept {
        Ok(snapshot) => (
            format!("Replaced by Healer's steering: {reason}. Its work is kept as a snapshot ({snapshot})"),
            if ctx.project.settings.start_reopened_tasks {
                format!(
                    "Healer replaced the agent: {reason}. Its work is kept as a snapshot; a new agent starts on the task afresh."
                )
            } else {
                format!(
                    "Healer replaced the agent: {reason}. Its work is kept as a snapshot; the next agent starts fresh."
                )
            },
        ),
        Err(e) => (
            format!("Replaced by Healer's steering: {reason}. Its work could not be pinned ({e}), so the worktree is kept"),
            format!("Healer replaced the agent: {reason}. Its worktree is kept as it was."),
        ),
    };
    services.store.finish_session(
        ctx.session_id,
        SessionStatus::Stopped,
        &SessionOutcome {
            summary: summary.clone(),
            ..SessionOutcome::default()
        },
    )?;
    let at = now();
    let removed = kept.is_ok();
    let note = format!("Replaced: {reason}");
    let changed = ctx
        .projects
        .modify_tasks(&ctx.project, "a session was replaced", |file| {
            file.update(&task.id, &at, |t| {
                t.status = TaskStatus::Open;
                t.assignee = None;
                if removed {
                    t.worktree = None;
                    t.branch = None;
                }
                t.note = Some(note.clone());
                t.comment(&at, HEALER_AUTHOR, &comment);
            })
        });
    if let Err(e) = changed {
        tracing::warn!(
            session_id = ctx.session_id,
            "the task list was not updated: {e}"
        );
    }
    let notification = services.store.insert_notification(
        &NewNotification::new(
            NotificationKind::Safety,
            format!(
                "Healer replaced the agent on \u{201c}{}\u{201d}",
                task.title
            ),
            format!(
            "{}: {reason}. The task is open again for a fresh start, and the work so far is kept.",
            ctx.project.name
        ),
        )
        .about_task(ctx.project.id, &task.id),
    )?;
    services
        .bus
        .emit(Event::NotificationCreated { notification })?;
    services.bus.emit(Event::SessionFinished {
        session_id: ctx.session_id,
        project_id: ctx.project.id,
        task_id: task.id.clone(),
        task_title: task.title.clone(),
        status: SessionStatus::Stopped,
        summary,
        commit: None,
    })?;
    if removed && ctx.project.settings.start_reopened_tasks {
        start_again(ctx);
    }
    Ok(())
}

/// A task Healer reopened starts again by itself, in a fresh worktree, once the replaced
/// session is let go (it counts against the project's parallel limit until then) — if the
/// project has room; otherwise it waits, open, for the next run.
fn start_again(ctx: &Ctx<'_>) {
    let (projects, project, task_id, replaced) = (
        ctx.projects.clone(),
        ctx.project.clone(),
        ctx.task.id.clone(),
        ctx.session_id,
    );
    tokio::spawn(async move {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while projects.is_running(replaced) && std::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        if projects.shutdown.is_cancelled() {
            return;
        }
        match projects.start(&project, Some(&task_id)) {
            Ok(session) => tracing::info!(
                replaced,
                session = session.id,
                "the replaced task started again by itself"
            ),
            Err(e) => tracing::info!(replaced, "the replaced task waits for a run: {e}"),
        }
    });
}
