//! Codex's tool items as steps: a command (`command_execution`, Codex's `exec_command`), an
//! edit (`file_change`, its `apply_patch`), an MCP tool or a web search — the call when the item
//! starts, the result when it completes.

use serde_json::{json, Value};

use crate::agent::text_step;
use crate::session::{SessionStep, StepKind, StepSource};

/// The call a tool item stands for, if it is one.
pub(super) fn call(item: &Value, call_id: String) -> Option<SessionStep> {
    let (tool, arguments) = match item.get("type").and_then(Value::as_str)? {
        "command_execution" => (
            "exec_command".to_string(),
            json!({"command": item.get("command")}),
        ),
        "file_change" => (
            "apply_patch".to_string(),
            json!({"changes": item.get("changes")}),
        ),
        "mcp_tool_call" => (
            format!(
                "{}.{}",
                item.get("server").and_then(Value::as_str).unwrap_or("mcp"),
                item.get("tool").and_then(Value::as_str).unwrap_or("tool")
            ),
            item.get("arguments").cloned().unwrap_or(Value::Null),
        ),
        "web_search" => (
            "web_search".to_string(),
            json!({"query": item.get("query")}),
        ),
        _ => return None,
    };
    Some(SessionStep {
        source: StepSource::Agent,
        kind: StepKind::ToolCall,
        tool: Some(tool),
        arguments: Some(arguments.to_string()),
        call_id: Some(call_id),
        ..system_step(String::new())
    })
}

pub(super) fn result(kind: &str, item: &Value, call_id: String) -> SessionStep {
    let status = item.get("status").and_then(Value::as_str).unwrap_or("");
    let (text, failed) = match kind {
        "command_execution" => {
            let code = item.get("exit_code").and_then(Value::as_i64);
            let output = item
                .get("aggregated_output")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            (output, status == "failed" || code.is_some_and(|c| c != 0))
        }
        "file_change" => {
            let changes = item
                .get("changes")
                .and_then(Value::as_array)
                .map(|list| {
                    list.iter()
                        .map(|c| {
                            format!(
                                "{} {}",
                                c.get("kind").and_then(Value::as_str).unwrap_or("change"),
                                c.get("path").and_then(Value::as_str).unwrap_or("?")
                            )
                        })
                        .collect::<Vec<_>>()
                        .join("\n")
                })
                .unwrap_or_default();
            (changes, status == "failed")
        }
        _ => {
            let error = item.get("error").filter(|e| !e.is_null());
            let shown = error.or(item.get("result")).cloned().unwrap_or(Value::Null);
            let text = match shown {
                Value::String(s) => s,
                Value::Null => String::new(),
                other => other.to_string(),
            };
            (text, error.is_some() || status == "failed")
        }
    };
    SessionStep {
        source: StepSource::Agent,
        kind: StepKind::ToolResult,
        call_id: Some(call_id),
        is_error: failed,
        ..system_step(text)
    }
}

fn system_step(text: String) -> SessionStep {
    text_step(StepSource::System, text)
}
