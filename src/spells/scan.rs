//! The stuck scan (`healer scan`, and periodically in the engine): tasks in progress for
//! longer than the project's `stuck_after_hours`, and failure signatures of a task that came
//! back in three or more sessions. The engine turns each into a `SubtaskStuck` failure when
//! the project's `onStuckSubtask` is on, else a notification.

use std::path::Path;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::store::Store;
use crate::tasklist::{read_file, TaskStatus, TASKS_FILE};

/// Sessions a signature must come back in to count as repeated.
pub const REPEATED_SESSIONS: u32 = 3;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum StuckKind {
    /// In progress for longer than the project allows.
    TooLong,
    /// The same failure in several sessions.
    Repeated,
    /// In progress, but no agent of Healer's works on it (set so by hand, or left so).
    Unattended,
}

/// How long a task may be in progress with no session of Healer's before the scan says so:
/// Healer's own claim starts its session at once, so only a task set in progress by hand (or
/// left so) waits this long.
pub const UNATTENDED_GRACE: chrono::Duration = chrono::Duration::minutes(10);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct StuckTask {
    pub project_id: i64,
    pub project: String,
    pub task_id: String,
    pub title: String,
    pub kind: StuckKind,
    /// The task's latest session.
    pub session_id: Option<i64>,
    /// What was found, in a sentence.
    pub detail: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct StuckReport {
    pub tasks: Vec<StuckTask>,
}

/// Look at every project as of `now`.
pub fn scan(store: &Store, now: DateTime<Utc>) -> Result<StuckReport> {
    let mut tasks = Vec::new();
    let repeated = store.repeated_signatures(REPEATED_SESSIONS)?;
    for project in store.list_projects()? {
        let config = store.healer_config(project.id)?;
        let Ok(file) = read_file(&Path::new(&project.path).join(TASKS_FILE)) else {
            continue;
        };
        let limit = chrono::Duration::hours(i64::from(config.stuck_after_hours));
        for task in file.tasks() {
            let latest = store
                .list_sessions(project.id, Some(&task.id), 1)?
                .into_iter()
                .next();
            let running = latest
                .as_ref()
                .is_some_and(|s| s.status == crate::session::SessionStatus::Running);
            // In progress past the project's limit: stuck, whether a session of Healer's is
            // running or ended without moving it on (the healer service looks at it).
            let mut too_long = false;
            if task.status == TaskStatus::InProgress {
                let since = latest
                    .as_ref()
                    .map(|s| s.started_at.as_str())
                    .unwrap_or(task.updated_at.as_str());
                if let Ok(since) = DateTime::parse_from_rfc3339(since) {
                    let for_how_long = now.signed_duration_since(since.with_timezone(&Utc));
                    if for_how_long > limit {
                        too_long = true;
                        tasks.push(StuckTask {
                            project_id: project.id,
                            project: project.name.clone(),
                            task_id: task.id.clone(),
                            title: task.title.clone(),
                            kind: StuckKind::TooLong,
                            session_id: latest.as_ref().map(|s| s.id),
                            detail: format!(
                                "in progress for {} h, longer than the project's {} h",
                                for_how_long.num_hours(),
                                config.stuck_after_hours
                            ),
                        });
                    }
                }
            }
            // In progress with no agent of Healer's on it, before that limit: the person is
            // told what to do (there is no agent to heal).
            if task.status == TaskStatus::InProgress && !running && !too_long {
                let since = DateTime::parse_from_rfc3339(&task.updated_at).ok();
                let waited = since.map(|s| now.signed_duration_since(s.with_timezone(&Utc)));
                if waited.is_none_or(|w| w >= UNATTENDED_GRACE) {
                    let when = match waited {
                        Some(w) => format!("marked in progress {} ago", ago(w)),
                        None => "marked in progress by hand (its line gives no time)".to_string(),
                    };
                    tasks.push(StuckTask {
                        project_id: project.id,
                        project: project.name.clone(),
                        task_id: task.id.clone(),
                        title: task.title.clone(),
                        kind: StuckKind::Unattended,
                        session_id: latest.as_ref().map(|s| s.id),
                        detail: format!(
                            "{when}, but no agent of Healer's is working on it — set it back to \
                             open for Healer to run it, or close it when it is done"
                        ),
                    });
                }
            }
            if task.status == TaskStatus::Closed {
                continue;
            }
            for (_, _, signature, n) in repeated
                .iter()
                .filter(|(p, t, _, _)| *p == project.id && *t == task.id)
            {
                tasks.push(StuckTask {
                    project_id: project.id,
                    project: project.name.clone(),
                    task_id: task.id.clone(),
                    title: task.title.clone(),
                    kind: StuckKind::Repeated,
                    session_id: latest.as_ref().map(|s| s.id),
                    detail: format!("the same failure ({signature}) came back in {n} sessions"),
                });
            }
        }
    }
    Ok(StuckReport { tasks })
}

/// A while, in words: "25 min", "3 h", "2 days".
fn ago(d: chrono::Duration) -> String {
    match d.num_minutes() {
        m if m < 120 => format!("{m} min"),
        m if m < 48 * 60 => format!("{} h", m / 60),
        m => format!("{} days", m / (24 * 60)),
    }
}
