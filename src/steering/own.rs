//! Sessions a person runs themselves (opt-in: `watch_own_sessions`): Healer watches Claude
//! Code's transcripts under `~/.claude/projects` (`$CLAUDE_CONFIG_DIR/projects` when set) with a
//! debounced watcher, runs the free loop detector over a transcript that changed, and tells the
//! person once when one of their sessions goes in circles. It only reads: it never writes into
//! a session it did not start. The Sessions page lists these beside Healer's own.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use chrono::{DateTime, SecondsFormat, Utc};
use notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{new_debouncer, DebounceEventResult, Debouncer, RecommendedCache};
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use crate::error::{Error, Result};
use crate::events::Event;
use crate::looping::{self, LoopRule};
use crate::notification::{NewNotification, NotificationKind};
use crate::services::Services;
use crate::session::AgentKind;

/// Writes closer together than this are one change (Claude Code appends line by line).
const DEBOUNCE: Duration = Duration::from_millis(500);
/// The most of one transcript read (its end, where the session is now, matters most).
const MAX_TRANSCRIPT_BYTES: u64 = 32 * 1024 * 1024;

/// Who started a live session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum SessionOrigin {
    /// Healer, on a project's task.
    Healer,
    /// The person, on their own.
    Person,
}

/// A session on the Sessions page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct LiveSession {
    pub origin: SessionOrigin,
    /// Healer's session id (its own sessions only).
    pub session_id: Option<i64>,
    pub project_id: Option<i64>,
    pub task_id: Option<String>,
    /// The task's title, or the folder a person's session works in.
    pub title: String,
    pub agent: AgentKind,
    /// The last time it produced something (RFC 3339), if it did.
    pub last_activity_at: Option<String>,
    /// The loop detector's verdict: the rule that fired, if any.
    pub loop_rule: Option<LoopRule>,
    /// What the detector would tell it (a person's sessions are never told).
    pub loop_message: Option<String>,
}

/// Where Claude Code keeps a person's transcripts.
pub fn claude_projects_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join("projects"));
    }
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|home| PathBuf::from(home).join(".claude").join("projects"))
}

/// Verdicts already read, by transcript, with the size and time they were read at: the
/// Sessions page asks every few seconds, and a transcript that did not change is not read again.
#[derive(Default)]
pub struct VerdictCache(Mutex<HashMap<PathBuf, ReadVerdict>>);

/// When a transcript was read (its modification time and size) and what it said.
type ReadVerdict = (SystemTime, u64, Option<LiveSession>);

impl VerdictCache {
    fn get_or_read(&self, path: &Path, modified: SystemTime, len: u64) -> Option<LiveSession> {
        let mut cache = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((at, size, seen)) = cache.get(path) {
            if *at == modified && *size == len {
                return seen.clone();
            }
        }
        let seen = read_session(path, modified.into());
        cache.insert(path.to_path_buf(), (modified, len, seen.clone()));
        seen
    }
}

/// The person's sessions under `root` that wrote within `live_for` of `now`, with their loop
/// verdicts. Transcripts of sessions Healer started are left out (`healer_ids`).
pub fn person_sessions(
    root: &Path,
    now: DateTime<Utc>,
    live_for: Duration,
    healer_ids: &HashSet<String>,
    cache: &VerdictCache,
) -> Vec<LiveSession> {
    let mut found = Vec::new();
    let Ok(folders) = std::fs::read_dir(root) else {
        return found;
    };
    for folder in folders.flatten() {
        let Ok(files) = std::fs::read_dir(folder.path()) else {
            continue;
        };
        for file in files.flatten() {
            let path = file.path();
            if path.extension().and_then(|e| e.to_str()) != Some("jsonl") {
                continue;
            }
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
            if healer_ids.contains(stem) {
                continue;
            }
            let Some(meta) = file.metadata().ok() else {
                continue;
            };
            let Ok(modified) = meta.modified() else {
                continue;
            };
            let at: DateTime<Utc> = modified.into();
            let age = now.signed_duration_since(at);
            if age > chrono::Duration::from_std(live_for).unwrap_or(chrono::Duration::MAX) {
                continue;
            }
            if let Some(session) = cache.get_or_read(&path, modified, meta.len()) {
                found.push(session);
            }
        }
    }
    found.sort_by(|a, b| b.last_activity_at.cmp(&a.last_activity_at));
    found
}

/// One transcript as a live session with its verdict; `None` when it is not one.
fn read_session(path: &Path, at: DateTime<Utc>) -> Option<LiveSession> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_TRANSCRIPT_BYTES)
        .read_to_string(&mut text)
        .ok()?;
    let transcript = crate::agent::transcript::read_text(&text).ok()?;
    let verdict = looping::check(&transcript.steps);
    let folder = text
        .lines()
        .take(50)
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find_map(|v| v["cwd"].as_str().map(str::to_string))
        .unwrap_or_else(|| {
            path.parent()
                .and_then(|p| p.file_name())
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
    Some(LiveSession {
        origin: SessionOrigin::Person,
        session_id: None,
        project_id: None,
        task_id: None,
        title: folder,
        agent: AgentKind::ClaudeCode,
        last_activity_at: Some(at.to_rfc3339_opts(SecondsFormat::Millis, true)),
        loop_rule: verdict.rule,
        loop_message: verdict.message,
    })
}

/// The watcher on the person's transcripts; dropping it stops watching.
pub struct OwnWatch {
    _debouncer: Debouncer<RecommendedWatcher, RecommendedCache>,
    task: tokio::task::JoinHandle<()>,
}

impl OwnWatch {
    pub(crate) fn new(
        debouncer: Debouncer<RecommendedWatcher, RecommendedCache>,
        task: tokio::task::JoinHandle<()>,
    ) -> OwnWatch {
        OwnWatch {
            _debouncer: debouncer,
            task,
        }
    }
}

impl Drop for OwnWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Transcripts the person was already told about (one notification per session).
#[derive(Default, Clone)]
pub struct Told(Arc<Mutex<HashSet<PathBuf>>>);

impl Told {
    /// Whether `session` was not told about before; from now on it has been.
    pub(crate) fn first_time(&self, session: &Path) -> bool {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(session.to_path_buf())
    }
}

/// Watch `root` (created when missing): a transcript that changed is checked, and a loop is
/// told to the person once per session.
pub(crate) fn watch(services: Arc<Services>, root: &Path, told: Told) -> Result<OwnWatch> {
    std::fs::create_dir_all(root)
        .map_err(|e| Error::io(format!("cannot create {}", root.display()), e))?;
    let (tx, mut rx) = mpsc::unbounded_channel::<PathBuf>();
    let mut debouncer = new_debouncer(DEBOUNCE, None, move |result: DebounceEventResult| {
        let Ok(events) = result else { return };
        for event in events {
            for path in &event.paths {
                if path.extension().and_then(|e| e.to_str()) == Some("jsonl") {
                    let _ = tx.send(path.clone());
                } else if path.is_dir() {
                    // A new project folder: a transcript written before its watch was in
                    // place raised no event of its own.
                    for file in std::fs::read_dir(path).into_iter().flatten().flatten() {
                        let file = file.path();
                        if file.extension().and_then(|e| e.to_str()) == Some("jsonl") {
                            let _ = tx.send(file);
                        }
                    }
                }
            }
        }
    })
    .map_err(|e| Error::Internal(format!("cannot watch {}: {e}", root.display())))?;
    debouncer
        .watch(root, RecursiveMode::Recursive)
        .map_err(|e| Error::Internal(format!("cannot watch {}: {e}", root.display())))?;
    let task = tokio::spawn(async move {
        while let Some(path) = rx.recv().await {
            if let Err(e) = changed(&services, &path, &told) {
                tracing::debug!(path = %path.display(), "a transcript was not checked: {e}");
            }
        }
    });
    Ok(OwnWatch {
        _debouncer: debouncer,
        task,
    })
}

fn changed(services: &Services, path: &Path, told: &Told) -> Result<()> {
    if told
        .0
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .contains(path)
    {
        return Ok(());
    }
    let healer_ids = healer_agent_ids(services)?;
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    if healer_ids.contains(stem) {
        return Ok(());
    }
    let at: DateTime<Utc> = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .unwrap_or_else(|_| SystemTime::now())
        .into();
    let Some(session) = read_session(path, at) else {
        return Ok(());
    };
    let Some(rule) = session.loop_rule else {
        return Ok(());
    };
    told.0
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(path.to_path_buf());
    tracing::info!(path = %path.display(), rule = rule.as_str(), "a person's own session is looping");
    let notification = services.store.insert_notification(&NewNotification::new(
        NotificationKind::Info,
        "One of your Claude Code sessions is going in circles".to_string(),
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
    Ok(())
}

/// The Claude Code session ids of every session Healer started (their transcripts may sit in
/// the same folder when Claude Code runs on the person's own login).
pub(crate) fn healer_agent_ids(services: &Services) -> Result<HashSet<String>> {
    Ok(services.store.agent_session_ids()?.into_iter().collect())
}
