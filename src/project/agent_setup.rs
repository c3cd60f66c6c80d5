//! What an agent needs from the runner besides its prompt (docs/agents.md): the marks every
//! process of the session carries (Stop, the sweep after a session and crash recovery find
//! them by these), the program the project names, the tools Claude Code may use, a folder of
//! Healer's per project for the agent's own settings, and — when the project chose a model
//! provider configured in Healer — that provider's address and key, which reach only the
//! agent's process.

use std::path::{Path, PathBuf};

use crate::agent::process::SESSION_VAR;
use crate::agent::{agent_name, ModelEndpoint};
use crate::llm::{Llm, ProviderKind};
use crate::session::AgentKind;
use crate::store::ProjectSettings;

/// The variable naming the Healer (a hash of its data folder) a process belongs to: two
/// Healers on one machine never end each other's processes.
pub const INSTANCE_VAR: &str = "HEALER_INSTANCE";

/// The marks of session `session_id`: every process of it (the agent, its tools, the init
/// script and the checks) carries both in its environment.
pub fn marks(instance: &str, session_id: i64) -> Vec<(String, String)> {
    vec![
        (INSTANCE_VAR.to_string(), instance.to_string()),
        (SESSION_VAR.to_string(), session_id.to_string()),
    ]
}

pub use crate::agent::AGENT_HOME_VAR;

/// Where an external agent keeps its own settings for a project, in Healer's data folder
/// (never under /tmp: Codex refuses to keep its sandbox helper there).
pub fn agent_home(data_dir: &Path, project_id: i64, kind: AgentKind) -> PathBuf {
    data_dir
        .join("agents")
        .join(project_id.to_string())
        .join(kind.as_str())
}

/// The agent's environment from the runner: the marks, and the folder of its own settings.
/// Claude Code keeps the person's `~/.claude` on its own login, and gets a folder of Healer's
/// when Healer gives it a provider: the person's settings may name another endpoint or key,
/// which would win over Healer's.
pub fn agent_env(
    settings: &ProjectSettings,
    home: &Path,
    marks: &[(String, String)],
) -> Vec<(String, String)> {
    let mut env = marks.to_vec();
    match settings.agent {
        AgentKind::Codex => env.push(("CODEX_HOME".to_string(), home.display().to_string())),
        // Their settings, sessions and caches live in the folder Healer keeps for them
        // (the adapters point XDG_* / GEMINI_CLI_HOME there).
        AgentKind::OpenCode | AgentKind::GeminiCli => {
            env.push((AGENT_HOME_VAR.to_string(), home.display().to_string()));
        }
        AgentKind::ClaudeCode if settings.agent_provider.is_some() => {
            env.push(("CLAUDE_CONFIG_DIR".to_string(), home.display().to_string()));
        }
        _ => {}
    }
    env
}

/// The tools the agent may use on its own say-so. While it must ask, none: each call is let
/// through by Healer's hook alone, so a hook that fails lets nothing through. Gemini CLI, which
/// cannot ask, gets what the project's choice lets it do.
pub fn allowed_tools(settings: &ProjectSettings) -> Vec<String> {
    match (settings.agent, settings.approvals.preset) {
        (AgentKind::GeminiCli, preset) => {
            crate::agent::gemini::allowed_tools(preset, &super::followed::runs_freely(settings))
        }
        (_, crate::approval::Preset::NeverAsk) => settings.allowed_tools.clone(),
        _ => Vec::new(),
    }
}

/// The provider the project chose for its external agent, with its key; `Ok(None)` on the
/// agent's own login. `Err` is a sentence for the task: why the agent cannot start.
pub async fn endpoint(
    llm: &Llm,
    settings: &ProjectSettings,
) -> std::result::Result<Option<ModelEndpoint>, String> {
    let Some(name) = settings
        .agent_provider
        .as_deref()
        .filter(|_| settings.agent != AgentKind::Builtin)
    else {
        return Ok(None);
    };
    let agent = agent_name(settings.agent);
    let (provider, key) = llm.provider_with_key(name).await.map_err(|e| {
        format!("{agent} was to use the model provider \u{201c}{name}\u{201d}, but {e}")
    })?;
    if let Some(why) = wire_mismatch(settings.agent, provider.kind) {
        return Err(format!("{agent} cannot use \u{201c}{name}\u{201d}: {why}"));
    }
    let base = provider.base_url.trim_end_matches('/').to_string();
    let base_url = match provider.kind {
        // Healer's Ollama address is the server's; its OpenAI-style API is under /v1.
        ProviderKind::Ollama => format!("{base}/v1"),
        _ => base,
    };
    Ok(Some(ModelEndpoint {
        provider: provider.name,
        base_url,
        key,
        kind: provider.kind,
        prices: provider.prices,
    }))
}

/// Why `agent` cannot talk to a provider of `kind`, if it cannot: Claude Code speaks only
/// Anthropic's Messages API, Codex only OpenAI's Responses API.
pub fn wire_mismatch(agent: AgentKind, kind: ProviderKind) -> Option<&'static str> {
    match (agent, kind) {
        (AgentKind::ClaudeCode, ProviderKind::Anthropic) => None,
        (AgentKind::ClaudeCode, _) => {
            Some("Claude Code speaks only Anthropic's API; choose an Anthropic provider")
        }
        (AgentKind::Codex, ProviderKind::Anthropic) => Some(
            "Codex speaks only OpenAI's Responses API; choose an OpenAI-compatible provider \
             or Ollama",
        ),
        (AgentKind::OpenCode, ProviderKind::Anthropic | ProviderKind::Gemini) => Some(
            "opencode is given OpenAI's Chat Completions API by Healer; choose an \
             OpenAI-compatible provider or Ollama",
        ),
        (AgentKind::GeminiCli, ProviderKind::Gemini) => None,
        (AgentKind::GeminiCli, _) => {
            Some("Gemini CLI speaks only Google's Gemini API; choose a Gemini API provider")
        }
        (AgentKind::Codex, ProviderKind::Gemini) => Some(
            "Codex speaks only OpenAI's Responses API; choose an OpenAI-compatible provider \
             or Ollama",
        ),
        _ => None,
    }
}

/// What an agent's folder keeps from one session to the next: only what resuming a session
/// needs (Claude Code's transcripts; Codex's rollouts, and its login). Everything else — the
/// settings files an agent could write to name another endpoint or add a hook, instructions
/// loaded into every prompt, MCP servers — is an agent's writing and is not loaded by a later
/// session.
fn kept_in_home(kind: AgentKind) -> &'static [&'static str] {
    match kind {
        // Its config is rewritten by Healer from a few model keys (see the Codex adapter).
        AgentKind::Codex => &["sessions", "auth.json", "config.toml"],
        // Its sessions' database (for a resume); its config is Healer's, written each session.
        AgentKind::OpenCode => &["data"],
        // Its home (`GEMINI_CLI_HOME`): the adapter keeps only its chats (for a resume) and
        // writes its settings each session (`agent::gemini::HOME_FOLDER`).
        AgentKind::GeminiCli => &["gemini"],
        _ => &["projects"],
    }
}

/// Clear the agent's folder for a new session (see [`kept_in_home`]); links are removed, never
/// followed, and a kept name that is not a real folder (or, for a login, a file or the link
/// Healer made) goes too.
pub fn fresh_home(home: &Path, kind: AgentKind) -> std::io::Result<()> {
    // The folder itself replaced by a link (to the person's own files, say) is never entered.
    if std::fs::symlink_metadata(home).is_ok_and(|m| !m.is_dir()) {
        std::fs::remove_file(home)?;
    }
    std::fs::create_dir_all(home)?;
    for entry in std::fs::read_dir(home)? {
        let entry = entry?;
        let path = entry.path();
        let name = entry.file_name();
        let meta = std::fs::symlink_metadata(&path)?;
        let is_folder = meta.is_dir();
        // The transcripts' folders only as real folders, the files only as real files: a link
        // could lead anywhere, and Codex would read (and Healer write) through it. The login
        // Healer links is linked again for each session (`codex::login::share`).
        let keep = match name.to_str() {
            Some(n) if kept_in_home(kind).contains(&n) => {
                if n.contains('.') {
                    meta.is_file()
                } else {
                    is_folder
                }
            }
            _ => false,
        };
        if keep {
            if is_folder && kind == AgentKind::ClaudeCode {
                only_transcripts(&path)?;
            }
            continue;
        }
        if is_folder {
            std::fs::remove_dir_all(&path)?;
        } else {
            std::fs::remove_file(&path)?;
        }
    }
    Ok(())
}

/// Of Claude Code's `projects/` keep the transcripts (and their sessions' own folders), not
/// what a later session would load: a project's `memory/` (read into every session's prompt),
/// notes, and any link.
fn only_transcripts(projects: &Path) -> std::io::Result<()> {
    for project in std::fs::read_dir(projects)? {
        let project = project?.path();
        let meta = std::fs::symlink_metadata(&project)?;
        if !meta.is_dir() {
            std::fs::remove_file(&project)?;
            continue;
        }
        for entry in std::fs::read_dir(&project)? {
            let path = entry?.path();
            let meta = std::fs::symlink_metadata(&path)?;
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let transcript = meta.is_file() && name.ends_with(".jsonl");
            let session_folder = meta.is_dir() && name != "memory";
            if transcript || session_folder {
                continue;
            }
            if meta.is_dir() {
                std::fs::remove_dir_all(&path)?;
            } else {
                std::fs::remove_file(&path)?;
            }
        }
    }
    Ok(())
}

/// Replace `key` with `[redacted]` in every file below `home` (links are not followed): an
/// external agent writes what it saw into its own files — a tool's output that printed its
/// environment lands in Claude Code's transcript and in Codex's rollout — and every later
/// command of any agent on this computer could read them there. Run when a session's agent
/// has ended, and before the next one starts (a crash may have left a copy). How many files
/// held it.
pub fn scrub_home(home: &Path, key: &str) -> usize {
    if key.len() < crate::secrets::MIN_SECRET_CHARS {
        return 0;
    }
    // A home only grows (a project's transcripts stay for resume): what was scrubbed already
    // and has not changed since is not read again. The mark lives beside the home, not in it.
    let mark = home.with_extension("scrubbed");
    let since = std::fs::metadata(&mark).and_then(|m| m.modified()).ok();
    let started = std::time::SystemTime::now();
    let scrubbed = scrub_changed(home, key, since);
    if std::fs::create_dir_all(home).is_ok() {
        let marked = std::fs::File::create(&mark).and_then(|f| f.set_modified(started));
        if let Err(e) = marked {
            tracing::warn!("could not mark {} as scrubbed: {e}", home.display());
        }
    }
    scrubbed
}

/// [`scrub_home`] for a folder that does not last (a session's temp folder): every file.
pub fn scrub_folder(dir: &Path, key: &str) -> usize {
    if key.len() < crate::secrets::MIN_SECRET_CHARS {
        return 0;
    }
    scrub_changed(dir, key, None)
}

/// The key out of every file below `dir` changed at or after `since` (all with `None`).
fn scrub_changed(dir: &Path, key: &str, since: Option<std::time::SystemTime>) -> usize {
    let mut files = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(folder) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => todo.push(entry.path()),
                Ok(kind) if kind.is_file() => {
                    let changed = entry.metadata().and_then(|m| m.modified()).ok();
                    if since.is_none_or(|since| changed.is_none_or(|c| c >= since)) {
                        files.push(entry.path());
                    }
                }
                _ => {}
            }
        }
    }
    // Databases first: scrubbing one checkpoints its write-ahead log into it, which leaves
    // the log empty. What a log still holds is SQLite's to rewrite, never ours: its frames
    // are checksummed.
    let (databases, others): (Vec<_>, Vec<_>) = files.into_iter().partition(|f| is_sqlite(f));
    let mut scrubbed = 0;
    let mut count = |path: &Path, done: std::result::Result<bool, String>| match done {
        Ok(true) => scrubbed += 1,
        Ok(false) => {}
        Err(e) => tracing::warn!("could not scrub {}: {e}", path.display()),
    };
    for path in &databases {
        count(path, scrub_database(path, key).map_err(|e| e.to_string()));
    }
    for path in others.iter().filter(|p| !is_sqlite_companion(p)) {
        count(path, scrub_file(path, key).map_err(|e| e.to_string()));
    }
    scrubbed
}

fn is_sqlite(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 16];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok()
        && &head == b"SQLite format 3\0"
}

fn is_sqlite_companion(path: &Path) -> bool {
    let name = path.to_string_lossy();
    ["-wal", "-shm", "-journal"]
        .iter()
        .any(|suffix| name.ends_with(suffix))
}

/// `key` replaced in every text and blob of the SQLite database at `path` (an agent's own,
/// its tables unknown to Healer), with deleted content zeroed and the log checkpointed into
/// the file; whether anything held the key.
fn scrub_database(path: &Path, key: &str) -> std::result::Result<bool, rusqlite::Error> {
    let db = rusqlite::Connection::open(path)?;
    db.pragma_update(None, "secure_delete", "ON")?;
    let tables: Vec<String> = db
        .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
        )?
        .query_map([], |row| row.get(0))?
        .collect::<std::result::Result<_, _>>()?;
    let quote = |name: &str| format!("\"{}\"", name.replace('"', "\"\""));
    let mut changed = 0;
    for table in &tables {
        let columns: Vec<String> = db
            .prepare(&format!("PRAGMA table_info({})", quote(table)))?
            .query_map([], |row| row.get(1))?
            .collect::<std::result::Result<_, _>>()?;
        for column in &columns {
            let (t, c) = (quote(table), quote(column));
            changed += db.execute(
                &format!(
                    "UPDATE {t} SET {c} = CASE typeof({c}) \
                       WHEN 'blob' THEN CAST(replace(CAST({c} AS TEXT), ?1, ?2) AS BLOB) \
                       ELSE replace({c}, ?1, ?2) END \
                     WHERE typeof({c}) IN ('text', 'blob') AND instr({c}, ?1) > 0"
                ),
                [key, crate::secrets::REDACTED],
            )?;
        }
    }
    // Checkpoint even when nothing changed here: the log may hold an older copy.
    db.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    if changed > 0 {
        db.execute_batch("VACUUM")?;
    }
    Ok(changed > 0)
}

/// `key` replaced in `path`, written back atomically; whether it held the key.
fn scrub_file(path: &Path, key: &str) -> std::io::Result<bool> {
    let bytes = std::fs::read(path)?;
    let std::borrow::Cow::Owned(out) = crate::secrets::redact_one(&bytes, key) else {
        return Ok(false);
    };
    let (Some(folder), Some(name)) = (path.parent(), path.file_name()) else {
        return Ok(false);
    };
    let dir = crate::beneath::dir(folder, Path::new(""), false)?;
    dir.replace(name, &out)?;
    Ok(true)
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_fresh_home_keeps_only_the_transcripts_and_never_follows_a_link() {
        let dir = tempfile::tempdir().expect("tmp");
        let home = dir.path().join("claude-code");
        std::fs::create_dir_all(home.join("projects/-w")).expect("dirs");
        std::fs::write(home.join("projects/-w/s.jsonl"), "{}").expect("transcript");
        std::fs::write(home.join("settings.json"), "{\"env\":{}}").expect("planted");
        std::fs::write(home.join("CLAUDE.md"), "obey").expect("planted");
        let outside = dir.path().join("persons");
        std::fs::create_dir_all(&outside).expect("dirs");
        std::fs::write(outside.join("precious"), "mine").expect("file");
        std::os::unix::fs::symlink(&outside, home.join("agents")).expect("link");
        fresh_home(&home, AgentKind::ClaudeCode).expect("fresh");
        let mut left: Vec<String> = std::fs::read_dir(&home)
            .expect("home")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["projects"]);
        assert!(home.join("projects/-w/s.jsonl").exists());
        assert!(outside.join("precious").exists(), "a link was followed");

        // Inside the transcripts' folder: a project's memory (loaded into every session), notes
        // and links go; transcripts and their sessions' folders stay.
        std::fs::create_dir_all(home.join("projects/-w/memory")).expect("dirs");
        std::fs::write(home.join("projects/-w/memory/MEMORY.md"), "obey").expect("planted");
        std::fs::create_dir_all(home.join("projects/-w/s")).expect("a session's folder");
        std::os::unix::fs::symlink(&outside, home.join("projects/-w/x.jsonl")).expect("link");
        std::os::unix::fs::symlink(&outside, home.join("projects/-v")).expect("link");
        fresh_home(&home, AgentKind::ClaudeCode).expect("fresh");
        let mut inside: Vec<String> = std::fs::read_dir(home.join("projects/-w"))
            .expect("project")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        inside.sort();
        assert_eq!(inside, ["s", "s.jsonl"]);
        assert!(!home.join("projects/-v").exists());
        assert!(outside.join("precious").exists(), "a link was followed");

        // Codex: its config and login only as files; a link in their place goes.
        let codex = dir.path().join("codex");
        std::fs::create_dir_all(codex.join("sessions")).expect("dirs");
        std::os::unix::fs::symlink(outside.join("precious"), codex.join("config.toml"))
            .expect("link");
        std::fs::write(codex.join("auth.json"), "{}").expect("own login");
        fresh_home(&codex, AgentKind::Codex).expect("fresh");
        assert!(std::fs::symlink_metadata(codex.join("config.toml")).is_err());
        assert!(codex.join("auth.json").is_file());
        assert_eq!(
            std::fs::read_to_string(outside.join("precious")).expect("untouched"),
            "mine"
        );

        // The whole folder swapped for a link: the link goes, what it led to stays.
        std::fs::remove_dir_all(&home).expect("rm");
        std::os::unix::fs::symlink(&outside, &home).expect("link");
        fresh_home(&home, AgentKind::Codex).expect("fresh");
        assert!(outside.join("precious").exists());
        assert!(std::fs::symlink_metadata(&home).expect("home").is_dir());
    }

    use super::*;

    #[test]
    fn a_key_is_scrubbed_from_every_file_of_an_agent_home_and_nothing_else_changes() {
        let home = tempfile::tempdir().expect("test setup");
        let key = "sk-ant-0123456789abcdef";
        let transcript = home.path().join("projects/-repo/session.jsonl");
        std::fs::create_dir_all(transcript.parent().expect("folder")).expect("test setup");
        std::fs::write(
            &transcript,
            format!("{{\"out\":\"key={key}\"}}\n{{\"env\":\"{key}{key}\"}}\n"),
        )
        .expect("test setup");
        std::fs::write(home.path().join("settings.json"), "{}").expect("test setup");
        assert_eq!(scrub_home(home.path(), key), 1);
        let text = std::fs::read_to_string(&transcript).expect("transcript");
        assert_eq!(
            text,
            "{\"out\":\"key=[redacted]\"}\n{\"env\":\"[redacted][redacted]\"}\n"
        );
        assert_eq!(
            std::fs::read_to_string(home.path().join("settings.json")).expect("settings"),
            "{}"
        );
        assert_eq!(scrub_home(home.path(), key), 0, "nothing left");
        // A file written since the last scrub is read again; the others are not.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(home.path().join("later.jsonl"), format!("key={key}\n"))
            .expect("test setup");
        assert_eq!(scrub_home(home.path(), key), 1);
        assert_eq!(
            std::fs::read_to_string(home.path().join("later.jsonl")).expect("later"),
            "key=[redacted]\n"
        );
    }

    #[test]
    fn a_key_in_an_agents_database_and_its_log_is_scrubbed_through_sqlite() {
        let home = tempfile::tempdir().expect("test setup");
        let key = "sk-ant-0123456789abcdef";
        let path = home.path().join("history.sqlite");
        let db = rusqlite::Connection::open(&path).expect("test setup");
        db.pragma_update(None, "journal_mode", "WAL")
            .expect("test setup");
        db.execute_batch("CREATE TABLE items (id INTEGER PRIMARY KEY, body TEXT, raw BLOB)")
            .expect("test setup");
        for i in 0..50 {
            db.execute(
                "INSERT INTO items (body, raw) VALUES (?1, ?2)",
                rusqlite::params![
                    format!("output {i}: key={key}"),
                    format!("raw {key}").into_bytes()
                ],
            )
            .expect("test setup");
        }
        // Left open, as a crashed agent leaves it: the rows are in the log only.
        let wal = home.path().join("history.sqlite-wal");
        assert!(std::fs::metadata(&wal).expect("a log").len() > 0);
        assert_eq!(scrub_home(home.path(), key), 1);
        drop(db);
        for file in [&path, &wal] {
            let bytes = std::fs::read(file).unwrap_or_default();
            assert!(
                !bytes.windows(key.len()).any(|w| w == key.as_bytes()),
                "{} still holds the key",
                file.display()
            );
        }
        let db = rusqlite::Connection::open(&path).expect("still a database");
        let (body, raw): (String, Vec<u8>) = db
            .query_row("SELECT body, raw FROM items WHERE id = 7", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .expect("the row");
        assert_eq!(body, "output 6: key=[redacted]");
        assert_eq!(raw, b"raw [redacted]");
        let count: i64 = db
            .query_row("SELECT count(*) FROM items", [], |r| r.get(0))
            .expect("count");
        assert_eq!(count, 50);
    }
}
