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
}

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
            if task.status == TaskStatus::InProgress {
                let since = latest
                    .as_ref()
                    .map(|s| s.started_at.as_str())
                    .unwrap_or(task.updated_at.as_str());
                if let Ok(since) = DateTime::parse_from_rfc3339(since) {
                    let for_how_long = now.signed_duration_since(since.with_timezone(&Utc));
                    if for_how_long > limit {
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
