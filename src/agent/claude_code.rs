//! Claude Code (the `claude` CLI) as an [`Agent`]: `claude -p --output-format stream-json
//! --verbose` in the worktree, its stream read into steps as they come, its transcript found,
//! resumed with `--resume`. The end comes from its `result` line (`is_error`,
//! `terminal_reason`), not from the exit code alone: an API error exits 1 with a result that
//! says "success", an interrupt exits 0 with `is_error`. See docs/agents.md.

mod lines;
mod stream;
pub mod transcript;

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use nix::sys::signal::Signal;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use self::stream::{Outcome, Seen, Stream};
use super::ending::{self, Unreadable};
use super::installed;
use super::process::{self, Launch, MARK_VAR, SESSION_VAR};
use super::{text_step, Agent, AgentUpdate, SessionEnd, SessionSpec};
use crate::error::Result;
use crate::session::{AgentKind, SessionStatus, StepSource};

pub use self::stream::MAX_UNREADABLE_LINES;

/// The tools a project allows when its settings name none (a project setting).
pub use crate::store::DEFAULT_ALLOWED_TOOLS;

const NAME: &str = "Claude Code";

pub struct ClaudeCode {
    program: Option<PathBuf>,
}

impl ClaudeCode {
    /// `program`: the `claude` to start (else the one on PATH); an npm install's wrapper is
    /// replaced by the native binary of its platform package.
    pub fn new(program: Option<PathBuf>) -> ClaudeCode {
        ClaudeCode { program }
    }

    /// The program a session would start, if there is one.
    pub fn program(&self, spec_program: Option<&Path>) -> Option<PathBuf> {
        let native: Vec<String> = ["", "-musl"]
            .iter()
            .map(|libc| {
                format!(
                    "@anthropic-ai/claude-code-{}{libc}/claude",
                    installed::platform()
                )
            })
            .collect();
        let explicit = spec_program.or(self.program.as_deref());
        installed::resolve(explicit, "claude", "@anthropic-ai/claude-code", &native)
    }
}

#[async_trait]
impl Agent for ClaudeCode {
    fn kind(&self) -> AgentKind {
        AgentKind::ClaudeCode
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
        let Some(program) = self.program(spec.program.as_deref()) else {
            return Ok(ending::program_failed(ending::end(
                SessionStatus::Failed,
                None,
                installed::not_installed(AgentKind::ClaudeCode),
                None,
            )));
        };
        // A new session gets its id up front, so its tool processes can be found by it.
        let session_id = spec
            .resume
            .clone()
            .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        let mark = process::new_mark();
        let env = environment(&spec, &mark);
        let config_dir = transcript::config_dir(
            process::get(&env, "HOME"),
            process::get(&env, "CLAUDE_CONFIG_DIR"),
        );
        let launch = Launch {
            program: program.clone(),
            args: arguments(&spec, &session_id),
            cwd: spec.cwd.clone(),
            env,
            time_limit: spec.time_limit,
            // Claude Code ends its tools on SIGTERM; SIGKILL would orphan them.
            stop_signal: Signal::SIGTERM,
            group: process::group_for(&spec, &mark),
        };
        let marks = [
            vec![format!("{MARK_VAR}={mark}")],
            vec![format!("CLAUDE_CODE_SESSION_ID={session_id}")],
        ];

        let _ = updates.send(AgentUpdate::Step(text_step(
            StepSource::User,
            spec.prompt.clone(),
        )));
        if let Some(note) = repository_settings_note(&spec.cwd) {
            let _ = updates.send(AgentUpdate::Step(text_step(StepSource::System, note)));
        }
        let mut stream = Stream::default();
        let mut started = false;
        let mut on_line = |line: &str| {
            let mut seen = Vec::new();
            let flow = stream.line(line, &mut seen);
            for item in seen {
                match item {
                    Seen::Init { session_id, cwd } if !started => {
                        started = true;
                        let cwd = cwd.unwrap_or_else(|| physical(&spec.cwd));
                        let transcript = config_dir
                            .as_deref()
                            .map(|dir| transcript::transcript_path(dir, &cwd, &session_id));
                        let _ = updates.send(AgentUpdate::Started {
                            agent_session_id: session_id,
                            transcript,
                        });
                    }
                    Seen::Init { .. } => {}
                    Seen::Raw(line) => {
                        let _ = updates.send(AgentUpdate::Raw(line));
                    }
                    Seen::Step(step) => {
                        let _ = updates.send(AgentUpdate::Step(step));
                    }
                }
            }
            flow
        };
        let finished =
            match process::supervise(launch, &updates, &cancel, &marks, &mut on_line).await {
                Ok(finished) => finished,
                Err(e) => return Ok(ending::not_started(NAME, &program, &e)),
            };
        let mut rest = Vec::new();
        stream.finish(&mut rest);
        for item in rest {
            if let Seen::Step(step) = item {
                let _ = updates.send(AgentUpdate::Step(step));
            }
        }

        let unreadable = Unreadable {
            count: stream.unreadable,
            first: stream.first_unreadable.as_deref(),
        };
        let id = started.then(|| session_id.clone());
        if let Some(end) =
            ending::ended_by_healer(NAME, &finished, spec.time_limit, &unreadable, id.clone())
        {
            return Ok(end);
        }
        Ok(match &stream.outcome {
            Some(outcome) if !outcome.is_error => ending::end(
                SessionStatus::Finished,
                Some(&finished),
                finished_summary(outcome),
                id,
            ),
            Some(outcome) => ending::end(
                SessionStatus::Failed,
                Some(&finished),
                error_summary(outcome),
                id,
            ),
            None => ending::program_failed(ending::end(
                SessionStatus::Failed,
                Some(&finished),
                ending::no_final_word(NAME, &finished, &unreadable),
                id,
            )),
        })
    }
}

fn environment(spec: &SessionSpec, mark: &str) -> Vec<(String, String)> {
    let mut env = process::base_env(|name| std::env::var(name).ok());
    // No update checks, telemetry or registry lookups from a session Healer runs; a project's
    // environment may turn them back on.
    process::set(&mut env, "DISABLE_AUTOUPDATER", "1");
    process::set(&mut env, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
    for (name, value) in &spec.env {
        process::set(&mut env, name, value.clone());
    }
    // A model provider configured in Healer, instead of the person's own login: set last, so
    // nothing else names another endpoint or key.
    if let Some(endpoint) = &spec.endpoint {
        process::set(&mut env, "ANTHROPIC_BASE_URL", endpoint.base_url.clone());
        match &endpoint.key {
            Some(key) => process::set(&mut env, "ANTHROPIC_API_KEY", key.expose()),
            None => env.retain(|(n, _)| n != "ANTHROPIC_API_KEY"),
        }
    }
    process::set(&mut env, MARK_VAR, mark);
    process::set(&mut env, SESSION_VAR, spec.session_id.to_string());
    env
}

/// The files of a repository through which it would configure Claude Code: settings that can
/// name another endpoint or key, set the environment, add hooks and permissions, and MCP
/// servers that are commands to run.
pub const REPOSITORY_SETTINGS: [&str; 3] = [
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".mcp.json",
];

fn arguments(spec: &SessionSpec, session_id: &str) -> Vec<std::ffi::OsString> {
    let mut args: Vec<String> = [
        "--print",
        "--output-format",
        "stream-json",
        "--verbose",
        "--include-partial-messages",
        // A repository is untrusted input: its `.claude/settings*.json` (project and local
        // settings) and its `.mcp.json` are not loaded, only the user's (the person's own, or
        // Healer's folder when Healer gives the provider) and Healer's `--settings` layer.
        // Verified with the pinned 2.1.328: tests/engine/hostile_repos.rs.
        "--setting-sources",
        "user",
        "--strict-mcp-config",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if let Some(settings) = &spec.agent_settings {
        args.extend(["--settings".to_string(), settings.to_string()]);
    }
    if spec.resume.is_some() {
        args.extend(["--resume".to_string(), session_id.to_string()]);
    } else {
        args.extend(["--session-id".to_string(), session_id.to_string()]);
    }
    if let Some(model) = &spec.model {
        args.extend(["--model".to_string(), model.clone()]);
    }
    if !spec.allowed_tools.is_empty() {
        args.push("--allowedTools".to_string());
        args.extend(spec.allowed_tools.iter().cloned());
    }
    // The prompt after `--`: it may start with a dash, and `--allowedTools` takes many values.
    args.push("--".to_string());
    args.push(spec.prompt.clone());
    args.into_iter().map(Into::into).collect()
}

/// What the session says when the repository has settings of its own for Claude Code, which
/// Healer does not let it use.
fn repository_settings_note(cwd: &Path) -> Option<String> {
    let found: Vec<&str> = REPOSITORY_SETTINGS
        .into_iter()
        // A link counts (it is not followed).
        .filter(|rel| cwd.join(rel).symlink_metadata().is_ok())
        .collect();
    if found.is_empty() {
        return None;
    }
    let (list, verb) = match found.as_slice() {
        [one] => (one.to_string(), "is"),
        [rest @ .., last] => (format!("{} and {last}", rest.join(", ")), "are"),
        [] => return None,
    };
    Some(format!(
        "This repository's own Claude Code settings ({list}) {verb} not used: settings from a \
         repository could send the model's key elsewhere or run commands on this computer. \
         Claude Code runs with your own settings and Healer's."
    ))
}

/// The physical path (Claude Code names its folders after it, not after a symlink).
fn physical(cwd: &Path) -> String {
    std::fs::canonicalize(cwd)
        .unwrap_or_else(|_| cwd.to_path_buf())
        .to_string_lossy()
        .into_owned()
}

fn finished_summary(outcome: &Outcome) -> String {
    let mut summary = match outcome.result.as_deref().map(str::trim) {
        Some(text) if !text.is_empty() => text.to_string(),
        _ => "Claude Code finished without a final message.".to_string(),
    };
    let mut denied: Vec<&str> = outcome
        .permission_denials
        .iter()
        .filter_map(|d| d.get("tool_name").and_then(|n| n.as_str()))
        .collect();
    denied.sort_unstable();
    denied.dedup();
    if !denied.is_empty() {
        let it = if denied.len() == 1 { "it" } else { "them" };
        summary.push_str(&format!(
            "\n(Claude Code was not allowed to use {}: add {it} to the project's allowed tools \
             if the task needs {it}.)",
            denied.join(", ")
        ));
    }
    summary
}

fn error_summary(outcome: &Outcome) -> String {
    let said = outcome
        .result
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .or_else(|| (!outcome.errors.is_empty()).then(|| outcome.errors.join("; ")));
    let reason = outcome
        .terminal_reason
        .as_deref()
        .unwrap_or(outcome.subtype.as_str())
        .replace('_', " ");
    match said {
        Some(text) => format!("Claude Code stopped with an error ({reason}): {text}"),
        None => format!("Claude Code stopped with an error ({reason})."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_on_a_repositorys_own_settings_reads_as_one_sentence() {
        let dir = tempfile::tempdir().expect("tmp");
        std::fs::create_dir_all(dir.path().join(".claude")).expect("dir");
        std::fs::write(dir.path().join(".claude/settings.json"), "{}").expect("settings");
        let note = repository_settings_note(dir.path()).expect("a note");
        assert!(!note.contains("  "), "runs of spaces: {note:?}");
        assert!(
            note.contains("(.claude/settings.json) is not used"),
            "{note}"
        );
    }
}
