//! Gemini CLI's `-o stream-json` lines turned into steps as they come.
//!
//! `init` names the session; the user's own message is the prompt Healer already shows; the
//! model's words come as `message` deltas (joined into one step until something else happens);
//! `tool_use` / `tool_result` are a call and its result, paired by `tool_id`; `error` lines are
//! warnings shown as notices; `result` says how the run went, with the run's token counts
//! (put on the last words of the run). A line of another `type` is kept raw.

use serde::Deserialize;
use serde_json::Value;

use crate::agent::process::Flow;
use crate::agent::text_step;
use crate::session::{SessionStep, StepKind, StepSource, StepUsage};

/// Lines in a row that are not Gemini CLI's JSON before Healer gives up on the stream.
pub const MAX_UNREADABLE_LINES: usize = 100;

#[derive(Deserialize)]
#[serde(tag = "type")]
enum Line {
    #[serde(rename = "init")]
    Init {
        session_id: String,
        #[serde(default)]
        model: Option<String>,
    },
    #[serde(rename = "message")]
    Message {
        #[serde(default)]
        role: String,
        #[serde(default)]
        content: String,
    },
    #[serde(rename = "tool_use")]
    ToolUse {
        tool_name: String,
        #[serde(default)]
        tool_id: String,
        #[serde(default)]
        parameters: Value,
    },
    #[serde(rename = "tool_result")]
    ToolResult {
        #[serde(default)]
        tool_id: String,
        #[serde(default)]
        status: String,
        #[serde(default)]
        output: Option<Value>,
        #[serde(default)]
        error: Option<Value>,
    },
    #[serde(rename = "error")]
    Error {
        #[serde(default)]
        message: String,
    },
    #[serde(rename = "result")]
    Result {
        #[serde(default)]
        status: String,
        #[serde(default)]
        error: Option<Value>,
        #[serde(default)]
        stats: Option<Stats>,
    },
    #[serde(other)]
    Other,
}

/// The run's token counts (`result.stats`): Gemini's input counts the cached part too.
#[derive(Deserialize, Default, Clone, Copy)]
struct Stats {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    cached: u64,
}

pub(super) enum Seen {
    Init {
        session_id: String,
    },
    Step(SessionStep),
    /// A line of Gemini CLI's JSON of a type Healer does not know (a newer version's).
    Raw(String),
}

/// How the run ended, from its `result` line.
#[derive(Debug, Clone)]
pub(super) struct Outcome {
    pub success: bool,
    pub error: Option<String>,
}

#[derive(Default)]
pub(super) struct Stream {
    pub outcome: Option<Outcome>,
    pub last_message: Option<String>,
    pub unreadable: usize,
    pub first_unreadable: Option<String>,
    unreadable_in_a_row: usize,
    model: Option<String>,
    /// The model's words so far, until something else happens.
    words: String,
    /// The last words of the run, held until `result` gives the run's usage.
    held: Option<SessionStep>,
}

impl Stream {
    pub fn line(&mut self, line: &str, seen: &mut Vec<Seen>) -> Flow {
        let parsed = match serde_json::from_str::<Line>(line) {
            Ok(parsed) => parsed,
            Err(_) => return self.unreadable(line),
        };
        self.unreadable_in_a_row = 0;
        match parsed {
            Line::Init { session_id, model } => {
                self.model = model;
                seen.push(Seen::Init { session_id });
            }
            // The prompt: already the session's first step.
            Line::Message { role, .. } if role == "user" => {}
            Line::Message { content, .. } => {
                // A new text after a held one: the held one is not the run's last.
                self.flush(seen);
                self.words.push_str(&content);
            }
            Line::ToolUse {
                tool_name,
                tool_id,
                parameters,
            } => {
                self.words_done();
                self.flush(seen);
                seen.push(Seen::Step(SessionStep {
                    source: StepSource::Agent,
                    kind: StepKind::ToolCall,
                    tool: Some(tool_name),
                    arguments: Some(parameters.to_string()),
                    call_id: Some(tool_id),
                    model: self.model.clone(),
                    ..text_step(StepSource::Agent, String::new())
                }));
            }
            Line::ToolResult {
                tool_id,
                status,
                output,
                error,
            } => {
                self.words_done();
                self.flush(seen);
                let error = error.filter(|e| !e.is_null());
                let said = |v: &Value| match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                let mut text = output.as_ref().map(said).unwrap_or_default();
                if let Some(message) = error.as_ref().and_then(error_message) {
                    if !text.contains(&message) {
                        if !text.is_empty() {
                            text.push('\n');
                        }
                        text.push_str(&message);
                    }
                }
                seen.push(Seen::Step(SessionStep {
                    source: StepSource::Agent,
                    kind: StepKind::ToolResult,
                    call_id: Some(tool_id),
                    is_error: status != "success" || error.is_some(),
                    ..text_step(StepSource::Agent, text)
                }));
            }
            Line::Error { message } => {
                self.words_done();
                self.flush(seen);
                seen.push(Seen::Step(text_step(StepSource::System, message)));
            }
            Line::Result {
                status,
                error,
                stats,
            } => {
                self.words_done();
                let usage = stats
                    .map(|s| StepUsage {
                        prompt_tokens: s.input_tokens,
                        completion_tokens: s.output_tokens,
                        cached_tokens: s.cached.min(s.input_tokens),
                    })
                    .filter(|u| *u != StepUsage::default());
                let step = match (self.held.take(), usage) {
                    (Some(step), usage) => Some(SessionStep { usage, ..step }),
                    (None, Some(usage)) => Some(SessionStep {
                        usage: Some(usage),
                        ..text_step(StepSource::System, "Gemini CLI ended its turn.".to_string())
                    }),
                    (None, None) => None,
                };
                seen.extend(step.map(Seen::Step));
                self.outcome = Some(Outcome {
                    success: status == "success",
                    error: error.as_ref().and_then(error_message),
                });
            }
            // Not a step: the words around it stay one, the last still waits for the usage.
            Line::Other => seen.push(Seen::Raw(line.to_string())),
        }
        Flow::Continue
    }

    /// The end of the stream: what is held goes out.
    pub fn finish(&mut self, seen: &mut Vec<Seen>) {
        self.words_done();
        self.flush(seen);
    }

    /// The words so far are one step, held (it may be the run's last).
    fn words_done(&mut self) {
        if self.words.trim().is_empty() {
            self.words.clear();
            return;
        }
        let words = std::mem::take(&mut self.words);
        self.last_message = Some(words.clone());
        self.held = Some(SessionStep {
            model: self.model.clone(),
            ..text_step(StepSource::Agent, words)
        });
    }

    fn flush(&mut self, seen: &mut Vec<Seen>) {
        seen.extend(self.held.take().map(Seen::Step));
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

fn error_message(error: &Value) -> Option<String> {
    match error {
        Value::String(s) => Some(s.clone()),
        Value::Object(map) => map
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_string),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(lines: &[&str]) -> (Stream, Vec<SessionStep>, Vec<String>, Vec<String>) {
        let mut stream = Stream::default();
        let mut seen = Vec::new();
        for line in lines {
            stream.line(line, &mut seen);
        }
        stream.finish(&mut seen);
        let (mut steps, mut ids, mut raw) = (Vec::new(), Vec::new(), Vec::new());
        for item in seen {
            match item {
                Seen::Init { session_id } => ids.push(session_id),
                Seen::Step(step) => steps.push(step),
                Seen::Raw(line) => raw.push(line),
            }
        }
        (stream, steps, ids, raw)
    }

    #[test]
    fn deltas_join_into_one_step_and_the_run_usage_goes_on_the_last_words() {
        let (stream, steps, ids, raw) = run(&[
            r#"{"type":"init","session_id":"s-1","model":"m"}"#,
            r#"{"type":"message","role":"user","content":"go"}"#,
            r#"{"type":"message","role":"assistant","content":"Let me ","delta":true}"#,
            r#"{"type":"message","role":"assistant","content":"look.","delta":true}"#,
            r#"{"type":"tool_use","tool_name":"run_shell_command","tool_id":"t1","parameters":{"command":"ls"}}"#,
            r#"{"type":"tool_result","tool_id":"t1","status":"error","output":"Tool execution denied by policy.","error":{"type":"policy_violation","message":"Tool execution denied by policy."}}"#,
            r#"{"type":"message","role":"assistant","content":"Done.","delta":true}"#,
            r#"{"type":"newer_thing","x":1}"#,
            r#"{"type":"result","status":"success","stats":{"input_tokens":200,"output_tokens":20,"cached":50}}"#,
        ]);
        assert_eq!(ids, vec!["s-1".to_string()]);
        assert_eq!(raw.len(), 1);
        let outline: Vec<_> = steps.iter().map(|s| (s.kind, s.text.as_str())).collect();
        assert_eq!(
            outline,
            vec![
                (StepKind::Text, "Let me look."),
                (StepKind::ToolCall, ""),
                (StepKind::ToolResult, "Tool execution denied by policy."),
                (StepKind::Text, "Done."),
            ]
        );
        assert!(steps[2].is_error);
        assert_eq!(steps[1].call_id.as_deref(), Some("t1"));
        assert_eq!(
            steps[3].usage,
            Some(StepUsage {
                prompt_tokens: 200,
                completion_tokens: 20,
                cached_tokens: 50
            })
        );
        assert!(stream.outcome.is_some_and(|o| o.success));
        assert_eq!(stream.last_message.as_deref(), Some("Done."));
    }

    #[test]
    fn an_error_result_says_why_and_garbage_is_counted() {
        let (stream, _, _, _) = run(&[
            "not json",
            r#"{"type":"result","status":"error","error":{"type":"Error","message":"quota"}}"#,
        ]);
        assert_eq!(stream.unreadable, 1);
        let outcome = stream.outcome.expect("outcome");
        assert!(!outcome.success);
        assert_eq!(outcome.error.as_deref(), Some("quota"));
    }
}
