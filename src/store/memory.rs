//! Healing memory: signatures, where they were seen, fixes tried; the decisions log.

use rusqlite::{params, OptionalExtension, Row, TransactionBehavior};

use super::notifications::unknown_value;
use super::{now, Store};
use crate::error::{Error, Result};
use crate::failure::Failure;
use crate::memory::{DecisionKind, FixVerdict, LoggedDecision, Pattern, PatternDetail, PatternFix};

const PATTERN_COLUMNS: &str = "p.signature, p.error_type, p.normalized, p.first_seen, p.last_seen,
    p.count,
    (SELECT count(*) FROM pattern_fixes f WHERE f.signature = p.signature),
    (SELECT count(*) FROM pattern_fixes f WHERE f.signature = p.signature AND f.result = 'success'),
    (SELECT count(*) FROM pattern_fixes f WHERE f.signature = p.signature AND f.result = 'pending')";

const FIX_COLUMNS: &str = "f.id, f.signature, f.workflow_id, w.title, f.task_id, f.description,
    f.diff, f.code_hash, f.result, f.created_at, f.settled_at";

impl Store {
    /// Remember a failure: its signature's count and last time, and where it was seen.
    pub fn record_pattern_hit(
        &self,
        failure: &Failure,
        workflow_id: Option<i64>,
        run_id: Option<i64>,
    ) -> Result<()> {
        let at = now();
        let normalized = crate::failure::normalize(&failure.evidence);
        self.call(|c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            tx.execute(
                "INSERT INTO patterns (signature, error_type, normalized, first_seen, last_seen, count)
                 VALUES (?1, ?2, ?3, ?4, ?4, 1)
                 ON CONFLICT (signature) DO UPDATE SET last_seen = ?4, count = count + 1",
                params![failure.signature, failure.evidence.error_type, normalized, at],
            )?;
            tx.execute(
                "INSERT INTO pattern_hits (signature, workflow_id, run_id, at)
                 VALUES (?1, (SELECT id FROM workflows WHERE id = ?2),
                         (SELECT id FROM runs WHERE id = ?3), ?4)",
                params![failure.signature, workflow_id, run_id, at],
            )?;
            tx.commit()
        })
    }

    /// How many different workflows failed with `signature` since `since` (RFC 3339).
    pub fn workflows_with_signature_since(&self, signature: &str, since: &str) -> Result<u32> {
        self.call(|c| {
            c.query_row(
                "SELECT count(DISTINCT workflow_id) FROM pattern_hits
                 WHERE signature = ?1 AND at >= ?2 AND workflow_id IS NOT NULL",
                params![signature, since],
                |r| r.get(0),
            )
        })
    }

    #[allow(clippy::too_many_arguments)]
    pub fn insert_pattern_fix(
        &self,
        signature: &str,
        workflow_id: i64,
        task_id: Option<i64>,
        script_id: i64,
        description: &str,
        diff: &str,
        code_hash: &str,
    ) -> Result<()> {
        let at = now();
        self.call(|c| {
            c.execute(
                "INSERT INTO pattern_fixes (signature, workflow_id, task_id, script_id, description,
                     diff, code_hash, result, created_at)
                 SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, 'pending', ?8
                 WHERE EXISTS (SELECT 1 FROM patterns WHERE signature = ?1)",
                params![signature, workflow_id, task_id, script_id, description, diff, code_hash, at],
            )
        })?;
        Ok(())
    }

    /// A repair gave up on `signature`: remembered as a failed approach (no code, its reason),
    /// so the next repair of it is told.
    pub fn remember_give_up(
        &self,
        signature: &str,
        workflow_id: i64,
        task_id: Option<i64>,
        reason: &str,
    ) -> Result<()> {
        let at = now();
        self.call(|c| {
            c.execute(
                "INSERT INTO pattern_fixes (signature, workflow_id, task_id, script_id, description,
                     diff, code_hash, result, created_at, settled_at)
                 SELECT ?1, ?2, ?3, NULL, ?4, '', '', 'failed', ?5, ?5
                 WHERE EXISTS (SELECT 1 FROM patterns WHERE signature = ?1)",
                params![signature, workflow_id, task_id, format!("Gave up: {reason}"), at],
            )
        })?;
        Ok(())
    }

    /// A run of a fixed version finished: green settles the fixes that made the version as
    /// held; a failure with `failed_with` (a signature) settles those made for that same error
    /// as failed. A fix whose run failed with another error stays pending: whether it made
    /// things worse is for the fix's judge (the `rollback_bad_fix` remedy). Returns how many
    /// were settled.
    pub fn settle_pattern_fixes(&self, run_id: i64, failed_with: Option<&str>) -> Result<usize> {
        let at = now();
        self.call(|c| match failed_with {
            None => c.execute(
                "UPDATE pattern_fixes SET result = 'success', settled_at = ?2
                 WHERE result = 'pending'
                   AND script_id = (SELECT script_id FROM runs WHERE id = ?1)",
                params![run_id, at],
            ),
            Some(signature) => c.execute(
                "UPDATE pattern_fixes SET result = 'failed', settled_at = ?2
                 WHERE result = 'pending' AND signature = ?3
                   AND script_id = (SELECT script_id FROM runs WHERE id = ?1)",
                params![run_id, at, signature],
            ),
        })
    }

    /// The fix made by `task_id` cured its error (the script got further): it held.
    pub fn succeed_pattern_fix_of_task(&self, task_id: i64) -> Result<()> {
        let at = now();
        self.call(|c| {
            c.execute(
                "UPDATE pattern_fixes SET result = 'success', settled_at = ?2
                 WHERE task_id = ?1 AND result = 'pending'",
                params![task_id, at],
            )
        })?;
        Ok(())
    }

    /// Mark the pending fix made by `task_id` failed (its fix was rolled back).
    pub fn fail_pattern_fix_of_task(&self, task_id: i64) -> Result<()> {
        let at = now();
        self.call(|c| {
            c.execute(
                "UPDATE pattern_fixes SET result = 'failed', settled_at = ?2
                 WHERE task_id = ?1 AND result IN ('pending', 'success')",
                params![task_id, at],
            )
        })?;
        Ok(())
    }

    /// Fixes tried for a signature, newest first.
    pub fn pattern_fixes(&self, signature: &str) -> Result<Vec<PatternFix>> {
        let sql = format!(
            "SELECT {FIX_COLUMNS} FROM pattern_fixes f LEFT JOIN workflows w ON w.id = f.workflow_id
             WHERE f.signature = ?1 ORDER BY f.id DESC"
        );
        self.call(|c| {
            let mut stmt = c.prepare_cached(&sql)?;
            let rows = stmt
                .query_map([signature], fix_from_row)?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    /// A fix tried for `signature` that failed and whose code is `code` up to whitespace: which
    /// version it was, of which workflow.
    pub fn failed_fix_like(
        &self,
        signature: &str,
        code: &str,
    ) -> Result<Option<(crate::workflow::Version, String)>> {
        let wanted = crate::memory::same_code_key(code);
        let tried: Vec<(u32, u32, String, String)> = self.call(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT s.major, s.minor, coalesce(w.title, ''), s.code
                 FROM pattern_fixes f JOIN scripts s ON s.id = f.script_id
                 LEFT JOIN workflows w ON w.id = s.workflow_id
                 WHERE f.signature = ?1 AND f.result = 'failed' ORDER BY f.id DESC",
            )?;
            let rows = stmt
                .query_map([signature], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })?;
        Ok(tried
            .into_iter()
            .find(|(.., tried)| crate::memory::same_code_key(tried) == wanted)
            .map(|(major, minor, title, _)| (crate::workflow::Version { major, minor }, title)))
    }

    /// Signatures, most recently seen first.
    pub fn patterns(&self, limit: u32) -> Result<Vec<Pattern>> {
        let sql =
            format!("SELECT {PATTERN_COLUMNS} FROM patterns p ORDER BY p.last_seen DESC LIMIT ?1");
        self.call(|c| {
            let mut stmt = c.prepare_cached(&sql)?;
            let rows = stmt
                .query_map([limit], pattern_from_row)?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    pub fn pattern(&self, signature: &str) -> Result<PatternDetail> {
        let sql = format!("SELECT {PATTERN_COLUMNS} FROM patterns p WHERE p.signature = ?1");
        let pattern = self
            .call(|c| c.query_row(&sql, [signature], pattern_from_row).optional())?
            .ok_or_else(|| Error::NotFound {
                what: format!("error signature {signature}"),
            })?;
        Ok(PatternDetail {
            fixes: self.pattern_fixes(signature)?,
            pattern,
        })
    }

    /// The failure signature a maintainer task repairs, and the run it came from.
    pub fn set_task_signature(&self, task_id: i64, signature: &str) -> Result<()> {
        self.call(|c| {
            c.execute(
                "UPDATE tasks SET signature = ?2 WHERE id = ?1",
                params![task_id, signature],
            )
        })?;
        Ok(())
    }

    /// The repair whose version a run ran: its task, and the signature of the failure it was
    /// made for. `None` for a version no repair task wrote.
    pub fn repair_of_run(&self, run_id: i64) -> Result<Option<(i64, String)>> {
        self.call(|c| {
            c.query_row(
                "SELECT t.id, t.signature FROM runs r JOIN scripts s ON s.id = r.script_id
                 JOIN tasks t ON s.author = 'task:' || t.id
                 WHERE r.id = ?1 AND t.signature IS NOT NULL",
                [run_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
        })
    }

    pub fn task_signature(&self, task_id: i64) -> Result<Option<String>> {
        self.call(|c| {
            c.query_row(
                "SELECT signature FROM tasks WHERE id = ?1",
                [task_id],
                |r| r.get(0),
            )
            .optional()
            .map(Option::flatten)
        })
    }

    pub fn log_decision(
        &self,
        workflow_id: Option<i64>,
        kind: DecisionKind,
        summary: &str,
        detail: &str,
    ) -> Result<LoggedDecision> {
        let at = now();
        let id = self.call(|c| {
            c.execute(
                "INSERT INTO decisions (workflow_id, kind, summary, detail, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![workflow_id, kind.as_str(), summary, detail, at],
            )?;
            Ok(c.last_insert_rowid())
        })?;
        let mut list = self.decisions_where("d.id = ?1", id)?;
        list.pop()
            .ok_or_else(|| Error::Internal("decision vanished".to_string()))
    }

    /// The decisions log, newest first.
    pub fn decisions(&self, limit: u32) -> Result<Vec<LoggedDecision>> {
        self.decisions_where("1 = 1 ORDER BY d.id DESC LIMIT ?1", i64::from(limit))
    }

    fn decisions_where(&self, clause: &str, arg: i64) -> Result<Vec<LoggedDecision>> {
        let sql = format!(
            "SELECT d.id, d.workflow_id, w.title, d.kind, d.summary, d.detail, d.created_at
             FROM decisions d LEFT JOIN workflows w ON w.id = d.workflow_id WHERE {clause}"
        );
        self.call(|c| {
            let mut stmt = c.prepare_cached(&sql)?;
            let rows = stmt
                .query_map([arg], |r| {
                    let kind: String = r.get(3)?;
                    Ok(LoggedDecision {
                        id: r.get(0)?,
                        workflow_id: r.get(1)?,
                        workflow_title: r.get(2)?,
                        kind: DecisionKind::parse(&kind).ok_or_else(|| unknown_value(3, &kind))?,
                        summary: r.get(4)?,
                        detail: r.get(5)?,
                        created_at: r.get(6)?,
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }
}

fn pattern_from_row(r: &Row<'_>) -> rusqlite::Result<Pattern> {
    Ok(Pattern {
        signature: r.get(0)?,
        error_type: r.get(1)?,
        normalized: r.get(2)?,
        first_seen: r.get(3)?,
        last_seen: r.get(4)?,
        count: r.get(5)?,
        fixes: r.get(6)?,
        successes: r.get(7)?,
        pending: r.get(8)?,
    })
}

fn fix_from_row(r: &Row<'_>) -> rusqlite::Result<PatternFix> {
    let result: String = r.get(8)?;
    Ok(PatternFix {
        id: r.get(0)?,
        signature: r.get(1)?,
        workflow_id: r.get(2)?,
        workflow_title: r.get(3)?,
        task_id: r.get(4)?,
        description: r.get(5)?,
        diff: r.get(6)?,
        code_hash: r.get(7)?,
        result: FixVerdict::parse(&result).ok_or_else(|| unknown_value(8, &result))?,
        created_at: r.get(9)?,
        settled_at: r.get(10)?,
    })
}

/// What the circuit breakers ask of the store.
impl Store {
    /// Tokens the model calls of a workflow's tasks used on `day`.
    pub fn healing_tokens_on(&self, workflow_id: i64, day: &str) -> Result<u64> {
        let n: i64 = self.call(|c| {
            c.query_row(
                "SELECT coalesce(sum(u.prompt_tokens + u.completion_tokens), 0)
                 FROM usage u JOIN tasks t ON t.id = u.task_id
                 WHERE t.workflow_id = ?1 AND u.day = ?2",
                params![workflow_id, day],
                |r| r.get(0),
            )
        })?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    /// A checkpoint with this trigger and signature created since `since`, pending or not:
    /// (id, pending).
    pub fn checkpoint_for_signature_since(
        &self,
        trigger: &str,
        signature: &str,
        since: &str,
    ) -> Result<Option<(i64, bool)>> {
        self.call(|c| {
            c.query_row(
                "SELECT id, decided_at IS NULL FROM checkpoints
                 WHERE trigger = ?1 AND signature = ?2 AND (created_at >= ?3 OR decided_at IS NULL)
                 ORDER BY id DESC LIMIT 1",
                params![trigger, signature, since],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
        })
    }

    /// A pending checkpoint of `trigger` for a workflow.
    pub fn pending_checkpoint_of(&self, workflow_id: i64, trigger: &str) -> Result<Option<i64>> {
        self.call(|c| {
            c.query_row(
                "SELECT id FROM checkpoints WHERE workflow_id = ?1 AND trigger = ?2
                   AND decided_at IS NULL ORDER BY id LIMIT 1",
                params![workflow_id, trigger],
                |r| r.get(0),
            )
            .optional()
        })
    }

    /// Workflows that failed with `signature` since `since`.
    pub fn workflows_hit_since(&self, signature: &str, since: &str) -> Result<Vec<i64>> {
        self.call(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT DISTINCT workflow_id FROM pattern_hits
                 WHERE signature = ?1 AND at >= ?2 AND workflow_id IS NOT NULL",
            )?;
            let rows = stmt
                .query_map(params![signature, since], |r| r.get(0))?
                .collect::<rusqlite::Result<Vec<i64>>>()?;
            Ok(rows)
        })
    }

    /// Workflows that failed with `signature` since `since`, each with its latest such run,
    /// in the order they first failed.
    pub fn workflow_runs_hit_since(&self, signature: &str, since: &str) -> Result<Vec<(i64, i64)>> {
        self.call(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT workflow_id, max(run_id) FROM pattern_hits
                 WHERE signature = ?1 AND at >= ?2 AND workflow_id IS NOT NULL
                   AND run_id IS NOT NULL
                 GROUP BY workflow_id ORDER BY min(id)",
            )?;
            let rows = stmt
                .query_map(params![signature, since], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    /// Versions made by auto-fix tasks since `since`.
    pub fn fixes_since(&self, workflow_id: i64, since: &str) -> Result<u32> {
        self.call(|c| {
            c.query_row(
                "SELECT count(*) FROM scripts WHERE workflow_id = ?1 AND author LIKE 'task:%'
                   AND created_at >= ?2",
                params![workflow_id, since],
                |r| r.get(0),
            )
        })
    }

    /// Flag (or clear) a workflow for review; true when the flag changed.
    pub fn set_review(&self, workflow_id: i64, review: bool) -> Result<bool> {
        let n = self.call(|c| {
            c.execute(
                "UPDATE workflows SET review = ?2 WHERE id = ?1 AND review != ?2",
                params![workflow_id, review],
            )
        })?;
        Ok(n > 0)
    }

    /// The version of the workflow's most recent green run within `major`, if one ran green:
    /// a rollback never crosses the person's major versions.
    pub fn last_green_in_major(
        &self,
        workflow_id: i64,
        major: u32,
    ) -> Result<Option<crate::workflow::Version>> {
        self.call(|c| {
            c.query_row(
                "SELECT s.major, s.minor FROM runs r JOIN scripts s ON s.id = r.script_id
                 WHERE r.workflow_id = ?1 AND s.major = ?2 AND r.status = 'succeeded'
                 ORDER BY r.id DESC LIMIT 1",
                params![workflow_id, major],
                |r| {
                    Ok(crate::workflow::Version {
                        major: r.get(0)?,
                        minor: r.get(1)?,
                    })
                },
            )
            .optional()
        })
    }

    /// After a catastrophic rollback: maintenance off and the fix count back to zero.
    pub fn reset_healing_counters(&self, workflow_id: i64) -> Result<()> {
        self.call(|c| {
            c.execute(
                "UPDATE workflows SET fix_count = 0, maintenance = 0 WHERE id = ?1",
                [workflow_id],
            )
        })?;
        Ok(())
    }
}
