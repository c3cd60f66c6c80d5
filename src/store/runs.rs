//! Runs and their attempts.

use rusqlite::{params, OptionalExtension, Row};

use super::notifications::unknown_value;
use super::{now, Store};
use crate::error::{Error, Result};
use crate::failure::{Evidence, FailureClass};
use crate::workflow::{Attempt, AttemptStatus, Run, RunDetail, RunStatus, RunTrigger, Version};

const RUN_COLUMNS: &str = "r.id, r.workflow_id, s.major, s.minor, r.trigger, r.status, r.class, r.attempts, r.queued_at, r.started_at, r.finished_at, r.summary, r.skipped, r.hint, r.number";

const ATTEMPT_COLUMNS: &str = "id, run_id, number, status, started_at, finished_at, duration_ms, exit_code, signal, timed_out, class, error_type, error_message, error_stack, stdout, stderr, stdout_cut, stderr_cut, result, note, worker";

/// How an attempt ended, as the runner reports it.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct AttemptEnd {
    pub succeeded: bool,
    pub duration_ms: u32,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub class: Option<FailureClass>,
    pub evidence: Option<Evidence>,
    pub stdout: String,
    pub stderr: String,
    pub stdout_cut: u64,
    pub stderr_cut: u64,
    pub result: Option<String>,
    pub note: Option<String>,
}

/// An attempt a crash left running.
#[derive(Debug, Clone)]
pub struct InterruptedAttempt {
    pub run_id: i64,
    pub pgid: Option<i32>,
}

impl Store {
    /// Queue a run of the active version, unless one is queued or running already.
    pub fn enqueue_run(&self, workflow_id: i64, trigger: RunTrigger) -> Result<Option<i64>> {
        self.enqueue_run_with_hint(workflow_id, trigger, None)
    }

    /// Queue a run with a recovery hint (`HEALER_RECOVERY_HINT`), in the same transaction, so
    /// the run is never seen without it.
    pub fn enqueue_run_with_hint(
        &self,
        workflow_id: i64,
        trigger: RunTrigger,
        hint: Option<&str>,
    ) -> Result<Option<i64>> {
        let at = now();
        self.call(|c| {
            let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let open: bool = tx.query_row(
                "SELECT EXISTS (SELECT 1 FROM runs WHERE workflow_id = ?1 AND status IN ('queued', 'running'))",
                [workflow_id],
                |r| r.get(0),
            )?;
            if open {
                return Ok(None);
            }
            tx.execute(
                "INSERT INTO runs (workflow_id, script_id, trigger, status, queued_at, hint)
                 SELECT id, active_script_id, ?2, 'queued', ?3, ?4 FROM workflows WHERE id = ?1",
                params![workflow_id, trigger.as_str(), at, hint],
            )?;
            let id = tx.last_insert_rowid();
            tx.commit()?;
            Ok(Some(id))
        })
    }

    /// How many runs of one script version there were with `trigger`.
    pub fn runs_of_script(&self, script_id: i64, trigger: RunTrigger) -> Result<u32> {
        self.call(|c| {
            c.query_row(
                "SELECT count(*) FROM runs WHERE script_id = ?1 AND trigger = ?2",
                params![script_id, trigger.as_str()],
                |r| r.get(0),
            )
        })
    }

    /// Queued runs that may start now (a run waiting out a retry's backoff once it is due),
    /// oldest first.
    pub fn queued_runs(&self) -> Result<Vec<(i64, i64)>> {
        let at = now();
        self.call(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT id, workflow_id FROM runs WHERE status = 'queued'
                   AND (retry_at IS NULL OR retry_at <= ?1) ORDER BY id",
            )?;
            let rows = stmt
                .query_map([at], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    /// queued → running; false when it was not queued (taken already, or deleted). A run
    /// coming back from a retry's backoff keeps when it first started.
    pub fn claim_run(&self, run_id: i64) -> Result<bool> {
        let at = now();
        let changed = self.call(|c| {
            c.execute(
                "UPDATE runs SET status = 'running', started_at = COALESCE(started_at, ?2),
                     retry_at = NULL WHERE id = ?1 AND status = 'queued'",
                params![run_id, at],
            )
        })?;
        Ok(changed == 1)
    }

    /// The run waits out a retry's backoff: queued again, its attempt `next` due at
    /// `retry_at`. Nothing holds a run slot meanwhile, and a restart leaves it waiting.
    pub fn wait_to_retry(&self, run_id: i64, retry_at: &str, next: u32) -> Result<()> {
        self.call(|c| {
            c.execute(
                "UPDATE runs SET status = 'queued', retry_at = ?2, next_attempt = ?3
                 WHERE id = ?1 AND status = 'running'",
                params![run_id, retry_at, next],
            )
        })?;
        Ok(())
    }

    /// The attempt a run goes on with (1 for a run that has not tried yet).
    pub fn next_attempt(&self, run_id: i64) -> Result<u32> {
        let next: Option<u32> = self.call(|c| {
            c.query_row(
                "SELECT next_attempt FROM runs WHERE id = ?1",
                [run_id],
                |r| r.get(0),
            )
        })?;
        Ok(next.unwrap_or(1).max(1))
    }

    /// When run `run_id`'s next attempt is due, while it waits out a retry's backoff.
    pub fn retry_at(&self, run_id: i64) -> Result<Option<String>> {
        self.call(|c| {
            c.query_row(
                "SELECT retry_at FROM runs WHERE id = ?1 AND status = 'queued'",
                [run_id],
                |r| r.get(0),
            )
            .optional()
            .map(Option::flatten)
        })
    }

    /// When the soonest retry of a waiting run is due, if one waits.
    pub fn next_retry_at(&self) -> Result<Option<String>> {
        self.call(|c| {
            c.query_row(
                "SELECT min(retry_at) FROM runs WHERE status = 'queued' AND retry_at IS NOT NULL",
                [],
                |r| r.get(0),
            )
        })
    }

    pub fn start_attempt(&self, run_id: i64, number: u32) -> Result<i64> {
        let at = now();
        self.call(|c| {
            let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            tx.execute(
                "INSERT INTO attempts (run_id, number, status, started_at) VALUES (?1, ?2, 'running', ?3)",
                params![run_id, number, at],
            )?;
            let id = tx.last_insert_rowid();
            tx.execute(
                "UPDATE runs SET attempts = ?2 WHERE id = ?1",
                params![run_id, number],
            )?;
            tx.commit()?;
            Ok(id)
        })
    }

    pub fn set_attempt_pgid(&self, attempt_id: i64, pgid: i32) -> Result<()> {
        self.call(|c| {
            c.execute(
                "UPDATE attempts SET pgid = ?2 WHERE id = ?1",
                params![attempt_id, pgid],
            )
        })?;
        Ok(())
    }

    pub fn finish_attempt(&self, attempt_id: i64, end: &AttemptEnd) -> Result<()> {
        let at = now();
        let status = if end.succeeded {
            AttemptStatus::Succeeded
        } else {
            AttemptStatus::Failed
        };
        // The runner redacted the output; the evidence and notes built from it are checked too.
        use crate::secrets::{redact, redact_option};
        let evidence = end.evidence.as_ref();
        self.call(|c| {
            c.execute(
                "UPDATE attempts SET status = ?2, finished_at = ?3, duration_ms = ?4, exit_code = ?5,
                    signal = ?6, timed_out = ?7, class = ?8, error_type = ?9, error_message = ?10,
                    error_stack = ?11, stdout = ?12, stderr = ?13, stdout_cut = ?14, stderr_cut = ?15,
                    result = ?16, note = ?17
                 WHERE id = ?1",
                params![
                    attempt_id,
                    status.as_str(),
                    at,
                    end.duration_ms,
                    end.exit_code,
                    end.signal,
                    end.timed_out,
                    end.class.map(FailureClass::as_str),
                    redact_option(evidence.and_then(|e| e.error_type.clone())),
                    redact_option(evidence.map(|e| e.message.clone())),
                    redact_option(evidence.and_then(|e| e.stack.clone())),
                    redact(&end.stdout),
                    redact(&end.stderr),
                    count(end.stdout_cut),
                    count(end.stderr_cut),
                    redact_option(end.result.clone()),
                    redact_option(end.note.clone())
                ],
            )
        })?;
        Ok(())
    }

    /// Add Healer's own remark to an attempt ("retrying in 2 s").
    pub fn note_attempt(&self, attempt_id: i64, note: &str) -> Result<()> {
        self.call(|c| {
            c.execute(
                "UPDATE attempts SET note = ?2 WHERE id = ?1",
                params![attempt_id, note],
            )
        })?;
        Ok(())
    }

    pub fn finish_run(
        &self,
        run_id: i64,
        status: RunStatus,
        class: Option<FailureClass>,
        summary: &str,
    ) -> Result<()> {
        let at = now();
        self.call(|c| {
            c.execute(
                "UPDATE runs SET status = ?2, class = ?3, summary = ?4, finished_at = ?5 WHERE id = ?1",
                params![
                    run_id,
                    status.as_str(),
                    class.map(FailureClass::as_str),
                    crate::secrets::redact(summary),
                    at
                ],
            )
        })?;
        Ok(())
    }

    pub fn run(&self, run_id: i64) -> Result<Run> {
        let sql = format!(
            "SELECT {RUN_COLUMNS} FROM runs r JOIN scripts s ON s.id = r.script_id WHERE r.id = ?1"
        );
        self.call(|c| {
            c.query_row(&sql, [run_id], |r| run_from_row_at(r, 0))
                .optional()
        })?
        .ok_or_else(|| Error::NotFound {
            what: format!("run {run_id}"),
        })
    }

    /// How a person names run `run_id`: "#3", its number among its workflow's runs.
    pub fn run_name(&self, run_id: i64) -> String {
        match self.run(run_id) {
            Ok(run) => format!("#{}", run.number),
            Err(_) => run_id.to_string(),
        }
    }

    pub fn run_detail(&self, run_id: i64) -> Result<RunDetail> {
        let run = self.run(run_id)?;
        let sql =
            format!("SELECT {ATTEMPT_COLUMNS} FROM attempts WHERE run_id = ?1 ORDER BY number");
        let attempts = self.call(|c| {
            let mut stmt = c.prepare_cached(&sql)?;
            let rows = stmt
                .query_map([run_id], attempt_from_row)?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })?;
        let setup = self.run_setup_log(run_id)?;
        Ok(RunDetail {
            run,
            attempts,
            setup,
        })
    }

    /// A workflow's runs, newest first, older than `before` when given.
    pub fn list_runs(&self, workflow_id: i64, before: Option<i64>, limit: u32) -> Result<Vec<Run>> {
        let sql = format!(
            "SELECT {RUN_COLUMNS} FROM runs r JOIN scripts s ON s.id = r.script_id
             WHERE r.workflow_id = ?1 AND r.id < ?2 ORDER BY r.id DESC LIMIT ?3"
        );
        self.call(|c| {
            let mut stmt = c.prepare_cached(&sql)?;
            let rows = stmt
                .query_map(
                    params![workflow_id, before.unwrap_or(i64::MAX), limit],
                    |r| run_from_row_at(r, 0),
                )?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    /// Runs and attempts a crash left running are marked interrupted; their process groups
    /// are returned so the caller can make sure they are gone. Queued runs stay queued.
    pub fn interrupt_open_runs(&self) -> Result<Vec<InterruptedAttempt>> {
        let at = now();
        self.call(|c| {
            let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let leftovers = {
                let mut stmt = tx.prepare(
                    "SELECT run_id, pgid FROM attempts WHERE status = 'running'",
                )?;
                let rows = stmt
                    .query_map([], |r| {
                        Ok(InterruptedAttempt {
                            run_id: r.get(0)?,
                            pgid: r.get(1)?,
                        })
                    })?
                    .collect::<rusqlite::Result<Vec<_>>>()?;
                rows
            };
            tx.execute(
                "UPDATE attempts SET status = 'interrupted', finished_at = ?1,
                    note = 'Healer stopped while this attempt ran; its processes were ended at the next start'
                 WHERE status = 'running'",
                [&at],
            )?;
            tx.execute(
                "UPDATE runs SET status = 'interrupted', finished_at = ?1,
                    summary = 'Interrupted: Healer stopped while it ran'
                 WHERE status = 'running' AND id NOT IN (SELECT run_id FROM cluster_runs)",
                [&at],
            )?;
            tx.commit()?;
            Ok(leftovers)
        })
    }
}

/// What start-up did with the runs that were checking a fix when a crash interrupted them.
#[derive(Debug, Clone, Default)]
pub struct FixChecks {
    /// (workflow id, the new run's id): queued again.
    pub queued: Vec<(i64, i64)>,
    /// Workflows whose fix check was interrupted a second time: given up.
    pub given_up: Vec<i64>,
}

impl Store {
    /// The run of a fix that a crash interrupted has not judged the fix: queue it again, once.
    /// A fix run interrupted a second time (the same version's) is given up.
    pub fn requeue_interrupted_fix_runs(&self, run_ids: &[i64]) -> Result<FixChecks> {
        let at = now();
        self.call(|c| {
            let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let (mut queued, mut given_up) = (Vec::new(), Vec::new());
            for run_id in run_ids {
                let row = tx
                    .query_row(
                        "SELECT workflow_id, script_id FROM runs
                         WHERE id = ?1 AND trigger = 'fix' AND status = 'interrupted'",
                        [run_id],
                        |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)),
                    )
                    .optional()?;
                let Some((workflow_id, script_id)) = row else {
                    continue;
                };
                let interrupted_before: i64 = tx.query_row(
                    "SELECT count(*) FROM runs WHERE workflow_id = ?1 AND script_id = ?2
                       AND trigger = 'fix' AND status = 'interrupted' AND id <> ?3",
                    params![workflow_id, script_id, run_id],
                    |r| r.get(0),
                )?;
                let open: bool = tx.query_row(
                    "SELECT EXISTS (SELECT 1 FROM runs WHERE workflow_id = ?1 AND status IN ('queued', 'running'))",
                    [workflow_id],
                    |r| r.get(0),
                )?;
                if interrupted_before > 0 {
                    given_up.push(workflow_id);
                } else if !open {
                    tx.execute(
                        "INSERT INTO runs (workflow_id, script_id, trigger, status, queued_at)
                         VALUES (?1, ?2, 'fix', 'queued', ?3)",
                        params![workflow_id, script_id, at],
                    )?;
                    queued.push((workflow_id, tx.last_insert_rowid()));
                }
            }
            tx.commit()?;
            Ok(FixChecks { queued, given_up })
        })
    }

    /// A workflow's queued run (not yet started), if any.
    pub fn queued_run_of(&self, workflow_id: i64) -> Result<Option<i64>> {
        self.call(|c| {
            c.query_row(
                "SELECT id FROM runs WHERE workflow_id = ?1 AND status = 'queued' ORDER BY id LIMIT 1",
                [workflow_id],
                |r| r.get(0),
            )
            .optional()
        })
    }
}

/// A byte count as SQLite stores it (a signed 64-bit integer; no output is that large).
fn count(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// A run from a row whose run columns (RUN_COLUMNS order) start at `base`.
pub(super) fn run_from_row_at(r: &Row<'_>, base: usize) -> rusqlite::Result<Run> {
    let trigger: String = r.get(base + 4)?;
    let status: String = r.get(base + 5)?;
    let class: Option<String> = r.get(base + 6)?;
    Ok(Run {
        id: r.get(base)?,
        workflow_id: r.get(base + 1)?,
        version: Version {
            major: r.get(base + 2)?,
            minor: r.get(base + 3)?,
        },
        trigger: RunTrigger::parse(&trigger).ok_or_else(|| unknown_value(base + 4, &trigger))?,
        status: RunStatus::parse(&status).ok_or_else(|| unknown_value(base + 5, &status))?,
        class: class
            .map(|c| FailureClass::parse(&c).ok_or_else(|| unknown_value(base + 6, &c)))
            .transpose()?,
        attempts: r.get(base + 7)?,
        queued_at: r.get(base + 8)?,
        started_at: r.get(base + 9)?,
        finished_at: r.get(base + 10)?,
        summary: r.get(base + 11)?,
        skipped: r.get(base + 12)?,
        hint: r.get(base + 13)?,
        number: r.get(base + 14)?,
    })
}

fn attempt_from_row(r: &Row<'_>) -> rusqlite::Result<Attempt> {
    let status: String = r.get(3)?;
    let class: Option<String> = r.get(10)?;
    let error_type: Option<String> = r.get(11)?;
    let message: Option<String> = r.get(12)?;
    let stack: Option<String> = r.get(13)?;
    Ok(Attempt {
        id: r.get(0)?,
        run_id: r.get(1)?,
        number: r.get(2)?,
        status: AttemptStatus::parse(&status).ok_or_else(|| unknown_value(3, &status))?,
        started_at: r.get(4)?,
        finished_at: r.get(5)?,
        duration_ms: r.get(6)?,
        exit_code: r.get(7)?,
        signal: r.get(8)?,
        timed_out: r.get(9)?,
        class: class
            .map(|c| FailureClass::parse(&c).ok_or_else(|| unknown_value(10, &c)))
            .transpose()?,
        evidence: message.map(|message| Evidence {
            error_type,
            message,
            stack,
        }),
        stdout: r.get(14)?,
        stderr: r.get(15)?,
        stdout_cut: r.get::<_, i64>(16)?.max(0).unsigned_abs(),
        stderr_cut: r.get::<_, i64>(17)?.max(0).unsigned_abs(),
        result: r.get(18)?,
        note: r.get(19)?,
        worker: r.get(20)?,
    })
}
