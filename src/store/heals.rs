//! Heals: a failure, every remedy tried on it, and how it ended.

use rusqlite::{params, OptionalExtension, Row};
use serde::{Deserialize, Serialize};

use super::notifications::unknown_value;
use super::{now, Store};
use crate::error::{Error, Result};
use crate::failure::{Failure, FailureClass, FailureSource};
use crate::workflow::Version;

/// How a heal ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The failure is gone (a retry passed, a fix ran green).
    Resolved,
    /// The failure is not gone, but it is in hand: the person was told or asked.
    Contained,
    /// Every remedy was tried and none helped.
    Unresolved,
    /// Policy said not to heal this one.
    Skipped,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Resolved => "resolved",
            Outcome::Contained => "contained",
            Outcome::Unresolved => "unresolved",
            Outcome::Skipped => "skipped",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            Outcome::Resolved,
            Outcome::Contained,
            Outcome::Unresolved,
            Outcome::Skipped,
        ]
        .into_iter()
        .find(|o| o.as_str() == s)
    }
}

/// What one remedy achieved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum RemedyStatus {
    Resolved,
    Contained,
    /// It ran, and the failure is still there: try the next one.
    NotResolved,
    /// It could not run (an error of its own): try the next one.
    Failed,
}

impl RemedyStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RemedyStatus::Resolved => "resolved",
            RemedyStatus::Contained => "contained",
            RemedyStatus::NotResolved => "not_resolved",
            RemedyStatus::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            RemedyStatus::Resolved,
            RemedyStatus::Contained,
            RemedyStatus::NotResolved,
            RemedyStatus::Failed,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }

    /// Whether the pipeline stops after this remedy.
    pub(crate) fn ends_the_heal(self) -> bool {
        matches!(self, RemedyStatus::Resolved | RemedyStatus::Contained)
    }
}

/// One remedy tried in a heal, as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct RemedyAttempt {
    /// The remedy's name, e.g. "record_and_notify".
    pub remedy: String,
    pub status: RemedyStatus,
    pub detail: String,
    pub started_at: String,
    pub finished_at: String,
}

/// A heal as stored: the failure, every remedy tried, and the outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct HealRecord {
    pub id: i64,
    pub source: FailureSource,
    pub scenario: String,
    pub class: FailureClass,
    pub signature: String,
    pub summary: String,
    /// `None` while the heal is still running.
    pub outcome: Option<Outcome>,
    pub interrupted: bool,
    pub remedies: Vec<RemedyAttempt>,
    pub started_at: String,
    pub finished_at: Option<String>,
    /// The repair task the heal started (maintainer or known fix), if any.
    pub task_id: Option<i64>,
    /// The version whose run showed the failure gone, and that run.
    pub resolved_by: Option<Version>,
    pub resolved_run_id: Option<i64>,
}

impl Store {
    /// Record that a heal of `failure` has begun; returns its id.
    pub fn start_heal(&self, failure: &Failure) -> Result<i64> {
        let source = to_json(&failure.source)?;
        let evidence = to_json(&failure.evidence)?;
        let at = now();
        self.call(|c| {
            c.execute(
                "INSERT INTO heals (source, scenario, class, signature, evidence, status, summary, started_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, 'running', ?6, ?7)",
                params![
                    source,
                    failure.scenario,
                    failure.class.as_str(),
                    failure.signature,
                    evidence,
                    failure.summary(),
                    at
                ],
            )?;
            Ok(c.last_insert_rowid())
        })
    }

    pub fn add_remedy_attempt(
        &self,
        heal_id: i64,
        position: usize,
        attempt: &RemedyAttempt,
    ) -> Result<()> {
        let position = i64::try_from(position)
            .map_err(|_| Error::Internal("too many remedies".to_string()))?;
        self.call(|c| {
            c.execute(
                "INSERT INTO heal_remedies (heal_id, position, remedy, status, detail, started_at, finished_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    heal_id,
                    position,
                    attempt.remedy,
                    attempt.status.as_str(),
                    attempt.detail,
                    attempt.started_at,
                    attempt.finished_at
                ],
            )
        })?;
        Ok(())
    }

    pub fn finish_heal(&self, heal_id: i64, outcome: Outcome, summary: &str) -> Result<()> {
        let at = now();
        self.call(|c| {
            c.execute(
                "UPDATE heals SET status = 'finished', outcome = ?2, summary = ?3, finished_at = ?4
                 WHERE id = ?1",
                params![heal_id, outcome.as_str(), summary, at],
            )
        })?;
        Ok(())
    }

    /// Heals a crash left running: mark them interrupted (unresolved). Returns how many.
    pub fn interrupt_running_heals(&self) -> Result<usize> {
        let at = now();
        self.call(|c| {
            c.execute(
                "UPDATE heals SET status = 'interrupted', outcome = 'unresolved',
                    summary = 'Interrupted: the engine stopped before this heal finished',
                    finished_at = ?1
                 WHERE status = 'running'",
                [at],
            )
        })
    }

    pub fn count_heals_with_signature(&self, signature: &str) -> Result<u32> {
        self.call(|c| {
            c.query_row(
                "SELECT count(*) FROM heals WHERE signature = ?1 AND status != 'running'",
                [signature],
                |r| r.get(0),
            )
        })
    }

    pub fn heal(&self, heal_id: i64) -> Result<HealRecord> {
        self.list_heals_where("WHERE id = ?1", heal_id, 1)?
            .pop()
            .ok_or_else(|| Error::NotFound {
                what: format!("heal {heal_id}"),
            })
    }

    /// The newest heals first.
    pub fn list_heals(&self, limit: u32) -> Result<Vec<HealRecord>> {
        self.list_heals_where("WHERE id <= ?1", i64::MAX, limit)
    }

    fn list_heals_where(&self, filter: &str, arg: i64, limit: u32) -> Result<Vec<HealRecord>> {
        let sql = format!(
            "SELECT id, source, scenario, class, signature, summary, outcome, status, started_at, finished_at,
                task_id, resolved_major, resolved_minor, resolved_run_id
             FROM heals {filter} ORDER BY id DESC LIMIT ?2"
        );
        self.call(|c| {
            let mut heals = {
                let mut stmt = c.prepare_cached(&sql)?;
                let rows = stmt
                    .query_map(params![arg, limit], heal_from_row)?
                    .collect::<rusqlite::Result<Vec<_>>>()?;
                rows
            };
            let mut stmt = c.prepare_cached(
                "SELECT remedy, status, detail, started_at, finished_at
                 FROM heal_remedies WHERE heal_id = ?1 ORDER BY position",
            )?;
            for heal in &mut heals {
                heal.remedies = stmt
                    .query_map([heal.id], attempt_from_row)?
                    .collect::<rusqlite::Result<Vec<_>>>()?;
            }
            Ok(heals)
        })
    }

    /// The repair task a heal started.
    pub fn link_heal_task(&self, heal_id: i64, task_id: i64) -> Result<()> {
        self.call(|c| {
            c.execute(
                "UPDATE heals SET task_id = ?2 WHERE id = ?1",
                params![heal_id, task_id],
            )
        })?;
        Ok(())
    }

    /// The failure `signature` of a workflow is gone: its heals that started a repair and
    /// ended contained become resolved by `version` (shown by `run_id`). Returns their ids.
    pub fn resolve_heals(
        &self,
        workflow_id: i64,
        signature: &str,
        version: Version,
        run_id: i64,
    ) -> Result<Vec<i64>> {
        let summary = format!("Resolved by {version} (run {run_id})");
        self.call(|c| {
            let mut stmt = c.prepare_cached(
                "UPDATE heals SET outcome = 'resolved', resolved_major = ?3, resolved_minor = ?4,
                     resolved_run_id = ?5, summary = ?6
                 WHERE json_extract(source, '$.workflow_id') = ?1 AND signature = ?2
                   AND outcome = 'contained' AND task_id IS NOT NULL
                 RETURNING id",
            )?;
            let ids = stmt
                .query_map(
                    params![
                        workflow_id,
                        signature,
                        version.major,
                        version.minor,
                        run_id,
                        summary
                    ],
                    |r| r.get(0),
                )?
                .collect::<rusqlite::Result<Vec<i64>>>()?;
            Ok(ids)
        })
    }

    pub fn heal_status(&self, heal_id: i64) -> Result<Option<String>> {
        self.call(|c| {
            c.query_row("SELECT status FROM heals WHERE id = ?1", [heal_id], |r| {
                r.get(0)
            })
            .optional()
        })
    }
}

fn heal_from_row(r: &Row<'_>) -> rusqlite::Result<HealRecord> {
    let source: String = r.get(1)?;
    let class: String = r.get(3)?;
    let outcome: Option<String> = r.get(6)?;
    let status: String = r.get(7)?;
    let resolved_by = match (r.get::<_, Option<u32>>(11)?, r.get::<_, Option<u32>>(12)?) {
        (Some(major), Some(minor)) => Some(Version { major, minor }),
        _ => None,
    };
    Ok(HealRecord {
        id: r.get(0)?,
        source: serde_json::from_str::<FailureSource>(&source)
            .map_err(|_| unknown_value(1, &source))?,
        scenario: r.get(2)?,
        class: FailureClass::parse(&class).ok_or_else(|| unknown_value(3, &class))?,
        signature: r.get(4)?,
        summary: r.get(5)?,
        outcome: outcome
            .map(|o| Outcome::parse(&o).ok_or_else(|| unknown_value(6, &o)))
            .transpose()?,
        interrupted: status == "interrupted",
        remedies: Vec::new(),
        started_at: r.get(8)?,
        finished_at: r.get(9)?,
        task_id: r.get(10)?,
        resolved_by,
        resolved_run_id: r.get(13)?,
    })
}

fn attempt_from_row(r: &Row<'_>) -> rusqlite::Result<RemedyAttempt> {
    let status: String = r.get(1)?;
    Ok(RemedyAttempt {
        remedy: r.get(0)?,
        status: RemedyStatus::parse(&status).ok_or_else(|| unknown_value(1, &status))?,
        detail: r.get(2)?,
        started_at: r.get(3)?,
        finished_at: r.get(4)?,
    })
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<String> {
    serde_json::to_string(value).map_err(|e| Error::Internal(format!("does not serialise: {e}")))
}
