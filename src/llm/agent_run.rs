//! What a caller gives the agent loop and what it gets back, and the loop's bounds.

use serde::{Deserialize, Serialize};

use super::chat::{ChatMessage, Usage};
use super::tiers::{Tier, TierChoice};
use super::tools::ToolSet;

/// The loop's bounds (settings key `llm.loop`). Its token bound is the tier's budget: the
/// tokens the model writes in one attempt. What it reads is bounded by the per-task cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct LoopSettings {
    /// Model calls that returned an answer.
    pub max_steps: u32,
    /// Wall-clock time for the whole loop, tools included.
    pub max_duration_secs: u32,
    /// Replies in a row that could not be used (unreadable, empty, or only refused tool calls).
    pub max_malformed_replies: u32,
}

impl Default for LoopSettings {
    fn default() -> Self {
        LoopSettings {
            max_steps: 25,
            max_duration_secs: 600,
            max_malformed_replies: 3,
        }
    }
}

/// One loop, as a caller asks for it.
pub struct AgentRun {
    /// The task whose thread this fills (see [`Llm::start_task`]).
    pub task_id: i64,
    pub tier: Tier,
    pub system: String,
    /// Earlier turns already stored in the thread (a chat that continues): sent, not stored
    /// again. When it is not empty, the system prompt is not stored again either.
    pub history: Vec<ChatMessage>,
    /// The new messages of this turn (usually the person's or the pipeline's request).
    pub messages: Vec<ChatMessage>,
    pub tools: ToolSet,
    /// `None`: the `llm.loop` settings.
    pub limits: Option<LoopSettings>,
    /// Tokens the model may write in this attempt; `None`: the tier's budget.
    pub max_tokens: Option<u64>,
    /// The most tokens, read and written, the run's task may use (a project's tokens per
    /// task): reaching it ends the loop (`TokenLimit`) instead of failing the call. The
    /// budgets' per-task cap still holds above it. `None`: only that cap.
    pub task_tokens: Option<u64>,
    /// Messages that arrived while the loop ran (steering's), each sent as the next user
    /// message before the next model call.
    pub inbox: Option<Inbox>,
    /// The caller's temperature, used when the tier sets none (`None`: the provider's).
    pub temperature: Option<f64>,
    /// A model the caller chose instead of `tier`'s (steering's model); its calls are
    /// recorded under `choice.used`.
    pub choice: Option<TierChoice>,
    /// The JSON Schema the final answer must match, for servers that can enforce it (see
    /// [`super::ChatRequest::answer_schema`]); `None` for a free answer.
    pub answer_schema: Option<serde_json::Value>,
}

/// Where a loop looks for messages that arrived while it ran.
pub type Inbox = Box<dyn FnMut() -> Vec<String> + Send>;

/// Why the loop ended without an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model answered without calling a tool.
    Answered,
    StepLimit,
    TokenLimit,
    TimeLimit,
    MalformedReplies,
    /// The provider's answers themselves could not be read (not JSON, cut, not of its
    /// format), several in a row: the provider's fault, not the model's.
    UnreadableReplies,
}

impl StopReason {
    pub fn describe(self) -> &'static str {
        match self {
            StopReason::Answered => "the model answered",
            StopReason::StepLimit => "stopped at the step limit",
            StopReason::TokenLimit => "stopped at the token budget",
            StopReason::TimeLimit => "stopped at the time limit",
            StopReason::MalformedReplies => "stopped after malformed replies in a row",
            StopReason::UnreadableReplies => {
                "stopped: the provider's answers could not be read, several in a row"
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct AgentOutcome {
    pub task_id: i64,
    pub stop: StopReason,
    /// The model's final text when it answered.
    pub answer: Option<String>,
    pub steps: u32,
    pub usage: Usage,
    /// Tool calls refused: unknown tool, arguments not JSON or not matching the schema.
    pub invalid_tool_calls: u32,
    pub malformed_replies: u32,
    /// Why the provider's last unreadable answer could not be read (see
    /// [`StopReason::UnreadableReplies`]).
    pub unreadable: Option<String>,
    /// Tool calls that were run (not refused).
    pub tools_run: u32,
    /// How long the loop took, tools included.
    pub elapsed_secs: u64,
    /// How fast the model wrote while Healer waited for it (`None`: under a second of it).
    pub tokens_per_sec: Option<f64>,
    /// What the tier resolved to (and whether it fell back).
    pub choice: TierChoice,
}
