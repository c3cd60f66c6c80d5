//! Snapshots of task worktrees as recorded: the ref and commit pinned in the repository
//! (`project::snapshot` pins and restores them), the reason, and when one was restored.

use rusqlite::{params, OptionalExtension, Row};
use serde::{Deserialize, Serialize};

use super::{now, Store};
use crate::error::{Error, Result};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct SnapshotRecord {
    pub id: i64,
    pub project_id: i64,
    pub task_id: String,
    pub seq: u32,
    /// `refs/healer/snapshots/<task>/<n>` in the project's repository.
    pub ref_name: String,
    pub commit_id: String,
    pub worktree: String,
    /// Why it was taken, in a sentence.
    pub reason: String,
    pub created_at: String,
    pub restored_at: Option<String>,
}

/// A snapshot to record.
#[derive(Debug, Clone)]
pub struct NewSnapshot<'a> {
    pub project_id: i64,
    pub task_id: &'a str,
    pub seq: u32,
    pub ref_name: &'a str,
    pub commit_id: &'a str,
    pub worktree: &'a str,
    pub reason: &'a str,
}

const COLUMNS: &str =
    "id, project_id, task_id, seq, ref_name, commit_id, worktree, reason, created_at, restored_at";

fn from_row(r: &Row<'_>) -> rusqlite::Result<SnapshotRecord> {
    Ok(SnapshotRecord {
        id: r.get(0)?,
        project_id: r.get(1)?,
        task_id: r.get(2)?,
        seq: r.get(3)?,
        ref_name: r.get(4)?,
        commit_id: r.get(5)?,
        worktree: r.get(6)?,
        reason: r.get(7)?,
        created_at: r.get(8)?,
        restored_at: r.get(9)?,
    })
}

impl Store {
    /// Record a pinned snapshot (a ref already recorded is returned as it is).
    pub fn insert_snapshot(&self, new: &NewSnapshot<'_>) -> Result<SnapshotRecord> {
        let id = self.call(|c| {
            c.execute(
                "INSERT INTO healer_snapshots (project_id, task_id, seq, ref_name, commit_id, worktree, reason, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                 ON CONFLICT (project_id, ref_name) DO NOTHING",
                params![
                    new.project_id,
                    new.task_id,
                    new.seq,
                    new.ref_name,
                    new.commit_id,
                    new.worktree,
                    new.reason,
                    now()
                ],
            )?;
            c.query_row(
                "SELECT id FROM healer_snapshots WHERE project_id = ?1 AND ref_name = ?2",
                params![new.project_id, new.ref_name],
                |r| r.get::<_, i64>(0),
            )
        })?;
        self.snapshot(id)
    }

    pub fn snapshot(&self, id: i64) -> Result<SnapshotRecord> {
        let sql = format!("SELECT {COLUMNS} FROM healer_snapshots WHERE id = ?1");
        self.call(|c| c.query_row(&sql, [id], from_row).optional())?
            .ok_or_else(|| Error::NotFound {
                what: format!("snapshot {id}"),
            })
    }

    /// A project's snapshots (with `task_id`, that task's), newest first.
    pub fn snapshots(
        &self,
        project_id: Option<i64>,
        task_id: Option<&str>,
    ) -> Result<Vec<SnapshotRecord>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM healer_snapshots
             WHERE (?1 IS NULL OR project_id = ?1) AND (?2 IS NULL OR task_id = ?2)
             ORDER BY id DESC LIMIT 500"
        );
        self.call(|c| {
            let mut stmt = c.prepare_cached(&sql)?;
            let rows = stmt
                .query_map(params![project_id, task_id], from_row)?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    pub fn mark_snapshot_restored(&self, id: i64) -> Result<()> {
        self.call(|c| {
            c.execute(
                "UPDATE healer_snapshots SET restored_at = ?2 WHERE id = ?1",
                params![id, now()],
            )
        })?;
        Ok(())
    }
}
