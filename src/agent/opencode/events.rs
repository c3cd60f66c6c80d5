//! opencode's `run --format json` lines turned into steps (the server's events are read as
//! those lines: serve.rs).
//!
//! Each line is one finished part of the session: `step_start` opens a model call, `text` is
//! the model's words, `tool_use` a tool call with its result (printed once the tool is done),
//! `step_finish` closes the call with its usage and why it stopped (`tool-calls`, `stop`), and
//! `error` an error that ended the run. The steps of one call are held until its
//! `step_finish`, so that the call's usage goes on its last step of the model's own.

use serde::Deserialize;
use serde_json::Value;

use crate::agent::process::Flow;
use crate::agent::text_step;
use crate::session::{SessionStep, StepKind, StepSource, StepUsage};

/// Lines in a row that are not opencode's JSON before Healer gives up on the stream.
pub const MAX_UNREADABLE_LINES: usize = 100;

#[derive(Deserialize)]
struct Line {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    part: Value,
    #[serde(default)]
    error: Value,
}

pub(super) enum Seen {
    Step(SessionStep),
    /// A line of opencode's JSON of a type Healer does not know (a newer opencode).
    Raw(String),
}

#[derive(Default)]
pub(super) struct Events {
    /// The last `step_finish` said the model stopped on its own (`stop`), and nothing came
    /// after it.
    pub stopped: bool,
    /// The error that ended the run, in words.
    pub error: Option<String>,
    pub last_text: Option<String>,
    pub unreadable: usize,
    pub first_unreadable: Option<String>,
    unreadable_in_a_row: usize,
    /// The steps of the model call under way.
    held: Vec<SessionStep>,
}

impl Events {
    pub fn line(&mut self, line: &str, seen: &mut Vec<Seen>) -> Flow {
        let parsed = match serde_json::from_str::<Line>(line) {
            Ok(parsed) => parsed,
            Err(_) => return self.unreadable(line),
        };
        self.unreadable_in_a_row = 0;
        let part = &parsed.part;
        match parsed.kind.as_str() {
            "step_start" => {
                self.flush(seen);
                self.stopped = false;
            }
            "text" => {
                let text = str_at(part, "text");
                if !text.trim().is_empty() {
                    self.stopped = false;
                    self.last_text = Some(text.clone());
                    self.held.push(SessionStep {
                        source: StepSource::Agent,
                        ..text_step(StepSource::Agent, text)
                    });
                }
            }
            // The model's reasoning, shown only with `--thinking`: not a step.
            "reasoning" => {}
            "tool_use" => {
                self.stopped = false;
                let (call, result) = tool_steps(part);
                self.held.push(call);
                self.held.push(result);
            }
            "step_finish" => {
                let usage = usage(part);
                if let Some(usage) = usage {
                    match self
                        .held
                        .iter_mut()
                        .rev()
                        .find(|s| matches!(s.kind, StepKind::Text | StepKind::ToolCall))
                    {
                        Some(step) => step.usage = Some(usage),
                        None => self.held.push(SessionStep {
                            usage: Some(usage),
                            ..text_step(
                                StepSource::System,
                                "opencode ended a model call without a word.".to_string(),
                            )
                        }),
                    }
                }
                self.flush(seen);
                self.stopped = str_at(part, "reason") == "stop";
            }
            "error" => {
                self.flush(seen);
                let said = error_words(&parsed.error);
                seen.push(Seen::Step(text_step(StepSource::System, said.clone())));
                self.error = Some(said);
            }
            _ => {
                self.flush(seen);
                seen.push(Seen::Raw(line.to_string()));
            }
        }
        Flow::Continue
    }

    pub fn finish(&mut self, seen: &mut Vec<Seen>) {
        self.flush(seen);
    }

    fn flush(&mut self, seen: &mut Vec<Seen>) {
        seen.extend(self.held.drain(..).map(Seen::Step));
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
}

fn str_at(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// A `tool_use` part (or a stored tool part) as the call and its result.
pub(crate) fn tool_steps(part: &Value) -> (SessionStep, SessionStep) {
    let tool = str_at(part, "tool");
    let call_id = Some(str_at(part, "callID")).filter(|id| !id.is_empty());
    let state = part.get("state").unwrap_or(&Value::Null);
    let input = state.get("input").cloned().unwrap_or(Value::Null);
    let status = str_at(state, "status");
    let exit = state
        .pointer("/metadata/exit")
        .and_then(Value::as_i64)
        .filter(|code| *code != 0);
    let failed = status == "error" || exit.is_some();
    let text = if status == "error" {
        str_at(state, "error")
    } else {
        str_at(state, "output")
    };
    let call = SessionStep {
        kind: StepKind::ToolCall,
        tool: Some(tool),
        arguments: Some(input.to_string()),
        call_id: call_id.clone(),
        ..text_step(StepSource::Agent, String::new())
    };
    let result = SessionStep {
        kind: StepKind::ToolResult,
        call_id,
        is_error: failed,
        ..text_step(StepSource::Agent, text)
    };
    (call, result)
}

/// A model call's usage in Healer's convention: the prompt counts cache reads and writes, the
/// cached part is the reads.
fn usage(part: &Value) -> Option<StepUsage> {
    let tokens = part.get("tokens")?;
    let n = |path: &str| tokens.pointer(path).and_then(Value::as_u64).unwrap_or(0);
    let (read, write) = (n("/cache/read"), n("/cache/write"));
    let usage = StepUsage {
        prompt_tokens: n("/input") + read + write,
        completion_tokens: n("/output") + n("/reasoning"),
        cached_tokens: read,
    };
    (usage != StepUsage::default()).then_some(usage)
}

/// An `error` line's error in words: its message, the HTTP status when there is one.
fn error_words(error: &Value) -> String {
    let message = error
        .pointer("/data/message")
        .or_else(|| error.get("message"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| {
            let name = str_at(error, "name");
            if name.is_empty() {
                "no reason given".to_string()
            } else {
                name
            }
        });
    // An API's error body, printed raw: its own message.
    let message = crate::agent::ending::last_line(&message).unwrap_or(message);
    match error.pointer("/data/statusCode").and_then(Value::as_u64) {
        Some(code) if !message.contains(&code.to_string()) => {
            format!("{message} (HTTP {code})")
        }
        _ => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(lines: &[&str]) -> (Events, Vec<Seen>) {
        let mut events = Events::default();
        let mut seen = Vec::new();
        for line in lines {
            events.line(line, &mut seen);
        }
        events.finish(&mut seen);
        (events, seen)
    }

    fn steps(seen: &[Seen]) -> Vec<&SessionStep> {
        seen.iter()
            .filter_map(|s| match s {
                Seen::Step(step) => Some(step),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_tool_call_and_its_words_become_steps_with_the_calls_usage_on_its_last_own_step() {
        let (events, seen) = run(&[
            r#"{"type":"step_start","sessionID":"ses_1","part":{"type":"step-start"}}"#,
            r#"{"type":"text","sessionID":"ses_1","part":{"type":"text","text":"Let me look."}}"#,
            r#"{"type":"tool_use","sessionID":"ses_1","part":{"type":"tool","tool":"bash","callID":"call_1","state":{"status":"completed","input":{"command":"false"},"output":"","metadata":{"exit":1}}}}"#,
            r#"{"type":"step_finish","sessionID":"ses_1","part":{"reason":"tool-calls","tokens":{"input":100,"output":5,"reasoning":0,"cache":{"write":3,"read":40}},"cost":0}}"#,
            r#"{"type":"step_start","sessionID":"ses_1","part":{}}"#,
            r#"{"type":"text","sessionID":"ses_1","part":{"type":"text","text":"Done."}}"#,
            r#"{"type":"step_finish","sessionID":"ses_1","part":{"reason":"stop","tokens":{"input":150,"output":2,"reasoning":0,"cache":{"write":0,"read":0}}}}"#,
        ]);
        let steps = steps(&seen);
        assert_eq!(steps.len(), 4);
        assert_eq!(steps[0].kind, StepKind::Text);
        assert_eq!(steps[0].usage, None);
        assert_eq!(steps[1].kind, StepKind::ToolCall);
        assert_eq!(steps[1].tool.as_deref(), Some("bash"));
        assert_eq!(
            steps[1].arguments.as_deref(),
            Some(r#"{"command":"false"}"#)
        );
        assert_eq!(
            steps[1].usage,
            Some(StepUsage {
                prompt_tokens: 143,
                completion_tokens: 5,
                cached_tokens: 40
            })
        );
        assert_eq!(steps[2].kind, StepKind::ToolResult);
        assert!(steps[2].is_error, "a nonzero exit is an error");
        assert_eq!(steps[2].call_id.as_deref(), Some("call_1"));
        assert_eq!(steps[3].text, "Done.");
        assert!(steps[3].usage.is_some());
        assert!(events.stopped);
        assert_eq!(events.last_text.as_deref(), Some("Done."));
        assert_eq!(events.error, None);
    }

    #[test]
    fn an_api_error_is_said_in_words_and_an_unknown_line_is_kept_raw() {
        let (events, seen) = run(&[
            r#"{"type":"some_new_thing","sessionID":"ses_2","part":{}}"#,
            r#"{"type":"error","sessionID":"ses_2","error":{"name":"APIError","data":{"message":"Incorrect API key provided: x.","statusCode":401,"isRetryable":false}}}"#,
            "not json",
        ]);
        assert!(seen
            .iter()
            .any(|s| matches!(s, Seen::Raw(l) if l.contains("some_new_thing"))));
        assert_eq!(
            events.error.as_deref(),
            Some("Incorrect API key provided: x. (HTTP 401)")
        );
        assert!(!events.stopped);
        assert_eq!(events.unreadable, 1);
    }
}
