use rusqlite::{params, OptionalExtension};

use super::{now, Store};
use crate::error::{Error, Result};
use crate::events::{Event, EventRecord};

impl Store {
    pub fn insert_event(&self, event: &Event) -> Result<EventRecord> {
        let raw = serde_json::to_string(event)
            .map_err(|e| Error::Internal(format!("event does not serialise: {e}")))?;
        // A known secret in an event's text is neither stored nor broadcast.
        let payload = crate::secrets::redact_owned(raw.clone());
        let event = if payload == raw {
            event.clone()
        } else {
            serde_json::from_str(&payload).unwrap_or_else(|_| event.clone())
        };
        let at = now();
        let id = self.call(|c| {
            c.execute(
                "INSERT INTO events (at, kind, payload) VALUES (?1, ?2, ?3)",
                params![at, event.kind(), payload],
            )?;
            Ok(c.last_insert_rowid())
        })?;
        Ok(EventRecord { id, at, event })
    }

    /// The newest events first, older than `before` when given.
    pub fn list_events(&self, before: Option<i64>, limit: u32) -> Result<Vec<EventRecord>> {
        let rows: Vec<(i64, String, String)> = self.call(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT id, at, payload FROM events WHERE id < ?1 ORDER BY id DESC LIMIT ?2",
            )?;
            let rows = stmt
                .query_map(params![before.unwrap_or(i64::MAX), limit], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })?;
        // An event this build does not know (written by a newer build) is left out, not fatal.
        Ok(rows
            .into_iter()
            .filter_map(|(id, at, payload)| {
                serde_json::from_str(&payload)
                    .ok()
                    .map(|event| EventRecord { id, at, event })
            })
            .collect())
    }

    pub fn last_event_id(&self) -> Result<Option<i64>> {
        self.call(|c| {
            c.query_row("SELECT max(id) FROM events", [], |r| r.get(0))
                .optional()
                .map(Option::flatten)
        })
    }
}
