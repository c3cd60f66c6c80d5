//! Coding agents behind one trait: Healer's own tool loop, Claude Code and Codex. Each adapter
//! starts its agent in a task's worktree and turns the agent's own stream into the same
//! session steps (`session::SessionStep`), as they happen; the project runner stores them and
//! the steering loop reads them. Adding an agent is one file that implements [`Agent`].

pub mod atif;
pub mod builtin;
pub mod claude_code;
pub mod codex;
mod ending;
pub mod gemini;
pub mod installed;
pub mod opencode;
pub mod process;
mod registry;
pub mod trajectory;
pub mod transcript;

use std::path::PathBuf;
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::error::Result;
use crate::llm::ApiKey;
use crate::session::{AgentKind, SessionStatus, SessionStep, StepKind, StepSource};

pub use registry::{agent_name, agent_program, not_available, AgentRegistry};

/// What one session is asked to do, and where.
#[derive(Debug, Clone)]
pub struct SessionSpec {
    /// Healer's id of the session (rows in `agent_sessions`); the built-in agent's thread and
    /// the steering mailbox are keyed by it.
    pub session_id: i64,
    /// The task's worktree: the agent's working directory, and the only place it should write.
    pub cwd: PathBuf,
    /// The first user message (built from the task), or the message a resume carries.
    pub prompt: String,
    /// The agent's own session id to continue (`claude --resume`, `codex exec resume`, the
    /// built-in agent's thread), when this session resumes an earlier one.
    pub resume: Option<String>,
    /// Tools the agent may use without asking (Claude Code's `--allowedTools`).
    pub allowed_tools: Vec<String>,
    /// The agent's environment on top of a safe base (PATH, HOME, LANG …): its own model
    /// endpoint and key variable, never Healer's provider keys unless the project names them.
    pub env: Vec<(String, String)>,
    /// The program to start, when not found on PATH (tests point at the pinned npm package).
    pub program: Option<PathBuf>,
    /// A model name for the agent, when the project sets one.
    pub model: Option<String>,
    /// The model provider to use instead of the agent's own login (a provider configured in
    /// Healer); `None`: the agent's own login and settings.
    pub endpoint: Option<ModelEndpoint>,
    /// Healer's own settings for the agent, layered over the person's (Claude Code's
    /// `--settings`: the steering hooks). Never written into the worktree, and never holding
    /// a secret (it is on the agent's command line).
    pub agent_settings: Option<serde_json::Value>,
    /// Ended (process group killed) past this.
    pub time_limit: Duration,
    /// Where the session's control group is recorded (the data folder's groups), so that what
    /// a crash left is ended at the next start; `None`: no control group.
    pub groups: Option<PathBuf>,
    /// The way to the person and the session's mailbox, for an agent whose adapter delivers
    /// messages and asks questions itself while the agent works (opencode's server); `None`:
    /// nobody to ask (a question is refused) and no mailbox.
    pub channel: Option<SessionChannel>,
}

/// What an adapter that talks to its agent while it works can reach: the session's mailbox
/// (steering, the person's messages) and the person (a question the project says to ask).
#[async_trait]
pub trait Channel: Send + Sync {
    /// Whether messages wait for the agent.
    fn waiting(&self) -> bool;
    /// The messages waiting, taken as delivered `via` (they are given to the agent now), in
    /// the words the agent reads, joined; `None` when none wait.
    fn take_messages(&self, via: &str) -> Option<String>;
    /// The agent wants `request` (`call`: its own id for the tool call): judged by the
    /// project's approvals, and asked of the person when they say so; waits for the answer.
    /// `None`: it may; else why not, in words for the agent.
    async fn ask(
        &self,
        call: Option<String>,
        request: crate::approval::AgentRequest,
    ) -> Option<String>;
}

/// A [`Channel`] in a spec (it prints as its name only).
#[derive(Clone)]
pub struct SessionChannel(pub std::sync::Arc<dyn Channel>);

impl std::fmt::Debug for SessionChannel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionChannel")
    }
}

/// Where an external agent's model is, when the person chose a provider configured in Healer.
/// The key reaches only the agent's process: [`ApiKey`] prints as "[redacted]".
#[derive(Debug, Clone)]
pub struct ModelEndpoint {
    /// The provider's name in Healer.
    pub provider: String,
    /// The base URL in the agent's own convention: Anthropic's without `/v1` for Claude Code,
    /// up to and including `/v1` for Codex (it posts to `{base_url}/responses`).
    pub base_url: String,
    /// `None` for a provider that needs no key (a local Ollama). When the session runs, this
    /// is the gateway's pass for the session, never the provider's key.
    pub key: Option<ApiKey>,
    /// The provider's wire format and prices (for the gateway's counting).
    pub kind: crate::llm::ProviderKind,
    pub prices: Vec<crate::llm::ModelPrice>,
}

/// What an adapter reports while its session runs.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentUpdate {
    /// The agent told its own session id (and where its transcript is, when it keeps one).
    Started {
        agent_session_id: String,
        transcript: Option<PathBuf>,
    },
    /// The process group the agent runs in (Stop and crash recovery kill it).
    Process {
        pgid: i32,
    },
    Step(SessionStep),
    /// A line of the agent's stream Healer does not understand (a newer agent's): kept as it
    /// came and counted, never taken for a sign of life.
    Raw(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct SessionEnd {
    pub status: SessionStatus,
    pub exit_code: Option<i32>,
    /// The agent's last word (its result text), or what went wrong, in a sentence.
    pub summary: String,
    pub agent_session_id: Option<String>,
    /// The agent's program failed rather than the agent: it would not start, ended without its
    /// final word, or printed no usable stream. False when the agent said how it went.
    pub program_failed: bool,
}

/// A coding agent. `run` drives one session to its end: it sends updates as they happen, and
/// when `cancel` fires it ends the agent's processes (group and any orphan) and returns
/// `Stopped`. Errors are for Healer's own trouble; an agent that fails is a `SessionEnd`.
#[async_trait]
pub trait Agent: Send + Sync {
    fn kind(&self) -> AgentKind;

    /// The program a session would start (`spec_program` wins), for a CLI agent: its version
    /// is read as the session starts. `None`: not a program of its own, or none found.
    fn program_for(&self, _spec_program: Option<&std::path::Path>) -> Option<PathBuf> {
        None
    }

    /// Whether the agent's program is installed, and the version it says it is.
    async fn installed(&self) -> Option<installed::Installed> {
        let program = self.program_for(None)?;
        let version = installed::version(&program).await?;
        Some(installed::Installed { program, version })
    }

    async fn run(
        &self,
        spec: SessionSpec,
        updates: mpsc::UnboundedSender<AgentUpdate>,
        cancel: CancellationToken,
    ) -> Result<SessionEnd>;
}

/// The variable of a session's environment that names the folder Healer keeps an agent's own
/// files in, for the agents that have no variable of their own for it (opencode, Gemini CLI).
pub const AGENT_HOME_VAR: &str = "HEALER_AGENT_HOME";

/// A CLI agent's adapter with its own defaults, its program `program` (else PATH): what the
/// project form asks which program and version a kind would run. `None` for the built-in agent.
pub fn cli(kind: AgentKind, program: Option<PathBuf>) -> Option<Box<dyn Agent>> {
    Some(match kind {
        AgentKind::Builtin => return None,
        AgentKind::ClaudeCode => Box::new(claude_code::ClaudeCode::new(program)),
        AgentKind::Codex => Box::new(codex::Codex::new(program)),
        AgentKind::OpenCode => Box::new(opencode::OpenCode::new(program)),
        AgentKind::GeminiCli => Box::new(gemini::GeminiCli::new(program)),
    })
}

/// Now, as steps write their time: RFC 3339 UTC with milliseconds.
pub(crate) fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// A step of words from `source`, seen now.
pub(crate) fn text_step(source: StepSource, text: String) -> SessionStep {
    SessionStep {
        at: now(),
        source,
        kind: StepKind::Text,
        text,
        tool: None,
        arguments: None,
        call_id: None,
        is_error: false,
        model: None,
        usage: None,
    }
}
