//! The shapes Claude Code writes, on its stream (`--output-format stream-json`) and in its
//! transcript file alike: lines of `{"type": …}` whose `user`/`assistant` lines carry an
//! Anthropic message, and the steps a message's content blocks become.

use serde::Deserialize;
use serde_json::Value;

use crate::session::{SessionStep, StepKind, StepSource, StepUsage};

/// Only the kind of a line: read first, so that the many lines Healer has no use for (request
/// snapshots, attachments, partial-message events) are skipped without building them.
#[derive(Deserialize)]
pub(super) struct Head {
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub subtype: Option<String>,
}

/// A `system` line of subtype `compact_boundary`: Claude Code compacted the conversation. Its
/// stream says `compact_metadata: {trigger, pre_tokens}`, its transcript `compactMetadata:
/// {trigger, preTokens}`.
#[derive(Deserialize)]
pub(super) struct CompactLine {
    #[serde(alias = "compactMetadata", default)]
    pub compact_metadata: Option<CompactMetadata>,
    #[serde(default)]
    pub timestamp: Option<String>,
    #[serde(rename = "isSidechain", default)]
    pub is_sidechain: bool,
}

#[derive(Deserialize)]
pub(super) struct CompactMetadata {
    #[serde(default)]
    pub trigger: Option<String>,
    #[serde(alias = "preTokens", default)]
    pub pre_tokens: Option<u64>,
}

impl CompactLine {
    /// The compaction step of this line, seen `at` when the line has no time of its own.
    pub fn step(self, at: impl FnOnce() -> String) -> SessionStep {
        let metadata = self.compact_metadata;
        let trigger = metadata
            .as_ref()
            .and_then(|m| m.trigger.as_deref())
            .map(|t| match t {
                "auto" => "automatically".to_string(),
                "manual" => "on request".to_string(),
                other => other.to_string(),
            });
        let tokens = metadata
            .as_ref()
            .and_then(|m| m.pre_tokens)
            .map(|n| format!("at {n} tokens"));
        let how: Vec<String> = trigger.into_iter().chain(tokens).collect();
        let at = self.timestamp.unwrap_or_else(at);
        crate::session::compaction_step(at, Some(&how.join(", ")))
    }
}

/// A `user` or `assistant` line.
#[derive(Deserialize)]
pub(super) struct MessageLine {
    pub message: Message,
    #[serde(default)]
    pub timestamp: Option<String>,
    /// Transcript: lines of a subagent's own conversation.
    #[serde(rename = "isSidechain", default)]
    pub is_sidechain: bool,
}

#[derive(Deserialize)]
pub(super) struct Message {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    pub content: Content,
    #[serde(default)]
    pub usage: Option<Usage>,
}

#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum Content {
    Text(String),
    Blocks(Vec<Block>),
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum Block {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        #[serde(default)]
        id: String,
        #[serde(default)]
        name: String,
        #[serde(default)]
        input: Value,
    },
    ToolResult {
        #[serde(default)]
        tool_use_id: String,
        #[serde(default)]
        content: Option<ResultContent>,
        /// Missing on a successful Write or Edit.
        #[serde(default)]
        is_error: Option<bool>,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum ResultContent {
    Text(String),
    Parts(Vec<Part>),
}

#[derive(Deserialize)]
pub(super) struct Part {
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub text: Option<String>,
}

/// Anthropic's usage of one model call.
#[derive(Deserialize, Default, Clone, Copy)]
pub(super) struct Usage {
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
    #[serde(default)]
    pub cache_read_input_tokens: u64,
    #[serde(default)]
    pub cache_creation_input_tokens: u64,
}

impl Usage {
    /// Anthropic's input excludes cache reads and writes; Healer's prompt tokens include them
    /// (as OpenAI's do), with the reads also counted as cached — as the model layer does.
    pub fn step_usage(self) -> StepUsage {
        StepUsage {
            prompt_tokens: self
                .input_tokens
                .saturating_add(self.cache_read_input_tokens)
                .saturating_add(self.cache_creation_input_tokens),
            completion_tokens: self.output_tokens,
            cached_tokens: self.cache_read_input_tokens,
        }
    }
}

/// The model Claude Code names for messages it made up itself (an API error shown as text).
pub(super) const SYNTHETIC_MODEL: &str = "<synthetic>";

/// The steps of one message, in order. `role_source` is who wrote its words (the agent for an
/// assistant message, the user for a user message); tool calls and results always belong to the
/// agent's turn (ATIF puts results in the agent step's observation).
pub(super) fn message_steps(
    message: Message,
    role_source: StepSource,
    at: &str,
) -> Vec<SessionStep> {
    let model = message.model.filter(|_| role_source == StepSource::Agent);
    let source = if model.as_deref() == Some(SYNTHETIC_MODEL) {
        StepSource::System
    } else {
        role_source
    };
    let step = |kind, text: String| SessionStep {
        at: at.to_string(),
        source,
        kind,
        text,
        tool: None,
        arguments: None,
        call_id: None,
        is_error: false,
        model: model.clone().filter(|m| m != SYNTHETIC_MODEL),
        usage: None,
    };
    let blocks = match message.content {
        Content::Text(text) if text.trim().is_empty() => return Vec::new(),
        Content::Text(text) => return vec![step(StepKind::Text, text)],
        Content::Blocks(blocks) => blocks,
    };
    blocks
        .into_iter()
        .filter_map(|block| match block {
            Block::Text { text } if text.trim().is_empty() => None,
            Block::Text { text } => Some(step(StepKind::Text, text)),
            Block::ToolUse { id, name, input } => Some(SessionStep {
                source: StepSource::Agent,
                tool: Some(name),
                arguments: Some(input.to_string()),
                call_id: Some(id),
                ..step(StepKind::ToolCall, String::new())
            }),
            Block::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => Some(SessionStep {
                source: StepSource::Agent,
                call_id: Some(tool_use_id),
                is_error: is_error.unwrap_or(false),
                model: None,
                ..step(StepKind::ToolResult, result_text(content))
            }),
            Block::Other => None,
        })
        .collect()
}

fn result_text(content: Option<ResultContent>) -> String {
    match content {
        None => String::new(),
        Some(ResultContent::Text(text)) => text,
        Some(ResultContent::Parts(parts)) => parts
            .into_iter()
            .map(|p| match (p.kind.as_str(), p.text) {
                (_, Some(text)) => text,
                (kind, None) => format!("[{kind}]"),
            })
            .collect::<Vec<_>>()
            .join("\n"),
    }
}
