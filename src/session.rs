//! What an agent session is, as the store keeps it and events carry it: which agent, its
//! status, and its steps. Pure shapes; the agents that produce them are in `agent`.
//!
//! Steps are flat and append-only (a text, a tool call, a tool result …), like a model thread's
//! messages: the live view and the loop detector read them in order, and the ATIF export groups
//! them into trajectory steps (an agent step with its calls, the results as its observation).

use serde::{Deserialize, Serialize};

/// Which agent works on a task. Stored by its name; the CLI takes the same names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "kebab-case")]
pub enum AgentKind {
    /// Healer's own tool loop over the configured model tiers.
    Builtin,
    /// The `claude` CLI (`claude -p … --output-format stream-json --verbose`).
    ClaudeCode,
    /// The `codex` CLI (`codex exec --json …`).
    Codex,
    /// The `opencode` CLI (`opencode run --format json …`).
    #[serde(rename = "opencode")]
    OpenCode,
    /// Google's `gemini` CLI (`gemini -p … --output-format stream-json`).
    GeminiCli,
}

impl AgentKind {
    pub const ALL: [AgentKind; 5] = [
        AgentKind::Builtin,
        AgentKind::ClaudeCode,
        AgentKind::Codex,
        AgentKind::OpenCode,
        AgentKind::GeminiCli,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            AgentKind::Builtin => "builtin",
            AgentKind::ClaudeCode => "claude-code",
            AgentKind::Codex => "codex",
            AgentKind::OpenCode => "opencode",
            AgentKind::GeminiCli => "gemini-cli",
        }
    }

    /// The agent's name for a person.
    pub fn name(self) -> &'static str {
        match self {
            AgentKind::Builtin => "Healer's built-in agent",
            AgentKind::ClaudeCode => "Claude Code",
            AgentKind::Codex => "Codex",
            AgentKind::OpenCode => "opencode",
            AgentKind::GeminiCli => "Gemini CLI",
        }
    }

    pub fn parse(s: &str) -> Option<AgentKind> {
        AgentKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// Who a step comes from, as ATIF says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum StepSource {
    System,
    User,
    Agent,
}

/// What a step is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    /// Words: the prompt, the agent's text, a steering message delivered, a system notice.
    Text,
    /// The agent called a tool.
    ToolCall,
    /// A tool's result, answering the call with the same `call_id`.
    ToolResult,
}

/// Tokens a model call cost, when the agent reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct StepUsage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cached_tokens: u64,
}

/// One thing that happened in a session, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct SessionStep {
    /// RFC 3339 UTC with milliseconds: the agent's own time when it gives one, else when seen.
    pub at: String,
    pub source: StepSource,
    pub kind: StepKind,
    /// Text: the words. ToolResult: the result's content (capped by the caller).
    pub text: String,
    /// ToolCall: the tool's name (as the agent names it: `Bash`, `exec_command`, `run_command`).
    pub tool: Option<String>,
    /// ToolCall: the arguments, as JSON text (like a model thread's tool calls).
    pub arguments: Option<String>,
    /// ToolCall / ToolResult: the id that pairs them.
    pub call_id: Option<String>,
    /// ToolResult: whether the tool failed.
    pub is_error: bool,
    pub model: Option<String>,
    pub usage: Option<StepUsage>,
}

/// How a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum SessionStatus {
    Running,
    /// The agent said it was done.
    Finished,
    /// The agent exited with an error, could not start, or its stream was unusable.
    Failed,
    /// Past its time limit.
    TimedOut,
    /// Stopped by the person or by steering.
    Stopped,
    /// Found running after Healer stopped uncleanly.
    Interrupted,
}

/// A message the person typed to a live session, as the agent receives it.
pub fn person_text(message: &str) -> String {
    format!(
        "The person you are working for writes (through Healer): {}",
        message.trim()
    )
}

/// A steering message as an agent receives it: said to come from Healer, so the agent knows it
/// is not the person's task changing.
pub fn steering_text(message: &str) -> String {
    format!(
        "Healer, which watches this session, says: {}",
        message.trim()
    )
}

/// How a compaction step starts: the agent's conversation was compacted (its older turns
/// summarised and dropped) to fit the model's context window. The adapters write one for
/// Claude Code's `compact_boundary` and Codex's `compacted`; the loop detector counts them.
pub const COMPACTED: &str = "The conversation was compacted";

/// Words of a short system notice, in another agent's record, that say its context was
/// compacted or trimmed ("Conversation compacted", OpenHands' "Trimming prompt to meet context
/// window limitations", a condensation).
const COMPACTION_WORDS: [&str; 6] = [
    "compacted",
    "trimming prompt",
    "prompt trimmed",
    "context trimmed",
    "condensed",
    "condensation",
];

/// The step that says an agent's conversation was compacted, seen `at`; `how` is what the agent
/// said of it ("automatically, at 155000 tokens"), when it said anything.
pub fn compaction_step(at: String, how: Option<&str>) -> SessionStep {
    let text = match how.map(str::trim).filter(|h| !h.is_empty()) {
        Some(how) => format!("{COMPACTED} to fit the model's context ({how})."),
        None => format!("{COMPACTED} to fit the model's context."),
    };
    SessionStep {
        at,
        source: StepSource::System,
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

/// Whether a step says the session's context was compacted or trimmed: one an adapter wrote
/// ([`compaction_step`], also read back from an exported trajectory), or a short system notice
/// of another agent's record that says so.
pub fn is_compaction(step: &SessionStep) -> bool {
    if step.source != StepSource::System || step.kind != StepKind::Text {
        return false;
    }
    let text = step.text.trim_start();
    if text.starts_with(COMPACTED) {
        return true;
    }
    let first = text.lines().next().unwrap_or_default();
    let lower = first.to_lowercase();
    first.chars().count() <= 200 && COMPACTION_WORDS.iter().any(|w| lower.contains(w))
}
