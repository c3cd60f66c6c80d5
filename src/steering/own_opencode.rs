//! A person's own opencode sessions, watched like their own Claude Code sessions (opt-in:
//! `watch_own_sessions`). opencode keeps its sessions in a SQLite database
//! (`$XDG_DATA_HOME/opencode/opencode.db`, verified with 1.18): Healer opens it read-only,
//! reads the parts of each session that changed lately, runs the free loop detector over them
//! and tells the person once when one goes in circles. It never writes there. Sessions Healer
//! runs keep their own database in Healer's data folder, so they are never counted here.

use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, TimeZone, Utc};
use notify::RecursiveMode;
use notify_debouncer_full::{new_debouncer, DebounceEventResult};
use rusqlite::{Connection, OpenFlags};
use serde_json::Value;
use tokio::sync::mpsc;

use super::own::{LiveSession, OwnWatch, SessionOrigin, Told};
use crate::error::{Error, Result};
use crate::events::Event;
use crate::looping;
use crate::notification::{NewNotification, NotificationKind};
use crate::services::Services;
use crate::session::{AgentKind, SessionStep, StepKind, StepSource};

/// Writes closer together than this are one change.
const DEBOUNCE: Duration = Duration::from_millis(500);
/// The most parts of one session read (its newest: where the session is now).
const MAX_PARTS: u32 = 2_000;
/// The most of one tool's output kept for the detector.
const MAX_OUTPUT: usize = 16 * 1024;
/// How long the database may be busy (opencode writing) before a look gives up.
const BUSY: Duration = Duration::from_millis(500);

/// Where opencode keeps a person's sessions.
pub fn opencode_db() -> Option<PathBuf> {
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|home| PathBuf::from(home).join(".local").join("share"))
        })?;
    Some(data.join("opencode").join("opencode.db"))
}

fn open(db: &Path) -> Option<Connection> {
    if !db.is_file() {
        return None;
    }
    let conn = Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .ok()?;
    conn.busy_timeout(BUSY).ok()?;
    Some(conn)
}

/// The person's opencode sessions in `db` updated within `live_for` of `now`, with their loop
/// verdicts (sub-sessions an agent started are part of their parent's work and left out).
pub fn person_sessions(db: &Path, now: DateTime<Utc>, live_for: Duration) -> Vec<LiveSession> {
    sessions(db, now, live_for)
        .into_iter()
        .map(|(_, session)| session)
        .collect()
}

/// [`person_sessions`] with opencode's id of each.
fn sessions(db: &Path, now: DateTime<Utc>, live_for: Duration) -> Vec<(String, LiveSession)> {
    let Some(conn) = open(db) else {
        return Vec::new();
    };
    let since =
        now.timestamp_millis() - i64::try_from(live_for.as_millis()).unwrap_or(i64::MAX / 2);
    recent(&conn, since)
        .into_iter()
        .filter_map(|(id, directory, updated)| {
            session(&conn, &id, directory, updated).map(|s| (id, s))
        })
        .collect()
}

/// (id, folder, last update in ms) of the top-level sessions updated since `since_ms`.
fn recent(conn: &Connection, since_ms: i64) -> Vec<(String, String, i64)> {
    let read = || -> rusqlite::Result<Vec<(String, String, i64)>> {
        let mut stmt = conn.prepare(
            "SELECT id, directory, time_updated FROM session
             WHERE parent_id IS NULL AND time_updated >= ?1 ORDER BY time_updated DESC LIMIT 50",
        )?;
        let rows = stmt
            .query_map([since_ms], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    };
    read().unwrap_or_default()
}

fn session(conn: &Connection, id: &str, directory: String, updated: i64) -> Option<LiveSession> {
    let steps = steps_of(conn, id).ok()?;
    let verdict = looping::check(&steps);
    let at = Utc.timestamp_millis_opt(updated).single()?;
    Some(LiveSession {
        origin: SessionOrigin::Person,
        session_id: None,
        project_id: None,
        task_id: None,
        title: directory,
        agent: AgentKind::OpenCode,
        last_activity_at: Some(at.to_rfc3339_opts(SecondsFormat::Millis, true)),
        loop_rule: verdict.rule,
        loop_message: verdict.message,
    })
}

/// The session's newest parts, oldest first, as steps.
fn steps_of(conn: &Connection, session_id: &str) -> rusqlite::Result<Vec<SessionStep>> {
    let mut stmt = conn.prepare(
        "SELECT p.data, json_extract(m.data, '$.role') FROM part p
         JOIN message m ON m.id = p.message_id
         WHERE p.session_id = ?1 ORDER BY p.id DESC LIMIT ?2",
    )?;
    let mut rows = stmt
        .query_map(rusqlite::params![session_id, MAX_PARTS], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    rows.reverse();
    Ok(rows
        .into_iter()
        .filter_map(|(data, role)| {
            let part = serde_json::from_str::<Value>(&data).ok()?;
            Some(part_steps(&part, role.as_deref() == Some("user")))
        })
        .flatten()
        .collect())
}

/// One stored part as steps: words, or a tool's call and (once it ran) its result.
fn part_steps(part: &Value, from_person: bool) -> Vec<SessionStep> {
    let at = crate::agent::now();
    let text = |source, text: String| SessionStep {
        at: at.clone(),
        source,
        kind: StepKind::Text,
        text,
        tool: None,
        arguments: None,
        call_id: None,
        is_error: false,
        model: None,
        usage: None,
    };
    match part["type"].as_str() {
        Some("text") => {
            let source = if from_person {
                StepSource::User
            } else {
                StepSource::Agent
            };
            vec![text(
                source,
                part["text"].as_str().unwrap_or_default().to_string(),
            )]
        }
        Some("tool") => {
            // The same part opencode streams while it runs: read the same way.
            let (call, mut result) = crate::agent::opencode::tool_steps(part);
            if !matches!(
                part["state"]["status"].as_str(),
                Some("completed" | "error")
            ) {
                return vec![call];
            }
            if let Some((cut, _)) = result.text.char_indices().nth(MAX_OUTPUT) {
                result.text.truncate(cut);
            }
            vec![call, result]
        }
        _ => Vec::new(),
    }
}

/// Watch the folder of `db`: when opencode writes, the sessions it changed in the last
/// minutes are checked, and a loop is told to the person once per session.
pub(crate) fn watch(services: std::sync::Arc<Services>, db: &Path, told: Told) -> Result<OwnWatch> {
    let folder = db
        .parent()
        .ok_or_else(|| Error::Internal(format!("{} has no folder", db.display())))?
        .to_path_buf();
    std::fs::create_dir_all(&folder)
        .map_err(|e| Error::io(format!("cannot create {}", folder.display()), e))?;
    let (tx, mut rx) = mpsc::unbounded_channel::<()>();
    let mut debouncer = new_debouncer(DEBOUNCE, None, move |result: DebounceEventResult| {
        if result.is_ok_and(|events| !events.is_empty()) {
            let _ = tx.send(());
        }
    })
    .map_err(|e| Error::Internal(format!("cannot watch {}: {e}", folder.display())))?;
    debouncer
        .watch(&folder, RecursiveMode::NonRecursive)
        .map_err(|e| Error::Internal(format!("cannot watch {}: {e}", folder.display())))?;
    let db = db.to_path_buf();
    let task = tokio::spawn(async move {
        while rx.recv().await.is_some() {
            if let Err(e) = changed(&services, &db, &told) {
                tracing::debug!("your opencode sessions were not checked: {e}");
            }
        }
    });
    Ok(OwnWatch::new(debouncer, task))
}

/// How far back a change is looked for: sessions opencode wrote to in these minutes.
const CHANGED_WITHIN: Duration = Duration::from_secs(10 * 60);

fn changed(services: &Services, db: &Path, told: &Told) -> Result<()> {
    for (id, session) in sessions(db, Utc::now(), CHANGED_WITHIN) {
        let Some(rule) = session.loop_rule else {
            continue;
        };
        // One notice per session.
        if !told.first_time(&db.join(&id)) {
            continue;
        }
        tracing::info!(folder = %session.title, rule = rule.as_str(), "a person's own opencode session is looping");
        let notification = services.store.insert_notification(&NewNotification::new(
            NotificationKind::Info,
            "One of your opencode sessions is going in circles".to_string(),
            format!(
                "In {}: {}. {}",
                session.title,
                rule.describe(),
                session.loop_message.unwrap_or_default()
            ),
        ))?;
        services
            .bus
            .emit(Event::NotificationCreated { notification })?;
    }
    Ok(())
}
