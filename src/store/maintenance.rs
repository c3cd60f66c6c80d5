//! Maintenance: entering it (all or nothing), applying a fix, escalating. Each is one
//! transaction across the workflow, its maintainer task and the inbox.

use rusqlite::{params, OptionalExtension, Transaction, TransactionBehavior};

use super::workflows::insert_version;
use super::{now, Store};
use crate::error::Result;
use crate::failpoint;
use crate::workflow::{Author, RunTrigger, Version};

/// What entering maintenance did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entered {
    /// A maintainer task and its inbox item exist now.
    Started { task_id: i64, item_id: i64 },
    /// The fix count has reached the limit: the person must decide.
    Exhausted { fix_count: u32 },
    /// A repair of this workflow is under way already (its task): this failure waits for it
    /// instead of starting another, whatever order failures arrive in (runs brought in from
    /// the cluster come several at once).
    InProgress { task_id: i64 },
}

/// What the `fix` tool's transaction did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FixResult {
    /// Stored as `version`, made active; `rerun` is the run that will judge it.
    Applied {
        version: Version,
        rerun: Option<i64>,
    },
    /// The workflow is on another major now: nothing stored.
    Stale { active: Version },
}

/// The maintainer task repairing `workflow_id` now, if one is.
fn open_repair(tx: &Transaction<'_>, workflow_id: i64) -> rusqlite::Result<Option<i64>> {
    tx.query_row(
        "SELECT id FROM tasks WHERE kind = 'maintainer' AND workflow_id = ?1
           AND status = 'running' ORDER BY id DESC LIMIT 1",
        [workflow_id],
        |r| r.get(0),
    )
    .optional()
}

impl Store {
    /// Enter maintenance for a failed run, in one transaction: increment the fix count, set the
    /// maintenance flag, create the maintainer task, and create its inbox item. A crash at any
    /// point leaves all four or none. When the fix count has reached `max`, or a repair of the
    /// workflow is under way, nothing changes.
    pub fn enter_maintenance(&self, workflow_id: i64, run_id: i64, max: u32) -> Result<Entered> {
        let at = now();
        self.call(|c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            if let Some(task_id) = open_repair(&tx, workflow_id)? {
                return Ok(Entered::InProgress { task_id });
            }
            let (title, fix_count): (String, u32) = tx.query_row(
                "SELECT title, fix_count FROM workflows WHERE id = ?1",
                [workflow_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            if fix_count >= max {
                return Ok(Entered::Exhausted { fix_count });
            }
            let (major, minor): (u32, u32) = tx.query_row(
                "SELECT s.major, s.minor FROM runs r JOIN scripts s ON s.id = r.script_id
                 WHERE r.id = ?1",
                [run_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            tx.execute(
                "UPDATE workflows SET fix_count = fix_count + 1 WHERE id = ?1",
                [workflow_id],
            )?;
            failpoint::hit("enter_maintenance.fix_count");
            tx.execute(
                "UPDATE workflows SET maintenance = 1 WHERE id = ?1",
                [workflow_id],
            )?;
            failpoint::hit("enter_maintenance.flag");
            tx.execute(
                "INSERT INTO tasks (kind, title, workflow_id, status, created_at, run_id,
                     from_major, from_minor)
                 VALUES ('maintainer', ?1, ?2, 'running', ?3, ?4, ?5, ?6)",
                params![
                    format!("Auto-fix: {title}"),
                    workflow_id,
                    at,
                    run_id,
                    major,
                    minor
                ],
            )?;
            let task_id = tx.last_insert_rowid();
            failpoint::hit("enter_maintenance.task");
            tx.execute(
                "INSERT INTO inbox (workflow_id, task_id, kind, run_id, status, created_at)
                 VALUES (?1, ?2, 'maintainer', ?3, 'pending', ?4)",
                params![workflow_id, task_id, run_id, at],
            )?;
            let item_id = tx.last_insert_rowid();
            failpoint::hit("enter_maintenance.inbox");
            tx.commit()?;
            failpoint::hit("enter_maintenance.committed");
            Ok(Entered::Started { task_id, item_id })
        })
    }

    /// A known fix is about to be applied (no model, no inbox): count it as a fix attempt and
    /// create its maintainer task, in one transaction. `None` when the fix count reached `max`.
    pub fn start_known_fix(
        &self,
        workflow_id: i64,
        run_id: i64,
        signature: &str,
        max: u32,
    ) -> Result<Option<i64>> {
        let at = now();
        self.call(|c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let (title, fix_count): (String, u32) = tx.query_row(
                "SELECT title, fix_count FROM workflows WHERE id = ?1",
                [workflow_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            if fix_count >= max {
                return Ok(None);
            }
            let (major, minor): (u32, u32) = tx.query_row(
                "SELECT s.major, s.minor FROM runs r JOIN scripts s ON s.id = r.script_id
                 WHERE r.id = ?1",
                [run_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            tx.execute(
                "UPDATE workflows SET fix_count = fix_count + 1 WHERE id = ?1",
                [workflow_id],
            )?;
            tx.execute(
                "INSERT INTO tasks (kind, title, workflow_id, status, created_at, run_id,
                     from_major, from_minor, signature)
                 VALUES ('maintainer', ?1, ?2, 'running', ?3, ?4, ?5, ?6, ?7)",
                params![
                    format!("Auto-fix: {title} (known fix)"),
                    workflow_id,
                    at,
                    run_id,
                    major,
                    minor,
                    signature
                ],
            )?;
            let task_id = tx.last_insert_rowid();
            tx.commit()?;
            Ok(Some(task_id))
        })
    }

    /// A maintainer's fix, in one transaction: if the workflow is still on `expected_major`,
    /// store major.minor+1 (author: the task), make it active, clear maintenance, record the
    /// fix on the task, and queue a re-run. Otherwise store nothing, clear maintenance and mark
    /// the task stale.
    pub fn apply_fix(
        &self,
        task_id: i64,
        workflow_id: i64,
        expected_major: u32,
        code: &str,
        comment: &str,
    ) -> Result<FixResult> {
        let at = now();
        self.call(|c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let (active, summary): (Version, String) = tx.query_row(
                "SELECT s.major, s.minor, s.summary FROM scripts s
                 JOIN workflows w ON w.active_script_id = s.id WHERE w.id = ?1",
                [workflow_id],
                |r| {
                    Ok((
                        Version {
                            major: r.get(0)?,
                            minor: r.get(1)?,
                        },
                        r.get(2)?,
                    ))
                },
            )?;
            clear_maintenance(&tx, workflow_id)?;
            if active.major != expected_major {
                set_outcome(&tx, task_id, "stale")?;
                tx.commit()?;
                return Ok(FixResult::Stale { active });
            }
            let minor: u32 = tx.query_row(
                "SELECT max(minor) FROM scripts WHERE workflow_id = ?1 AND major = ?2",
                params![workflow_id, expected_major],
                |r| r.get(0),
            )?;
            let version = Version {
                major: expected_major,
                minor,
            }
            .next_minor();
            insert_version(
                &tx,
                workflow_id,
                version,
                code,
                comment,
                &summary,
                &Author::Task { task_id },
            )?;
            tx.execute(
                "UPDATE tasks SET outcome = 'fixed', to_major = ?2, to_minor = ?3, fix_comment = ?4
                 WHERE id = ?1",
                params![task_id, version.major, version.minor, comment],
            )?;
            // The fix must be run whatever else is open: a queued run (of the old code) runs
            // the fix instead; behind a running one, the re-run waits its turn (the
            // dispatcher runs one run of a workflow at a time).
            let queued: Option<i64> = tx
                .query_row(
                    "SELECT id FROM runs WHERE workflow_id = ?1 AND status = 'queued'
                     ORDER BY id LIMIT 1",
                    [workflow_id],
                    |r| r.get(0),
                )
                .optional()?;
            let rerun = match queued {
                Some(run) => {
                    tx.execute(
                        "UPDATE runs SET trigger = ?2,
                             script_id = (SELECT active_script_id FROM workflows WHERE id = ?3)
                         WHERE id = ?1",
                        params![run, RunTrigger::Fix.as_str(), workflow_id],
                    )?;
                    run
                }
                None => {
                    tx.execute(
                        "INSERT INTO runs (workflow_id, script_id, trigger, status, queued_at)
                         SELECT id, active_script_id, ?2, 'queued', ?3 FROM workflows WHERE id = ?1",
                        params![workflow_id, RunTrigger::Fix.as_str(), at],
                    )?;
                    tx.last_insert_rowid()
                }
            };
            let rerun = Some(rerun);
            failpoint::hit("fix.applying");
            tx.commit()?;
            Ok(FixResult::Applied { version, rerun })
        })
    }

    /// The maintainer could not repair it (or may not try again): the workflow needs the
    /// person, maintenance is cleared, the fix count starts again, and the task (if any) is
    /// marked as having given up. A paused workflow stays paused.
    pub fn escalate_maintenance(
        &self,
        workflow_id: i64,
        task_id: Option<i64>,
        explanation: &str,
    ) -> Result<()> {
        let at = now();
        self.call(|c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            tx.execute(
                "UPDATE workflows SET maintenance = 0, fix_count = 0, updated_at = ?2,
                    status = CASE WHEN status = 'paused' THEN status ELSE 'needs_attention' END
                 WHERE id = ?1",
                params![workflow_id, at],
            )?;
            if let Some(task_id) = task_id {
                set_outcome(&tx, task_id, "gave_up")?;
                tx.execute(
                    "UPDATE tasks SET summary = ?2 WHERE id = ?1",
                    params![task_id, explanation],
                )?;
            }
            tx.commit()
        })
    }

    /// A repair that was waiting its turn will not start (its error now waits for the person):
    /// maintenance off, the attempt not counted, the task closed as interrupted with why.
    pub fn withdraw_maintenance(&self, workflow_id: i64, task_id: i64, why: &str) -> Result<()> {
        let at = now();
        self.call(|c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            tx.execute(
                "UPDATE workflows SET maintenance = 0, fix_count = max(fix_count - 1, 0)
                 WHERE id = ?1",
                [workflow_id],
            )?;
            set_outcome(&tx, task_id, "interrupted")?;
            tx.execute(
                "UPDATE tasks SET summary = ?2, status = 'stopped', finished_at = ?3 WHERE id = ?1",
                params![task_id, why, at],
            )?;
            tx.commit()
        })
    }

    /// A maintainer task's summary in words for the person (replacing the loop's own).
    pub fn set_task_summary(&self, task_id: i64, summary: &str) -> Result<()> {
        self.call(|c| {
            c.execute(
                "UPDATE tasks SET summary = ?2 WHERE id = ?1",
                params![task_id, summary],
            )
        })?;
        Ok(())
    }

    /// Clear the maintenance flag (a task ended without a fix to wait for).
    pub fn end_maintenance(&self, workflow_id: i64) -> Result<()> {
        self.call(|c| {
            c.execute(
                "UPDATE workflows SET maintenance = 0 WHERE id = ?1",
                [workflow_id],
            )
        })?;
        Ok(())
    }
}

fn clear_maintenance(tx: &Transaction<'_>, workflow_id: i64) -> rusqlite::Result<()> {
    tx.execute(
        "UPDATE workflows SET maintenance = 0 WHERE id = ?1",
        [workflow_id],
    )?;
    Ok(())
}

fn set_outcome(tx: &Transaction<'_>, task_id: i64, outcome: &str) -> rusqlite::Result<()> {
    tx.execute(
        "UPDATE tasks SET outcome = ?2 WHERE id = ?1",
        params![task_id, outcome],
    )?;
    Ok(())
}

/// How long a model that gave nothing usable on a workflow's repair is passed over for it.
pub const UNUSABLE_MODEL_DAYS: i64 = 7;

impl Store {
    /// Model `model` of `provider` gave nothing usable on a repair of `workflow_id`.
    pub fn remember_unusable_model(
        &self,
        workflow_id: i64,
        provider: &str,
        model: &str,
    ) -> Result<()> {
        let at = now();
        self.call(|c| {
            c.execute(
                "INSERT INTO unusable_models (workflow_id, provider, model, at)
                 VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (workflow_id, provider, model) DO UPDATE SET at = excluded.at",
                params![workflow_id, provider, model, at],
            )
        })?;
        Ok(())
    }

    /// Whether `model` of `provider` gave nothing usable on a repair of `workflow_id` in the
    /// last [`UNUSABLE_MODEL_DAYS`].
    pub fn model_was_unusable(
        &self,
        workflow_id: i64,
        provider: &str,
        model: &str,
    ) -> Result<bool> {
        let since =
            super::rfc3339(chrono::Utc::now() - chrono::Duration::days(UNUSABLE_MODEL_DAYS));
        self.call(|c| {
            c.query_row(
                "SELECT EXISTS (SELECT 1 FROM unusable_models WHERE workflow_id = ?1
                                AND provider = ?2 AND model = ?3 AND at >= ?4)",
                params![workflow_id, provider, model, since],
                |r| r.get(0),
            )
        })
    }
}
