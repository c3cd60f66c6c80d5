//! After an unclean stop (a crash, kill -9): sessions still marked running had their engine
//! die under them. Their processes are ended (found by the session's marker in their
//! environment, so nobody else's process is touched), the session is marked interrupted, and
//! its task goes back to open with a note; its worktree is kept for the next run.

use std::path::PathBuf;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use super::run::SESSION_MARKER_VAR;
use crate::error::Result;
use crate::events::Event;
use crate::services::Services;
use crate::session::SessionStatus;
use crate::store::{now, SessionOutcome};
use crate::tasklist::{self, TaskStatus};

/// Kill every process whose environment carries `HEALER_AGENT_SESSION=<marker>`. Returns how
/// many were found. Without /proc (not Linux) nothing is found.
pub fn end_marked_processes(marker: &str) -> usize {
    let wanted = format!("{SESSION_MARKER_VAR}={marker}");
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let me = std::process::id();
    let mut ended = 0;
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        if u32::try_from(pid).ok() == Some(me) {
            continue;
        }
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if environ
            .split(|b| *b == 0)
            .any(|var| var == wanted.as_bytes())
        {
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
            ended += 1;
        }
    }
    ended
}

/// Settle the sessions a crashed engine left running. Returns how many there were.
pub(crate) fn settle_interrupted(services: &Services) -> Result<usize> {
    let sessions = services.store.running_sessions()?;
    for session in &sessions {
        let ended = end_marked_processes(&format!("{}-{}", services.instance(), session.id));
        let summary = format!(
            "Healer stopped while this session ran (found at the next start{}); the worktree is kept",
            if ended > 0 {
                format!(", {ended} process(es) it left were ended")
            } else {
                String::new()
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
        if let Ok(project) = services.store.project(session.project_id) {
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
                        t.note = Some(note);
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
