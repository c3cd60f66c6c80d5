//! Tasks and their threads: every step of an agent loop as it is stored and shown (assistant
//! text, tool calls, tool results, usage).

use serde::{Deserialize, Serialize};

use super::chat::{ChatMessage, ToolCall, Usage};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum TaskKind {
    Maintainer,
    Planner,
    Analyzer,
    Judge,
    /// Healer's built-in coding agent working on a project's task.
    Agent,
}

impl TaskKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskKind::Maintainer => "maintainer",
            TaskKind::Planner => "planner",
            TaskKind::Analyzer => "analyzer",
            TaskKind::Judge => "judge",
            TaskKind::Agent => "agent",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            TaskKind::Maintainer,
            TaskKind::Planner,
            TaskKind::Analyzer,
            TaskKind::Judge,
            TaskKind::Agent,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Running,
    /// The model answered.
    Finished,
    /// A bound ended it (steps, tokens, time, malformed replies).
    Stopped,
    /// A model call failed or a cap refused one.
    Failed,
    /// The engine stopped while it ran.
    Interrupted,
}

impl TaskStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Running => "running",
            TaskStatus::Finished => "finished",
            TaskStatus::Stopped => "stopped",
            TaskStatus::Failed => "failed",
            TaskStatus::Interrupted => "interrupted",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            TaskStatus::Running,
            TaskStatus::Finished,
            TaskStatus::Stopped,
            TaskStatus::Failed,
            TaskStatus::Interrupted,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct Task {
    pub id: i64,
    pub kind: TaskKind,
    pub title: String,
    pub workflow_id: Option<i64>,
    pub status: TaskStatus,
    pub summary: String,
    pub created_at: String,
    pub finished_at: Option<String>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum MessageRole {
    System,
    #[default]
    User,
    Assistant,
    Tool,
    /// Healer's own reminder after a reply it could not use: sent to the model like a user
    /// message, but never the person's words (a chat's open question stays open).
    Nudge,
}

impl MessageRole {
    pub fn as_str(self) -> &'static str {
        match self {
            MessageRole::System => "system",
            MessageRole::User => "user",
            MessageRole::Assistant => "assistant",
            MessageRole::Tool => "tool",
            MessageRole::Nudge => "nudge",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            MessageRole::System,
            MessageRole::User,
            MessageRole::Assistant,
            MessageRole::Tool,
            MessageRole::Nudge,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }
}

/// One stored step of a thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ThreadMessage {
    pub id: i64,
    pub task_id: i64,
    pub at: String,
    pub role: MessageRole,
    pub content: String,
    /// On assistant messages: the tools it called.
    pub tool_calls: Vec<ToolCall>,
    /// On tool messages: which call this answers, and the tool's name.
    pub tool_call_id: Option<String>,
    pub tool_name: Option<String>,
    /// On tool messages: the call was refused or the tool failed.
    pub is_error: bool,
    /// On assistant messages: who answered and what it used.
    pub provider: Option<String>,
    pub model: Option<String>,
    pub usage: Option<Usage>,
}

impl ThreadMessage {
    /// The message as sent to a model again (a thread that continues); system lines are not.
    pub fn to_chat(&self) -> Option<ChatMessage> {
        match self.role {
            MessageRole::System => None,
            MessageRole::User | MessageRole::Nudge => Some(ChatMessage::User {
                text: self.content.clone(),
            }),
            MessageRole::Assistant => Some(ChatMessage::Assistant {
                text: self.content.clone(),
                tool_calls: self.tool_calls.clone(),
            }),
            MessageRole::Tool => Some(ChatMessage::ToolResult {
                call_id: self.tool_call_id.clone().unwrap_or_default(),
                name: self.tool_name.clone().unwrap_or_default(),
                content: self.content.clone(),
                is_error: self.is_error,
            }),
        }
    }
}

/// A message to append (the store gives it its id and time).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NewMessage {
    pub role: MessageRole,
    pub content: String,
    pub tool_calls: Vec<ToolCall>,
    pub tool_call_id: Option<String>,
    pub tool_name: Option<String>,
    pub is_error: bool,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub usage: Option<Usage>,
}

impl NewMessage {
    /// Healer's reminder after an unusable reply.
    pub fn nudge(text: &str) -> Self {
        NewMessage {
            role: MessageRole::Nudge,
            content: text.to_string(),
            ..NewMessage::default()
        }
    }

    pub fn system(text: &str) -> Self {
        NewMessage {
            role: MessageRole::System,
            content: text.to_string(),
            ..NewMessage::default()
        }
    }

    /// How a conversation message is stored.
    pub fn from_chat(message: &ChatMessage) -> Self {
        match message {
            ChatMessage::User { text } => NewMessage {
                role: MessageRole::User,
                content: text.clone(),
                ..NewMessage::default()
            },
            ChatMessage::Assistant { text, tool_calls } => NewMessage {
                role: MessageRole::Assistant,
                content: text.clone(),
                tool_calls: tool_calls.clone(),
                ..NewMessage::default()
            },
            ChatMessage::ToolResult {
                call_id,
                name,
                content,
                is_error,
            } => NewMessage {
                role: MessageRole::Tool,
                content: content.clone(),
                tool_call_id: Some(call_id.clone()),
                tool_name: Some(name.clone()),
                is_error: *is_error,
                ..NewMessage::default()
            },
        }
    }
}

impl ThreadMessage {
    /// One line for an event or a list: what this step was.
    pub fn summary(&self) -> String {
        let short = |s: &str| super::http::shorten(s.trim(), 120);
        match self.role {
            MessageRole::System => "system prompt".to_string(),
            MessageRole::User => format!("asked: {}", short(&self.content)),
            MessageRole::Nudge => format!("Healer reminded the model: {}", short(&self.content)),
            MessageRole::Assistant if self.tool_calls.is_empty() => {
                format!("answered: {}", short(&self.content))
            }
            MessageRole::Assistant => {
                let names: Vec<_> = self.tool_calls.iter().map(|c| c.name.as_str()).collect();
                format!("called {}", names.join(", "))
            }
            MessageRole::Tool => format!(
                "{} {}: {}",
                self.tool_name.as_deref().unwrap_or("tool"),
                if self.is_error {
                    "refused/failed"
                } else {
                    "returned"
                },
                short(&self.content)
            ),
        }
    }
}

/// A task and its whole thread, as the UI shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct TaskThread {
    pub task: Task,
    pub messages: Vec<ThreadMessage>,
}

/// Assistant text as it streams, for a thread shown live (not stored: the stored message
/// follows when the step is complete).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ThreadText {
    pub task_id: i64,
    pub text: String,
}
