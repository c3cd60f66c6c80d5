use rusqlite::{params, OptionalExtension, Row, Transaction};
use serde::{de::DeserializeOwned, Serialize};

use super::notifications::unknown_value;
use super::{now, Store};
use crate::error::{Error, Result};
use crate::workflow::{
    Author, RetryPolicy, Runtime, Schedule, Version, Workflow, WorkflowInput, WorkflowStatus,
    WorkflowSummary,
};

const WORKFLOW_COLUMNS: &str = "id, name, title, runtime, entry, schedule, env, timeout_secs, retry, status, created_at, updated_at, maintenance, fix_count, review";

/// What the scheduler needs of a workflow.
#[derive(Debug, Clone)]
pub struct ScheduledWorkflow {
    pub id: i64,
    pub schedule: Schedule,
    pub last_due_at: Option<String>,
    pub next_run_at: Option<String>,
    pub created_at: String,
}

impl Store {
    /// Create a workflow with its first version (1.0), in one transaction.
    /// A new workflow with its first version, by `author` (a person, or Healer for an example).
    pub fn insert_workflow(
        &self,
        name: &str,
        input: &WorkflowInput,
        author: &Author,
    ) -> Result<Workflow> {
        self.insert_workflow_with(name, input, author, "")
    }

    /// A new workflow whose first version declares `requirements` (one a line).
    pub fn insert_workflow_with(
        &self,
        name: &str,
        input: &WorkflowInput,
        author: &Author,
        requirements: &str,
    ) -> Result<Workflow> {
        let at = now();
        let Columns {
            entry,
            runtime,
            schedule,
            env,
            retry,
        } = Columns::of(input)?;
        let id = self.call(|c| {
            let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            tx.execute(
                "INSERT INTO workflows (name, title, runtime, entry, schedule, env, timeout_secs, retry, status, last_due_at, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'active', ?9, ?9, ?9)",
                params![name, input.title.trim(), runtime, entry, schedule, env, input.timeout_secs, retry, at],
            )?;
            let id = tx.last_insert_rowid();
            insert_version_with(
                &tx,
                id,
                Version::FIRST,
                &input.code,
                "First version",
                &input.summary,
                author,
                Some(requirements),
            )?;
            tx.commit()?;
            Ok(id)
        })
        .map_err(|e| match e {
            Error::Store(rusqlite::Error::SqliteFailure(f, _))
                if f.code == rusqlite::ErrorCode::ConstraintViolation =>
            {
                Error::InvalidInput(format!("a workflow named {name:?} already exists"))
            }
            other => other,
        })?;
        self.workflow(id)
    }

    /// Change a workflow's settings (not its code: that is a new version).
    pub fn update_workflow(&self, id: i64, input: &WorkflowInput) -> Result<Workflow> {
        let at = now();
        let Columns {
            entry,
            runtime,
            schedule,
            env,
            retry,
        } = Columns::of(input)?;
        let changed = self.call(|c| {
            c.execute(
                "UPDATE workflows SET title = ?2, runtime = ?3, entry = ?4, schedule = ?5, env = ?6,
                    timeout_secs = ?7, retry = ?8, updated_at = ?9,
                    -- a new schedule starts counting from now
                    last_due_at = CASE WHEN schedule = ?5 THEN last_due_at ELSE ?9 END
                 WHERE id = ?1",
                params![id, input.title.trim(), runtime, entry, schedule, env, input.timeout_secs, retry, at],
            )
        })?;
        if changed == 0 {
            return Err(not_found(id));
        }
        self.workflow(id)
    }

    pub fn workflow(&self, id: i64) -> Result<Workflow> {
        let sql = format!("SELECT {WORKFLOW_COLUMNS} FROM workflows WHERE id = ?1");
        self.call(|c| c.query_row(&sql, [id], workflow_from_row).optional())?
            .ok_or_else(|| not_found(id))
    }

    /// A workflow by its name, by its id written as a number, or by the title a person sees
    /// ("Spread" for `spread`, in any case) when one workflow has it.
    pub fn workflow_by_name(&self, name: &str) -> Result<Workflow> {
        let sql = format!("SELECT {WORKFLOW_COLUMNS} FROM workflows WHERE name = ?1");
        let found = self.call(|c| c.query_row(&sql, [name], workflow_from_row).optional())?;
        if let Some(w) = found {
            return Ok(w);
        }
        if let Ok(id) = name.parse::<i64>() {
            if let Ok(w) = self.workflow(id) {
                return Ok(w);
            }
        }
        let wanted = name.trim().to_lowercase();
        let titled: Vec<(i64, String)> = self.call(|c| {
            let mut stmt = c.prepare_cached("SELECT id, name, title FROM workflows ORDER BY id")?;
            let rows = stmt
                .query_map([], |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                    ))
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows
                .into_iter()
                .filter(|(_, _, title)| title.trim().to_lowercase() == wanted)
                .map(|(id, name, _)| (id, name))
                .collect())
        })?;
        match titled.as_slice() {
            [(id, _)] => self.workflow(*id),
            [] => Err(Error::NotFound {
                what: format!("workflow {name:?}"),
            }),
            many => Err(Error::InvalidInput(format!(
                "{} workflows are titled \u{201c}{name}\u{201d}: name one of them — {}",
                many.len(),
                many.iter()
                    .map(|(_, n)| n.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    pub fn workflow_names(&self) -> Result<Vec<String>> {
        self.call(|c| {
            let mut stmt = c.prepare_cached("SELECT name FROM workflows")?;
            let names = stmt
                .query_map([], |r| r.get(0))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(names)
        })
    }

    pub fn count_workflows(&self) -> Result<u32> {
        self.call(|c| c.query_row("SELECT count(*) FROM workflows", [], |r| r.get(0)))
    }

    /// The workflows list: each with its version, last run and next run, in one query.
    pub fn list_workflow_summaries(&self) -> Result<Vec<WorkflowSummary>> {
        self.call(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT w.id, w.name, w.title, w.status, w.runtime, w.schedule, s.major, s.minor, w.next_run_at,
                        r.id, r.workflow_id, rs.major, rs.minor, r.trigger, r.status, r.class, r.attempts,
                        r.queued_at, r.started_at, r.finished_at, r.summary, r.skipped, r.hint, r.number,
                        EXISTS (SELECT 1 FROM runs o WHERE o.workflow_id = w.id AND o.status IN ('queued', 'running')),
                        w.maintenance, w.review
                 FROM workflows w
                 JOIN scripts s ON s.id = w.active_script_id
                 LEFT JOIN runs r ON r.id = (SELECT max(id) FROM runs WHERE workflow_id = w.id)
                 LEFT JOIN scripts rs ON rs.id = r.script_id
                 ORDER BY lower(w.title), w.id",
            )?;
            let rows = stmt
                .query_map([], |r| {
                    let status: String = r.get(3)?;
                    let runtime: String = r.get(4)?;
                    let schedule: String = r.get(5)?;
                    let schedule: Schedule = from_json(5, &schedule)?;
                    let last_run = match r.get::<_, Option<i64>>(9)? {
                        Some(_) => Some(super::runs::run_from_row_at(r, 9)?),
                        None => None,
                    };
                    Ok(WorkflowSummary {
                        id: r.get(0)?,
                        name: r.get(1)?,
                        title: r.get(2)?,
                        status: WorkflowStatus::parse(&status)
                            .ok_or_else(|| unknown_value(3, &status))?,
                        runtime: from_json(4, &runtime)?,
                        schedule_text: schedule.describe(),
                        version: Version {
                            major: r.get(6)?,
                            minor: r.get(7)?,
                        },
                        next_run_at: r.get(8)?,
                        last_run,
                        busy: r.get(24)?,
                        healing: r.get(25)?,
                        review: r.get(26)?,
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    pub fn set_workflow_status(&self, id: i64, status: WorkflowStatus) -> Result<()> {
        let at = now();
        let changed = self.call(|c| {
            c.execute(
                "UPDATE workflows SET status = ?2, updated_at = ?3 WHERE id = ?1",
                params![id, status.as_str(), at],
            )
        })?;
        if changed == 0 {
            return Err(not_found(id));
        }
        Ok(())
    }

    /// After a run: a success makes a workflow that needed attention active again and resets
    /// its fix count (the repairs worked); a failure makes an active one need attention. A
    /// paused workflow stays paused.
    pub fn settle_workflow_status(&self, id: i64, succeeded: bool) -> Result<()> {
        let (from, to) = if succeeded {
            ("needs_attention", "active")
        } else {
            ("active", "needs_attention")
        };
        let at = now();
        self.call(|c| {
            let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            tx.execute(
                "UPDATE workflows SET status = ?3, updated_at = ?4 WHERE id = ?1 AND status = ?2",
                params![id, from, to, at],
            )?;
            if succeeded {
                tx.execute(
                    "UPDATE workflows SET fix_count = 0 WHERE id = ?1 AND fix_count > 0",
                    [id],
                )?;
            }
            tx.commit()
        })?;
        Ok(())
    }

    /// Delete a workflow with its versions, runs and attempts.
    pub fn delete_workflow(&self, id: i64) -> Result<()> {
        let changed = self.call(|c| c.execute("DELETE FROM workflows WHERE id = ?1", [id]))?;
        if changed == 0 {
            return Err(not_found(id));
        }
        Ok(())
    }

    /// Active, scheduled workflows, for the scheduler.
    pub fn scheduled_workflows(&self) -> Result<Vec<ScheduledWorkflow>> {
        self.call(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT id, schedule, last_due_at, next_run_at, created_at FROM workflows
                 WHERE status != 'paused' AND maintenance = 0
                   AND NOT EXISTS (SELECT 1 FROM checkpoints c
                                   WHERE c.workflow_id = workflows.id AND c.decided_at IS NULL)
                   AND NOT EXISTS (SELECT 1 FROM checkpoint_workflows a
                                   JOIN checkpoints c ON c.id = a.checkpoint_id
                                   WHERE a.workflow_id = workflows.id AND c.decided_at IS NULL)
                   AND schedule NOT LIKE '{\"kind\":\"manual\"%'
                   AND id NOT IN (SELECT workflow_id FROM cluster_workflows)",
            )?;
            let rows = stmt
                .query_map([], |r| {
                    let schedule: String = r.get(1)?;
                    Ok(ScheduledWorkflow {
                        id: r.get(0)?,
                        schedule: from_json(1, &schedule)?,
                        last_due_at: r.get(2)?,
                        next_run_at: r.get(3)?,
                        created_at: r.get(4)?,
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    /// Record that the schedule's due time `due_at` was handled, and the next one.
    pub fn mark_due_handled(&self, id: i64, due_at: &str, next_run_at: Option<&str>) -> Result<()> {
        self.call(|c| {
            c.execute(
                "UPDATE workflows SET last_due_at = ?2, next_run_at = ?3 WHERE id = ?1",
                params![id, due_at, next_run_at],
            )
        })?;
        Ok(())
    }

    pub fn next_run_at(&self, id: i64) -> Result<Option<String>> {
        self.call(|c| {
            c.query_row(
                "SELECT next_run_at FROM workflows WHERE id = ?1",
                [id],
                |r| r.get(0),
            )
            .optional()
            .map(Option::flatten)
        })
    }

    pub fn set_next_run_at(&self, id: i64, next_run_at: Option<&str>) -> Result<()> {
        self.call(|c| {
            c.execute(
                "UPDATE workflows SET next_run_at = ?2 WHERE id = ?1",
                params![id, next_run_at],
            )
        })?;
        Ok(())
    }
}

/// A workflow's settings as stored: JSON for the structured ones, defaults filled in.
struct Columns {
    entry: String,
    runtime: String,
    schedule: String,
    env: String,
    retry: String,
}

impl Columns {
    fn of(input: &WorkflowInput) -> Result<Columns> {
        Ok(Columns {
            entry: input
                .entry
                .clone()
                .unwrap_or_else(|| input.runtime.default_entry().to_string()),
            runtime: to_json(&input.runtime)?,
            schedule: to_json(&input.schedule)?,
            env: to_json(&input.env)?,
            retry: to_json(&input.retry.clone().unwrap_or_default())?,
        })
    }
}

pub(super) fn insert_version(
    tx: &Transaction<'_>,
    workflow_id: i64,
    version: Version,
    code: &str,
    comment: &str,
    summary: &str,
    author: &Author,
) -> rusqlite::Result<i64> {
    insert_version_with(
        tx,
        workflow_id,
        version,
        code,
        comment,
        summary,
        author,
        None,
    )
}

/// As [`insert_version`], with the packages the version declares; `None` keeps those of the
/// version that runs now (a fix changes the code, not the packages).
#[allow(clippy::too_many_arguments)]
pub(super) fn insert_version_with(
    tx: &Transaction<'_>,
    workflow_id: i64,
    version: Version,
    code: &str,
    comment: &str,
    summary: &str,
    author: &Author,
    requirements: Option<&str>,
) -> rusqlite::Result<i64> {
    tx.execute(
        "INSERT INTO scripts (workflow_id, major, minor, code, change_comment, summary, author, created_at, requirements)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, COALESCE(?9,
             (SELECT s.requirements FROM scripts s JOIN workflows w ON w.active_script_id = s.id
              WHERE w.id = ?1), ''))",
        params![workflow_id, version.major, version.minor, code, comment, summary, author.to_db(), now(), requirements],
    )?;
    let script_id = tx.last_insert_rowid();
    tx.execute(
        "UPDATE workflows SET active_script_id = ?2, updated_at = ?3 WHERE id = ?1",
        params![workflow_id, script_id, now()],
    )?;
    Ok(script_id)
}

fn workflow_from_row(r: &Row<'_>) -> rusqlite::Result<Workflow> {
    let runtime: String = r.get(3)?;
    let schedule: String = r.get(5)?;
    let env: String = r.get(6)?;
    let retry: String = r.get(8)?;
    let status: String = r.get(9)?;
    Ok(Workflow {
        id: r.get(0)?,
        name: r.get(1)?,
        title: r.get(2)?,
        runtime: from_json::<Runtime>(3, &runtime)?,
        entry: r.get(4)?,
        schedule: from_json(5, &schedule)?,
        env: from_json(6, &env)?,
        timeout_secs: r.get(7)?,
        retry: from_json::<RetryPolicy>(8, &retry)?,
        status: WorkflowStatus::parse(&status).ok_or_else(|| unknown_value(9, &status))?,
        created_at: r.get(10)?,
        updated_at: r.get(11)?,
        healing: r.get(12)?,
        fix_count: r.get(13)?,
        review: r.get(14)?,
    })
}

pub(super) fn from_json<T: DeserializeOwned>(column: usize, raw: &str) -> rusqlite::Result<T> {
    serde_json::from_str(raw).map_err(|_| unknown_value(column, raw))
}

fn to_json<T: Serialize>(value: &T) -> Result<String> {
    serde_json::to_string(value).map_err(|e| Error::Internal(format!("does not serialise: {e}")))
}

fn not_found(id: i64) -> Error {
    Error::NotFound {
        what: format!("workflow {id}"),
    }
}
