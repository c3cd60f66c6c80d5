//! A task's thread as an ATIF trajectory (Agent Trajectory Interchange Format, "ATIF-v1.7"):
//! the system prompt and user messages as their own steps, each assistant reply an agent step
//! with its tool calls, the tool results that answered them as its observation, and its usage
//! as metrics.

use serde::Serialize;
use serde_json::Value;

use super::thread::{MessageRole, TaskThread};
use crate::error::{Error, Result};
use crate::store::Store;

pub const SCHEMA_VERSION: &str = "ATIF-v1.7";

#[derive(Debug, Serialize)]
pub struct Trajectory {
    pub schema_version: &'static str,
    pub session_id: String,
    pub agent: Agent,
    pub steps: Vec<Step>,
    pub final_metrics: FinalMetrics,
}

#[derive(Debug, Serialize)]
pub struct Agent {
    pub name: &'static str,
    pub version: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_name: Option<String>,
    /// What kind of agent, beyond its name (`{"type": "healing-agent"}` for Healer's own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra: Option<Value>,
}

#[derive(Debug, Serialize)]
pub struct Step {
    pub step_id: u32,
    pub timestamp: String,
    /// system | user | agent
    pub source: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_name: Option<String>,
    pub message: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<AtifToolCall>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observation: Option<Observation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metrics: Option<Metrics>,
}

#[derive(Debug, Serialize)]
pub struct AtifToolCall {
    pub tool_call_id: String,
    pub function_name: String,
    /// The arguments object; text the model wrote that is not an object is kept under
    /// `unparsed_arguments`.
    pub arguments: Value,
}

#[derive(Debug, Serialize)]
pub struct Observation {
    pub results: Vec<ObservationResult>,
}

#[derive(Debug, Serialize)]
pub struct ObservationResult {
    pub source_call_id: Option<String>,
    pub content: String,
    /// Trajectories of sub-agents this result came from (a healer invocation's own).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub subagent_trajectory_ref: Vec<SubagentTrajectoryRef>,
}

/// A pointer to another trajectory: its session id, and (in Healer's export) the trajectory
/// itself under `extra.trajectory`, so one file holds everything.
#[derive(Debug, Serialize)]
pub struct SubagentTrajectoryRef {
    pub session_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trajectory_path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra: Option<Value>,
}

#[derive(Debug, Serialize)]
pub struct Metrics {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cached_tokens: u64,
}

#[derive(Debug, Serialize)]
pub struct FinalMetrics {
    pub total_prompt_tokens: u64,
    pub total_completion_tokens: u64,
    pub total_cached_tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_cost_usd: Option<f64>,
    pub total_steps: u32,
}

/// The trajectory of `thread`; `cost_usd` is the task's priced cost, if any.
pub fn trajectory(thread: &TaskThread, cost_usd: Option<f64>) -> Trajectory {
    let mut steps: Vec<Step> = Vec::new();
    let mut totals = (0u64, 0u64, 0u64);
    for message in &thread.messages {
        match message.role {
            MessageRole::Tool => {
                let result = ObservationResult {
                    source_call_id: message.tool_call_id.clone(),
                    content: message.content.clone(),
                    subagent_trajectory_ref: vec![],
                };
                // A result answers the agent step before it.
                match steps.last_mut().filter(|s| s.source == "agent") {
                    Some(step) => step
                        .observation
                        .get_or_insert_with(|| Observation { results: vec![] })
                        .results
                        .push(result),
                    None => tracing::warn!(
                        task_id = thread.task.id,
                        "a tool result without a call before it is left out of the trajectory"
                    ),
                }
            }
            role => {
                let metrics = message.usage.map(|u| {
                    totals.0 += u.prompt_tokens;
                    totals.1 += u.completion_tokens;
                    totals.2 += u.cached_tokens;
                    Metrics {
                        prompt_tokens: u.prompt_tokens,
                        completion_tokens: u.completion_tokens,
                        cached_tokens: u.cached_tokens,
                    }
                });
                let agent = role == MessageRole::Assistant;
                steps.push(Step {
                    step_id: u32::try_from(steps.len() + 1).unwrap_or(u32::MAX),
                    timestamp: message.at.clone(),
                    source: match role {
                        MessageRole::System | MessageRole::Nudge => "system",
                        MessageRole::Assistant => "agent",
                        MessageRole::User | MessageRole::Tool => "user",
                    },
                    model_name: if agent { message.model.clone() } else { None },
                    message: message.content.clone(),
                    tool_calls: message
                        .tool_calls
                        .iter()
                        .map(|c| AtifToolCall {
                            tool_call_id: c.id.clone(),
                            function_name: c.name.clone(),
                            arguments: match serde_json::from_str::<Value>(&c.arguments) {
                                Ok(v @ Value::Object(_)) => v,
                                _ => serde_json::json!({"unparsed_arguments": c.arguments}),
                            },
                        })
                        .collect(),
                    observation: None,
                    metrics: if agent { metrics } else { None },
                });
            }
        }
    }
    let model_name = thread.messages.iter().find_map(|m| m.model.clone());
    Trajectory {
        schema_version: SCHEMA_VERSION,
        session_id: format!("healer-task-{}", thread.task.id),
        agent: Agent {
            name: "healer",
            version: env!("CARGO_PKG_VERSION"),
            model_name,
            extra: None,
        },
        final_metrics: FinalMetrics {
            total_prompt_tokens: totals.0,
            total_completion_tokens: totals.1,
            total_cached_tokens: totals.2,
            total_cost_usd: cost_usd,
            total_steps: u32::try_from(steps.len()).unwrap_or(u32::MAX),
        },
        steps,
    }
}

/// The stored task `task_id` as pretty ATIF JSON.
pub fn export(store: &Store, task_id: i64) -> Result<String> {
    let thread = store.thread(task_id)?;
    let usage = store.task_usage(task_id)?;
    let priced = usage.calls > usage.unpriced_calls;
    let trajectory = trajectory(&thread, priced.then_some(usage.cost_usd));
    serde_json::to_string_pretty(&trajectory)
        .map_err(|e| Error::Internal(format!("the trajectory does not serialise: {e}")))
}
