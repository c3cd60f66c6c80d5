//! A session's steps as an ATIF-v1.7 trajectory, in the same shapes a model thread exports
//! (`llm::atif`): the prompt as a user step, each agent text an agent step, the tool calls
//! that follow it on that step, their results as its observation, usage as its metrics.

use serde_json::Value;

use crate::error::{Error, Result};
use crate::llm::atif::{
    Agent, AtifToolCall, FinalMetrics, Metrics, Observation, ObservationResult, Step, Trajectory,
    SCHEMA_VERSION,
};
use crate::session::{StepKind, StepSource};
use crate::store::{SessionRecord, StoredStep};

/// The trajectory of `session` from its stored steps.
pub fn trajectory(session: &SessionRecord, steps: &[StoredStep]) -> Trajectory {
    let mut out: Vec<Step> = Vec::new();
    let mut totals = (0u64, 0u64, 0u64);
    for stored in steps {
        let s = &stored.step;
        match (s.source, s.kind) {
            (_, StepKind::ToolResult) => {
                let result = ObservationResult {
                    source_call_id: s.call_id.clone(),
                    content: s.text.clone(),
                    subagent_trajectory_ref: vec![],
                };
                match out.last_mut().filter(|st| st.source == "agent") {
                    Some(step) => step
                        .observation
                        .get_or_insert_with(|| Observation { results: vec![] })
                        .results
                        .push(result),
                    None => tracing::warn!(
                        session_id = session.id,
                        "a tool result without a call before it is left out of the trajectory"
                    ),
                }
            }
            (_, StepKind::ToolCall) => {
                let call = AtifToolCall {
                    tool_call_id: s.call_id.clone().unwrap_or_default(),
                    function_name: s.tool.clone().unwrap_or_default(),
                    arguments: arguments(s.arguments.as_deref()),
                };
                // A call belongs to the agent's step before it, unless that step has results
                // already (then the agent went on: a new step).
                match out
                    .last_mut()
                    .filter(|st| st.source == "agent" && st.observation.is_none())
                {
                    Some(step) => step.tool_calls.push(call),
                    None => {
                        let mut step =
                            new_step(&out, &s.at, "agent", String::new(), s.model.clone());
                        step.tool_calls.push(call);
                        out.push(step);
                    }
                }
                add_usage(out.last_mut(), s.usage, &mut totals);
            }
            (source, StepKind::Text) => {
                let source = match source {
                    StepSource::System => "system",
                    StepSource::User => "user",
                    StepSource::Agent => "agent",
                };
                let model = (source == "agent").then(|| s.model.clone()).flatten();
                out.push(new_step(&out, &s.at, source, s.text.clone(), model));
                add_usage(out.last_mut(), s.usage, &mut totals);
            }
        }
    }
    let model_name = steps.iter().find_map(|s| s.step.model.clone());
    Trajectory {
        schema_version: SCHEMA_VERSION,
        session_id: session_trajectory_id(session.id),
        agent: Agent {
            name: session.agent.as_str(),
            version: env!("CARGO_PKG_VERSION"),
            model_name,
            extra: None,
        },
        final_metrics: FinalMetrics {
            total_prompt_tokens: totals.0,
            total_completion_tokens: totals.1,
            total_cached_tokens: totals.2,
            total_cost_usd: None,
            total_steps: u32::try_from(out.len()).unwrap_or(u32::MAX),
        },
        steps: out,
    }
}

/// The trajectory as pretty JSON.
pub fn export(session: &SessionRecord, steps: &[StoredStep]) -> Result<String> {
    serde_json::to_string_pretty(&trajectory(session, steps))
        .map_err(|e| Error::Internal(format!("the trajectory does not serialise: {e}")))
}

fn new_step(
    out: &[Step],
    at: &str,
    source: &'static str,
    message: String,
    model: Option<String>,
) -> Step {
    Step {
        step_id: u32::try_from(out.len() + 1).unwrap_or(u32::MAX),
        timestamp: at.to_string(),
        source,
        model_name: model,
        message,
        tool_calls: vec![],
        observation: None,
        metrics: None,
    }
}

fn add_usage(
    step: Option<&mut Step>,
    usage: Option<crate::session::StepUsage>,
    totals: &mut (u64, u64, u64),
) {
    let (Some(step), Some(u)) = (step, usage) else {
        return;
    };
    totals.0 += u.prompt_tokens;
    totals.1 += u.completion_tokens;
    totals.2 += u.cached_tokens;
    let m = step.metrics.get_or_insert(Metrics {
        prompt_tokens: 0,
        completion_tokens: 0,
        cached_tokens: 0,
    });
    m.prompt_tokens += u.prompt_tokens;
    m.completion_tokens += u.completion_tokens;
    m.cached_tokens += u.cached_tokens;
}

/// The arguments object; text that is not one is kept under `unparsed_arguments`.
fn arguments(text: Option<&str>) -> Value {
    match text.map(serde_json::from_str::<Value>) {
        Some(Ok(v @ Value::Object(_))) => v,
        None => Value::Object(serde_json::Map::new()),
        Some(_) => serde_json::json!({"unparsed_arguments": text.unwrap_or_default()}),
    }
}

/// The id a session's trajectory goes by.
pub fn session_trajectory_id(session_id: i64) -> String {
    format!("healer-session-{session_id}")
}
