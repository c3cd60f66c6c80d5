//! Google's Gemini CLI (the `gemini` program, npm `@google/gemini-cli`) as an [`Agent`]:
//! `gemini -p PROMPT -o stream-json` in the worktree, its stream read into steps as they come,
//! resumed between turns with `--resume ID`. Its files live in a home Healer keeps per project
//! (`GEMINI_CLI_HOME`, rewritten before each session but for its chats), and it runs
//! restricted: the repository's `.gemini/` settings (hooks, MCP servers, model), `GEMINI.md`
//! and all but a few variables of its `.env` are not used. It cannot ask anyone in this mode:
//! the tools it may use are given up front (`--allowed-tools`), the rest is refused by its own
//! policy and the model is told. The end comes from its `result` line. See docs/agents.md.

mod home;
mod stream;

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use nix::sys::signal::Signal;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use self::stream::{Seen, Stream};
use super::ending::{self, Unreadable};
use super::installed;
use super::process::{self, Launch, MARK_VAR, SESSION_VAR};
use super::{text_step, Agent, AgentUpdate, SessionEnd, SessionSpec};
use crate::approval::Preset;
use crate::error::{Error, Result};
use crate::session::{AgentKind, SessionStatus, StepSource};

pub use self::home::KEPT as HOME_FOLDER;
pub use self::stream::MAX_UNREADABLE_LINES;

const NAME: &str = "Gemini CLI";

use super::AGENT_HOME_VAR;

/// Gemini CLI's tools that read, search and edit files (all confined to the worktree by Gemini
/// CLI itself).
pub const FILE_TOOLS: &[&str] = &[
    "read_file",
    "read_many_files",
    "write_file",
    "replace",
    "list_directory",
    "glob",
    "grep_search",
];

/// The tool that runs commands; `run_shell_command(PREFIX)` allows the commands starting
/// with PREFIX only.
pub const SHELL_TOOL: &str = "run_shell_command";

/// The tools Gemini CLI may use without asking (`--allowed-tools`) under the project's approval
/// `preset`, given the commands that run without asking (the project's checks, its init
/// script, the commands it lists). Gemini CLI cannot ask, so whatever is not here is refused:
/// "never ask" allows every command; "ask before anything risky" the file tools and
/// `commands` (each as a prefix); "ask before every command" the file tools only.
pub fn allowed_tools(preset: Preset, commands: &[String]) -> Vec<String> {
    let mut tools: Vec<String> = FILE_TOOLS.iter().map(|t| (*t).to_string()).collect();
    match preset {
        Preset::NeverAsk => {
            tools.extend(
                [SHELL_TOOL, "web_fetch", "google_web_search", "write_todos"].map(str::to_string),
            );
        }
        Preset::AskRisky => {
            for command in commands {
                // One line, as Gemini CLI matches it; a prefix is the command's words.
                let command = command.split_whitespace().collect::<Vec<_>>().join(" ");
                let tool = format!("{SHELL_TOOL}({command})");
                if !command.is_empty() && !tools.contains(&tool) {
                    tools.push(tool);
                }
            }
        }
        Preset::AskEvery => {}
    }
    tools
}

/// The session's `--allowed-tools`: Gemini CLI's own names when the spec gives them (the
/// runner maps the project's approvals with [`allowed_tools`]); otherwise the runner's
/// convention for the other CLIs — tools listed only under "never ask", none while the project
/// asks — read the same way.
fn session_tools(spec: &SessionSpec) -> Vec<String> {
    let geminis = |t: &String| {
        FILE_TOOLS.contains(&t.as_str())
            || t.starts_with(SHELL_TOOL)
            || matches!(
                t.as_str(),
                "web_fetch" | "google_web_search" | "write_todos"
            )
    };
    if spec.allowed_tools.iter().any(geminis) {
        spec.allowed_tools
            .iter()
            .filter(|t| geminis(t))
            .cloned()
            .collect()
    } else if spec.allowed_tools.is_empty() {
        allowed_tools(Preset::AskRisky, &[])
    } else {
        allowed_tools(Preset::NeverAsk, &[])
    }
}

pub struct GeminiCli {
    program: Option<PathBuf>,
}

impl GeminiCli {
    /// `program`: the `gemini` to start (else the one on PATH): a Node program.
    pub fn new(program: Option<PathBuf>) -> GeminiCli {
        GeminiCli { program }
    }

    /// The program a session would start, if there is one.
    pub fn program(&self, spec_program: Option<&Path>) -> Option<PathBuf> {
        let explicit = spec_program.or(self.program.as_deref());
        installed::resolve(explicit, "gemini", "@google/gemini-cli", &[])
    }
}

#[async_trait]
impl Agent for GeminiCli {
    fn kind(&self) -> AgentKind {
        AgentKind::GeminiCli
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
        // With a provider of Healer's, Gemini CLI's files are Healer's (its own login and
        // settings otherwise).
        let gemini_home = match &spec.endpoint {
            Some(_) => {
                let agent_home = process::get(&spec.env, AGENT_HOME_VAR).ok_or_else(|| {
                    Error::InvalidInput(format!(
                        "a Gemini CLI session on a provider of Healer's needs {AGENT_HOME_VAR} \
                         in its environment: the folder Healer keeps its files in for the \
                         project"
                    ))
                })?;
                let prepared = home::prepare(Path::new(agent_home)).map_err(|e| {
                    Error::io(format!("preparing Gemini CLI's folder in {agent_home}"), e)
                })?;
                Some(prepared)
            }
            None => None,
        };
        let Some(program) = self.program(spec.program.as_deref()) else {
            return Ok(ending::program_failed(ending::end(
                SessionStatus::Failed,
                None,
                installed::not_installed(AgentKind::GeminiCli),
                None,
            )));
        };
        let mark = process::new_mark();
        let launch = Launch {
            program: program.clone(),
            args: arguments(&spec),
            cwd: spec.cwd.clone(),
            env: environment(&spec, &mark, gemini_home.as_deref()),
            time_limit: spec.time_limit,
            // Without its relaunch (GEMINI_CLI_NO_RELAUNCH) Node ends on SIGTERM; its commands
            // run in sessions of their own and go with the group kill and the sweep.
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
        let mut stream = Stream::default();
        let mut session_id: Option<String> = None;
        let mut on_line = |line: &str| {
            let mut seen = Vec::new();
            let flow = stream.line(line, &mut seen);
            for item in seen {
                match item {
                    Seen::Init { session_id: id } if session_id.is_none() => {
                        let transcript = gemini_home.as_deref().and_then(|h| home::chat(h, &id));
                        session_id = Some(id.clone());
                        let _ = updates.send(AgentUpdate::Started {
                            agent_session_id: id,
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
        if let Some(end) = ending::ended_by_healer(
            NAME,
            &finished,
            spec.time_limit,
            &unreadable,
            session_id.clone(),
        ) {
            return Ok(end);
        }
        Ok(match &stream.outcome {
            Some(outcome) if outcome.success => ending::end(
                SessionStatus::Finished,
                Some(&finished),
                stream
                    .last_message
                    .clone()
                    .filter(|m| !m.trim().is_empty())
                    .unwrap_or_else(|| "Gemini CLI finished without a final message.".to_string()),
                session_id,
            ),
            Some(outcome) => ending::end(
                SessionStatus::Failed,
                Some(&finished),
                format!(
                    "Gemini CLI stopped with an error: {}",
                    outcome
                        .error
                        .clone()
                        .or_else(|| ending::last_line(&finished.stderr_tail))
                        .unwrap_or_else(|| "no reason given".to_string())
                ),
                session_id,
            ),
            None => ending::program_failed(ending::end(
                SessionStatus::Failed,
                Some(&finished),
                ending::no_final_word(NAME, &finished, &unreadable),
                session_id,
            )),
        })
    }
}

/// A sentence for the session when the repository has Gemini CLI settings of its own, which
/// are not used.
fn repository_settings_note(cwd: &Path) -> Option<String> {
    let found: Vec<&str> = [".gemini/settings.json", ".gemini/.env", "GEMINI.md"]
        .into_iter()
        .filter(|f| std::fs::symlink_metadata(cwd.join(f)).is_ok())
        .collect();
    (!found.is_empty()).then(|| {
        format!(
            "The repository has Gemini CLI settings of its own ({}); Healer runs Gemini CLI \
             without them (hooks, MCP servers, a model or an endpoint named there could run \
             commands or send the key elsewhere).",
            found.join(", ")
        )
    })
}

fn environment(spec: &SessionSpec, mark: &str, home: Option<&Path>) -> Vec<(String, String)> {
    let mut env = process::base_env(|name| std::env::var(name).ok());
    for (name, value) in &spec.env {
        process::set(&mut env, name, value.clone());
    }
    // Set, even empty: Gemini CLI takes a variable from a repository's `.env` only when it is
    // not set, and never sends its traffic through a proxy Healer did not choose.
    for name in [
        "HTTPS_PROXY",
        "HTTP_PROXY",
        "https_proxy",
        "http_proxy",
        "ALL_PROXY",
        "all_proxy",
        "NODE_OPTIONS",
        "GOOGLE_API_KEY",
        "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
    ] {
        process::set(&mut env, name, "");
    }
    process::set(&mut env, "GOOGLE_GENAI_USE_VERTEXAI", "false");
    process::set(&mut env, "GOOGLE_GENAI_USE_GCA", "false");
    // The repository is not trusted: its `.gemini/` settings, `GEMINI.md` and most of its
    // `.env` are not used, and nothing runs without being allowed.
    process::set(&mut env, "GEMINI_RESTRICTED_MODE", "true");
    // One Node process, which ends on SIGTERM (the relaunching parent ignores it).
    process::set(&mut env, "GEMINI_CLI_NO_RELAUNCH", "true");
    if let Some(model) = &spec.model {
        process::set(&mut env, "GEMINI_MODEL", model.clone());
    }
    if let Some(home) = home {
        process::set(&mut env, "GEMINI_CLI_HOME", home.display().to_string());
    }
    if let Some(endpoint) = &spec.endpoint {
        process::set(
            &mut env,
            "GOOGLE_GEMINI_BASE_URL",
            endpoint.base_url.trim_end_matches('/'),
        );
        // Gemini CLI sends it as `x-goog-api-key`; a provider without a key gets a stand-in.
        let key = endpoint.key.as_ref().map_or("none", |k| k.expose());
        process::set(&mut env, "GEMINI_API_KEY", key);
    }
    process::set(&mut env, MARK_VAR, mark);
    process::set(&mut env, SESSION_VAR, spec.session_id.to_string());
    env
}

fn arguments(spec: &SessionSpec) -> Vec<std::ffi::OsString> {
    // `--opt=value`: a prompt may start with a dash, and `--allowed-tools` takes every word
    // after it.
    let mut args = vec![
        format!("--prompt={}", spec.prompt),
        "--output-format=stream-json".to_string(),
        // No extensions: they could add tools, MCP servers and hooks.
        "--extensions=none".to_string(),
    ];
    if let Some(model) = &spec.model {
        args.push(format!("--model={model}"));
    }
    for tool in session_tools(spec) {
        args.push(format!("--allowed-tools={tool}"));
    }
    if let Some(id) = &spec.resume {
        args.push(format!("--resume={id}"));
    }
    args.into_iter().map(Into::into).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_preset_decides_what_gemini_cli_may_use_without_asking() {
        let listed = vec![
            "python3 -m pytest -q".to_string(),
            "python3".to_string(),
            "  make   lint ".to_string(),
            String::new(),
            "python3".to_string(),
        ];
        let never = allowed_tools(Preset::NeverAsk, &listed);
        assert!(never.contains(&"run_shell_command".to_string()));
        assert!(never.contains(&"write_file".to_string()));
        assert!(!never.iter().any(|t| t.starts_with("run_shell_command(")));

        let risky = allowed_tools(Preset::AskRisky, &listed);
        assert!(!risky.contains(&"run_shell_command".to_string()));
        assert!(risky.contains(&"replace".to_string()));
        let shell: Vec<_> = risky.iter().filter(|t| t.starts_with(SHELL_TOOL)).collect();
        assert_eq!(
            shell,
            vec![
                "run_shell_command(python3 -m pytest -q)",
                "run_shell_command(python3)",
                "run_shell_command(make lint)",
            ]
        );

        let every = allowed_tools(Preset::AskEvery, &listed);
        assert_eq!(every, FILE_TOOLS.to_vec());
    }
}
