//! Auto-fix records: the maintainer tasks as the Auto-fix tab lists them, with the versions
//! they started from and became, and the tokens they used.

use rusqlite::{params, OptionalExtension, Row};
use serde::{Deserialize, Serialize};

use super::notifications::unknown_value;
use super::Store;
use crate::error::{Error, Result};
use crate::workflow::Version;

const AUTOFIX_COLUMNS: &str = "t.id, t.workflow_id, t.title, t.outcome, t.run_id, t.from_major,
    t.from_minor, t.to_major, t.to_minor, t.fix_comment, t.summary, t.created_at, t.finished_at,
    (SELECT coalesce(sum(u.prompt_tokens + u.completion_tokens), 0) FROM usage u WHERE u.task_id = t.id),
    (SELECT number FROM runs WHERE id = t.run_id),
    (SELECT r.status FROM runs r JOIN scripts s ON s.id = r.script_id
      WHERE r.workflow_id = t.workflow_id AND r.trigger = 'fix'
        AND s.major = t.to_major AND s.minor = t.to_minor ORDER BY r.id LIMIT 1)";

/// How an auto-fix task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum AutoFixStatus {
    /// Waiting its turn or working.
    Working,
    /// Its fix is stored as the next minor version.
    Fixed,
    /// Its fix was not applied: the script changed to a new major meanwhile.
    Stale,
    /// It found no fix; the person was asked.
    GaveUp,
    /// Healer stopped while it worked.
    Interrupted,
}

impl AutoFixStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            AutoFixStatus::Working => "working",
            AutoFixStatus::Fixed => "fixed",
            AutoFixStatus::Stale => "stale",
            AutoFixStatus::GaveUp => "gave_up",
            AutoFixStatus::Interrupted => "interrupted",
        }
    }

    /// The stored outcome (`None`: still working).
    pub fn parse_outcome(s: Option<&str>) -> Option<Self> {
        match s {
            None => Some(AutoFixStatus::Working),
            Some("fixed") => Some(AutoFixStatus::Fixed),
            Some("stale") => Some(AutoFixStatus::Stale),
            Some("gave_up") => Some(AutoFixStatus::GaveUp),
            Some("interrupted") => Some(AutoFixStatus::Interrupted),
            Some(_) => None,
        }
    }
}

/// One maintainer task as the Auto-fix tab lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct AutoFix {
    pub task_id: i64,
    pub workflow_id: Option<i64>,
    pub title: String,
    pub status: AutoFixStatus,
    /// The failed run it repairs.
    pub run_id: Option<i64>,
    /// That run's number among the workflow's runs (#1, #2 …), for showing.
    pub run_number: Option<u32>,
    /// The version that failed ("1.0").
    pub from_version: Option<Version>,
    /// The version its fix became ("1.1").
    pub to_version: Option<Version>,
    pub fix_comment: Option<String>,
    /// How the task ended, in words (the loop's summary or the reason it gave up).
    pub summary: String,
    /// Tokens its model calls used.
    pub tokens: u64,
    pub created_at: String,
    pub finished_at: Option<String>,
    /// How the re-run of its fix stands (queued, running, succeeded…); `None` before one.
    pub rerun: Option<crate::workflow::RunStatus>,
}

impl Store {
    /// Maintainer tasks of every workflow (or one), newest first.
    pub fn all_autofixes(&self, workflow_id: Option<i64>, limit: u32) -> Result<Vec<AutoFix>> {
        let sql = format!(
            "SELECT {AUTOFIX_COLUMNS} FROM tasks t
             WHERE t.kind = 'maintainer' AND (?1 IS NULL OR t.workflow_id = ?1)
             ORDER BY t.id DESC LIMIT ?2"
        );
        self.call(|c| {
            let mut stmt = c.prepare_cached(&sql)?;
            let rows = stmt
                .query_map(params![workflow_id, limit], autofix_from_row)?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    pub fn autofix(&self, task_id: i64) -> Result<AutoFix> {
        let sql = format!(
            "SELECT {AUTOFIX_COLUMNS} FROM tasks t WHERE t.id = ?1 AND t.kind = 'maintainer'"
        );
        self.call(|c| c.query_row(&sql, [task_id], autofix_from_row).optional())?
            .ok_or_else(|| Error::NotFound {
                what: format!("auto-fix thread {task_id}"),
            })
    }
}

fn version_at(r: &Row<'_>, major: usize) -> rusqlite::Result<Option<Version>> {
    let a: Option<u32> = r.get(major)?;
    let b: Option<u32> = r.get(major + 1)?;
    Ok(a.zip(b).map(|(major, minor)| Version { major, minor }))
}

fn autofix_from_row(r: &Row<'_>) -> rusqlite::Result<AutoFix> {
    let outcome: Option<String> = r.get(3)?;
    let status = AutoFixStatus::parse_outcome(outcome.as_deref())
        .ok_or_else(|| unknown_value(3, outcome.as_deref().unwrap_or_default()))?;
    let tokens: i64 = r.get(13)?;
    Ok(AutoFix {
        task_id: r.get(0)?,
        workflow_id: r.get(1)?,
        title: r.get(2)?,
        status,
        run_id: r.get(4)?,
        run_number: r.get(14)?,
        from_version: version_at(r, 5)?,
        to_version: version_at(r, 7)?,
        fix_comment: r.get(9)?,
        summary: r.get(10)?,
        created_at: r.get(11)?,
        finished_at: r.get(12)?,
        tokens: u64::try_from(tokens).unwrap_or(0),
        rerun: match r.get::<_, Option<String>>(15)? {
            Some(status) => Some(
                crate::workflow::RunStatus::parse(&status)
                    .ok_or_else(|| unknown_value(15, &status))?,
            ),
            None => None,
        },
    })
}
