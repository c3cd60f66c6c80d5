//! Checkpoints, their decisions and history; Level-2 recovery records and unblocking.

use rusqlite::{params, OptionalExtension, Row, TransactionBehavior};

use super::notifications::unknown_value;
use super::workflows::from_json;
use super::{now, Store};
use crate::checkpoint::{
    Checkpoint, CheckpointAction, CheckpointOption, CheckpointTrigger, Decision, History,
};
use crate::error::{Error, Result};

const COLUMNS: &str = "c.id, c.trigger, c.workflow_id, c.run_id, c.task_id, w.title, c.signature,
    c.context, c.options, c.recommendation, c.created_at, c.chosen, c.notes, c.decided_at,
    c.outcome, c.title, (SELECT number FROM runs WHERE id = c.run_id)";

/// How many past decisions per scope the recommendation looks at.
const HISTORY: u32 = 5;

impl Store {
    #[allow(clippy::too_many_arguments)]
    pub fn insert_checkpoint(
        &self,
        trigger: CheckpointTrigger,
        title: &str,
        workflow_id: Option<i64>,
        run_id: Option<i64>,
        task_id: Option<i64>,
        signature: Option<&str>,
        context: &str,
        options: &[CheckpointOption],
        recommendation: &str,
    ) -> Result<Checkpoint> {
        let options = serde_json::to_string(options)
            .map_err(|e| Error::Internal(format!("options do not serialise: {e}")))?;
        let at = now();
        let id = self.call(|c| {
            c.execute(
                "INSERT INTO checkpoints (trigger, workflow_id, run_id, task_id, signature, context,
                     options, recommendation, created_at, title)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![
                    trigger.as_str(),
                    workflow_id,
                    run_id,
                    task_id,
                    signature,
                    context,
                    options,
                    recommendation,
                    at,
                    title
                ],
            )?;
            Ok(c.last_insert_rowid())
        })?;
        self.checkpoint(id)
    }

    pub fn checkpoint(&self, id: i64) -> Result<Checkpoint> {
        let sql = format!(
            "SELECT {COLUMNS} FROM checkpoints c LEFT JOIN workflows w ON w.id = c.workflow_id
             WHERE c.id = ?1"
        );
        let mut checkpoint = self
            .call(|c| c.query_row(&sql, [id], checkpoint_from_row).optional())?
            .ok_or_else(|| Error::NotFound {
                what: format!("checkpoint {id}"),
            })?;
        checkpoint.affected = self.affected(id)?;
        checkpoint.project_task = self.checkpoint_project_task(id)?;
        checkpoint.agent_request = self.approval_of_checkpoint(id)?.map(|a| a.ask);
        Ok(checkpoint)
    }

    /// Pending checkpoints, oldest first.
    pub fn pending_checkpoints(&self) -> Result<Vec<Checkpoint>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM checkpoints c LEFT JOIN workflows w ON w.id = c.workflow_id
             WHERE c.decided_at IS NULL ORDER BY c.id"
        );
        self.query_checkpoints(&sql, params![])
    }

    /// Decided checkpoints, newest first.
    pub fn decided_checkpoints(&self, limit: u32) -> Result<Vec<Checkpoint>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM checkpoints c LEFT JOIN workflows w ON w.id = c.workflow_id
             WHERE c.decided_at IS NOT NULL ORDER BY c.decided_at DESC, c.id DESC LIMIT ?1"
        );
        self.query_checkpoints(&sql, params![limit])
    }

    fn query_checkpoints(&self, sql: &str, args: impl rusqlite::Params) -> Result<Vec<Checkpoint>> {
        let mut checkpoints = self.call(|c| {
            let mut stmt = c.prepare_cached(sql)?;
            let rows = stmt
                .query_map(args, checkpoint_from_row)?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })?;
        for c in &mut checkpoints {
            c.affected = self.affected(c.id)?;
            c.project_task = self.checkpoint_project_task(c.id)?;
            c.agent_request = self.approval_of_checkpoint(c.id)?.map(|a| a.ask);
        }
        Ok(checkpoints)
    }

    /// Say which project's task a checkpoint is about.
    pub fn set_checkpoint_project_task(
        &self,
        checkpoint_id: i64,
        project_id: i64,
        task_id: &str,
        task_title: &str,
    ) -> Result<()> {
        self.call(|c| {
            c.execute(
                "INSERT OR REPLACE INTO checkpoint_project_tasks (checkpoint_id, project_id, task_id, task_title)
                 VALUES (?1, ?2, ?3, ?4)",
                params![checkpoint_id, project_id, task_id, task_title],
            )
        })?;
        Ok(())
    }

    /// The project's task a checkpoint is about, with the project's name.
    pub fn checkpoint_project_task(
        &self,
        checkpoint_id: i64,
    ) -> Result<Option<crate::checkpoint::ProjectTaskRef>> {
        self.call(|c| {
            c.query_row(
                "SELECT t.project_id, p.name, t.task_id, t.task_title FROM checkpoint_project_tasks t
                 JOIN projects p ON p.id = t.project_id WHERE t.checkpoint_id = ?1",
                [checkpoint_id],
                |r| {
                    Ok(crate::checkpoint::ProjectTaskRef {
                        project_id: r.get(0)?,
                        project_name: r.get(1)?,
                        task_id: r.get(2)?,
                        task_title: r.get(3)?,
                    })
                },
            )
            .optional()
        })
    }

    /// Whether a workflow has a checkpoint waiting for the person.
    pub fn has_pending_checkpoint(&self, workflow_id: i64) -> Result<bool> {
        self.call(|c| {
            c.query_row(
                "SELECT EXISTS (SELECT 1 FROM checkpoints WHERE workflow_id = ?1 AND decided_at IS NULL)",
                [workflow_id],
                |r| r.get(0),
            )
        })
    }

    /// Record the decision, once: `Ok(false)` when it was decided already.
    pub fn decide_checkpoint(
        &self,
        id: i64,
        option: u32,
        action: CheckpointAction,
        notes: Option<&str>,
    ) -> Result<bool> {
        let at = now();
        let changed = self.call(|c| {
            c.execute(
                "UPDATE checkpoints SET chosen = ?2, chosen_action = ?3, notes = ?4, decided_at = ?5
                 WHERE id = ?1 AND decided_at IS NULL",
                params![id, option, action.key(), notes, at],
            )
        })?;
        Ok(changed == 1)
    }

    /// Close a question nobody answered in time, as its option `option` would (shown as the
    /// decision), but not as the person's choice: nothing is learnt from it.
    pub fn close_unanswered(&self, id: i64, option: u32, outcome: &str) -> Result<bool> {
        let at = now();
        let changed = self.call(|c| {
            c.execute(
                "UPDATE checkpoints SET chosen = ?2, chosen_action = 'unanswered', decided_at = ?3,
                     outcome = ?4
                 WHERE id = ?1 AND decided_at IS NULL",
                params![id, option, at, outcome],
            )
        })?;
        Ok(changed == 1)
    }

    /// Close the questions still waiting about one of `workflows` with `signature` (other than
    /// `into`), which `into` now asks for all of them together: one decision per thing
    /// waiting. Not a choice of the person's (no option is recorded, nothing is learnt from
    /// it). The ids closed.
    pub fn fold_checkpoints(
        &self,
        into: i64,
        signature: &str,
        workflows: &[i64],
    ) -> Result<Vec<i64>> {
        let at = now();
        let outcome = format!(
            "Asked again together with the other workflows failing the same way (question {into})"
        );
        self.call(|c| {
            let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let mut folded = Vec::new();
            for workflow in workflows {
                let mut stmt = tx.prepare_cached(
                    "UPDATE checkpoints SET decided_at = ?1, outcome = ?2
                     WHERE decided_at IS NULL AND id != ?3 AND signature = ?4 AND workflow_id = ?5
                     RETURNING id",
                )?;
                let ids = stmt
                    .query_map(params![at, outcome, into, signature, workflow], |r| {
                        r.get(0)
                    })?
                    .collect::<rusqlite::Result<Vec<i64>>>()?;
                folded.extend(ids);
            }
            tx.commit()?;
            Ok(folded)
        })
    }

    pub fn set_checkpoint_outcome(&self, id: i64, outcome: &str) -> Result<()> {
        self.call(|c| {
            c.execute(
                "UPDATE checkpoints SET outcome = ?2 WHERE id = ?1",
                params![id, outcome],
            )
        })?;
        Ok(())
    }

    /// Past choices (action keys, newest first) for the recommendation.
    pub fn checkpoint_history(
        &self,
        trigger: CheckpointTrigger,
        workflow_id: Option<i64>,
        signature: Option<&str>,
    ) -> Result<History> {
        // One query; each scope leaves out what it does not match on.
        let chosen = |trigger: Option<&str>,
                      workflow: Option<i64>,
                      signature: Option<&str>|
         -> Result<Vec<String>> {
            self.call(|c| {
                let mut stmt = c.prepare_cached(
                    "SELECT chosen_action FROM checkpoints
                     WHERE decided_at IS NOT NULL AND (?1 IS NULL OR trigger = ?1)
                       AND (?2 IS NULL OR workflow_id = ?2) AND (?3 IS NULL OR signature = ?3)
                     ORDER BY decided_at DESC, id DESC LIMIT ?4",
                )?;
                let rows = stmt
                    .query_map(params![trigger, workflow, signature, HISTORY], |r| r.get(0))?
                    .collect::<rusqlite::Result<Vec<String>>>()?;
                Ok(rows)
            })
        };
        let trigger = Some(trigger.as_str());
        let workflow = match workflow_id {
            Some(id) => chosen(trigger, Some(id), None)?,
            None => Vec::new(),
        };
        let signature = match signature {
            Some(s) => chosen(None, None, Some(s))?,
            None => Vec::new(),
        };
        let anywhere = chosen(trigger, None, None)?;
        Ok(History {
            workflow,
            signature,
            anywhere,
            signature_scope: None,
        })
    }

    /// Mark a run as skipped by the person.
    pub fn mark_run_skipped(&self, run_id: i64) -> Result<()> {
        self.call(|c| c.execute("UPDATE runs SET skipped = 1 WHERE id = ?1", [run_id]))?;
        Ok(())
    }

    pub fn insert_recovery(
        &self,
        workflow_id: i64,
        run_id: Option<i64>,
        signature: &str,
        action: &str,
        hint: Option<&str>,
        reasoning: Option<&str>,
    ) -> Result<()> {
        let at = now();
        self.call(|c| {
            c.execute(
                "INSERT INTO recoveries (workflow_id, run_id, signature, action, hint, reasoning, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![workflow_id, run_id, signature, action, hint, reasoning, at],
            )
        })?;
        Ok(())
    }

    /// Level-2 `action`s taken for this workflow and signature since its last green run.
    pub fn recoveries_since_green(
        &self,
        workflow_id: i64,
        signature: &str,
        action: &str,
    ) -> Result<u32> {
        self.call(|c| {
            c.query_row(
                "SELECT count(*) FROM recoveries
                 WHERE workflow_id = ?1 AND signature = ?2 AND action = ?3
                   AND created_at > coalesce((SELECT max(finished_at) FROM runs
                                              WHERE workflow_id = ?1 AND status = 'succeeded'), '')",
                params![workflow_id, signature, action],
                |r| r.get(0),
            )
        })
    }

    /// The newest hint the Level-2 analyzer gave for a workflow since its last green run: every
    /// repair of its failures until then is told it.
    pub fn latest_recovery_hint(&self, workflow_id: i64) -> Result<Option<String>> {
        self.call(|c| {
            c.query_row(
                "SELECT hint FROM recoveries
                 WHERE workflow_id = ?1 AND hint IS NOT NULL AND hint != ''
                   AND created_at > coalesce((SELECT max(finished_at) FROM runs
                                              WHERE workflow_id = ?1 AND status = 'succeeded'), '')
                 ORDER BY id DESC LIMIT 1",
                [workflow_id],
                |r| r.get(0),
            )
            .optional()
        })
    }

    /// The engine's own unblock actions for a workflow: clear a stuck maintenance flag (no
    /// maintainer work open), reset the fix count, and end a run marked running that no task
    /// runs (`stale_runs`). Returns what it did, in words.
    pub fn unblock_workflow(&self, workflow_id: i64, stale_runs: &[i64]) -> Result<Vec<String>> {
        let at = now();
        self.call(|c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let mut did = Vec::new();
            let cleared = tx.execute(
                "UPDATE workflows SET maintenance = 0 WHERE id = ?1 AND maintenance = 1
                   AND NOT EXISTS (SELECT 1 FROM inbox WHERE workflow_id = ?1 AND kind = 'maintainer'
                                   AND status IN ('pending', 'taken'))",
                [workflow_id],
            )?;
            if cleared > 0 {
                did.push("cleared a stuck maintenance flag".to_string());
            }
            let reset = tx.execute(
                "UPDATE workflows SET fix_count = 0 WHERE id = ?1 AND fix_count > 0",
                [workflow_id],
            )?;
            if reset > 0 {
                did.push("reset the fix count".to_string());
            }
            for run in stale_runs {
                let n = tx.execute(
                    "UPDATE runs SET status = 'interrupted', finished_at = ?2,
                         summary = 'Released by recovery: no task was running it'
                     WHERE id = ?1 AND workflow_id = ?3 AND status IN ('queued', 'running')",
                    params![run, at, workflow_id],
                )?;
                if n > 0 {
                    did.push(format!("released run {run}, which nothing was running"));
                }
            }
            tx.commit()?;
            Ok(did)
        })
    }

    /// Runs of a workflow marked running.
    pub fn running_runs(&self, workflow_id: i64) -> Result<Vec<i64>> {
        self.call(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT id FROM runs WHERE workflow_id = ?1 AND status = 'running'",
            )?;
            let rows = stmt
                .query_map([workflow_id], |r| r.get(0))?
                .collect::<rusqlite::Result<Vec<i64>>>()?;
            Ok(rows)
        })
    }
}

fn checkpoint_from_row(r: &Row<'_>) -> rusqlite::Result<Checkpoint> {
    let trigger: String = r.get(1)?;
    let options: String = r.get(8)?;
    let chosen: Option<u32> = r.get(11)?;
    let decided_at: Option<String> = r.get(13)?;
    let decision = match (chosen, decided_at) {
        (Some(option), Some(decided_at)) => Some(Decision {
            option,
            notes: r.get(12)?,
            decided_at,
            outcome: r.get::<_, Option<String>>(14)?.unwrap_or_default(),
        }),
        _ => None,
    };
    let trigger = CheckpointTrigger::parse(&trigger).ok_or_else(|| unknown_value(1, &trigger))?;
    Ok(Checkpoint {
        id: r.get(0)?,
        trigger,
        title: r
            .get::<_, Option<String>>(15)?
            .unwrap_or_else(|| trigger.title().to_string()),
        workflow_id: r.get(2)?,
        run_id: r.get(3)?,
        run_number: r.get(16)?,
        task_id: r.get(4)?,
        workflow_title: r.get(5)?,
        signature: r.get(6)?,
        context: r.get(7)?,
        options: from_json(8, &options)?,
        recommendation: r.get(9)?,
        created_at: r.get(10)?,
        decision,
        affected: Vec::new(),
        project_task: None,
        agent_request: None,
    })
}
