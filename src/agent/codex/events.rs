//! Codex's `exec --json` events turned into steps as they come.
//!
//! A command is an item that starts (the call, shown at once) and completes (its result); an
//! edit is a `file_change` item (Codex's `apply_patch`); the agent's words are `agent_message`
//! items. Usage comes once a turn, as the thread's running total (restored from the rollout on
//! a resume), so the turn's own cost is the total minus the total before it; the turn's last
//! message waits for it. After a stream error Codex retries and emits the messages it already
//! emitted again, under new item ids: those repeats are dropped.

use std::collections::{HashSet, VecDeque};

use serde::Deserialize;
use serde_json::Value;

use super::items;
use crate::agent::process::Flow;
use crate::agent::text_step;
use crate::session::{SessionStep, StepSource, StepUsage};

/// Lines in a row that are not Codex's JSON before Healer gives up on the stream.
pub const MAX_UNREADABLE_LINES: usize = 100;

/// Codex's running token totals for a thread.
#[derive(Debug, Deserialize, Default, Clone, Copy, PartialEq, Eq)]
pub struct Totals {
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub cached_input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
}

impl Totals {
    pub(super) fn minus(self, before: Totals) -> StepUsage {
        StepUsage {
            prompt_tokens: self.input_tokens.saturating_sub(before.input_tokens),
            completion_tokens: self.output_tokens.saturating_sub(before.output_tokens),
            cached_tokens: self
                .cached_input_tokens
                .saturating_sub(before.cached_input_tokens),
        }
    }
}

#[derive(Deserialize)]
#[serde(tag = "type")]
enum Event {
    #[serde(rename = "thread.started")]
    ThreadStarted { thread_id: String },
    #[serde(rename = "item.started")]
    ItemStarted { item: Value },
    #[serde(rename = "item.completed")]
    ItemCompleted { item: Value },
    #[serde(rename = "turn.completed")]
    TurnCompleted {
        #[serde(default)]
        usage: Option<Totals>,
    },
    #[serde(rename = "turn.failed")]
    TurnFailed {
        #[serde(default)]
        error: Option<Value>,
    },
    #[serde(rename = "error")]
    Error {
        #[serde(default)]
        message: String,
    },
    #[serde(rename = "turn.started")]
    TurnStarted,
    #[serde(other)]
    Other,
}

pub(super) enum Seen {
    Init {
        thread_id: String,
    },
    Step(SessionStep),
    /// A line of Codex's JSON of a type Healer does not know (a newer Codex): kept as it came.
    Raw(String),
}

#[derive(Default)]
pub(super) struct Events {
    pub turn_completed: bool,
    pub turn_failed: Option<String>,
    pub last_message: Option<String>,
    pub unreadable: usize,
    pub first_unreadable: Option<String>,
    unreadable_in_a_row: usize,
    /// The thread's totals before this turn (from the rollout on a resume).
    before: Totals,
    /// Item ids differ between a resume and the run before it: call ids get this prefix.
    call_prefix: String,
    started: HashSet<String>,
    held: Option<SessionStep>,
    /// Messages since the last retry, and those a retry is expected to repeat.
    said: Vec<String>,
    repeats: VecDeque<String>,
}

impl Events {
    pub fn new(call_prefix: String, before: Totals) -> Events {
        Events {
            call_prefix,
            before,
            ..Events::default()
        }
    }

    pub fn line(&mut self, line: &str, seen: &mut Vec<Seen>) -> Flow {
        let event = match serde_json::from_str::<Event>(line) {
            Ok(event) => event,
            Err(_) => return self.unreadable(line),
        };
        self.unreadable_in_a_row = 0;
        match event {
            Event::ThreadStarted { thread_id } => seen.push(Seen::Init { thread_id }),
            Event::ItemStarted { item } => self.started(&item, seen),
            Event::ItemCompleted { item } => self.completed(&item, seen),
            Event::TurnCompleted { usage } => {
                self.turn_completed = true;
                let usage = usage.map(|total| {
                    let used = total.minus(self.before);
                    self.before = total;
                    used
                });
                let usage = usage.filter(|u| *u != StepUsage::default());
                // The turn's last message carries its cost; a turn with no message still
                // counts, as a notice.
                let step = match (self.held.take(), usage) {
                    (Some(step), usage) => Some(SessionStep { usage, ..step }),
                    (None, Some(usage)) => Some(SessionStep {
                        usage: Some(usage),
                        ..system_step("Codex ended its turn.".to_string())
                    }),
                    (None, None) => None,
                };
                seen.extend(step.map(Seen::Step));
            }
            Event::TurnFailed { error } => {
                self.flush(seen);
                let message = error
                    .as_ref()
                    .and_then(|e| e.get("message"))
                    .and_then(Value::as_str)
                    .unwrap_or("no reason given");
                self.turn_failed = Some(message.to_string());
            }
            Event::Error { message } => {
                self.flush(seen);
                if message.starts_with("Reconnecting") {
                    self.repeats = std::mem::take(&mut self.said).into();
                }
                seen.push(Seen::Step(system_step(message)));
            }
            Event::TurnStarted => {}
            Event::Other => seen.push(Seen::Raw(line.to_string())),
        }
        Flow::Continue
    }

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

    fn flush(&mut self, seen: &mut Vec<Seen>) {
        seen.extend(self.held.take().map(Seen::Step));
    }

    fn call_id(&self, item: &Value) -> String {
        let id = item.get("id").and_then(Value::as_str).unwrap_or_default();
        format!("{}{id}", self.call_prefix)
    }

    fn started(&mut self, item: &Value, seen: &mut Vec<Seen>) {
        if let Some(call) = items::call(item, self.call_id(item)) {
            self.flush(seen);
            self.started
                .insert(call.call_id.clone().unwrap_or_default());
            seen.push(Seen::Step(call));
        }
    }

    fn completed(&mut self, item: &Value, seen: &mut Vec<Seen>) {
        let kind = item.get("type").and_then(Value::as_str).unwrap_or_default();
        let text = |key: &str| {
            item.get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        match kind {
            "agent_message" => {
                let said = text("text");
                if let Some(at) = self.repeats.iter().position(|s| *s == said) {
                    // Codex emits it again after a retry: already shown.
                    self.repeats.remove(at);
                    self.said.push(said);
                    return;
                }
                self.flush(seen);
                self.said.push(said.clone());
                self.last_message = Some(said.clone());
                self.held = Some(SessionStep {
                    source: StepSource::Agent,
                    ..system_step(said)
                });
            }
            // What the hook-trust flag Healer passes says of itself, each run.
            "error" if text("message").contains("--dangerously-bypass-hook-trust") => {}
            "error" => {
                self.flush(seen);
                seen.push(Seen::Step(system_step(text("message"))));
            }
            _ => {
                let Some(call) = items::call(item, self.call_id(item)) else {
                    return;
                };
                self.flush(seen);
                let call_id = call.call_id.clone().unwrap_or_default();
                if !self.started.remove(&call_id) {
                    seen.push(Seen::Step(call));
                }
                seen.push(Seen::Step(items::result(kind, item, call_id)));
            }
        }
    }
}

fn system_step(text: String) -> SessionStep {
    text_step(StepSource::System, text)
}
