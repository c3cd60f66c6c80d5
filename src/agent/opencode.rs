//! opencode (the `opencode` CLI, npm `opencode-ai`) as an [`Agent`]: its server (`opencode
//! serve`, on 127.0.0.1 with a password of its own) in the worktree, driven by Healer over
//! HTTP (see `serve`): the session made or continued, the prompt given, the event stream
//! followed into steps, its questions answered by the project's approvals or the person, and
//! the session's messages given to it while it works. Its settings are Healer's, given in
//! `OPENCODE_CONFIG_CONTENT` (the provider, the project's approvals as opencode's
//! permissions); a repository with opencode settings of its own is refused, and opencode's
//! own folders (XDG config, data, cache, state) are in the folder Healer keeps for it per
//! project, where only its sessions' database lasts from one session to the next. A stop is
//! SIGTERM (opencode ends), then SIGKILL after a grace; its tools, in sessions of their own,
//! go with the sweep. See docs/agents.md.

pub mod config;
mod events;
mod follow;
mod serve;

pub(crate) use self::events::tool_steps;

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use nix::sys::signal::Signal;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use self::events::{Events, Seen};
use super::ending::{self, Unreadable};
use super::installed;
use super::process::{self, Finished, Launch, MARK_VAR, SESSION_VAR};
use super::{text_step, Agent, AgentUpdate, SessionEnd, SessionSpec};
use crate::error::{Error, Result};
use crate::session::{AgentKind, SessionStatus, StepSource};
use crate::store::ProjectSettings;

pub use self::events::MAX_UNREADABLE_LINES;

const NAME: &str = "opencode";

/// The variable opencode's server reads its password from (Healer's requests carry it).
const PASSWORD_VAR: &str = "OPENCODE_SERVER_PASSWORD";

/// The variable the key of a provider configured in Healer (the gateway's pass) reaches
/// opencode in; its config names it (`{env:…}`), never the key itself.
pub const KEY_VAR: &str = "HEALER_OPENCODE_API_KEY";

// The folder Healer keeps opencode's own files in for the project.
use super::AGENT_HOME_VAR as HOME_VAR;

/// What of opencode's data folder lasts between sessions: its sessions' database (a resume
/// reads the whole history from it). Its logs, snapshots, downloaded programs and login go.
const KEPT_DATA: [&str; 3] = ["opencode.db", "opencode.db-wal", "opencode.db-shm"];

/// The permissions (`OPENCODE_CONFIG_CONTENT`'s `permission`, as JSON in order) for a project:
/// what Healer's runner gives the session in `spec.agent_settings` (a JSON string).
pub fn agent_settings(settings: &ProjectSettings) -> serde_json::Value {
    serde_json::Value::String(config::permission_json(&config::permission(
        &settings.approvals,
    )))
}

pub struct OpenCode {
    program: Option<PathBuf>,
}

impl OpenCode {
    /// `program`: the `opencode` to start (else the one on PATH); an npm install's wrapper is
    /// replaced by the native binary of its platform package.
    pub fn new(program: Option<PathBuf>) -> OpenCode {
        OpenCode { program }
    }

    /// The program a session would start, if there is one.
    pub fn program(&self, spec_program: Option<&Path>) -> Option<PathBuf> {
        let native: Vec<String> = ["", "-baseline", "-musl", "-baseline-musl"]
            .iter()
            .map(|variant| format!("opencode-{}{variant}/bin/opencode", installed::platform()))
            .collect();
        let explicit = spec_program.or(self.program.as_deref());
        installed::resolve(explicit, "opencode", "opencode-ai", &native)
    }
}

#[async_trait]
impl Agent for OpenCode {
    fn kind(&self) -> AgentKind {
        AgentKind::OpenCode
    }

    fn program_for(&self, spec_program: Option<&Path>) -> Option<PathBuf> {
        self.program(spec_program)
    }

    async fn run(
        &self,
        spec: SessionSpec,
        updates: mpsc::UnboundedSender<AgentUpdate>,
        cancel: CancellationToken,
    ) -> Result<SessionEnd> {
        let home = process::get(&spec.env, HOME_VAR)
            .map(PathBuf::from)
            .ok_or_else(|| {
                Error::InvalidInput(format!(
                    "an opencode session needs {HOME_VAR} in its environment: the folder \
                     Healer keeps opencode's settings and sessions in for the project"
                ))
            })?;
        let Some(program) = self.program(spec.program.as_deref()) else {
            return Ok(ending::program_failed(ending::end(
                SessionStatus::Failed,
                None,
                installed::not_installed(AgentKind::OpenCode),
                None,
            )));
        };
        let model = spec
            .model
            .as_deref()
            .map(str::trim)
            .filter(|m| !m.is_empty());
        if spec.endpoint.is_some() && model.is_none() {
            return Ok(ending::end(
                SessionStatus::Failed,
                None,
                "opencode was not started: on a model provider configured in Healer it needs \
                 the model's name. Set the model in the project's settings."
                    .to_string(),
                None,
            ));
        }
        if let Some(found) = repository_config(&spec.cwd) {
            return Ok(ending::end(
                SessionStatus::Failed,
                None,
                format!(
                    "opencode was not started: this repository has opencode settings of its \
                     own ({found}), and opencode {TESTED} loads the plugins they name or hold \
                     even when told to ignore the repository's settings: that is code of the \
                     repository's, run with the agent's access to the model. Remove them from \
                     the repository, or choose another agent for this project."
                ),
                None,
            ));
        }
        if let Some(link) = link_leading_out(&spec.cwd) {
            return Ok(ending::end(
                SessionStatus::Failed,
                None,
                format!(
                    "opencode was not started: this repository has a link, {link}, that leads \
                     outside the task's folder, and opencode's edits go through links without \
                     asking. Remove the link from the repository, or choose another agent for \
                     this project."
                ),
                None,
            ));
        }
        prepare_home(&home).map_err(|e| {
            Error::io(
                format!("cannot prepare opencode's folder {}", home.display()),
                e,
            )
        })?;
        let mark = process::new_mark();
        // The server's password, new for each session (the commands opencode runs can read
        // it too: docs/agents.md says what that allows).
        let password = process::new_mark();
        let mut env = environment(&spec, &home, model, &mark);
        process::set(&mut env, PASSWORD_VAR, password.clone());
        let launch = Launch {
            program: program.clone(),
            args: ["serve", "--hostname", "127.0.0.1", "--port", "0"]
                .map(Into::into)
                .to_vec(),
            cwd: spec.cwd.clone(),
            env,
            time_limit: spec.time_limit,
            // opencode ignores SIGINT; on SIGTERM it ends (its tools go with the sweep).
            stop_signal: Signal::SIGTERM,
            group: process::group_for(&spec, &mark),
        };
        let marks = [vec![format!("{MARK_VAR}={mark}")]];

        let _ = updates.send(AgentUpdate::Step(text_step(
            StepSource::User,
            spec.prompt.clone(),
        )));
        if let Some(note) = repository_settings_note(&spec.cwd) {
            let _ = updates.send(AgentUpdate::Step(text_step(StepSource::System, note)));
        }
        let (address_tx, address_rx) = oneshot::channel::<String>();
        // Ended by the driver when the session is over (or the person stopped it).
        let server_stop = CancellationToken::new();
        let supervising = {
            let (updates, server_stop, marks) = (&updates, &server_stop, &marks);
            async move {
                let mut address_tx = Some(address_tx);
                let mut on_line = move |line: &str| {
                    if let Some(url) = serve::listening_at(line) {
                        if let Some(tx) = address_tx.take() {
                            let _ = tx.send(url);
                        }
                    }
                    process::Flow::Continue
                };
                process::supervise(launch, updates, server_stop, marks, &mut on_line).await
            }
        };
        let mut events = Events::default();
        let driving = async {
            let driven = tokio::select! {
                () = cancel.cancelled() => None,
                driven = follow(&spec, model, password, address_rx, &updates, &mut events) => Some(driven),
            };
            server_stop.cancel();
            driven
        };
        let (finished, driven) = tokio::join!(supervising, driving);
        let finished = match finished {
            Ok(finished) => finished,
            Err(e) => return Ok(ending::not_started(NAME, &program, &e)),
        };
        let mut rest = Vec::new();
        events.finish(&mut rest);
        for item in rest {
            if let Seen::Step(step) = item {
                let _ = updates.send(AgentUpdate::Step(step));
            }
        }
        let unreadable = Unreadable {
            count: events.unreadable,
            first: events.first_unreadable.as_deref(),
        };
        let (session_id, lost) = match driven {
            // Stopped by the person.
            None => {
                let stopped = Finished {
                    ending: process::Ending::Stopped,
                    ..finished
                };
                return Ok(ending::ended_by_healer(
                    NAME,
                    &stopped,
                    spec.time_limit,
                    &unreadable,
                    spec.resume.clone(),
                )
                .unwrap_or_else(|| {
                    ending::end(SessionStatus::Stopped, None, String::new(), None)
                }));
            }
            Some(serve::Driven::Idle { session }) => (Some(session), None),
            Some(serve::Driven::Lost { why, session }) => {
                (session.or_else(|| spec.resume.clone()), Some(why))
            }
        };
        if let Some(why) = lost {
            // The time limit, or the server gone: what ended it is said.
            if let Some(end) = ending::ended_by_healer(
                NAME,
                &finished,
                spec.time_limit,
                &unreadable,
                session_id.clone(),
            )
            .filter(|_| finished.ending == process::Ending::TimedOut)
            {
                return Ok(end);
            }
            let mut summary = ending::no_final_word(NAME, &finished, &unreadable);
            summary.push_str(&format!(" ({why})"));
            return Ok(ending::program_failed(ending::end(
                SessionStatus::Failed,
                Some(&finished),
                summary,
                session_id,
            )));
        }
        Ok(match &events.error {
            Some(error) => ending::end(
                SessionStatus::Failed,
                Some(&finished),
                format!("opencode stopped with an error: {error}"),
                session_id,
            ),
            None if events.stopped || events.last_text.is_some() => ending::end(
                SessionStatus::Finished,
                Some(&finished),
                events
                    .last_text
                    .clone()
                    .filter(|m| !m.trim().is_empty())
                    .unwrap_or_else(|| "opencode finished without a final message.".to_string()),
                session_id,
            ),
            None => ending::end(
                SessionStatus::Failed,
                Some(&finished),
                "opencode's session ended without a word from the model.".to_string(),
                session_id,
            ),
        })
    }
}

/// The session on opencode's server, once it says where it listens.
async fn follow(
    spec: &SessionSpec,
    model: Option<&str>,
    password: String,
    address: oneshot::Receiver<String>,
    updates: &mpsc::UnboundedSender<AgentUpdate>,
    events: &mut Events,
) -> serve::Driven {
    let lost = |why: String| serve::Driven::Lost { why, session: None };
    let base = match tokio::time::timeout(serve::START_WAIT, address).await {
        Ok(Ok(base)) => base,
        Ok(Err(_)) => return lost("opencode's server ended before it listened".to_string()),
        Err(_) => return lost("opencode's server did not say where it listens".to_string()),
    };
    let server = match serve::Server::new(base, password) {
        Ok(server) => server,
        Err(why) => return lost(why),
    };
    let model = model.map(|model| match &spec.endpoint {
        Some(_) => serde_json::json!({"providerID": config::PROVIDER_ID, "modelID": model}),
        // On the person's own login the model is named as opencode names it (provider/model).
        None => {
            let (provider, id) = model.split_once('/').unwrap_or(("", model));
            serde_json::json!({"providerID": provider, "modelID": id})
        }
    });
    serve::drive(
        serve::Drive {
            server,
            prompt: &spec.prompt,
            resume: spec.resume.as_deref(),
            title: format!("Healer session {}", spec.session_id),
            model,
            channel: spec.channel.clone(),
            updates,
        },
        events,
    )
    .await
}

/// opencode's folder made ready for a session: its settings, caches and state from an earlier
/// session (an agent's writing: a config naming another endpoint, an MCP server, a plugin)
/// removed, and of its data only the sessions' database kept. Links are removed, never
/// followed. The runner clears the folder before each task's session as well; this also
/// covers a resume within one (after a turn).
fn prepare_home(home: &Path) -> std::io::Result<()> {
    if std::fs::symlink_metadata(home).is_ok_and(|m| !m.is_dir()) {
        std::fs::remove_file(home)?;
    }
    std::fs::create_dir_all(home)?;
    for folder in ["config", "cache", "state"] {
        remove(&home.join(folder))?;
    }
    let data = home.join("data");
    if std::fs::symlink_metadata(&data).is_ok_and(|m| !m.is_dir()) {
        std::fs::remove_file(&data)?;
    }
    for entry in std::fs::read_dir(&data).into_iter().flatten().flatten() {
        if entry.file_name() != "opencode" {
            remove(&entry.path())?;
        }
    }
    let own = data.join("opencode");
    if std::fs::symlink_metadata(&own).is_ok_and(|m| !m.is_dir()) {
        std::fs::remove_file(&own)?;
    }
    for entry in std::fs::read_dir(&own).into_iter().flatten().flatten() {
        let path = entry.path();
        let is_file = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file());
        let kept = entry
            .file_name()
            .to_str()
            .is_some_and(|name| KEPT_DATA.contains(&name));
        if !(kept && is_file) {
            remove(&path)?;
        }
    }
    for folder in ["config", "data", "cache", "state"] {
        std::fs::create_dir_all(home.join(folder))?;
    }
    distrust_database(&own.join("opencode.db"));
    Ok(())
}

/// What an earlier session's agent could have written into opencode's database to loosen a
/// later one, undone before each run (it is kept only for resuming sessions): a session's own
/// permission rules keep their denials only (the last matching rule wins in opencode), and
/// no account, credential or remembered approval is left (an account's remote config would
/// be merged over Healer's). A table this version does not have is passed over.
fn distrust_database(db: &Path) {
    if !std::fs::symlink_metadata(db).is_ok_and(|m| m.is_file()) {
        return;
    }
    let Ok(conn) = rusqlite::Connection::open(db) else {
        return;
    };
    let _ = conn.busy_timeout(std::time::Duration::from_secs(5));
    for sql in [
        "UPDATE session SET permission = (SELECT json_group_array(json(value)) \
         FROM json_each(session.permission) WHERE json_extract(value, '$.action') = 'deny') \
         WHERE permission IS NOT NULL",
        "DELETE FROM account",
        "DELETE FROM control_account",
        "DELETE FROM account_state",
        "DELETE FROM credential",
        "DELETE FROM permission",
    ] {
        if let Err(e) = conn.execute(sql, []) {
            tracing::debug!("opencode's database: {sql}: {e}");
        }
    }
}

/// `path` gone, whatever it is (a link is removed, not followed).
fn remove(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

fn environment(
    spec: &SessionSpec,
    home: &Path,
    model: Option<&str>,
    mark: &str,
) -> Vec<(String, String)> {
    let mut env = process::base_env(|name| std::env::var(name).ok());
    for (name, value) in &spec.env {
        process::set(&mut env, name, value.clone());
    }
    for (var, folder) in [
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_DATA_HOME", "data"),
        ("XDG_CACHE_HOME", "cache"),
        ("XDG_STATE_HOME", "state"),
    ] {
        process::set(&mut env, var, home.join(folder).display().to_string());
    }
    for var in [
        "OPENCODE_DISABLE_AUTOUPDATE",
        "OPENCODE_DISABLE_MODELS_FETCH",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS",
        "OPENCODE_DISABLE_LSP_DOWNLOAD",
        // A repository's opencode.json and .opencode/ (plugins are code it would run, a
        // provider there would get the key) are never loaded.
        "OPENCODE_DISABLE_PROJECT_CONFIG",
        "OPENCODE_PURE",
    ] {
        process::set(&mut env, var, "1");
    }
    // Settings from elsewhere than Healer's are never read.
    for var in ["OPENCODE_CONFIG", "OPENCODE_CONFIG_DIR"] {
        env.retain(|(name, _)| name != var);
    }
    let endpoint = spec.endpoint.as_ref();
    let provider = endpoint.zip(model).map(|(e, model)| config::Provider {
        name: &e.provider,
        base_url: &e.base_url,
        key_var: e.key.as_ref().map(|_| KEY_VAR),
        model,
    });
    let permission = permission_for(spec);
    process::set(
        &mut env,
        "OPENCODE_CONFIG_CONTENT",
        config::render(provider.as_ref(), &permission),
    );
    if let Some(key) = endpoint.and_then(|e| e.key.as_ref()) {
        process::set(&mut env, KEY_VAR, key.expose());
    }
    process::set(&mut env, MARK_VAR, mark);
    process::set(&mut env, SESSION_VAR, spec.session_id.to_string());
    env
}

/// The permissions the session runs with: the runner's (`agent_settings`, from the project's
/// approvals), else from what the spec tells: tools allowed on the agent's say-so (*Never
/// ask*), or none (edits only; every command refused).
fn permission_for(spec: &SessionSpec) -> String {
    match &spec.agent_settings {
        Some(serde_json::Value::String(json)) => json.clone(),
        Some(value @ serde_json::Value::Object(_)) => value.to_string(),
        _ => {
            let approvals = crate::approval::ApprovalSettings {
                preset: if spec.allowed_tools.is_empty() {
                    crate::approval::Preset::AskEvery
                } else {
                    crate::approval::Preset::NeverAsk
                },
                ..crate::approval::ApprovalSettings::default()
            };
            config::permission_json(&config::permission(&approvals))
        }
    }
}

/// The opencode version whose behaviour this adapter was checked against.
const TESTED: &str = "1.18.33";

/// The repository's own opencode settings (`opencode.json`, `opencode.jsonc`, `.opencode/`),
/// if it has any: opencode 1.18.33 imports the plugins they name (`plugin`) or hold
/// (`.opencode/plugin/*.ts`) even with `OPENCODE_DISABLE_PROJECT_CONFIG` and `--pure`, though
/// it ignores their provider, model and permissions. A link counts (it is not followed).
fn repository_config(cwd: &Path) -> Option<String> {
    let found: Vec<&str> = ["opencode.json", "opencode.jsonc", ".opencode"]
        .into_iter()
        .filter(|rel| cwd.join(rel).symlink_metadata().is_ok())
        .collect();
    (!found.is_empty()).then(|| found.join(", "))
}

/// The most entries of a worktree looked at for links (past them, the look stops).
const MAX_LOOKED_AT: usize = 200_000;

/// The first link in the worktree (its place in it) whose target is outside the worktree, or
/// does not resolve: opencode checks the paths it edits as written, not where they lead.
fn link_leading_out(cwd: &Path) -> Option<String> {
    let root = std::fs::canonicalize(cwd).ok()?;
    let walk = ignore::WalkBuilder::new(cwd)
        .standard_filters(false)
        .hidden(false)
        .follow_links(false)
        .filter_entry(|e| e.file_name() != ".git")
        .build();
    for entry in walk.take(MAX_LOOKED_AT).flatten() {
        if !entry.path_is_symlink() {
            continue;
        }
        let inside = std::fs::canonicalize(entry.path()).is_ok_and(|real| real.starts_with(&root));
        if !inside {
            let rel = entry.path().strip_prefix(cwd).unwrap_or(entry.path());
            return Some(rel.display().to_string());
        }
    }
    None
}

/// What the session says when the repository has instructions for agents (`AGENTS.md`),
/// which opencode does not read with the repository's settings turned off.
fn repository_settings_note(cwd: &Path) -> Option<String> {
    cwd.join("AGENTS.md").symlink_metadata().ok().map(|_| {
        "This repository's AGENTS.md is not given to opencode: Healer turns the repository's \
         own opencode settings off (they could send the model's key elsewhere or run code on \
         this computer)."
            .to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_out_of_the_worktree_is_found_and_one_inside_is_not() {
        let dir = tempfile::tempdir().expect("tmp");
        let wt = dir.path().join("wt");
        std::fs::create_dir_all(wt.join("src")).expect("dirs");
        std::fs::write(wt.join("src/a.py"), "x").expect("file");
        std::os::unix::fs::symlink("src/a.py", wt.join("b.py")).expect("link");
        assert_eq!(link_leading_out(&wt), None);
        std::os::unix::fs::symlink(dir.path().join("bashrc"), wt.join("src/notes")).expect("link");
        assert_eq!(link_leading_out(&wt).as_deref(), Some("src/notes"));
    }

    #[test]
    fn what_an_agent_wrote_into_the_database_to_loosen_a_later_session_is_undone() {
        let dir = tempfile::tempdir().expect("tmp");
        let db = dir.path().join("opencode.db");
        let conn = rusqlite::Connection::open(&db).expect("db");
        conn.execute_batch(
            r#"CREATE TABLE session (id TEXT, permission TEXT);
               CREATE TABLE control_account (email TEXT, url TEXT);
               INSERT INTO session VALUES ('s1', '[{"permission":"question","pattern":"*","action":"deny"},{"permission":"*","pattern":"*","action":"allow"}]');
               INSERT INTO control_account VALUES ('a@b', 'http://evil');"#,
        )
        .expect("planted");
        drop(conn);
        distrust_database(&db);
        let conn = rusqlite::Connection::open(&db).expect("db");
        let permission: String = conn
            .query_row("SELECT permission FROM session", [], |r| r.get(0))
            .expect("row");
        assert_eq!(
            permission,
            r#"[{"permission":"question","pattern":"*","action":"deny"}]"#
        );
        let accounts: i64 = conn
            .query_row("SELECT count(*) FROM control_account", [], |r| r.get(0))
            .expect("count");
        assert_eq!(accounts, 0);
    }

    #[test]
    fn the_folder_keeps_only_the_sessions_database_and_never_follows_a_link() {
        let dir = tempfile::tempdir().expect("tmp");
        let home = dir.path().join("opencode");
        let own = home.join("data/opencode");
        std::fs::create_dir_all(own.join("snapshot")).expect("dirs");
        std::fs::create_dir_all(home.join("config/opencode")).expect("dirs");
        std::fs::write(home.join("config/opencode/opencode.json"), "{}").expect("planted");
        std::fs::write(own.join("opencode.db"), "db").expect("db");
        std::fs::write(own.join("auth.json"), "{}").expect("planted");
        let outside = dir.path().join("persons");
        std::fs::create_dir_all(&outside).expect("dirs");
        std::fs::write(outside.join("precious"), "mine").expect("file");
        std::os::unix::fs::symlink(&outside, own.join("bin")).expect("link");
        std::os::unix::fs::symlink(outside.join("precious"), own.join("opencode.db-wal"))
            .expect("link");
        prepare_home(&home).expect("prepared");
        let mut left: Vec<String> = std::fs::read_dir(&own)
            .expect("data")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["opencode.db"]);
        assert!(!home.join("config/opencode").exists());
        assert_eq!(
            std::fs::read_to_string(outside.join("precious")).expect("untouched"),
            "mine"
        );
    }

    #[test]
    fn a_repositorys_own_settings_are_found_and_named() {
        let dir = tempfile::tempdir().expect("tmp");
        assert_eq!(repository_settings_note(dir.path()), None);
        assert_eq!(repository_config(dir.path()), None);
        std::fs::write(dir.path().join("AGENTS.md"), "obey").expect("file");
        assert!(repository_settings_note(dir.path()).is_some());
        assert_eq!(repository_config(dir.path()), None);
        std::fs::write(dir.path().join("opencode.json"), "{}").expect("file");
        std::os::unix::fs::symlink("/nowhere", dir.path().join(".opencode")).expect("link");
        assert_eq!(
            repository_config(dir.path()).as_deref(),
            Some("opencode.json, .opencode")
        );
    }
}
