use rusqlite::{params, OptionalExtension, Row};

use super::{now, Store};
use crate::error::{Error, Result};
use crate::notification::{
    NewNotification, Notification, NotificationAction, NotificationKind, NotificationList,
};
use crate::workflow::{Author, Version};

/// How many notifications the centre shows.
const LIST_LIMIT: u32 = 200;

/// An alert about a workflow is resolved once the workflow ran green after it was raised, and
/// after the last time it happened again: its cause is gone, so its buttons (Re-plan, Open
/// settings, Try auto-fix again) would only mislead. A failure counted on it since a green run
/// brings them back.
const RESOLVED: &str = "(n.kind NOT IN ('info', 'repaired') AND n.workflow_id IS NOT NULL
     AND EXISTS (SELECT 1 FROM runs r WHERE r.workflow_id = n.workflow_id
                 AND r.status = 'succeeded'
                 AND r.finished_at > coalesce(n.repeated_at, n.created_at)))";

impl Store {
    pub fn insert_notification(&self, new: &NewNotification) -> Result<Notification> {
        // A known secret in what the person is told is not kept.
        let mut redacted = new.clone();
        redacted.title = crate::secrets::redact_owned(redacted.title);
        redacted.body = crate::secrets::redact_owned(redacted.body);
        let new = &redacted;
        let created_at = now();
        let actions = serde_json::to_string(&new.actions)
            .map_err(|e| Error::Internal(format!("actions do not serialise: {e}")))?;
        let id = self.call(|c| {
            c.execute(
                "INSERT INTO notifications (kind, title, body, heal_id, created_at, workflow_id,
                     run_id, task_id, actions, project_id, project_task, checkpoint_id)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                params![
                    new.kind.as_str(),
                    new.title,
                    new.body,
                    new.heal_id,
                    created_at,
                    new.workflow_id,
                    new.run_id,
                    new.task_id,
                    actions,
                    new.project_id,
                    new.project_task,
                    new.checkpoint_id,
                ],
            )?;
            Ok(c.last_insert_rowid())
        })?;
        let project_name = match new.project_id {
            Some(id) => self.project(id).ok().map(|p| p.name),
            None => None,
        };
        Ok(Notification {
            id,
            kind: new.kind,
            title: new.title.clone(),
            body: new.body.clone(),
            created_at,
            read: false,
            heal_id: new.heal_id,
            workflow_id: new.workflow_id,
            run_id: new.run_id,
            task_id: new.task_id,
            actions: new.actions.clone(),
            repeats: 0,
            repeated_at: None,
            resolved: false,
            project_id: new.project_id,
            project_name,
            project_task: new.project_task.clone(),
            checkpoint_id: new.checkpoint_id,
        })
    }

    pub fn notification(&self, id: i64) -> Result<Notification> {
        use rusqlite::OptionalExtension;
        self.call(|c| {
            c.query_row(
                &format!(
                    "SELECT n.id, n.kind, n.title, n.body, n.created_at, n.read_at IS NOT NULL,
                            n.heal_id, n.workflow_id, n.run_id, n.task_id, n.actions, {RESOLVED},
                            n.repeats, n.repeated_at, {PROJECT}
                     FROM notifications n WHERE n.id = ?1"
                ),
                [id],
                notification_from_row,
            )
            .optional()
        })?
        .ok_or_else(|| Error::NotFound {
            what: format!("notification {id}"),
        })
    }

    pub fn list_notifications(&self) -> Result<NotificationList> {
        self.call(|c| {
            let sql = format!(
                "SELECT n.id, n.kind, n.title, n.body, n.created_at, n.read_at IS NOT NULL,
                        n.heal_id, n.workflow_id, n.run_id, n.task_id, n.actions, {RESOLVED},
                        n.repeats, n.repeated_at, {PROJECT}
                 FROM notifications n WHERE n.dismissed_at IS NULL
                 ORDER BY n.id DESC LIMIT ?1"
            );
            let mut stmt = c.prepare_cached(&sql)?;
            let items = stmt
                .query_map([LIST_LIMIT], notification_from_row)?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            let unread: u32 = c.query_row(
                "SELECT count(*) FROM notifications WHERE read_at IS NULL AND dismissed_at IS NULL",
                [],
                |r| r.get(0),
            )?;
            Ok(NotificationList { items, unread })
        })
    }

    /// Mark the given notifications read; an empty list marks all of them.
    pub fn mark_notifications_read(&self, ids: &[i64]) -> Result<()> {
        let at = now();
        self.call(|c| {
            let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            if ids.is_empty() {
                tx.execute(
                    "UPDATE notifications SET read_at = ?1 WHERE read_at IS NULL",
                    [&at],
                )?;
            } else {
                let mut stmt = tx.prepare(
                    "UPDATE notifications SET read_at = ?1 WHERE id = ?2 AND read_at IS NULL",
                )?;
                for id in ids {
                    stmt.execute(params![at, id])?;
                }
            }
            tx.commit()
        })
    }

    /// A failure of `workflow_id` was left unrepaired for want of a model, and nothing has
    /// run green since (its notice is open).
    pub fn waits_for_a_model(&self, workflow_id: i64) -> Result<bool> {
        self.call(|c| {
            c.query_row(
                &format!(
                    "SELECT EXISTS (SELECT 1 FROM notifications n WHERE n.kind = 'no_model'
                       AND n.workflow_id = ?1 AND n.dismissed_at IS NULL AND NOT {RESOLVED})"
                ),
                [workflow_id],
                |r| r.get(0),
            )
        })
    }

    /// Put one notification away for good (it is read too).
    pub fn dismiss_notification(&self, id: i64) -> Result<()> {
        let at = now();
        let changed = self.call(|c| {
            c.execute(
                "UPDATE notifications SET dismissed_at = ?1, read_at = coalesce(read_at, ?1)
                 WHERE id = ?2 AND dismissed_at IS NULL",
                params![at, id],
            )
        })?;
        if changed == 0 {
            return Err(Error::NotFound {
                what: format!("notification {id}"),
            });
        }
        Ok(())
    }

    /// When run `run_id` is the first green run of a version an auto-fix made: that version
    /// and the task that made it (the news a person wants: the repair held).
    pub fn first_green_of_fix(&self, run_id: i64) -> Result<Option<(Version, i64)>> {
        let row: Option<(u32, u32, String, i64)> = self.call(|c| {
            c.query_row(
                "SELECT s.major, s.minor, s.author,
                        (SELECT count(*) FROM runs o WHERE o.script_id = r.script_id
                          AND o.status = 'succeeded')
                 FROM runs r JOIN scripts s ON s.id = r.script_id
                 WHERE r.id = ?1 AND r.status = 'succeeded'",
                [run_id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .optional()
        })?;
        Ok(row.and_then(|(major, minor, author, greens)| {
            match (Author::from_db(&author), greens) {
                (Some(Author::Task { task_id }), 1) => Some((Version { major, minor }, task_id)),
                _ => None,
            }
        }))
    }
}

fn notification_from_row(r: &Row<'_>) -> rusqlite::Result<Notification> {
    let kind: String = r.get(1)?;
    let actions: String = r.get(10)?;
    Ok(Notification {
        id: r.get(0)?,
        kind: NotificationKind::parse(&kind).ok_or_else(|| unknown_value(1, &kind))?,
        title: r.get(2)?,
        body: r.get(3)?,
        created_at: r.get(4)?,
        read: r.get(5)?,
        heal_id: r.get(6)?,
        workflow_id: r.get(7)?,
        run_id: r.get(8)?,
        task_id: r.get(9)?,
        actions: serde_json::from_str(&actions).map_err(|_| unknown_value(10, &actions))?,
        resolved: r.get(11)?,
        repeats: r.get(12)?,
        repeated_at: r.get(13)?,
        project_id: r.get(14)?,
        project_name: r.get(15)?,
        project_task: r.get(16)?,
        checkpoint_id: r.get(17)?,
    })
    .map(|mut n| {
        // A question already answered offers no button to answer it.
        let answered: Option<bool> = r.get(18).ok().flatten();
        if answered != Some(false) {
            n.actions
                .retain(|a| *a != NotificationAction::AnswerQuestion);
        }
        n
    })
}

/// The project's columns of a notification row.
const PROJECT: &str = "n.project_id, (SELECT p.name FROM projects p WHERE p.id = n.project_id), \
     n.project_task, n.checkpoint_id, \
     (SELECT c.decided_at IS NOT NULL FROM checkpoints c WHERE c.id = n.checkpoint_id)";

/// A column holds a value this build does not know.
pub(super) fn unknown_value(column: usize, value: &str) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(
        column,
        rusqlite::types::Type::Text,
        Box::new(Error::Internal(format!("unknown value {value:?}"))),
    )
}
