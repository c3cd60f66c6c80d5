//! The task list agrees with what this Healer is doing. A person's editor that saves by
//! writing a new file and renaming it over the old one, from a copy read a moment before
//! Healer wrote, undoes Healer's write: a task whose session finished and was committed shows
//! "in progress" again, for ever. So at start, and after every change made outside Healer,
//! the file is compared with the sessions: a task in progress that no session of this Healer
//! works on gets the end its last session had (closed with its commit, or open again); a task
//! shown open by a line older than its last session, which closed it, is closed again. A task
//! a session is working on is left as the file says until that session ends (it ends by
//! writing its own status, and the list is looked at again then). This is the tasks doctor's
//! rule, applied rather than only reported.

use std::collections::HashMap;
use std::path::Path;

use chrono::{DateTime, Utc};

use super::runner::Projects;
use crate::error::Result;
use crate::session::SessionStatus;
use crate::store::{now, Project, SessionRecord};
use crate::tasklist::{TaskFile, TaskStatus};

/// What a repair does to one task.
#[derive(Debug, Clone, PartialEq)]
enum Repair {
    Close { commit: String, summary: String },
    Reopen { why: String },
}

impl Projects {
    /// [`Projects::reconcile_tasks`] for every project (at start); a list that cannot be
    /// read or written is left as it is, with a warning.
    pub fn reconcile_all(&self) {
        let Ok(projects) = self.services.store.list_projects() else {
            return;
        };
        for project in projects {
            super::folder::trust_repository(Path::new(&project.path));
            match self.reconcile_tasks(&project) {
                Ok(ids) if !ids.is_empty() => tracing::info!(
                    "the task list of \u{201c}{}\u{201d} was brought up to date: {}",
                    project.name,
                    ids.join(", ")
                ),
                Ok(_) => {}
                Err(e) => tracing::warn!(
                    "the task list of \u{201c}{}\u{201d} was not checked: {e}",
                    project.name
                ),
            }
        }
    }

    /// Repair `project`'s task list where it disagrees with this Healer's sessions; the ids
    /// of the tasks repaired (none: the file is not written).
    pub fn reconcile_tasks(&self, project: &Project) -> Result<Vec<String>> {
        let store = &self.services.store;
        let live: HashMap<String, SessionRecord> = store
            .running_sessions()?
            .into_iter()
            .filter(|s| s.project_id == project.id && self.is_running(s.id))
            .map(|s| (s.task_id.clone(), s))
            .collect();
        // Each task's last session, from one query (newest first): a list of 10,000 tasks is
        // looked at after every outside change, and a query per task would be 10,000.
        let mut last: HashMap<String, SessionRecord> = HashMap::new();
        for session in store.list_sessions(project.id, None, u32::MAX)? {
            last.entry(session.task_id.clone()).or_insert(session);
        }
        let last_session = |task_id: &str| last.get(task_id).cloned();
        let plan = |file: &TaskFile| -> Vec<(String, Repair)> {
            let mut plan = Vec::new();
            for task in file.tasks() {
                let repair = match (task.status, live.contains_key(&task.id)) {
                    (TaskStatus::InProgress, false) => {
                        dead_in_progress(&task.updated_at, last_session(&task.id))
                    }
                    (TaskStatus::Open, false) => {
                        stale_open(&task.updated_at, last_session(&task.id))
                    }
                    _ => None,
                };
                if let Some(repair) = repair {
                    plan.push((task.id.clone(), repair));
                }
            }
            plan
        };
        let path = std::path::Path::new(&project.path).join(crate::tasklist::TASKS_FILE);
        // Looked at without the lock first: most changes need no repair, and then nothing
        // is written.
        if plan(&crate::tasklist::read_file(&path)?).is_empty() {
            return Ok(Vec::new());
        }
        self.modify_tasks(project, "Healer brought the task list up to date", |file| {
            let at = now();
            let repairs = plan(file);
            for (id, repair) in &repairs {
                file.update(id, &at, |t| match repair {
                    Repair::Close { commit, summary } => {
                        t.status = TaskStatus::Closed;
                        t.commit = Some(commit.clone());
                        t.closed_reason = Some(summary.clone());
                        t.assignee = None;
                        t.worktree = None;
                        t.note = Some(
                            "Closed again: its session had finished with this commit, and the \
                             list was saved over by another program"
                                .to_string(),
                        );
                    }
                    Repair::Reopen { why } => {
                        t.status = TaskStatus::Open;
                        t.assignee = None;
                        t.note = Some(why.clone());
                    }
                })?;
            }
            Ok(repairs.into_iter().map(|(id, _)| id).collect())
        })
    }
}

/// A task the file shows open whose line is older than its last session, which closed it with
/// a commit: a copy saved from before that session (a person reopening it edits the current
/// line, which is newer), so the session's end is put back.
fn stale_open(updated_at: &str, last: Option<SessionRecord>) -> Option<Repair> {
    let session = last?;
    let commit = session.commit_id.clone()?;
    let older = match (time(updated_at), time(&session.started_at)) {
        (Some(line), Some(started)) => line < started,
        _ => false,
    };
    (session.status == SessionStatus::Finished && older).then_some(Repair::Close {
        commit,
        summary: session.summary,
    })
}

fn time(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// What a task the file shows in progress, with no session of this Healer on it, should be:
/// only a line older than the end of its last session is repaired — a copy saved from before
/// that end. A task Healer never ran was marked by a person (perhaps working on it
/// themselves), and a line newer than the session's end is a new claim whose session is
/// being recorded, or a person's own mark: both are left alone (the stuck scan reports
/// what stays so).
fn dead_in_progress(updated_at: &str, last: Option<SessionRecord>) -> Option<Repair> {
    let session = last?;
    let ended = time(session.ended_at.as_deref()?)?;
    if time(updated_at).is_none_or(|line| line >= ended) {
        return None;
    }
    match session.status {
        SessionStatus::Running => None,
        SessionStatus::Finished => match session.commit_id {
            Some(commit) => Some(Repair::Close {
                commit,
                summary: session.summary,
            }),
            None => Some(Repair::Reopen {
                why: format!(
                    "Its last session ended without a commit: {}",
                    session.summary
                ),
            }),
        },
        _ => Some(Repair::Reopen {
            why: format!("Its last session ended: {}", session.summary),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(status: SessionStatus, commit: Option<&str>) -> SessionRecord {
        SessionRecord {
            id: 1,
            project_id: 1,
            task_id: "t1".to_string(),
            task_title: "Greet".to_string(),
            agent: crate::session::AgentKind::Builtin,
            status,
            worktree: String::new(),
            branch: String::new(),
            base_commit: None,
            pgid: None,
            agent_session_id: None,
            transcript: None,
            exit_code: None,
            summary: "Done".to_string(),
            commit_id: commit.map(str::to_string),
            merged: commit.is_some(),
            started_at: "2026-11-28T10:00:00.000Z".to_string(),
            ended_at: Some("2026-11-28T10:05:00.000Z".to_string()),
            resumed_from: None,
            agent_version: None,
            raw_lines: 0,
        }
    }

    #[test]
    fn only_a_line_older_than_its_sessions_end_is_repaired() {
        let before = "2026-11-28T10:01:00.000Z";
        let after = "2026-11-28T10:06:00.000Z";
        let closed = session(SessionStatus::Finished, Some("abc"));
        assert!(matches!(
            dead_in_progress(before, Some(closed.clone())),
            Some(Repair::Close { ref commit, .. }) if commit == "abc"
        ));
        assert_eq!(dead_in_progress(after, Some(closed)), None, "a new claim");
        assert_eq!(dead_in_progress(before, None), None, "never run by Healer");
        assert!(matches!(
            dead_in_progress(before, Some(session(SessionStatus::Failed, None))),
            Some(Repair::Reopen { .. })
        ));
    }

    #[test]
    fn an_open_line_from_before_the_session_that_closed_it_is_closed_again() {
        let closed = session(SessionStatus::Finished, Some("abc"));
        assert!(stale_open("2026-11-28T09:59:00.000Z", Some(closed.clone())).is_some());
        assert_eq!(stale_open("2026-11-28T10:07:00.000Z", Some(closed)), None);
    }
}
