//! When the steering judge last looked at each task, kept with the task (by project and task
//! id) so a restart does not judge it again before its interval is up.

use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};

use super::notifications::unknown_value;
use super::steering::JudgeAction;
use super::Store;
use crate::error::Result;

/// The judge's last look at a task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct TaskJudgement {
    pub project_id: i64,
    pub task_id: String,
    /// RFC 3339, by the clock the judge was given.
    pub judged_at: String,
    pub action: JudgeAction,
    /// Answers so far that were not usable (each counted as continue).
    pub bad_answers: u32,
}

impl Store {
    pub fn task_judgement(&self, project_id: i64, task_id: &str) -> Result<Option<TaskJudgement>> {
        self.call(|c| {
            c.query_row(
                "SELECT project_id, task_id, judged_at, action, bad_answers FROM task_judgements
                 WHERE project_id = ?1 AND task_id = ?2",
                params![project_id, task_id],
                |r| {
                    let action: String = r.get(3)?;
                    Ok(TaskJudgement {
                        project_id: r.get(0)?,
                        task_id: r.get(1)?,
                        judged_at: r.get(2)?,
                        action: JudgeAction::parse(&action)
                            .ok_or_else(|| unknown_value(3, &action))?,
                        bad_answers: r.get(4)?,
                    })
                },
            )
            .optional()
        })
    }

    /// The judge looked at the task at `at` and chose `action`; `bad` when its answer was not
    /// usable (then `action` is continue).
    pub fn set_task_judgement(
        &self,
        project_id: i64,
        task_id: &str,
        at: &str,
        action: JudgeAction,
        bad: bool,
    ) -> Result<()> {
        self.call(|c| {
            c.execute(
                "INSERT INTO task_judgements (project_id, task_id, judged_at, action, bad_answers)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (project_id, task_id) DO UPDATE SET judged_at = excluded.judged_at,
                     action = excluded.action,
                     bad_answers = task_judgements.bad_answers + excluded.bad_answers",
                params![project_id, task_id, at, action.as_str(), i64::from(bad)],
            )
        })?;
        Ok(())
    }
}

/// A replace that waits for the person's answer at a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingReplace {
    pub checkpoint_id: i64,
    pub session_id: i64,
    pub reason: String,
}

impl Store {
    /// Checkpoint `checkpoint_id` asks whether to replace the agent of `session_id`.
    pub fn link_replace_checkpoint(
        &self,
        checkpoint_id: i64,
        session_id: i64,
        reason: &str,
    ) -> Result<()> {
        self.call(|c| {
            c.execute(
                "INSERT INTO steering_checkpoints (checkpoint_id, session_id, reason) VALUES (?1, ?2, ?3)",
                params![checkpoint_id, session_id, reason],
            )
        })?;
        Ok(())
    }

    /// The replace checkpoint `checkpoint_id` asks about, if it is one.
    pub fn replace_checkpoint(&self, checkpoint_id: i64) -> Result<Option<PendingReplace>> {
        self.call(|c| {
            c.query_row(
                "SELECT checkpoint_id, session_id, reason FROM steering_checkpoints WHERE checkpoint_id = ?1",
                [checkpoint_id],
                |r| {
                    Ok(PendingReplace {
                        checkpoint_id: r.get(0)?,
                        session_id: r.get(1)?,
                        reason: r.get(2)?,
                    })
                },
            )
            .optional()
        })
    }

    /// Whether a replace of `session_id` already waits for the person (asked once per session).
    pub fn replace_pending(&self, session_id: i64) -> Result<bool> {
        self.call(|c| {
            c.query_row(
                "SELECT EXISTS (SELECT 1 FROM steering_checkpoints s JOIN checkpoints k ON k.id = s.checkpoint_id
                 WHERE s.session_id = ?1 AND k.decided_at IS NULL)",
                [session_id],
                |r| r.get(0),
            )
        })
    }
}
