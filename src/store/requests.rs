//! Requests from other processes to the engine (see `crate::client`).

use rusqlite::{params, OptionalExtension};

use super::{now, Store};
use crate::error::Result;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestStatus {
    Pending,
    Taken,
    Done,
    Failed,
}

impl RequestStatus {
    fn parse(s: &str) -> Option<Self> {
        match s {
            "pending" => Some(RequestStatus::Pending),
            "taken" => Some(RequestStatus::Taken),
            "done" => Some(RequestStatus::Done),
            "failed" => Some(RequestStatus::Failed),
            _ => None,
        }
    }
}

#[derive(Debug, Clone)]
pub struct RequestRow {
    pub id: i64,
    pub payload: String,
    pub status: RequestStatus,
    pub result: Option<String>,
}

impl Store {
    pub fn insert_request(&self, kind: &str, payload: &str) -> Result<i64> {
        let at = now();
        self.call(|c| {
            c.execute(
                "INSERT INTO requests (kind, payload, status, requested_by, created_at)
                 VALUES (?1, ?2, 'pending', ?3, ?4)",
                params![kind, payload, std::process::id(), at],
            )?;
            Ok(c.last_insert_rowid())
        })
    }

    /// Claim the oldest pending request, so that it is acted on exactly once.
    pub fn claim_request(&self) -> Result<Option<RequestRow>> {
        self.claim_request_of(None)
    }

    /// As [`Store::claim_request`], of one kind only (`None`: any).
    pub fn claim_request_of(&self, kind: Option<&str>) -> Result<Option<RequestRow>> {
        self.call(|c| {
            let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let row = tx
                .query_row(
                    "SELECT id, payload FROM requests WHERE status = 'pending'
                     AND (?1 IS NULL OR kind = ?1) ORDER BY id LIMIT 1",
                    [kind],
                    |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)),
                )
                .optional()?;
            let Some((id, payload)) = row else {
                return Ok(None);
            };
            tx.execute(
                "UPDATE requests SET status = 'taken' WHERE id = ?1 AND status = 'pending'",
                [id],
            )?;
            tx.commit()?;
            Ok(Some(RequestRow {
                id,
                payload,
                status: RequestStatus::Taken,
                result: None,
            }))
        })
    }

    pub fn answer_request(&self, id: i64, ok: bool, result: &str) -> Result<()> {
        let at = now();
        let status = if ok { "done" } else { "failed" };
        self.call(|c| {
            c.execute(
                "UPDATE requests SET status = ?2, result = ?3, answered_at = ?4 WHERE id = ?1",
                params![id, status, result, at],
            )
        })?;
        Ok(())
    }

    pub fn request(&self, id: i64) -> Result<Option<RequestRow>> {
        self.call(|c| {
            c.query_row(
                "SELECT id, payload, status, result FROM requests WHERE id = ?1",
                [id],
                |r| {
                    let status: String = r.get(2)?;
                    Ok(RequestRow {
                        id: r.get(0)?,
                        payload: r.get(1)?,
                        status: RequestStatus::parse(&status).unwrap_or(RequestStatus::Failed),
                        result: r.get(3)?,
                    })
                },
            )
            .optional()
        })
    }

    /// Requests a crashed engine had taken but not answered: they may have half-run, so they
    /// are answered as failed rather than run again. Returns how many.
    pub fn fail_taken_requests(&self, result: &str) -> Result<usize> {
        let at = now();
        self.call(|c| {
            c.execute(
                "UPDATE requests SET status = 'failed', result = ?1, answered_at = ?2
                 WHERE status = 'taken'",
                params![result, at],
            )
        })
    }

    /// A request whose asker stopped waiting: withdraw it, unless it was already taken.
    pub fn withdraw_request(&self, id: i64, result: &str) -> Result<bool> {
        let at = now();
        let changed = self.call(|c| {
            c.execute(
                "UPDATE requests SET status = 'failed', result = ?2, answered_at = ?3
                 WHERE id = ?1 AND status = 'pending'",
                params![id, result, at],
            )
        })?;
        Ok(changed == 1)
    }
}
