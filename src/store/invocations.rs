//! The healer service's invocations: one row per wake-up on a project failure — the scenario,
//! the spells tried with what each did, the snapshot and follow-up task they left, and how it
//! ended (skipped ones too, with the reason). The policy's counters are counted from here.

use rusqlite::{params, OptionalExtension, Row};
use serde::{Deserialize, Serialize};

use super::notifications::unknown_value;
use super::{now, Store};
use crate::error::{Error, Result};

/// How an invocation ended (or that it still runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum InvocationStatus {
    Running,
    /// It asked the person a question (its checkpoint) and carries on when it is answered, in
    /// whichever engine runs then.
    Waiting,
    /// A spell fixed it, and the check that failed passes now.
    Resolved,
    /// Not fixed, but made safe: work pinned and rewound, the task blocked with a follow-up,
    /// guidance written, or the person asked.
    Contained,
    /// Every spell was tried and none helped.
    Unresolved,
    /// The policy said not to run (the reason says why).
    Skipped,
}

impl InvocationStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            InvocationStatus::Running => "running",
            InvocationStatus::Waiting => "waiting",
            InvocationStatus::Resolved => "resolved",
            InvocationStatus::Contained => "contained",
            InvocationStatus::Unresolved => "unresolved",
            InvocationStatus::Skipped => "skipped",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            InvocationStatus::Running,
            InvocationStatus::Waiting,
            InvocationStatus::Resolved,
            InvocationStatus::Contained,
            InvocationStatus::Unresolved,
            InvocationStatus::Skipped,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }
}

/// What one spell did in an invocation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct SpellRun {
    /// The spell's stable name (`rewind_uncommitted_changes` …).
    pub spell: String,
    pub success: bool,
    /// One sentence for a person: what it did, or why it could not.
    pub summary: String,
    pub started_at: String,
    pub finished_at: String,
    /// The agent session the spell started, if it started one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct HealerInvocation {
    pub id: i64,
    pub project_id: i64,
    pub task_id: String,
    /// The session whose failure woke the service.
    pub session_id: Option<i64>,
    /// The heal of the pipeline that handed it over.
    pub heal_id: Option<i64>,
    /// `VerificationFailed`, `InitScriptTypecheckFailure` …
    pub scenario: String,
    pub status: InvocationStatus,
    /// Why it was skipped, or what it concluded.
    pub reason: String,
    pub spells: Vec<SpellRun>,
    /// The snapshot a rewind left (restorable).
    pub snapshot_id: Option<i64>,
    /// The follow-up task a spell created.
    pub followup_task: Option<String>,
    pub signature: String,
    pub started_at: String,
    pub ended_at: Option<String>,
    /// The question it waits for the person to answer (while `waiting`).
    pub waiting_checkpoint: Option<i64>,
}

/// Where a durable invocation stands: what it works on, its plan, the next spell, and what its
/// spells achieved so far.
#[derive(Debug, Clone)]
pub struct InvocationState {
    pub failure: Option<crate::failure::Failure>,
    pub plan: Vec<String>,
    pub next_spell: usize,
    pub worked: Vec<String>,
}

/// An invocation to record.
#[derive(Debug, Clone)]
pub struct NewInvocation<'a> {
    pub project_id: i64,
    pub task_id: &'a str,
    pub session_id: Option<i64>,
    pub heal_id: Option<i64>,
    pub scenario: &'a str,
    pub signature: &'a str,
    /// `Running`, or `Skipped` with its reason.
    pub status: InvocationStatus,
    pub reason: &'a str,
}

const COLUMNS: &str = "id, project_id, task_id, session_id, heal_id, scenario, status, reason, \
     spells, snapshot_id, followup_task, signature, started_at, ended_at, waiting_checkpoint";

fn from_row(r: &Row<'_>) -> rusqlite::Result<HealerInvocation> {
    let status: String = r.get(6)?;
    let spells: String = r.get(8)?;
    Ok(HealerInvocation {
        id: r.get(0)?,
        project_id: r.get(1)?,
        task_id: r.get(2)?,
        session_id: r.get(3)?,
        heal_id: r.get(4)?,
        scenario: r.get(5)?,
        status: InvocationStatus::parse(&status).ok_or_else(|| unknown_value(6, &status))?,
        reason: r.get(7)?,
        spells: serde_json::from_str(&spells).map_err(|_| unknown_value(8, &spells))?,
        snapshot_id: r.get(9)?,
        followup_task: r.get(10)?,
        signature: r.get(11)?,
        started_at: r.get(12)?,
        ended_at: r.get(13)?,
        waiting_checkpoint: r.get(14)?,
    })
}

fn to_json<T: Serialize>(value: &T) -> Result<String> {
    serde_json::to_string(value)
        .map_err(|e| Error::Internal(format!("cannot keep an invocation's state: {e}")))
}

impl Store {
    pub fn insert_invocation(&self, new: &NewInvocation<'_>) -> Result<HealerInvocation> {
        let ended = (new.status != InvocationStatus::Running).then(now);
        let id = self.call(|c| {
            c.execute(
                "INSERT INTO healer_invocations (project_id, task_id, session_id, heal_id, scenario, status, reason, signature, started_at, ended_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![
                    new.project_id,
                    new.task_id,
                    new.session_id,
                    new.heal_id,
                    new.scenario,
                    new.status.as_str(),
                    new.reason,
                    new.signature,
                    now(),
                    ended
                ],
            )?;
            Ok(c.last_insert_rowid())
        })?;
        self.invocation(id)
    }

    pub fn invocation(&self, id: i64) -> Result<HealerInvocation> {
        let sql = format!("SELECT {COLUMNS} FROM healer_invocations WHERE id = ?1");
        self.call(|c| c.query_row(&sql, [id], from_row).optional())?
            .ok_or_else(|| Error::NotFound {
                what: format!("healer invocation {id}"),
            })
    }

    /// Invocations, newest first: of one project (and task) or of all.
    pub fn invocations(
        &self,
        project_id: Option<i64>,
        task_id: Option<&str>,
        limit: u32,
    ) -> Result<Vec<HealerInvocation>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM healer_invocations
             WHERE (?1 IS NULL OR project_id = ?1) AND (?2 IS NULL OR task_id = ?2)
             ORDER BY id DESC LIMIT ?3"
        );
        self.call(|c| {
            let mut stmt = c.prepare_cached(&sql)?;
            let rows = stmt
                .query_map(params![project_id, task_id, limit], from_row)?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    /// Add what a spell did (appended to the invocation's list).
    /// Record a spell's result, and in the same write (`progress`) where the plan goes on: the
    /// spell to cast next, with what was achieved so far — a restart carries on from there,
    /// never casting a finished spell twice.
    pub fn add_invocation_spell(
        &self,
        id: i64,
        run: &SpellRun,
        progress: Option<(usize, &[String])>,
    ) -> Result<()> {
        let mut inv = self.invocation(id)?;
        inv.spells.push(run.clone());
        let json = serde_json::to_string(&inv.spells)
            .map_err(|e| Error::Internal(format!("cannot keep a spell's result: {e}")))?;
        match progress {
            Some((next, worked)) => {
                let worked = to_json(&worked)?;
                let next = i64::try_from(next).unwrap_or(i64::MAX);
                self.call(|c| {
                    c.execute(
                        "UPDATE healer_invocations SET spells = ?2, next_spell = ?3, worked = ?4
                         WHERE id = ?1",
                        params![id, json, next, worked],
                    )
                })?;
            }
            None => {
                self.call(|c| {
                    c.execute(
                        "UPDATE healer_invocations SET spells = ?2 WHERE id = ?1",
                        params![id, json],
                    )
                })?;
            }
        }
        Ok(())
    }

    pub fn set_invocation_snapshot(&self, id: i64, snapshot_id: i64) -> Result<()> {
        self.call(|c| {
            c.execute(
                "UPDATE healer_invocations SET snapshot_id = ?2 WHERE id = ?1",
                params![id, snapshot_id],
            )
        })?;
        Ok(())
    }

    pub fn set_invocation_followup(&self, id: i64, task_id: &str) -> Result<()> {
        self.call(|c| {
            c.execute(
                "UPDATE healer_invocations SET followup_task = ?2 WHERE id = ?1",
                params![id, task_id],
            )
        })?;
        Ok(())
    }

    pub fn finish_invocation(&self, id: i64, status: InvocationStatus, reason: &str) -> Result<()> {
        self.call(|c| {
            c.execute(
                "UPDATE healer_invocations SET status = ?2, reason = ?3, ended_at = ?4,
                     acting_checkpoint = NULL WHERE id = ?1",
                params![id, status.as_str(), reason, now()],
            )
        })?;
        Ok(())
    }

    /// Keep what an invocation works on and its plan, before its first spell.
    pub fn set_invocation_plan(
        &self,
        id: i64,
        failure: &crate::failure::Failure,
        plan: &[&str],
    ) -> Result<()> {
        let (failure, plan) = (to_json(failure)?, to_json(&plan)?);
        self.call(|c| {
            c.execute(
                "UPDATE healer_invocations SET failure = ?2, plan = ?3, next_spell = 0 WHERE id = ?1",
                params![id, failure, plan],
            )
        })?;
        Ok(())
    }

    /// The invocation waits for the person's answer to `checkpoint`; it carries on at spell
    /// `next_spell` of its plan, with `worked` achieved so far.
    pub fn wait_invocation(
        &self,
        id: i64,
        next_spell: usize,
        worked: &[String],
        checkpoint: i64,
        reason: &str,
    ) -> Result<()> {
        let worked = to_json(&worked)?;
        let next = i64::try_from(next_spell).unwrap_or(i64::MAX);
        self.call(|c| {
            c.execute(
                "UPDATE healer_invocations SET status = 'waiting', next_spell = ?2, worked = ?3,
                     waiting_checkpoint = ?4, reason = ?5 WHERE id = ?1",
                params![id, next, worked, checkpoint, reason],
            )
        })?;
        Ok(())
    }

    /// Take a waiting invocation up again to carry out the answer: true for the one engine that
    /// gets it. From here until it ends it is *acting* on that answer (the checkpoint and the
    /// spell that asked are kept), and an engine killed meanwhile leaves it to the next one.
    pub fn claim_waiting_invocation(&self, id: i64, engine: &str) -> Result<bool> {
        let changed = self.call(|c| {
            c.execute(
                "UPDATE healer_invocations SET status = 'running',
                     acting_checkpoint = waiting_checkpoint, asked_spell = next_spell,
                     act_attempts = act_attempts + 1, waiting_checkpoint = NULL, acting_by = ?2
                 WHERE id = ?1 AND status = 'waiting'",
                params![id, engine],
            )
        })?;
        Ok(changed == 1)
    }

    /// Take up an invocation an engine stopped while carrying out an answer (this engine holds
    /// the lease: none other runs): true when it may try again, at most `max` tries in all.
    pub fn claim_acting_invocation(&self, id: i64, max: u32, engine: &str) -> Result<bool> {
        let changed = self.call(|c| {
            c.execute(
                "UPDATE healer_invocations SET act_attempts = act_attempts + 1, acting_by = ?3
                 WHERE id = ?1 AND status = 'running' AND acting_checkpoint IS NOT NULL
                   AND act_attempts < ?2 AND (acting_by IS NULL OR acting_by != ?3)",
                params![id, max, engine],
            )
        })?;
        Ok(changed == 1)
    }

    /// Invocations an engine stopped while carrying out an answer: `(invocation, checkpoint)`.
    /// Not those this engine (`engine`) carries out now.
    pub fn acting_invocations(&self, engine: &str) -> Result<Vec<(i64, i64)>> {
        self.call(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT id, acting_checkpoint FROM healer_invocations
                 WHERE status = 'running' AND acting_checkpoint IS NOT NULL
                   AND (acting_by IS NULL OR acting_by != ?1) ORDER BY id",
            )?;
            let rows = stmt
                .query_map([engine], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    /// The invocation carrying out the answer to `checkpoint` now, if one is.
    pub fn invocation_acting_on(&self, checkpoint: i64) -> Result<Option<i64>> {
        self.call(|c| {
            c.query_row(
                "SELECT id FROM healer_invocations
                 WHERE acting_checkpoint = ?1 AND status = 'running'",
                [checkpoint],
                |r| r.get(0),
            )
            .optional()
        })
    }

    /// The spell of the plan that asked the question being acted on, if one is.
    pub fn asked_spell(&self, id: i64) -> Result<Option<usize>> {
        let at: Option<i64> = self.call(|c| {
            c.query_row(
                "SELECT asked_spell FROM healer_invocations WHERE id = ?1",
                [id],
                |r| r.get(0),
            )
        })?;
        Ok(at.and_then(|n| usize::try_from(n).ok()))
    }

    pub fn invocation_state(&self, id: i64) -> Result<InvocationState> {
        let (failure, plan, next, worked): (Option<String>, String, i64, String) =
            self.call(|c| {
                c.query_row(
                    "SELECT failure, plan, next_spell, worked FROM healer_invocations WHERE id = ?1",
                    [id],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
                )
            })?;
        let failure = match failure {
            Some(json) => Some(serde_json::from_str(&json).map_err(|e| {
                Error::Internal(format!(
                    "invocation {id} keeps a failure Healer cannot read: {e}"
                ))
            })?),
            None => None,
        };
        let read = |json: &str| -> Result<Vec<String>> {
            serde_json::from_str(json).map_err(|e| {
                Error::Internal(format!(
                    "invocation {id} keeps a plan Healer cannot read: {e}"
                ))
            })
        };
        Ok(InvocationState {
            failure,
            plan: read(&plan)?,
            next_spell: usize::try_from(next).unwrap_or(0),
            worked: read(&worked)?,
        })
    }

    /// The invocation waiting for the answer to `checkpoint`, if any.
    pub fn invocation_waiting_on(&self, checkpoint: i64) -> Result<Option<i64>> {
        self.call(|c| {
            c.query_row(
                "SELECT id FROM healer_invocations WHERE waiting_checkpoint = ?1 AND status = 'waiting'",
                [checkpoint],
                |r| r.get(0),
            )
            .optional()
        })
    }

    /// Invocations waiting for the person: `(invocation, checkpoint)`, oldest first.
    pub fn waiting_invocations(&self) -> Result<Vec<(i64, i64)>> {
        self.call(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT id, waiting_checkpoint FROM healer_invocations
                 WHERE status = 'waiting' AND waiting_checkpoint IS NOT NULL ORDER BY id",
            )?;
            let rows = stmt
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    /// The invocation that holds a task: one under way or waiting for the person.
    pub fn open_invocation_for_task(
        &self,
        project_id: i64,
        task_id: &str,
    ) -> Result<Option<HealerInvocation>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM healer_invocations
             WHERE project_id = ?1 AND task_id = ?2 AND status IN ('running', 'waiting')
             ORDER BY id DESC LIMIT 1"
        );
        self.call(|c| {
            c.query_row(&sql, params![project_id, task_id], from_row)
                .optional()
        })
    }

    /// Tasks of a project that an open invocation holds.
    pub fn held_tasks(&self, project_id: i64) -> Result<Vec<String>> {
        self.call(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT DISTINCT task_id FROM healer_invocations
                 WHERE project_id = ?1 AND status IN ('running', 'waiting')
                 UNION
                 -- An agent's question whose session Healer's stop ended: the task waits for
                 -- the answer, and the session goes on with it.
                 SELECT a.task_id FROM approvals a JOIN agent_sessions s ON s.id = a.session_id
                 WHERE a.project_id = ?1 AND s.status = 'interrupted' AND a.resumed_session IS NULL
                   AND a.used_at IS NULL AND (a.status = 'waiting' OR a.answered_at IS NOT NULL)",
            )?;
            let rows = stmt
                .query_map([project_id], |r| r.get(0))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    /// Invocations still marked running (Healer stopped while they ran), but for those carrying
    /// out an answer (see [`Store::acting_invocations`]): those go on.
    pub fn running_invocations(&self) -> Result<Vec<HealerInvocation>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM healer_invocations
             WHERE status = 'running' AND acting_checkpoint IS NULL ORDER BY id"
        );
        self.call(|c| {
            let mut stmt = c.prepare_cached(&sql)?;
            let rows = stmt
                .query_map([], from_row)?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    /// How many other sessions of a task (than `session_id`) failed with this signature.
    pub fn sessions_with_signature(
        &self,
        project_id: i64,
        task_id: &str,
        signature: &str,
        session_id: i64,
    ) -> Result<u32> {
        self.call(|c| {
            c.query_row(
                "SELECT COUNT(DISTINCT session_id) FROM healer_invocations
                 WHERE project_id = ?1 AND task_id = ?2 AND signature = ?3 AND session_id IS NOT NULL
                   AND session_id != ?4",
                params![project_id, task_id, signature, session_id],
                |r| r.get(0),
            )
        })
    }

    /// Failure signatures of a task that came back in at least `min` sessions:
    /// `(project_id, task_id, signature, sessions)`.
    pub fn repeated_signatures(&self, min: u32) -> Result<Vec<(i64, String, String, u32)>> {
        self.call(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT project_id, task_id, signature, COUNT(DISTINCT session_id) AS n
                 FROM healer_invocations WHERE session_id IS NOT NULL AND signature != ''
                 GROUP BY project_id, task_id, signature HAVING n >= ?1 ORDER BY project_id, task_id",
            )?;
            let rows = stmt
                .query_map([min], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }
}
