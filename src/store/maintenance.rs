//! Maintenance: entering it (all or nothing), applying a fix, escalating, the inbox of work
//! for maintainer and planner tasks, and the auto-fix records.

use rusqlite::{params, OptionalExtension, Row, Transaction, TransactionBehavior};

use super::notifications::unknown_value;
use super::workflows::insert_version;
use super::{now, Store};
use crate::error::{Error, Result};
use crate::failpoint;
use crate::maintainer::{AutoFix, AutoFixStatus, Entered, FixResult, InboxItem, InboxKind};
use crate::workflow::{Author, RunTrigger, Version};

const AUTOFIX_COLUMNS: &str = "t.id, t.workflow_id, t.title, t.outcome, t.run_id, t.from_major,
    t.from_minor, t.to_major, t.to_minor, t.fix_comment, t.summary, t.created_at, t.finished_at,
    (SELECT coalesce(sum(u.prompt_tokens + u.completion_tokens), 0) FROM usage u WHERE u.task_id = t.id)";

const INBOX_COLUMNS: &str = "id, workflow_id, task_id, kind, run_id, message";

impl Store {
    /// Enter maintenance for a failed run, in one transaction: increment the fix count, set the
    /// maintenance flag, create the maintainer task, and create its inbox item. A crash at any
    /// point leaves all four or none. When the fix count has reached `max`, nothing changes.
    pub fn enter_maintenance(&self, workflow_id: i64, run_id: i64, max: u32) -> Result<Entered> {
        let at = now();
        self.call(|c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
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
            let open: bool = tx.query_row(
                "SELECT EXISTS (SELECT 1 FROM runs WHERE workflow_id = ?1 AND status IN ('queued', 'running'))",
                [workflow_id],
                |r| r.get(0),
            )?;
            let rerun = if open {
                None
            } else {
                tx.execute(
                    "INSERT INTO runs (workflow_id, script_id, trigger, status, queued_at)
                     SELECT id, active_script_id, ?2, 'queued', ?3 FROM workflows WHERE id = ?1",
                    params![workflow_id, RunTrigger::Fix.as_str(), at],
                )?;
                Some(tx.last_insert_rowid())
            };
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

    /// Queue a planner turn for the person's message in the workflow's chat task.
    pub fn insert_planner_item(
        &self,
        workflow_id: i64,
        task_id: i64,
        message: &str,
    ) -> Result<i64> {
        let at = now();
        self.call(|c| {
            c.execute(
                "INSERT INTO inbox (workflow_id, task_id, kind, message, status, created_at)
                 VALUES (?1, ?2, 'planner', ?3, 'pending', ?4)",
                params![workflow_id, task_id, message, at],
            )?;
            Ok(c.last_insert_rowid())
        })
    }

    /// Take the next items to work on: per workflow with nothing taken, its oldest pending
    /// planner item, else its oldest maintainer item. Taken in one transaction, so an item is
    /// taken once. `workflow_id` limits it to one workflow.
    pub fn take_inbox_items(&self, workflow_id: Option<i64>) -> Result<Vec<InboxItem>> {
        let at = now();
        self.call(|c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let items = {
                let mut stmt = tx.prepare_cached(&format!(
                    "SELECT {INBOX_COLUMNS} FROM inbox i
                     WHERE status = 'pending' AND (?1 IS NULL OR workflow_id = ?1)
                       AND NOT EXISTS (SELECT 1 FROM inbox t WHERE t.workflow_id = i.workflow_id
                                       AND t.status = 'taken')
                     ORDER BY workflow_id, kind = 'maintainer', id"
                ))?;
                let rows = stmt
                    .query_map([workflow_id], item_from_row)?
                    .collect::<rusqlite::Result<Vec<_>>>()?;
                let mut chosen: Vec<InboxItem> = Vec::new();
                for item in rows {
                    if chosen.last().map(|c| c.workflow_id) != Some(item.workflow_id) {
                        chosen.push(item);
                    }
                }
                chosen
            };
            for item in &items {
                tx.execute(
                    "UPDATE inbox SET status = 'taken', taken_at = ?2 WHERE id = ?1",
                    params![item.id, at],
                )?;
            }
            tx.commit()?;
            Ok(items)
        })
    }

    pub fn finish_inbox_item(&self, item_id: i64) -> Result<()> {
        let at = now();
        self.call(|c| {
            c.execute(
                "UPDATE inbox SET status = 'done', done_at = ?2 WHERE id = ?1",
                params![item_id, at],
            )
        })?;
        Ok(())
    }

    /// Whether the workflow has inbox work pending or taken.
    pub fn has_open_inbox_items(&self, workflow_id: i64) -> Result<bool> {
        self.call(|c| {
            c.query_row(
                "SELECT EXISTS (SELECT 1 FROM inbox WHERE workflow_id = ?1
                                AND status IN ('pending', 'taken'))",
                [workflow_id],
                |r| r.get(0),
            )
        })
    }

    /// Whether the workflow's chat has a turn waiting or running.
    pub fn planner_busy(&self, workflow_id: i64) -> Result<bool> {
        self.call(|c| {
            c.query_row(
                "SELECT EXISTS (SELECT 1 FROM inbox WHERE workflow_id = ?1 AND kind = 'planner'
                                AND status IN ('pending', 'taken'))",
                [workflow_id],
                |r| r.get(0),
            )
        })
    }

    /// Whether an item is finished (or gone with its workflow).
    pub fn inbox_item_done(&self, item_id: i64) -> Result<bool> {
        let status: Option<String> = self.call(|c| {
            c.query_row("SELECT status FROM inbox WHERE id = ?1", [item_id], |r| {
                r.get(0)
            })
            .optional()
        })?;
        Ok(status.is_none_or(|s| s == "done"))
    }

    /// After a crash: items that were being worked on are ended, their maintainer tasks marked
    /// interrupted and their workflows' maintenance cleared. Pending items stay pending: they
    /// run when the engine runs again. Returns how many were ended.
    pub fn settle_taken_inbox_items(&self) -> Result<usize> {
        let at = now();
        self.call(|c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            tx.execute(
                "UPDATE tasks SET outcome = 'interrupted'
                 WHERE kind = 'maintainer' AND outcome IS NULL
                   AND id IN (SELECT task_id FROM inbox WHERE status = 'taken')",
                [],
            )?;
            tx.execute(
                "UPDATE workflows SET maintenance = 0
                 WHERE id IN (SELECT workflow_id FROM inbox WHERE status = 'taken' AND kind = 'maintainer')",
                [],
            )?;
            let n = tx.execute(
                "UPDATE inbox SET status = 'done', done_at = ?1 WHERE status = 'taken'",
                [&at],
            )?;
            tx.commit()?;
            Ok(n)
        })
    }

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
                what: format!("auto-fix task {task_id}"),
            })
    }

    /// The newest planner (chat) task of a workflow.
    pub fn planner_task(&self, workflow_id: i64) -> Result<Option<i64>> {
        self.call(|c| {
            c.query_row(
                "SELECT max(id) FROM tasks WHERE kind = 'planner' AND workflow_id = ?1",
                [workflow_id],
                |r| r.get(0),
            )
        })
    }

    /// Mark a chat task running again for a new turn.
    pub fn reopen_task(&self, task_id: i64) -> Result<()> {
        self.call(|c| {
            c.execute(
                "UPDATE tasks SET status = 'running', finished_at = NULL WHERE id = ?1",
                [task_id],
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

fn item_from_row(r: &Row<'_>) -> rusqlite::Result<InboxItem> {
    let kind: String = r.get(3)?;
    Ok(InboxItem {
        id: r.get(0)?,
        workflow_id: r.get(1)?,
        task_id: r.get(2)?,
        kind: InboxKind::parse(&kind).ok_or_else(|| unknown_value(3, &kind))?,
        run_id: r.get(4)?,
        message: r.get(5)?,
    })
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
        from_version: version_at(r, 5)?,
        to_version: version_at(r, 7)?,
        fix_comment: r.get(9)?,
        summary: r.get(10)?,
        created_at: r.get(11)?,
        finished_at: r.get(12)?,
        tokens: u64::try_from(tokens).unwrap_or(0),
    })
}
