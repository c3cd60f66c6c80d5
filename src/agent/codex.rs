//! Codex (the `codex` CLI) as an [`Agent`]: `codex exec --json PROMPT` in the worktree, resumed
//! with `codex exec resume ID MESSAGE`, with its settings in a Codex home Healer keeps per
//! project (the spec's `CODEX_HOME`; Healer writes its `config.toml` before each session). The
//! end comes from `turn.completed` / `turn.failed`. A stop is SIGINT (Codex ends its commands
//! and exits), then SIGKILL after a grace. See docs/agents.md.

pub mod config;
mod events;
mod items;
mod login;
pub mod rollout;

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use nix::sys::signal::Signal;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use self::events::{Events, Seen};
use super::ending::{self, Unreadable};
use super::installed;
use super::process::{self, Launch, MARK_VAR, SESSION_VAR};
use super::{text_step, Agent, AgentUpdate, SessionEnd, SessionSpec};
use crate::error::{Error, Result};
use crate::session::{AgentKind, SessionStatus, StepSource};

pub use self::config::{CodexProvider, CodexSandbox, CodexSettings};
pub use self::events::{Totals, MAX_UNREADABLE_LINES};

const NAME: &str = "Codex";

pub struct Codex {
    program: Option<PathBuf>,
    settings: CodexSettings,
}

impl Codex {
    /// `program`: the `codex` to start (else the one on PATH); an npm install's wrapper is
    /// replaced by the native binary of its platform package. Codex's own model provider.
    pub fn new(program: Option<PathBuf>) -> Codex {
        Codex::with_settings(program, CodexSettings::default())
    }

    pub fn with_settings(program: Option<PathBuf>, settings: CodexSettings) -> Codex {
        Codex { program, settings }
    }

    /// The program a session would start, if there is one.
    pub fn program(&self, spec_program: Option<&Path>) -> Option<PathBuf> {
        let triple = match std::env::consts::ARCH {
            "aarch64" => "aarch64-unknown-linux-musl",
            _ => "x86_64-unknown-linux-musl",
        };
        let native = vec![format!(
            "@openai/codex-{}/vendor/{triple}/bin/codex",
            installed::platform()
        )];
        let explicit = spec_program.or(self.program.as_deref());
        installed::resolve(explicit, "codex", "@openai/codex", &native)
    }
}

impl Codex {
    /// This adapter's settings, with the session's provider when the project chose one
    /// configured in Healer.
    fn settings_for(&self, spec: &SessionSpec) -> CodexSettings {
        let hooks = spec.agent_settings.clone();
        let Some(endpoint) = &spec.endpoint else {
            return CodexSettings {
                hooks,
                ..self.settings.clone()
            };
        };
        let same = self.settings.provider.as_ref();
        CodexSettings {
            provider: Some(CodexProvider {
                id: config::HEALER_PROVIDER_ID.to_string(),
                name: endpoint.provider.clone(),
                base_url: endpoint.base_url.clone(),
                env_key: endpoint.key.as_ref().map(|_| KEY_VAR.to_string()),
                request_max_retries: same.and_then(|p| p.request_max_retries),
                stream_max_retries: same.and_then(|p| p.stream_max_retries),
                stream_idle_timeout_ms: same.and_then(|p| p.stream_idle_timeout_ms),
            }),
            hooks,
            ..self.settings.clone()
        }
    }
}

/// The variable the key of a provider configured in Healer reaches Codex in. Its name has
/// `KEY` in it: Codex leaves such variables out of the commands it runs.
const KEY_VAR: &str = "HEALER_CODEX_API_KEY";

#[async_trait]
impl Agent for Codex {
    fn kind(&self) -> AgentKind {
        AgentKind::Codex
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
        let codex_home = process::get(&spec.env, "CODEX_HOME")
            .map(PathBuf::from)
            .ok_or_else(|| {
                Error::InvalidInput(
                    "a Codex session needs CODEX_HOME in its environment: the folder Healer \
                     keeps Codex's settings and sessions in for the project"
                        .to_string(),
                )
            })?;
        if self.settings.sandbox == CodexSandbox::WorkspaceWrite && under_tmp(&codex_home) {
            return Err(Error::InvalidInput(format!(
                "Codex's folder {} is under /tmp, where Codex refuses to keep the helper its \
                 sandbox runs commands with, so every command would fail. Healer keeps that \
                 folder in its own data folder: move the data folder out of /tmp (set \
                 HEALER_DATA_DIR to a folder elsewhere and start Healer again)",
                codex_home.display()
            )));
        }
        let Some(program) = self.program(spec.program.as_deref()) else {
            return Ok(ending::program_failed(ending::end(
                SessionStatus::Failed,
                None,
                installed::not_installed(AgentKind::Codex),
                None,
            )));
        };
        let settings = self.settings_for(&spec);
        let existing = std::fs::read_to_string(codex_home.join("config.toml")).ok();
        config::write(
            &codex_home,
            &config::render(&settings, spec.model.as_deref(), existing.as_deref())?,
        )?;
        if settings.provider.is_none() {
            login::share(&codex_home, process::get(&spec.env, "HOME").map(Path::new));
        }
        // On a resume, the thread's totals so far: the resumed turn is charged its own cost.
        let before = spec
            .resume
            .as_deref()
            .and_then(|thread| rollout::find(&codex_home, thread))
            .and_then(|path| std::fs::read_to_string(path).ok())
            .and_then(|text| rollout::last_totals(&text))
            .unwrap_or_default();
        let mut events = Events::new(call_prefix(), before);
        let mark = process::new_mark();
        let launch = Launch {
            program: program.clone(),
            args: arguments(&spec),
            cwd: spec.cwd.clone(),
            env: environment(&spec, &mark),
            time_limit: spec.time_limit,
            stop_signal: Signal::SIGINT,
            group: process::group_for(&spec, &mark),
        };
        let marks = [vec![format!("{MARK_VAR}={mark}")]];

        let _ = updates.send(AgentUpdate::Step(text_step(
            StepSource::User,
            spec.prompt.clone(),
        )));
        let mut thread_id: Option<String> = None;
        // Codex writes the rollout just after it names the thread: `Started` waits for it for
        // a few lines (it goes out without a transcript if none appears).
        let mut announce = Announce::default();
        let mut on_line = |line: &str| {
            let mut seen = Vec::new();
            let flow = events.line(line, &mut seen);
            for item in seen {
                match item {
                    Seen::Init { thread_id: id } if thread_id.is_none() => {
                        thread_id = Some(id);
                    }
                    Seen::Init { .. } => {}
                    Seen::Raw(line) => {
                        let _ = updates.send(AgentUpdate::Raw(line));
                    }
                    Seen::Step(step) => {
                        announce.now(&updates, &codex_home, thread_id.as_deref(), true);
                        let _ = updates.send(AgentUpdate::Step(step));
                    }
                }
            }
            announce.now(&updates, &codex_home, thread_id.as_deref(), false);
            flow
        };
        let finished =
            match process::supervise(launch, &updates, &cancel, &marks, &mut on_line).await {
                Ok(finished) => finished,
                Err(e) => return Ok(ending::not_started(NAME, &program, &e)),
            };
        announce.now(&updates, &codex_home, thread_id.as_deref(), true);
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
        if let Some(end) = ending::ended_by_healer(
            NAME,
            &finished,
            spec.time_limit,
            &unreadable,
            thread_id.clone(),
        ) {
            return Ok(end);
        }
        Ok(match (&events.turn_failed, events.turn_completed) {
            (Some(error), _) => ending::end(
                SessionStatus::Failed,
                Some(&finished),
                format!("Codex stopped with an error: {error}"),
                thread_id,
            ),
            (None, true) => ending::end(
                SessionStatus::Finished,
                Some(&finished),
                events
                    .last_message
                    .clone()
                    .filter(|m| !m.trim().is_empty())
                    .unwrap_or_else(|| "Codex finished without a final message.".to_string()),
                thread_id,
            ),
            (None, false) => ending::program_failed(ending::end(
                SessionStatus::Failed,
                Some(&finished),
                ending::no_final_word(NAME, &finished, &unreadable),
                thread_id,
            )),
        })
    }
}

/// Sends `Started` once: when the thread's rollout exists, after a few lines without it, or
/// when `anyway` (a step is about to go out, the session ended).
#[derive(Default)]
struct Announce {
    done: bool,
    waited: u32,
}

/// Lines to wait for the rollout before `Started` goes out without it.
const ROLLOUT_WAIT_LINES: u32 = 3;

impl Announce {
    fn now(
        &mut self,
        updates: &mpsc::UnboundedSender<AgentUpdate>,
        codex_home: &Path,
        thread_id: Option<&str>,
        anyway: bool,
    ) {
        let Some(id) = thread_id.filter(|_| !self.done) else {
            return;
        };
        let transcript = rollout::find(codex_home, id);
        self.waited += 1;
        if transcript.is_some() || anyway || self.waited > ROLLOUT_WAIT_LINES {
            self.done = true;
            let _ = updates.send(AgentUpdate::Started {
                agent_session_id: id.to_string(),
                transcript,
            });
        }
    }
}

fn under_tmp(path: &Path) -> bool {
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    real.starts_with("/tmp") || real.starts_with(std::env::temp_dir())
}

fn environment(spec: &SessionSpec, mark: &str) -> Vec<(String, String)> {
    let mut env = process::base_env(|name| std::env::var(name).ok());
    for (name, value) in &spec.env {
        process::set(&mut env, name, value.clone());
    }
    if let Some(key) = spec.endpoint.as_ref().and_then(|e| e.key.as_ref()) {
        process::set(&mut env, KEY_VAR, key.expose());
    }
    process::set(&mut env, MARK_VAR, mark);
    process::set(&mut env, SESSION_VAR, spec.session_id.to_string());
    env
}

fn arguments(spec: &SessionSpec) -> Vec<std::ffi::OsString> {
    let mut args: Vec<String> = vec!["exec".to_string()];
    if spec.resume.is_some() {
        args.push("resume".to_string());
    }
    // Healer runs Codex in a worktree it made; Codex's trust check is for folders it does not
    // know. Positional arguments after `--`: a prompt may start with a dash.
    args.extend(["--json", "--skip-git-repo-check"].map(str::to_string));
    // Healer's own hooks, written by Healer into the Codex folder it keeps (a hook file an
    // agent left there is removed before each session; a repository's are never loaded, as its
    // folder is never trusted): trusted for this run.
    if spec.agent_settings.is_some() {
        args.push("--dangerously-bypass-hook-trust".to_string());
    }
    args.push("--".to_string());
    if let Some(thread) = &spec.resume {
        args.push(thread.clone());
    }
    args.push(spec.prompt.clone());
    args.into_iter().map(Into::into).collect()
}

/// Codex numbers its items per process (`item_0` again after a resume): call ids get a prefix
/// of their own per session so that calls and results pair across resumes.
fn call_prefix() -> String {
    format!("{:06x}:", rand::random::<u32>() & 0xff_ffff)
}
