//! The workflows a checkpoint is about when it is about more than one: a SYSTEMIC checkpoint
//! names every workflow that failed with the shared error, and deciding it acts on each.

use rusqlite::params;

use super::{now, Store};
use crate::checkpoint::AffectedWorkflow;
use crate::error::Result;

impl Store {
    /// Add a workflow (and its failed run) to a checkpoint's list; a workflow already on it
    /// keeps its place and gets the newer run. Returns whether it was new on the list.
    pub fn add_affected(&self, checkpoint_id: i64, workflow_id: i64, run_id: i64) -> Result<bool> {
        let at = now();
        let before = self.affected(checkpoint_id)?.len();
        self.call(|c| {
            c.execute(
                "INSERT INTO checkpoint_workflows (checkpoint_id, workflow_id, run_id, added_at)
                 VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (checkpoint_id, workflow_id) DO UPDATE SET run_id = excluded.run_id",
                params![checkpoint_id, workflow_id, run_id, at],
            )
        })?;
        Ok(self.affected(checkpoint_id)?.len() > before)
    }

    /// A checkpoint's workflows, in the order they were added.
    pub fn affected(&self, checkpoint_id: i64) -> Result<Vec<AffectedWorkflow>> {
        self.call(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT a.workflow_id, w.title, a.run_id FROM checkpoint_workflows a
                 JOIN workflows w ON w.id = a.workflow_id
                 WHERE a.checkpoint_id = ?1 ORDER BY a.added_at, a.workflow_id",
            )?;
            let rows = stmt
                .query_map([checkpoint_id], |r| {
                    Ok(AffectedWorkflow {
                        workflow_id: r.get(0)?,
                        title: r.get(1)?,
                        run_id: r.get(2)?,
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    /// The pending checkpoint of `trigger` about `signature`, if one waits.
    pub fn pending_checkpoint_for_signature(
        &self,
        trigger: &str,
        signature: &str,
    ) -> Result<Option<i64>> {
        use rusqlite::OptionalExtension;
        self.call(|c| {
            c.query_row(
                "SELECT id FROM checkpoints WHERE trigger = ?1 AND signature = ?2
                   AND decided_at IS NULL ORDER BY id LIMIT 1",
                params![trigger, signature],
                |r| r.get(0),
            )
            .optional()
        })
    }

    /// The oldest question still waiting about `workflow_id` (its own, or one naming it among
    /// others): its id and title. The workflow does not run until it is decided.
    pub fn pending_checkpoint_of_workflow(
        &self,
        workflow_id: i64,
    ) -> Result<Option<(i64, String)>> {
        use rusqlite::OptionalExtension;
        self.call(|c| {
            c.query_row(
                "SELECT id, title FROM checkpoints c WHERE c.decided_at IS NULL
                   AND (c.workflow_id = ?1 OR EXISTS (SELECT 1 FROM checkpoint_workflows a
                        WHERE a.checkpoint_id = c.id AND a.workflow_id = ?1))
                 ORDER BY c.id LIMIT 1",
                [workflow_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
        })
    }
}
