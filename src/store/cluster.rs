//! What the store keeps of the cluster (issue 26): which workflows run there and on which
//! queue, the runs carried out there (by their Temporal workflow id), the schedules put there.

use rusqlite::{params, OptionalExtension};

use super::{now, Store};
use crate::error::Result;
use crate::workflow::RunTrigger;

/// A schedule Healer put on the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterSchedule {
    pub workflow_id: i64,
    pub schedule_id: String,
    pub fingerprint: String,
}

impl Store {
    /// The queue a workflow runs on, when it runs on the cluster.
    pub fn cluster_queue(&self, workflow_id: i64) -> Result<Option<String>> {
        self.call(|c| {
            c.query_row(
                "SELECT queue FROM cluster_workflows WHERE workflow_id = ?1",
                [workflow_id],
                |r| r.get(0),
            )
            .optional()
        })
    }

    /// Where a workflow runs: `Some(queue)` on the cluster, `None` on this computer.
    pub fn set_cluster_queue(&self, workflow_id: i64, queue: Option<&str>) -> Result<()> {
        self.call(|c| match queue {
            Some(queue) => c.execute(
                "INSERT INTO cluster_workflows (workflow_id, queue) VALUES (?1, ?2)
                 ON CONFLICT (workflow_id) DO UPDATE SET queue = excluded.queue",
                params![workflow_id, queue],
            ),
            None => c.execute(
                "DELETE FROM cluster_workflows WHERE workflow_id = ?1",
                [workflow_id],
            ),
        })?;
        Ok(())
    }

    /// Every workflow on the cluster, with its queue.
    pub fn cluster_workflows(&self) -> Result<Vec<(i64, String)>> {
        self.call(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT workflow_id, queue FROM cluster_workflows ORDER BY workflow_id",
            )?;
            let rows = stmt
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    /// Remember that `run_id` is carried out on the cluster as `temporal_id` (once).
    pub fn mark_cluster_run(&self, run_id: i64, temporal_id: &str, queue: &str) -> Result<()> {
        self.call(|c| {
            c.execute(
                "INSERT INTO cluster_runs (run_id, temporal_id, queue) VALUES (?1, ?2, ?3)
                 ON CONFLICT (run_id) DO NOTHING",
                params![run_id, temporal_id, queue],
            )
        })?;
        Ok(())
    }

    /// Runs started on the cluster and not yet stored: (run id, workflow id, Temporal id,
    /// queue).
    pub fn open_cluster_runs(&self) -> Result<Vec<(i64, i64, String, String)>> {
        self.call(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT r.id, r.workflow_id, cr.temporal_id, cr.queue FROM cluster_runs cr
                 JOIN runs r ON r.id = cr.run_id WHERE r.status = 'running' ORDER BY r.id",
            )?;
            let rows = stmt
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    /// Whether a Temporal run is stored already.
    pub fn has_cluster_run(&self, temporal_id: &str) -> Result<bool> {
        self.call(|c| {
            c.query_row(
                "SELECT EXISTS (SELECT 1 FROM cluster_runs WHERE temporal_id = ?1)",
                [temporal_id],
                |r| r.get(0),
            )
        })
    }

    /// A run a schedule on the cluster started, brought in: a new run of the workflow at
    /// `version_id`, running, marked with its Temporal id, in one transaction. `None` when it
    /// was brought in already.
    pub fn import_cluster_run(
        &self,
        workflow_id: i64,
        script_id: i64,
        temporal_id: &str,
        queue: &str,
        started_at: Option<&str>,
    ) -> Result<Option<i64>> {
        let at = now();
        self.call(|c| {
            let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let known: bool = tx.query_row(
                "SELECT EXISTS (SELECT 1 FROM cluster_runs WHERE temporal_id = ?1)",
                [temporal_id],
                |r| r.get(0),
            )?;
            if known {
                return Ok(None);
            }
            tx.execute(
                "INSERT INTO runs (workflow_id, script_id, trigger, status, queued_at, started_at)
                 VALUES (?1, ?2, ?3, 'running', ?4, ?4)",
                params![
                    workflow_id,
                    script_id,
                    RunTrigger::Schedule.as_str(),
                    started_at.unwrap_or(&at)
                ],
            )?;
            let run_id = tx.last_insert_rowid();
            tx.execute(
                "INSERT INTO cluster_runs (run_id, temporal_id, queue) VALUES (?1, ?2, ?3)",
                params![run_id, temporal_id, queue],
            )?;
            tx.commit()?;
            Ok(Some(run_id))
        })
    }

    /// The id of the stored version `major.minor` of a workflow.
    pub fn script_id_of(&self, workflow_id: i64, version: &str) -> Result<Option<i64>> {
        let Some((major, minor)) = version.split_once('.') else {
            return Ok(None);
        };
        let (Ok(major), Ok(minor)) = (major.parse::<u32>(), minor.parse::<u32>()) else {
            return Ok(None);
        };
        self.call(|c| {
            c.query_row(
                "SELECT id FROM scripts WHERE workflow_id = ?1 AND major = ?2 AND minor = ?3",
                params![workflow_id, major, minor],
                |r| r.get(0),
            )
            .optional()
        })
    }

    /// Forget the attempts stored for a run on the cluster, so that storing its result again
    /// (after a crash half-way through) writes each attempt once.
    pub fn clear_cluster_attempts(&self, run_id: i64) -> Result<()> {
        self.call(|c| {
            c.execute(
                "DELETE FROM attempts WHERE run_id = ?1
                   AND run_id IN (SELECT run_id FROM cluster_runs)",
                [run_id],
            )
        })?;
        Ok(())
    }

    /// The version a run on the cluster ran (known once its outcome is in).
    pub fn set_run_script(&self, run_id: i64, script_id: i64) -> Result<()> {
        self.call(|c| {
            c.execute(
                "UPDATE runs SET script_id = ?2 WHERE id = ?1 AND script_id != ?2",
                params![run_id, script_id],
            )
        })?;
        Ok(())
    }

    /// Record which worker ran an attempt.
    pub fn set_attempt_worker(&self, attempt_id: i64, worker: &str) -> Result<()> {
        self.call(|c| {
            c.execute(
                "UPDATE attempts SET worker = ?2 WHERE id = ?1",
                params![attempt_id, worker],
            )
        })?;
        Ok(())
    }

    pub fn cluster_schedules(&self) -> Result<Vec<ClusterSchedule>> {
        self.call(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT workflow_id, schedule_id, fingerprint FROM cluster_schedules ORDER BY workflow_id",
            )?;
            let rows = stmt
                .query_map([], |r| {
                    Ok(ClusterSchedule {
                        workflow_id: r.get(0)?,
                        schedule_id: r.get(1)?,
                        fingerprint: r.get(2)?,
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    pub fn save_cluster_schedule(&self, schedule: &ClusterSchedule) -> Result<()> {
        self.call(|c| {
            c.execute(
                "INSERT INTO cluster_schedules (workflow_id, schedule_id, fingerprint) VALUES (?1, ?2, ?3)
                 ON CONFLICT (workflow_id) DO UPDATE SET schedule_id = excluded.schedule_id,
                     fingerprint = excluded.fingerprint",
                params![schedule.workflow_id, schedule.schedule_id, schedule.fingerprint],
            )
        })?;
        Ok(())
    }

    pub fn forget_cluster_schedule(&self, workflow_id: i64) -> Result<()> {
        self.call(|c| {
            c.execute(
                "DELETE FROM cluster_schedules WHERE workflow_id = ?1",
                [workflow_id],
            )
        })?;
        Ok(())
    }

    /// The Temporal ids of a workflow's runs on the cluster, oldest first.
    pub fn cluster_run_ids(&self, workflow_id: i64) -> Result<Vec<String>> {
        self.call(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT cr.temporal_id FROM cluster_runs cr JOIN runs r ON r.id = cr.run_id
                 WHERE r.workflow_id = ?1 ORDER BY r.id",
            )?;
            let rows = stmt
                .query_map([workflow_id], |r| r.get(0))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }
}
