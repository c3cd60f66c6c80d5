//! Repair holds: after a repair gave up, the workflow needs the person, and failures with the
//! same error must stop costing money. A hold records which error waits and on which
//! notification; each further failure is counted there instead of starting a repair. The
//! person's act (a new major version, "Try auto-fix again", resuming) lifts it.

use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};

use super::{now, Store};
use crate::error::Result;
use crate::notification::Notification;

/// What a held workflow waits on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct RepairHold {
    pub workflow_id: i64,
    /// The error whose repair gave up.
    pub signature: String,
    /// The notification that asked the person (and counts the failures since).
    pub notification_id: Option<i64>,
    pub since: String,
}

impl Store {
    /// Hold repairs of `signature` for a workflow until the person acts.
    pub fn hold_repairs(
        &self,
        workflow_id: i64,
        signature: &str,
        notification_id: Option<i64>,
    ) -> Result<()> {
        let at = now();
        self.call(|c| {
            c.execute(
                "INSERT INTO repair_holds (workflow_id, signature, notification_id, since)
                 VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (workflow_id) DO UPDATE SET signature = excluded.signature,
                     notification_id = excluded.notification_id, since = excluded.since",
                params![workflow_id, signature, notification_id, at],
            )
        })?;
        Ok(())
    }

    pub fn repair_hold(&self, workflow_id: i64) -> Result<Option<RepairHold>> {
        self.call(|c| {
            c.query_row(
                "SELECT workflow_id, signature, notification_id, since FROM repair_holds
                 WHERE workflow_id = ?1",
                [workflow_id],
                |r| {
                    Ok(RepairHold {
                        workflow_id: r.get(0)?,
                        signature: r.get(1)?,
                        notification_id: r.get(2)?,
                        since: r.get(3)?,
                    })
                },
            )
            .optional()
        })
    }

    /// Lift a workflow's hold; whether there was one.
    pub fn release_repairs(&self, workflow_id: i64) -> Result<bool> {
        let n = self.call(|c| {
            c.execute(
                "DELETE FROM repair_holds WHERE workflow_id = ?1",
                [workflow_id],
            )
        })?;
        Ok(n > 0)
    }

    /// Another failure while held: counted on the hold's notification, which is returned. A
    /// dismissed one comes back unread: the workflow still waits for the person, and fails
    /// meanwhile.
    pub fn count_held_failure(&self, notification_id: i64) -> Result<Notification> {
        let at = now();
        self.call(|c| {
            c.execute(
                "UPDATE notifications SET repeats = repeats + 1, repeated_at = ?2,
                     read_at = CASE WHEN dismissed_at IS NULL THEN read_at END,
                     dismissed_at = NULL
                 WHERE id = ?1",
                params![notification_id, at],
            )
        })?;
        self.notification(notification_id)
    }
}
