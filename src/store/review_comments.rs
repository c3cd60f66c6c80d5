//! Comments a person leaves on the lines of an agent's change, until sent and addressed.

use rusqlite::{params, OptionalExtension, Row};
use serde::{Deserialize, Serialize};

use super::{now, Store};
use crate::error::{Error, Result};

/// One comment on lines of a task's change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct ReviewComment {
    pub id: i64,
    pub project_id: i64,
    pub task_id: String,
    pub path: String,
    pub line_start: u32,
    pub line_end: u32,
    /// The lines as they read when the comment was made.
    pub excerpt: String,
    /// The git blob of the whole file then (what "addressed" is measured against).
    pub blob: String,
    pub text: String,
    pub created_at: String,
    /// When it went to the agent; `None` while it waits to be sent.
    pub sent_at: Option<String>,
    pub sent_session_id: Option<i64>,
    /// When the agent's change after it was sent touched its lines.
    pub addressed_at: Option<String>,
}

/// A comment to keep.
#[derive(Debug, Clone)]
pub struct NewReviewComment {
    pub project_id: i64,
    pub task_id: String,
    pub path: String,
    pub line_start: u32,
    pub line_end: u32,
    pub excerpt: String,
    pub blob: String,
    pub text: String,
}

const COLUMNS: &str = "id, project_id, task_id, path, line_start, line_end, excerpt, blob, text, \
                       created_at, sent_at, sent_session_id, addressed_at";

fn from_row(r: &Row<'_>) -> rusqlite::Result<ReviewComment> {
    Ok(ReviewComment {
        id: r.get(0)?,
        project_id: r.get(1)?,
        task_id: r.get(2)?,
        path: r.get(3)?,
        line_start: r.get(4)?,
        line_end: r.get(5)?,
        excerpt: r.get(6)?,
        blob: r.get(7)?,
        text: r.get(8)?,
        created_at: r.get(9)?,
        sent_at: r.get(10)?,
        sent_session_id: r.get(11)?,
        addressed_at: r.get(12)?,
    })
}

impl Store {
    pub fn add_review_comment(&self, new: &NewReviewComment) -> Result<ReviewComment> {
        let at = now();
        let id = self.call(|c| {
            c.execute(
                "INSERT INTO review_comments (project_id, task_id, path, line_start, line_end,
                     excerpt, blob, text, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    new.project_id,
                    new.task_id,
                    new.path,
                    new.line_start,
                    new.line_end,
                    new.excerpt,
                    new.blob,
                    new.text,
                    at
                ],
            )?;
            Ok(c.last_insert_rowid())
        })?;
        self.review_comment(id)
    }

    pub fn review_comment(&self, id: i64) -> Result<ReviewComment> {
        let sql = format!("SELECT {COLUMNS} FROM review_comments WHERE id = ?1");
        self.call(|c| c.query_row(&sql, params![id], from_row).optional())?
            .ok_or_else(|| Error::NotFound {
                what: format!("comment {id}"),
            })
    }

    /// The task's comments, oldest first.
    pub fn review_comments(&self, project_id: i64, task_id: &str) -> Result<Vec<ReviewComment>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM review_comments WHERE project_id = ?1 AND task_id = ?2 ORDER BY id"
        );
        self.call(|c| {
            let mut stmt = c.prepare(&sql)?;
            let rows = stmt.query_map(params![project_id, task_id], from_row)?;
            rows.collect()
        })
    }

    /// Remove a comment that has not been sent (a sent one is part of what the agent was told).
    pub fn delete_review_comment(&self, id: i64) -> Result<()> {
        let comment = self.review_comment(id)?;
        if comment.sent_at.is_some() {
            return Err(Error::InvalidInput(
                "this comment was already sent to the agent".to_string(),
            ));
        }
        self.call(|c| c.execute("DELETE FROM review_comments WHERE id = ?1", params![id]))?;
        Ok(())
    }

    /// Mark these comments sent with `session_id` (the live session told, or the one started).
    pub fn mark_review_comments_sent(&self, ids: &[i64], session_id: i64) -> Result<()> {
        let at = now();
        self.call(|c| {
            let tx = c.unchecked_transaction()?;
            for id in ids {
                tx.execute(
                    "UPDATE review_comments SET sent_at = ?2, sent_session_id = ?3
                     WHERE id = ?1 AND sent_at IS NULL",
                    params![id, at, session_id],
                )?;
            }
            tx.commit()
        })
    }

    pub fn mark_review_comment_addressed(&self, id: i64) -> Result<()> {
        let at = now();
        self.call(|c| {
            c.execute(
                "UPDATE review_comments SET addressed_at = ?2 WHERE id = ?1 AND addressed_at IS NULL",
                params![id, at],
            )
        })?;
        Ok(())
    }
}
