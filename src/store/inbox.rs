//! The inbox: work waiting for a task (a maintainer's failed run, a person's message to the
//! planner), taken one item per workflow at a time, planner items first.

use rusqlite::{params, OptionalExtension, Row, TransactionBehavior};
use serde::{Deserialize, Serialize};

use super::notifications::unknown_value;
use super::{now, Store};
use crate::error::Result;

const INBOX_COLUMNS: &str = "id, workflow_id, task_id, kind, run_id, message, provider_waits";

/// What an inbox item asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InboxKind {
    Planner,
    Maintainer,
}

impl InboxKind {
    pub fn as_str(self) -> &'static str {
        match self {
            InboxKind::Planner => "planner",
            InboxKind::Maintainer => "maintainer",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "planner" => Some(InboxKind::Planner),
            "maintainer" => Some(InboxKind::Maintainer),
            _ => None,
        }
    }
}

/// Work waiting for a task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InboxItem {
    pub id: i64,
    pub workflow_id: i64,
    pub task_id: i64,
    pub kind: InboxKind,
    /// A maintainer item's failed run.
    pub run_id: Option<i64>,
    /// A planner item's message from the person.
    pub message: Option<String>,
    /// How many times this item waited for its model provider to come back.
    pub provider_waits: u32,
}

impl Store {
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
                       AND (not_before IS NULL OR not_before <= ?2)
                       AND NOT EXISTS (SELECT 1 FROM inbox t WHERE t.workflow_id = i.workflow_id
                                       AND t.status = 'taken')
                     ORDER BY workflow_id, kind = 'maintainer', id"
                ))?;
                let rows = stmt
                    .query_map(params![workflow_id, at], item_from_row)?
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

    /// Put a taken item back in line, not to be taken before `not_before` (the store's time
    /// format), one more wait counted. Its task stays open, so the workflow's next failures
    /// wait for it rather than start another repair.
    pub fn defer_inbox_item(&self, item_id: i64, not_before: &str) -> Result<()> {
        self.call(|c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            tx.execute(
                "UPDATE inbox SET status = 'pending', taken_at = NULL, not_before = ?2,
                        provider_waits = provider_waits + 1
                 WHERE id = ?1 AND status = 'taken'",
                params![item_id, not_before],
            )?;
            // Its task's loop ended; the task itself goes on.
            tx.execute(
                "UPDATE tasks SET status = 'running', finished_at = NULL
                 WHERE id = (SELECT task_id FROM inbox WHERE id = ?1 AND status = 'pending')",
                [item_id],
            )?;
            tx.commit()
        })?;
        Ok(())
    }

    /// Close a taken item (one put back in line by [`Store::defer_inbox_item`] stays).
    pub fn finish_inbox_item(&self, item_id: i64) -> Result<()> {
        let at = now();
        self.call(|c| {
            c.execute(
                "UPDATE inbox SET status = 'done', done_at = ?2 WHERE id = ?1 AND status = 'taken'",
                params![item_id, at],
            )
        })?;
        Ok(())
    }

    /// Whether the workflow has inbox work taken, or pending and due (one waiting for its
    /// model provider until later is not work now).
    pub fn has_open_inbox_items(&self, workflow_id: i64) -> Result<bool> {
        let at = now();
        self.call(|c| {
            c.query_row(
                "SELECT EXISTS (SELECT 1 FROM inbox WHERE workflow_id = ?1
                                AND (status = 'taken' OR (status = 'pending'
                                     AND (not_before IS NULL OR not_before <= ?2))))",
                params![workflow_id, at],
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
    /// Items a crash interrupted while they were worked on. Each goes back in line once (its
    /// task stays open and starts again); one interrupted a second time is given up: its
    /// maintainer task is marked interrupted and its workflow leaves maintenance. Returns both
    /// lists as (workflow id, task id, kind).
    pub fn settle_taken_inbox_items(&self) -> Result<SettledItems> {
        let at = now();
        self.call(|c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            // A task that already has its outcome (its fix was applied) finished its work; only
            // its closing words were lost. Its item is done, not started again.
            tx.execute(
                "UPDATE inbox SET status = 'done', done_at = ?1
                 WHERE status = 'taken'
                   AND task_id IN (SELECT id FROM tasks WHERE outcome IS NOT NULL)",
                [&at],
            )?;
            let taken = |restarted: bool| -> rusqlite::Result<Vec<(i64, i64, InboxKind)>> {
                let mut stmt = tx.prepare(if restarted {
                    "SELECT workflow_id, task_id, kind FROM inbox WHERE status = 'taken' AND restarts > 0"
                } else {
                    "SELECT workflow_id, task_id, kind FROM inbox WHERE status = 'taken' AND restarts = 0"
                })?;
                let rows = stmt
                    .query_map([], |r| {
                        let kind: String = r.get(2)?;
                        Ok((
                            r.get(0)?,
                            r.get(1)?,
                            InboxKind::parse(&kind).ok_or_else(|| unknown_value(2, &kind))?,
                        ))
                    })?
                    .collect::<rusqlite::Result<Vec<_>>>()?;
                Ok(rows)
            };
            let requeued = taken(false)?;
            let given_up = taken(true)?;
            tx.execute(
                "UPDATE inbox SET status = 'pending', taken_at = NULL, restarts = restarts + 1
                 WHERE status = 'taken' AND restarts = 0",
                [],
            )?;
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
            tx.execute(
                "UPDATE inbox SET status = 'done', done_at = ?1 WHERE status = 'taken'",
                [&at],
            )?;
            tx.commit()?;
            Ok(SettledItems { requeued, given_up })
        })
    }
}

/// What start-up did with the inbox items a crash interrupted: (workflow id, task id, kind).
#[derive(Debug, Clone, Default)]
pub struct SettledItems {
    pub requeued: Vec<(i64, i64, InboxKind)>,
    pub given_up: Vec<(i64, i64, InboxKind)>,
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
        provider_waits: r.get(6)?,
    })
}
