//! The pull request Healer opened for a task's branch (one per task), as the window shows it.

use rusqlite::{params, OptionalExtension, Row};
use serde::{Deserialize, Serialize};

use super::{now, Store};
use crate::error::Result;

/// A task's pull request: where it is, its state when last read, what was pushed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct PullRequestRecord {
    pub project_id: i64,
    pub task_id: String,
    /// "github", "gitlab" or "forgejo".
    pub host: String,
    pub api_url: String,
    pub number: i64,
    /// Its page on the host.
    pub url: String,
    /// "open", "merged" or "closed".
    pub state: String,
    pub pushed_commit: String,
    pub created_at: String,
    pub updated_at: String,
}

const COLUMNS: &str = "project_id, task_id, host, api_url, number, url, state, pushed_commit, \
                       created_at, updated_at";

fn from_row(r: &Row<'_>) -> rusqlite::Result<PullRequestRecord> {
    Ok(PullRequestRecord {
        project_id: r.get(0)?,
        task_id: r.get(1)?,
        host: r.get(2)?,
        api_url: r.get(3)?,
        number: r.get(4)?,
        url: r.get(5)?,
        state: r.get(6)?,
        pushed_commit: r.get(7)?,
        created_at: r.get(8)?,
        updated_at: r.get(9)?,
    })
}

impl Store {
    /// The task's pull request, if Healer opened one.
    pub fn pull_request(
        &self,
        project_id: i64,
        task_id: &str,
    ) -> Result<Option<PullRequestRecord>> {
        let sql =
            format!("SELECT {COLUMNS} FROM pull_requests WHERE project_id = ?1 AND task_id = ?2");
        self.call(|c| {
            c.query_row(&sql, params![project_id, task_id], from_row)
                .optional()
        })
    }

    /// Record (or update) the task's pull request.
    pub fn save_pull_request(&self, record: &PullRequestRecord) -> Result<PullRequestRecord> {
        let at = now();
        self.call(|c| {
            c.execute(
                "INSERT INTO pull_requests (project_id, task_id, host, api_url, number, url, state,
                     pushed_commit, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9)
                 ON CONFLICT (project_id, task_id) DO UPDATE SET host = ?3, api_url = ?4,
                     number = ?5, url = ?6, state = ?7, pushed_commit = ?8, updated_at = ?9",
                params![
                    record.project_id,
                    record.task_id,
                    record.host,
                    record.api_url,
                    record.number,
                    record.url,
                    record.state,
                    record.pushed_commit,
                    at
                ],
            )
        })?;
        self.pull_request(record.project_id, &record.task_id)?
            .ok_or_else(|| {
                crate::error::Error::Internal("the pull request was not recorded".into())
            })
    }
}
