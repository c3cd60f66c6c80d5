//! Codex's rollout file, `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`:
//! where it is, the thread's token totals so far (a resumed turn's cost is measured against
//! them), and its steps read back without a live process (`healer session check FILE`).
//!
//! Each line is `{"timestamp", "type", "payload"}`. The conversation is in `response_item`
//! lines (the exact Responses API items); `event_msg` `token_count` lines carry each model
//! call's usage, which the call's last step carries. A `compacted` line (or the
//! `context_compacted` event written with it) is a compaction step.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{json, Value};

use super::events::Totals;
use crate::agent::now;
use crate::session::{compaction_step, SessionStep, StepKind, StepSource, StepUsage};

/// User messages Codex writes itself (its context, not the person's words) start with these.
const INJECTED: [&str; 4] = [
    "<environment_context>",
    "<user_instructions>",
    "<permissions instructions>",
    "# AGENTS.md instructions",
];

#[derive(Deserialize)]
struct Line {
    #[serde(default)]
    timestamp: Option<String>,
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    payload: Value,
}

/// The rollout of thread `thread_id` under `codex_home`, if Codex wrote one.
pub fn find(codex_home: &Path, thread_id: &str) -> Option<PathBuf> {
    let suffix = format!("-{thread_id}.jsonl");
    let mut dirs = vec![(codex_home.join("sessions"), 0)];
    while let Some((dir, depth)) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if depth < 3 && path.is_dir() {
                dirs.push((path, depth + 1));
            } else if path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("rollout-") && n.ends_with(&suffix))
            {
                return Some(path);
            }
        }
    }
    None
}

/// The thread's running token totals at the end of the rollout.
pub fn last_totals(text: &str) -> Option<Totals> {
    text.lines().rev().find_map(|line| {
        if !line.contains("\"token_count\"") {
            return None;
        }
        let line: Line = serde_json::from_str(line).ok()?;
        let total = line.payload.get("info")?.get("total_token_usage")?;
        serde_json::from_value(total.clone()).ok()
    })
}

/// The steps of a rollout's text. Lines that are not JSON (cut by a crash) are skipped;
/// `skipped` says how many.
pub fn read(text: &str) -> (Vec<SessionStep>, usize) {
    let mut steps: Vec<SessionStep> = Vec::new();
    let mut skipped = 0;
    // Where the steps of the current model call start (a token_count closes the call).
    let mut call_start = 0;
    // A compaction is recorded as a `compacted` line, an `event_msg` `context_compacted`, or
    // both one after the other: the kind of the last one counted while its pair may follow.
    let mut unpaired: Option<&str> = None;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(line) = serde_json::from_str::<Line>(line) else {
            skipped += 1;
            continue;
        };
        let at = line.timestamp.unwrap_or_else(now);
        let payload = &line.payload;
        let kind = payload.get("type").and_then(Value::as_str).unwrap_or("");
        let compaction = match (line.kind.as_str(), kind) {
            ("compacted", _) => Some("compacted"),
            ("event_msg", "context_compacted") => Some("context_compacted"),
            _ => None,
        };
        if let Some(record) = compaction {
            match unpaired {
                // The other record of the compaction just counted.
                Some(last) if last != record => unpaired = None,
                _ => {
                    steps.push(compaction_step(at, None));
                    unpaired = Some(record);
                }
            }
            continue;
        }
        match (line.kind.as_str(), kind) {
            ("response_item", _) => {
                let step = item_step(payload, kind, at);
                if step.is_some() {
                    unpaired = None;
                }
                steps.extend(step);
            }
            ("event_msg", "token_count") => {
                let usage = payload
                    .get("info")
                    .and_then(|i| i.get("last_token_usage"))
                    .and_then(|u| serde_json::from_value::<Totals>(u.clone()).ok())
                    .map(|t| t.minus(Totals::default()))
                    .filter(|u| *u != StepUsage::default());
                let last_agent = steps
                    .iter_mut()
                    .skip(call_start)
                    .rev()
                    .find(|s| s.source == StepSource::Agent && s.kind != StepKind::ToolResult);
                if let (Some(step), Some(usage)) = (last_agent, usage) {
                    step.usage = Some(usage);
                }
                call_start = steps.len();
            }
            _ => {}
        }
    }
    (steps, skipped)
}

fn item_step(item: &Value, kind: &str, at: String) -> Option<SessionStep> {
    let text = |key: &str| item.get(key).and_then(Value::as_str).map(str::to_string);
    let step = SessionStep {
        at,
        source: StepSource::Agent,
        kind: StepKind::Text,
        text: String::new(),
        tool: None,
        arguments: None,
        call_id: text("call_id"),
        is_error: false,
        model: None,
        usage: None,
    };
    match kind {
        "message" => {
            let source = match item.get("role").and_then(Value::as_str)? {
                "assistant" => StepSource::Agent,
                "user" => StepSource::User,
                _ => return None,
            };
            let words = message_text(item);
            let injected = INJECTED.iter().any(|p| words.trim_start().starts_with(p));
            if words.trim().is_empty() || (source == StepSource::User && injected) {
                return None;
            }
            Some(SessionStep {
                source,
                text: words,
                call_id: None,
                ..step
            })
        }
        "function_call" | "custom_tool_call" => {
            let arguments = match kind {
                "function_call" => text("arguments").unwrap_or_default(),
                _ => json!({"input": text("input")}).to_string(),
            };
            Some(SessionStep {
                kind: StepKind::ToolCall,
                tool: text("name"),
                arguments: Some(arguments),
                ..step
            })
        }
        "function_call_output" | "custom_tool_call_output" => {
            let (output, failed) = output(item.get("output"));
            Some(SessionStep {
                kind: StepKind::ToolResult,
                text: output,
                is_error: failed,
                ..step
            })
        }
        _ => None,
    }
}

fn message_text(item: &Value) -> String {
    item.get("content")
        .and_then(Value::as_array)
        .map(|parts| {
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// A tool's output and whether it failed: Codex writes `Process exited with code N` for a
/// command and `Exit code: N` for a patch; an output object says `success`.
fn output(value: Option<&Value>) -> (String, bool) {
    let (text, success) = match value {
        Some(Value::String(s)) => (s.clone(), None),
        Some(Value::Object(o)) => (
            o.get("content")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            o.get("success").and_then(Value::as_bool),
        ),
        _ => (String::new(), None),
    };
    let code = text.lines().find_map(|l| {
        l.strip_prefix("Process exited with code ")
            .or_else(|| l.strip_prefix("Exit code: "))
            .and_then(|c| c.trim().parse::<i64>().ok())
    });
    let failed = match (success, code) {
        (Some(ok), _) => !ok,
        (None, Some(code)) => code != 0,
        (None, None) => text == "aborted",
    };
    (text, failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(kind: &str, payload: Value) -> String {
        json!({"timestamp": "2026-01-02T10:00:00.000Z", "type": kind, "payload": payload})
            .to_string()
    }

    #[test]
    fn a_compaction_counts_once_whether_written_as_an_item_an_event_or_both() {
        let compacted = || {
            line(
                "compacted",
                json!({"message": "Summary of the work so far"}),
            )
        };
        let event = || line("event_msg", json!({"type": "context_compacted"}));
        let said = |text: &str| {
            line(
                "response_item",
                json!({"type": "message", "role": "assistant",
                       "content": [{"type": "output_text", "text": text}]}),
            )
        };
        let count = |lines: Vec<String>| {
            read(&lines.join("\n"))
                .0
                .iter()
                .filter(|s| crate::session::is_compaction(s))
                .count()
        };
        // Two compactions one after the other, each written both ways.
        assert_eq!(count(vec![compacted(), event(), compacted(), event()]), 2);
        assert_eq!(
            count(vec![event(), compacted(), said("Going on."), compacted()]),
            2
        );
        assert_eq!(count(vec![compacted(), compacted(), compacted()]), 3);
        assert_eq!(count(vec![event(), event()]), 2);
        assert_eq!(count(vec![said("Going on.")]), 0);
    }
}
