//! Claude Code's live stream (`--output-format stream-json --verbose --include-partial-messages`)
//! turned into steps as the lines come.
//!
//! Each content block arrives as its own `assistant` line, with the usage of the call's start
//! (output tokens not yet known). The final usage comes in the partial-message event
//! `message_delta`, a few milliseconds after the call's last block and before any tool runs:
//! so the newest step is held until then and carries the call's usage, every other step goes
//! out at once.

use serde::Deserialize;
use serde_json::Value;

use super::lines::{message_steps, CompactLine, Head, MessageLine, Usage};
use crate::agent::process::Flow;
use crate::agent::{now, text_step};
use crate::session::{SessionStep, StepSource, StepUsage};

/// Lines in a row that are not Claude Code's JSON before Healer gives up on the stream.
pub const MAX_UNREADABLE_LINES: usize = 100;

/// What a line told.
#[derive(Debug, PartialEq)]
pub(super) enum Seen {
    Init {
        session_id: String,
        cwd: Option<String>,
    },
    Step(SessionStep),
    /// A line of Claude Code's JSON of a type Healer does not know (a newer Claude Code): kept
    /// as it came.
    Raw(String),
}

/// The types of line Claude Code 2.1 may write that carry nothing for the session's steps (found
/// in the pinned program); any other type is a newer Claude Code's, kept as a raw step.
const KNOWN_QUIET: [&str; 9] = [
    "rate_limit_event",
    "prompt_suggestion",
    "keep_alive",
    "tool_progress",
    "tool_use_summary",
    "auth_status",
    "control_request",
    "control_response",
    "control_cancel_request",
];

/// The `result` line: how the session ended, in Claude Code's words.
#[derive(Debug, Deserialize, Default)]
pub(super) struct Outcome {
    #[serde(default)]
    pub subtype: String,
    #[serde(default)]
    pub is_error: bool,
    #[serde(default)]
    pub result: Option<String>,
    #[serde(default)]
    pub terminal_reason: Option<String>,
    #[serde(default)]
    pub errors: Vec<String>,
    #[serde(default)]
    pub permission_denials: Vec<Value>,
}

#[derive(Deserialize)]
struct InitLine {
    session_id: String,
    #[serde(default)]
    cwd: Option<String>,
}

#[derive(Deserialize)]
struct SystemLine {
    #[serde(default)]
    attempt: Option<u64>,
    #[serde(default)]
    max_retries: Option<u64>,
    #[serde(default)]
    error_status: Option<u64>,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    tool_name: Option<String>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    content: Option<String>,
}

#[derive(Deserialize)]
struct EventLine {
    event: Event,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    MessageStart {
        message: StartedMessage,
    },
    MessageDelta {
        #[serde(default)]
        usage: Option<Usage>,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct StartedMessage {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Default)]
pub(super) struct Stream {
    pub outcome: Option<Outcome>,
    /// Lines that were not Claude Code's JSON, and the first of them.
    pub unreadable: usize,
    pub first_unreadable: Option<String>,
    unreadable_in_a_row: usize,
    /// The newest step of the current model call, waiting for the call's usage.
    held: Option<SessionStep>,
    /// The current model call: its message id, its usage so far, whether a step carries it.
    call: Option<String>,
    call_open: bool,
    usage: Option<Usage>,
    usage_given: bool,
}

impl Stream {
    pub fn line(&mut self, line: &str, seen: &mut Vec<Seen>) -> Flow {
        let Ok(head) = serde_json::from_str::<Head>(line) else {
            return self.unreadable(line);
        };
        if head.kind.is_empty() {
            return self.unreadable(line);
        }
        self.unreadable_in_a_row = 0;
        match head.kind.as_str() {
            "assistant" => self.assistant(line, seen),
            "stream_event" => self.event(line, seen),
            "user" => {
                self.flush(seen);
                if let Ok(parsed) = serde_json::from_str::<MessageLine>(line) {
                    let at = parsed.timestamp.unwrap_or_else(now);
                    let steps = message_steps(parsed.message, StepSource::User, &at);
                    seen.extend(steps.into_iter().map(Seen::Step));
                }
            }
            "system" => {
                self.flush(seen);
                self.system(head.subtype.as_deref().unwrap_or_default(), line, seen);
            }
            "result" => {
                self.flush(seen);
                self.outcome = serde_json::from_str(line).ok();
            }
            kind if KNOWN_QUIET.contains(&kind) => {}
            _ => {
                self.flush(seen);
                seen.push(Seen::Raw(line.to_string()));
            }
        }
        Flow::Continue
    }

    /// The stream ended: the step still held goes out.
    pub fn finish(&mut self, seen: &mut Vec<Seen>) {
        self.flush(seen);
    }

    fn unreadable(&mut self, line: &str) -> Flow {
        self.unreadable += 1;
        self.unreadable_in_a_row += 1;
        if self.first_unreadable.is_none() {
            self.first_unreadable = Some(line.chars().take(200).collect());
        }
        if self.unreadable_in_a_row > MAX_UNREADABLE_LINES {
            Flow::Abandon
        } else {
            Flow::Continue
        }
    }

    fn assistant(&mut self, line: &str, seen: &mut Vec<Seen>) {
        let Ok(parsed) = serde_json::from_str::<MessageLine>(line) else {
            return;
        };
        let id = parsed.message.id.clone();
        if !self.call_open || id != self.call {
            self.flush(seen);
            self.start_call(id, parsed.message.usage);
        } else if let Some(step) = self.held.take() {
            seen.push(Seen::Step(step));
        }
        let at = parsed.timestamp.unwrap_or_else(now);
        let mut steps = message_steps(parsed.message, StepSource::Agent, &at);
        self.held = steps.pop();
        seen.extend(steps.into_iter().map(Seen::Step));
    }

    fn event(&mut self, line: &str, seen: &mut Vec<Seen>) {
        let Ok(EventLine { event }) = serde_json::from_str::<EventLine>(line) else {
            return;
        };
        match event {
            Event::MessageStart { message } => {
                self.flush(seen);
                self.start_call(message.id, message.usage);
            }
            Event::MessageDelta { usage } => {
                if let (Some(mut total), Some(delta)) = (self.usage, usage) {
                    total.output_tokens = delta.output_tokens;
                    self.usage = Some(total);
                }
                self.flush(seen);
                self.call_open = false;
            }
            Event::Other => {}
        }
    }

    fn start_call(&mut self, id: Option<String>, usage: Option<Usage>) {
        self.call = id;
        self.call_open = true;
        self.usage = usage;
        self.usage_given = false;
    }

    /// Send the held step, with the call's usage when no step carries it yet.
    fn flush(&mut self, seen: &mut Vec<Seen>) {
        let Some(mut step) = self.held.take() else {
            return;
        };
        if !self.usage_given {
            // A message Claude Code made up itself (an API error) cost nothing.
            step.usage = self
                .usage
                .map(Usage::step_usage)
                .filter(|u| *u != StepUsage::default());
            self.usage_given = step.usage.is_some();
        }
        seen.push(Seen::Step(step));
    }

    fn system(&mut self, subtype: &str, line: &str, seen: &mut Vec<Seen>) {
        if subtype == "init" {
            if let Ok(init) = serde_json::from_str::<InitLine>(line) {
                seen.push(Seen::Init {
                    session_id: init.session_id,
                    cwd: init.cwd,
                });
            }
            return;
        }
        if subtype == "compact_boundary" {
            if let Ok(compact) = serde_json::from_str::<CompactLine>(line) {
                seen.push(Seen::Step(compact.step(now)));
            }
            return;
        }
        let Ok(s) = serde_json::from_str::<SystemLine>(line) else {
            return;
        };
        let text = match subtype {
            "api_retry" => format!(
                "The model's API failed ({}); Claude Code retries (attempt {} of {}).",
                match (s.error_status, s.error.as_deref()) {
                    (Some(status), Some(e)) => format!("{status} {e}"),
                    (Some(status), None) => status.to_string(),
                    (None, Some(e)) => e.to_string(),
                    (None, None) => "no answer".to_string(),
                },
                s.attempt.unwrap_or(0),
                s.max_retries.unwrap_or(0)
            ),
            "permission_denied" => format!(
                "Claude Code was not allowed to use {}: {}",
                s.tool_name.as_deref().unwrap_or("a tool"),
                s.message.as_deref().unwrap_or("not in the allowed tools")
            ),
            "informational" => match s.content.or(s.message) {
                Some(text) => text,
                None => return,
            },
            _ => return,
        };
        seen.push(Seen::Step(text_step(StepSource::System, text)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_compact_boundary_on_the_stream_is_a_compaction_step() {
        let mut stream = Stream::default();
        let mut seen = Vec::new();
        let line = r#"{"type":"system","subtype":"compact_boundary","session_id":"s1","uuid":"c1","compact_metadata":{"trigger":"manual","pre_tokens":48211}}"#;
        assert!(matches!(stream.line(line, &mut seen), Flow::Continue));
        let [Seen::Step(step)] = seen.as_slice() else {
            panic!("one step: {seen:?}");
        };
        assert_eq!(step.source, StepSource::System);
        assert_eq!(
            step.text,
            "The conversation was compacted to fit the model's context (on request, at 48211 tokens)."
        );
        assert!(crate::session::is_compaction(step));
    }
}
