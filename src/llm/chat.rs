//! One model call, independent of the wire format: the conversation, the tools offered, and
//! what came back (text, tool calls, usage). Each provider's client turns these into its own
//! JSON and back.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::error::LlmError;

/// Tokens a call used, read from the provider's answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct Usage {
    /// Every prompt token, cached ones included.
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// The part of `prompt_tokens` served from the provider's prompt cache.
    pub cached_tokens: u64,
}

impl Usage {
    pub fn total(&self) -> u64 {
        self.prompt_tokens.saturating_add(self.completion_tokens)
    }

    pub fn add(&mut self, other: Usage) {
        self.prompt_tokens = self.prompt_tokens.saturating_add(other.prompt_tokens);
        self.completion_tokens = self
            .completion_tokens
            .saturating_add(other.completion_tokens);
        self.cached_tokens = self.cached_tokens.saturating_add(other.cached_tokens);
    }
}

/// A tool call as the model made it. `arguments` is the JSON text the model wrote: untrusted,
/// checked against the tool's schema before anything runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// One message of a conversation (the system prompt travels apart).
#[derive(Debug, Clone, PartialEq)]
pub enum ChatMessage {
    User {
        text: String,
    },
    Assistant {
        text: String,
        tool_calls: Vec<ToolCall>,
    },
    ToolResult {
        call_id: String,
        name: String,
        content: String,
        is_error: bool,
    },
}

/// A tool as offered to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments object.
    pub schema: serde_json::Value,
}

pub struct ChatRequest<'a> {
    pub model: &'a str,
    pub system: &'a str,
    pub messages: &'a [ChatMessage],
    pub tools: &'a [ToolSpec],
    /// The most completion tokens the answer may have.
    pub max_tokens: u32,
    /// Sampling temperature; `None`: the provider's default (not sent).
    pub temperature: Option<f64>,
    /// The JSON Schema the answer must match, sent for the server to enforce where it can
    /// (OpenAI's and llama.cpp's `response_format`, Ollama's /v1). The answer is validated
    /// all the same: a server may ignore it.
    pub answer_schema: Option<&'a serde_json::Value>,
}

/// What the model answered.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChatReply {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    /// The provider's own word for why it stopped ("stop", "tool_calls", "end_turn" …).
    pub finish_reason: Option<String>,
    /// Not a reply of the shape asked for (a step that is not one of the offered ones): kept
    /// in the thread as said, counted as an unusable reply, never taken as the answer.
    pub unusable: bool,
}

impl ChatReply {
    /// The reply as far as `allowance` lets it be read (a whole answer that arrived at once).
    pub(crate) fn within(mut self, allowance: &mut Allowance) -> ChatReply {
        let text = allowance.admit(&self.text).len();
        self.text.truncate(text);
        for call in &mut self.tool_calls {
            let kept = allowance.admit(&call.arguments).len();
            call.arguments.truncate(kept);
        }
        if allowance.is_cut() {
            self.finish_reason = Some(CUT_OFF.to_string());
        }
        self
    }
}

/// Receives assistant text as it streams in.
pub type OnText<'a> = &'a (dyn Fn(&str) + Send + Sync);

/// A provider's client: one wire format, real HTTP.
/// What a provider's answer says when Healer cut it off (see [`Allowance`]).
pub const CUT_OFF: &str = "length";

#[async_trait]
pub trait ModelClient: Send + Sync {
    /// One call, streamed: `on_text` gets each piece of assistant text as it arrives.
    async fn chat(
        &self,
        request: &ChatRequest<'_>,
        on_text: OnText<'_>,
    ) -> Result<ChatReply, LlmError>;

    /// The models the provider offers (the connection test).
    async fn list_models(&self) -> Result<Vec<String>, LlmError>;
}

/// How much of an answer is read: what the model may write for the tokens asked, counted in
/// what arrives (text and tool arguments) rather than in what the server says it sent. A
/// server that goes on past it is cut off, and the answer ends there as at its length limit.
#[derive(Debug)]
pub(crate) struct Allowance {
    left: usize,
    cut: bool,
}

impl Allowance {
    /// Bytes per token asked for: generous (a token is about four bytes of English, up to a
    /// dozen of other scripts), so only a server that ignores the limit meets it.
    const BYTES_PER_TOKEN: usize = 16;
    /// A floor, so a small request may still get a sentence.
    const MIN_BYTES: usize = 64 * 1024;

    pub(crate) fn for_tokens(max_tokens: u32) -> Allowance {
        let tokens = usize::try_from(max_tokens).unwrap_or(usize::MAX);
        Allowance {
            left: tokens
                .saturating_mul(Self::BYTES_PER_TOKEN)
                .max(Self::MIN_BYTES),
            cut: false,
        }
    }

    /// The part of `piece` that still fits (whole characters); once something did not, the
    /// answer is cut.
    pub(crate) fn admit<'p>(&mut self, piece: &'p str) -> &'p str {
        if piece.len() <= self.left {
            self.left -= piece.len();
            return piece;
        }
        let mut end = self.left;
        while !piece.is_char_boundary(end) {
            end -= 1;
        }
        self.left -= end;
        self.cut = true;
        &piece[..end]
    }

    pub(crate) fn is_cut(&self) -> bool {
        self.cut
    }
}

impl Default for Allowance {
    /// The floor alone; a client sets the one its request asked for.
    fn default() -> Self {
        Allowance::for_tokens(0)
    }
}

/// A tool call's name or id as kept: a real one is a few dozen characters; a server sending
/// megabytes for one is cut (the name then matches no tool and the call is refused).
pub(crate) fn short_name(text: &str) -> String {
    const MAX: usize = 256;
    let mut end = text.len().min(MAX);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_string()
}

/// Collects a streamed tool call whose parts arrive in pieces, by position.
#[derive(Debug, Default)]
pub(crate) struct PartialCalls {
    calls: Vec<ToolCall>,
}

impl PartialCalls {
    pub(crate) fn at(&mut self, index: usize) -> Option<&mut ToolCall> {
        // A server may send any index; cap how far we grow for one that lies.
        const MAX_CALLS: usize = 128;
        if index >= MAX_CALLS {
            return None;
        }
        while self.calls.len() <= index {
            self.calls.push(ToolCall {
                id: String::new(),
                name: String::new(),
                arguments: String::new(),
            });
        }
        self.calls.get_mut(index)
    }

    /// The calls, with an id made up for any the server left without one.
    pub(crate) fn finish(self) -> Vec<ToolCall> {
        self.calls
            .into_iter()
            .enumerate()
            .filter(|(_, c)| !c.name.is_empty() || !c.arguments.is_empty())
            .map(|(i, mut c)| {
                if c.id.is_empty() {
                    c.id = format!("call_{i}");
                }
                c
            })
            .collect()
    }
}
