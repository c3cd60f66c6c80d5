//! After an unclean stop (a crash, kill -9): sessions still marked running had their engine
//! die under them. Their processes — the agent's, the tools it started, a check — are ended
//! (found by the session's marks in their environment, so nobody else's process is touched),
//! the session is marked interrupted, and its task goes back to open with a note; its worktree
//! is kept for the next run.

use std::path::PathBuf;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use super::agent_setup::marks;
use crate::agent::process::marked_processes;
use crate::error::Result;
use crate::events::Event;
use crate::services::Services;
use crate::session::SessionStatus;
use crate::store::{now, SessionOutcome};
use crate::tasklist::{self, TaskStatus};

/// Kill every process whose environment carries the marks of session `session_id` of the
/// Healer `instance` (`HEALER_INSTANCE` and `HEALER_AGENT_SESSION`). Returns how many were
/// found. Without /proc (not Linux) nothing is found.
pub fn end_marked_processes(instance: &str, session_id: i64) -> usize {
    let wanted: Vec<String> = marks(instance, session_id)
        .into_iter()
        .map(|(name, value)| format!("{name}={value}"))
        .collect();
    let found = marked_processes(&[wanted]);
    for pid in &found {
        let _ = kill(Pid::from_raw(*pid), Signal::SIGKILL);
    }
    found.len()
}

/// Settle the sessions a crashed engine left running. Returns how many there were.
pub(crate) fn settle_interrupted(services: &Services) -> Result<usize> {
    let sessions = services.store.running_sessions()?;
    for session in &sessions {
        let ended = end_marked_processes(services.instance(), session.id);
        // A session on the cluster goes on there without its control room: it is cancelled.
        super::on_cluster::cancel_orphaned(services, session.id);
        // Its agent asked the person: the task waits for the answer, and the agent is resumed
        // with it (engine::approvals), instead of going back to open.
        let asking = services.store.session_has_unheard_question(session.id)?;
        let summary = format!(
            "Healer stopped while this session {} (found at the next start{}); the worktree is kept{}",
            if asking { "waited for your answer" } else { "ran" },
            if ended > 0 {
                format!(", {ended} process(es) it left were ended")
            } else {
                String::new()
            },
            if asking {
                ", and the agent goes on once you answer"
            } else {
                ""
            }
        );
        services.store.finish_session(
            session.id,
            SessionStatus::Interrupted,
            &SessionOutcome {
                summary: summary.clone(),
                ..SessionOutcome::default()
            },
        )?;
        if asking {
            let note = format!(
                "{} asked you something before Healer stopped; it goes on with your answer",
                session.agent.name()
            );
            if let Ok(project) = services.store.project(session.project_id) {
                let repo = PathBuf::from(&project.path);
                let _ = tasklist::modify(&repo, |file| {
                    if file
                        .task(&session.task_id)
                        .is_some_and(|t| t.status == TaskStatus::InProgress)
                    {
                        file.update(&session.task_id, &now(), |t| t.note = Some(note.clone()))?;
                    }
                    Ok(())
                });
            }
        } else if let Ok(project) = services.store.project(session.project_id) {
            let note = format!(
                "Healer stopped while an agent worked on it ({}); back to open, and the work so far is kept in its worktree (branch {})",
                now().chars().take(10).collect::<String>(),
                session.branch
            );
            let repo = PathBuf::from(&project.path);
            let reopened = tasklist::modify(&repo, |file| {
                let still = file
                    .task(&session.task_id)
                    .is_some_and(|t| t.status == TaskStatus::InProgress);
                if still {
                    file.update(&session.task_id, &now(), |t| {
                        t.status = TaskStatus::Open;
                        t.assignee = None;
                        t.note = Some(note.clone());
                    })?;
                }
                Ok(())
            });
            if let Err(e) = reopened {
                tracing::warn!(
                    "the task {} of \u{201c}{}\u{201d} could not be put back to open: {e}",
                    session.task_id,
                    project.name
                );
            }
            services.bus.emit(Event::ProjectTasksChanged {
                project_id: project.id,
                name: project.name.clone(),
                problems: 0,
                what: "a task interrupted by an unclean stop is open again".to_string(),
            })?;
        }
        services.bus.emit(Event::SessionFinished {
            session_id: session.id,
            project_id: session.project_id,
            task_id: session.task_id.clone(),
            task_title: session.task_title.clone(),
            status: SessionStatus::Interrupted,
            summary,
            commit: None,
        })?;
    }
    Ok(sessions.len())
}
