//! How a session that steering ended as stuck (no activity for too long) is written down: the
//! task is open again with its worktree kept and a comment saying why, and a `SubtaskStuck`
//! failure goes to the healer service's pipeline, which tells the person.

use chrono::{DateTime, Utc};

use super::run::Ctx;
use super::runner::{Projects, SessionStop};
use super::worktree::branch_name;
use crate::error::Result;
use crate::events::Event;
use crate::failure::{Evidence, Failure, FailureSource, ProjectScenario};
use crate::notification::{NewNotification, NotificationKind};
use crate::session::SessionStatus;
use crate::store::{now, NewSteeringEntry, SessionOutcome, SteeringKind};
use crate::tasklist::TaskStatus;

/// How often the engine looks for sessions that went silent. Far below the shortest sensible
/// zombie limit, and the look is a few reads per running session.
pub const STUCK_CHECK_SECS: u64 = 60;

impl Projects {
    /// End, as stuck, every session this process runs that produced nothing new (no step, no
    /// transcript line, no hook call) for the steering setting's `zombie_after_secs` before
    /// `now` — its last activity, or its start when it never produced anything. Healer's own
    /// ticks never count as activity. Returns the sessions ended.
    pub fn end_stuck_sessions(&self, now: DateTime<Utc>) -> Result<Vec<i64>> {
        let store = &self.services.store;
        let settings = store.steering_settings()?;
        if !settings.enabled {
            return Ok(vec![]);
        }
        let limit = chrono::Duration::seconds(i64::from(settings.zombie_after_secs));
        let mut ended = Vec::new();
        for id in self.running_ids() {
            let session = store.session(id)?;
            if session.status != SessionStatus::Running {
                continue;
            }
            let pulse = store.session_pulse(id)?;
            let last = pulse
                .last_activity_at
                .as_deref()
                .unwrap_or(&session.started_at);
            let Ok(last) = DateTime::parse_from_rfc3339(last) else {
                continue;
            };
            // Waiting for the person is not the agent being stuck: the wait does not count.
            if store.session_waits_for_you(id)? {
                continue;
            }
            let last = last.with_timezone(&Utc);
            let waited = store.session_waited(
                id,
                &crate::store::rfc3339(last),
                &crate::store::rfc3339(now),
            )?;
            let silent = now.signed_duration_since(last) - waited;
            if silent < limit {
                continue;
            }
            let reason =
                if session.raw_lines > 0 {
                    // Lines kept coming, none Healer could read: the agent is named with its
                    // version, as an update of it is the likely cause.
                    format!(
                    "Healer could not follow {} for {}: nothing it wrote in that time was of a \
                     kind Healer knows ({} {} of its output not understood; the limit is {})",
                    crate::agent::installed::named(session.agent, session.agent_version.as_deref()),
                    span(silent.num_seconds()),
                    session.raw_lines,
                    if session.raw_lines == 1 { "line" } else { "lines" },
                    span(limit.num_seconds())
                )
                } else {
                    format!(
                        "The agent produced nothing new for {} (the limit is {})",
                        span(silent.num_seconds()),
                        span(limit.num_seconds())
                    )
                };
            tracing::warn!(session_id = id, "{reason}; ending it as stuck");
            if self.end_session(id, SessionStop::Stuck { reason }).is_ok() {
                ended.push(id);
            }
        }
        Ok(ended)
    }
}

/// A span in the words a person uses: minutes from two on, else seconds.
fn span(secs: i64) -> String {
    match secs {
        s if s >= 120 => format!("{} minutes", s / 60),
        1 => "1 second".to_string(),
        s => format!("{s} seconds"),
    }
}

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
    let mut record = NewSteeringEntry::new(
        ctx.project.id,
        &task.id,
        Some(ctx.session_id),
        SteeringKind::Zombie,
    );
    record.message = Some(reason.to_string());
    record.detail = "The session was ended and the task is open again; the healer service was told (stuck task).".to_string();
    services.store.record_steering(&record)?;
    let notification = services.store.insert_notification(
        &NewNotification::new(
            NotificationKind::Safety,
            format!(
                "Healer ended a stuck agent on \u{201c}{}\u{201d}",
                task.title
            ),
            format!(
                "{}: {}. The task is open again and its work so far is kept.",
                ctx.project.name,
                reason.trim_end_matches('.')
            ),
        )
        .about_task(ctx.project.id, &task.id),
    )?;
    services
        .bus
        .emit(Event::NotificationCreated { notification })?;
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
