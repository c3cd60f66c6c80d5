//! An exported ATIF trajectory (Agent Trajectory Interchange Format, as `healer task
//! export-atif` and `healer session export-atif` write it) read back into flat steps: each
//! trajectory step's words, then its tool calls, then the results of its observation. The
//! step's metrics go on its last step before the results, as the live adapters put a model
//! call's usage on the call's last step.

use serde::Deserialize;
use serde_json::Value;

use crate::session::{SessionStep, StepKind, StepSource, StepUsage};

#[derive(Deserialize)]
struct Trajectory {
    #[serde(default)]
    schema_version: String,
    #[serde(default)]
    steps: Vec<Step>,
}

#[derive(Deserialize)]
struct Step {
    #[serde(default)]
    timestamp: Option<String>,
    #[serde(default)]
    source: String,
    #[serde(default)]
    model_name: Option<String>,
    #[serde(default)]
    message: Value,
    #[serde(default)]
    tool_calls: Vec<ToolCall>,
    #[serde(default)]
    observation: Option<Observation>,
    #[serde(default)]
    metrics: Option<Metrics>,
}

#[derive(Deserialize)]
struct ToolCall {
    #[serde(default)]
    tool_call_id: String,
    #[serde(default)]
    function_name: String,
    #[serde(default)]
    arguments: Value,
}

#[derive(Deserialize)]
struct Observation {
    #[serde(default)]
    results: Vec<ObservationResult>,
}

#[derive(Deserialize)]
struct ObservationResult {
    #[serde(default)]
    source_call_id: Option<String>,
    #[serde(default)]
    content: Value,
    #[serde(default)]
    extra: Option<Value>,
}

#[derive(Deserialize)]
struct Metrics {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    cached_tokens: u64,
}

/// Whether `value` is an ATIF trajectory.
pub fn is_trajectory(value: &Value) -> bool {
    value
        .get("schema_version")
        .and_then(Value::as_str)
        .is_some_and(|v| v.starts_with("ATIF"))
}

/// The steps of a trajectory's JSON text.
pub fn read(text: &str) -> Result<Vec<SessionStep>, String> {
    let trajectory: Trajectory = serde_json::from_str(text)
        .map_err(|e| format!("the file is not an ATIF trajectory: {e}"))?;
    if !trajectory.schema_version.starts_with("ATIF") {
        return Err(format!(
            "the file's schema_version is \"{}\", not an ATIF version",
            trajectory.schema_version
        ));
    }
    let mut steps = Vec::new();
    for step in trajectory.steps {
        let source = match step.source.as_str() {
            "agent" => StepSource::Agent,
            "user" => StepSource::User,
            _ => StepSource::System,
        };
        let at = step.timestamp.unwrap_or_default();
        let model = step.model_name.filter(|_| source == StepSource::Agent);
        let base = SessionStep {
            at,
            source,
            kind: StepKind::Text,
            text: String::new(),
            tool: None,
            arguments: None,
            call_id: None,
            is_error: false,
            model,
            usage: None,
        };
        let mut own: Vec<SessionStep> = Vec::new();
        let words = words_of_content(&step.message);
        if !words.trim().is_empty() {
            own.push(SessionStep {
                text: words,
                ..base.clone()
            });
        }
        own.extend(step.tool_calls.into_iter().map(|call| SessionStep {
            kind: StepKind::ToolCall,
            tool: Some(call.function_name),
            arguments: Some(match call.arguments {
                Value::String(s) => s,
                other => other.to_string(),
            }),
            call_id: Some(call.tool_call_id),
            source: StepSource::Agent,
            ..base.clone()
        }));
        if let (Some(last), Some(m)) = (own.last_mut(), step.metrics) {
            last.usage = Some(StepUsage {
                prompt_tokens: m.prompt_tokens,
                completion_tokens: m.completion_tokens,
                cached_tokens: m.cached_tokens,
            });
        }
        steps.extend(own);
        let results = step.observation.map(|o| o.results).unwrap_or_default();
        steps.extend(results.into_iter().map(|r| {
            SessionStep {
                kind: StepKind::ToolResult,
                text: words_of_content(&r.content),
                call_id: r.source_call_id,
                is_error: r
                    .extra
                    .as_ref()
                    .and_then(|e| e.get("is_error"))
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                source: StepSource::Agent,
                model: None,
                ..base.clone()
            }
        }));
    }
    Ok(steps)
}

/// A message or a result: text, or a list of content parts (`{"type": "text", "text": …}`).
fn words_of_content(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str).or(p.as_str()))
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}
