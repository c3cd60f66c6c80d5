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
    /// What its checks said of the pushed commit when last read: "waiting", "passing" or
    /// "failing".
    #[serde(default = "waiting")]
    pub checks: String,
    /// The checks in a sentence ("“build” failed"); empty until read.
    #[serde(default)]
    pub checks_said: String,
    /// When the host is asked again (its rate limits respected).
    #[serde(default)]
    pub next_check_at: Option<String>,
    /// The pushed commit whose failing check went to the healer service (once per commit).
    #[serde(default)]
    pub healed_commit: Option<String>,
}

fn waiting() -> String {
    "waiting".to_string()
}

const COLUMNS: &str = "project_id, task_id, host, api_url, number, url, state, pushed_commit, \
                       created_at, updated_at, checks, checks_said, next_check_at, healed_commit";

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
        checks: r.get(10)?,
        checks_said: r.get(11)?,
        next_check_at: r.get(12)?,
        healed_commit: r.get(13)?,
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
                     number = ?5, url = ?6, state = ?7, updated_at = ?9,
                     checks = CASE WHEN pushed_commit = ?8 THEN checks ELSE 'waiting' END,
                     checks_said = CASE WHEN pushed_commit = ?8 THEN checks_said ELSE '' END,
                     next_check_at = CASE WHEN pushed_commit = ?8 THEN next_check_at ELSE NULL END,
                     pushed_commit = ?8",
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

    /// The open pull requests whose checks are due to be read at `now` (RFC 3339).
    pub fn pull_requests_due(&self, now: &str) -> Result<Vec<PullRequestRecord>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM pull_requests WHERE state = 'open'
                 AND (next_check_at IS NULL OR next_check_at <= ?1) ORDER BY updated_at"
        );
        self.call(|c| {
            let mut stmt = c.prepare(&sql)?;
            let rows = stmt.query_map(params![now], from_row)?;
            rows.collect()
        })
    }

    /// What the host said when asked at `next_check_at`'s eve: its state, and its checks on the
    /// commit `of_commit` (ignored when the branch was pushed again meanwhile).
    pub fn record_pull_request_reading(
        &self,
        project_id: i64,
        task_id: &str,
        reading: &PullRequestReading,
    ) -> Result<()> {
        self.call(|c| {
            c.execute(
                "UPDATE pull_requests SET state = ?3, next_check_at = ?4,
                     checks = CASE WHEN pushed_commit = ?5 THEN ?6 ELSE checks END,
                     checks_said = CASE WHEN pushed_commit = ?5 THEN ?7 ELSE checks_said END
                 WHERE project_id = ?1 AND task_id = ?2",
                params![
                    project_id,
                    task_id,
                    reading.state,
                    reading.next_check_at,
                    reading.of_commit,
                    reading.checks,
                    reading.checks_said
                ],
            )
        })?;
        Ok(())
    }

    /// Claim the healing of `commit`'s failing check: true for the first caller only, so a
    /// failing check goes to the healer service once per pushed commit.
    pub fn claim_pull_request_healing(
        &self,
        project_id: i64,
        task_id: &str,
        commit: &str,
    ) -> Result<bool> {
        let changed = self.call(|c| {
            c.execute(
                "UPDATE pull_requests SET healed_commit = ?3
                 WHERE project_id = ?1 AND task_id = ?2 AND pushed_commit = ?3
                   AND (healed_commit IS NULL OR healed_commit != ?3)",
                params![project_id, task_id, commit],
            )
        })?;
        Ok(changed == 1)
    }
}

/// One reading of a pull request from its host.
#[derive(Debug, Clone)]
pub struct PullRequestReading {
    pub state: String,
    pub next_check_at: String,
    /// The commit the checks were read on.
    pub of_commit: String,
    pub checks: String,
    pub checks_said: String,
}
