//! The person's decision to accept a task's work once its agent resolved a conflict, kept until
//! the resolving session ends (see the migration 0029).

use rusqlite::params;

use super::AcceptHow;
use super::{now, Store};
use crate::error::Result;

/// One decision still being carried out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcceptIntent {
    pub project_id: i64,
    pub task_id: String,
    pub how: AcceptHow,
    pub session_id: Option<i64>,
}

fn how_word(how: AcceptHow) -> &'static str {
    match how {
        AcceptHow::FastForward => "fast_forward",
        AcceptHow::Merge => "merge",
        AcceptHow::Squash => "squash",
    }
}

fn how_of(word: &str) -> AcceptHow {
    match word {
        "merge" => AcceptHow::Merge,
        "squash" => AcceptHow::Squash,
        _ => AcceptHow::FastForward,
    }
}

impl Store {
    /// Keep the decision (before its session starts: a stop in between still finds it).
    pub fn save_accept_intent(&self, project_id: i64, task_id: &str, how: AcceptHow) -> Result<()> {
        self.call(|c| {
            c.execute(
                "INSERT INTO accept_intents (project_id, task_id, how, session_id, created_at)
                 VALUES (?1, ?2, ?3, NULL, ?4)
                 ON CONFLICT (project_id, task_id) DO UPDATE SET how = ?3, session_id = NULL",
                params![project_id, task_id, how_word(how), now()],
            )
        })?;
        Ok(())
    }

    /// The session now carrying the decision out.
    pub fn set_accept_intent_session(
        &self,
        project_id: i64,
        task_id: &str,
        session_id: i64,
    ) -> Result<()> {
        self.call(|c| {
            c.execute(
                "UPDATE accept_intents SET session_id = ?3 WHERE project_id = ?1 AND task_id = ?2",
                params![project_id, task_id, session_id],
            )
        })?;
        Ok(())
    }

    pub fn accept_intents(&self) -> Result<Vec<AcceptIntent>> {
        self.call(|c| {
            let mut stmt = c.prepare(
                "SELECT project_id, task_id, how, session_id FROM accept_intents ORDER BY created_at",
            )?;
            let rows = stmt.query_map([], |r| {
                Ok(AcceptIntent {
                    project_id: r.get(0)?,
                    task_id: r.get(1)?,
                    how: how_of(&r.get::<_, String>(2)?),
                    session_id: r.get(3)?,
                })
            })?;
            rows.collect()
        })
    }

    /// The decision was carried out, or given up (the session ended, the work was discarded).
    pub fn clear_accept_intent(&self, project_id: i64, task_id: &str) -> Result<()> {
        self.call(|c| {
            c.execute(
                "DELETE FROM accept_intents WHERE project_id = ?1 AND task_id = ?2",
                params![project_id, task_id],
            )
        })?;
        Ok(())
    }
}
