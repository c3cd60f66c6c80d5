//! Every invocation as an ATIF trajectory of its own (agent `healer`, `extra.type` =
//! `healing-agent`): why it woke, each spell as a call with what it did as the observation,
//! and the outcome. The session it healed links to it through `subagent_trajectory_ref` on a
//! step of its own, with the invocation's trajectory carried inside the reference.

use serde_json::json;

use crate::agent::trajectory;
use crate::error::{Error, Result};
use crate::llm::atif::{
    Agent, AtifToolCall, FinalMetrics, Observation, ObservationResult, Step, SubagentTrajectoryRef,
    Trajectory, SCHEMA_VERSION,
};
use crate::paths::Paths;
use crate::services::Services;
use crate::store::{HealerInvocation, Store};

/// The id an invocation's trajectory goes by.
pub fn invocation_session_id(id: i64) -> String {
    format!("healer-invocation-{id}")
}

fn step(out: &[Step], at: &str, source: &'static str, message: String) -> Step {
    Step {
        step_id: u32::try_from(out.len() + 1).unwrap_or(u32::MAX),
        timestamp: at.to_string(),
        source,
        model_name: None,
        message,
        tool_calls: vec![],
        observation: None,
        metrics: None,
    }
}

/// The invocation's trajectory; `paths`: where the trajectories of sessions its spells started
/// are written (`subagent_trajectory_ref` points at each).
pub fn invocation_trajectory(inv: &HealerInvocation, paths: Option<&Paths>) -> Trajectory {
    let mut steps: Vec<Step> = Vec::new();
    let woke = format!(
        "Healer woke on task {} ({}){}: {}",
        inv.task_id,
        inv.scenario,
        inv.session_id
            .map(|s| format!(" after session {s}"))
            .unwrap_or_default(),
        inv.reason
    );
    steps.push(step(&steps, &inv.started_at, "system", woke));
    for (i, spell) in inv.spells.iter().enumerate() {
        let call_id = format!("spell-{}", i + 1);
        let mut s = step(&steps, &spell.started_at, "agent", String::new());
        s.tool_calls.push(AtifToolCall {
            tool_call_id: call_id.clone(),
            function_name: spell.spell.clone(),
            arguments: json!({}),
        });
        s.observation = Some(Observation {
            results: vec![ObservationResult {
                source_call_id: Some(call_id),
                content: format!(
                    "{}: {}",
                    if spell.success { "done" } else { "not done" },
                    spell.summary
                ),
                subagent_trajectory_ref: spell
                    .session_id
                    .map(|id| SubagentTrajectoryRef {
                        session_id: trajectory::session_trajectory_id(id),
                        trajectory_path: paths
                            .map(|p| p.session_trajectory(id).display().to_string()),
                        extra: Some(json!({"healer_session": id})),
                    })
                    .into_iter()
                    .collect(),
            }],
        });
        steps.push(s);
    }
    let end = inv
        .ended_at
        .clone()
        .unwrap_or_else(|| inv.started_at.clone());
    steps.push(step(
        &steps,
        &end,
        "system",
        format!("Outcome: {} — {}", inv.status.as_str(), inv.reason),
    ));
    Trajectory {
        schema_version: SCHEMA_VERSION,
        session_id: invocation_session_id(inv.id),
        agent: Agent {
            name: "healer",
            version: env!("CARGO_PKG_VERSION"),
            model_name: None,
            extra: Some(json!({"type": "healing-agent"})),
        },
        final_metrics: FinalMetrics {
            total_prompt_tokens: 0,
            total_completion_tokens: 0,
            total_cached_tokens: 0,
            total_cost_usd: None,
            total_steps: u32::try_from(steps.len()).unwrap_or(u32::MAX),
        },
        steps,
    }
}

/// A session's trajectory (pretty JSON) with a step for every invocation that healed it,
/// linked to the invocation's own trajectory.
pub fn session_trajectory_with_heals(
    store: &Store,
    paths: Option<&Paths>,
    session_id: i64,
) -> Result<String> {
    let session = store.session(session_id)?;
    let mut t = trajectory::trajectory(&session, &store.session_steps(session_id, 0)?);
    let invocations: Vec<HealerInvocation> = store
        .invocations(Some(session.project_id), Some(&session.task_id), 500)?
        .into_iter()
        .filter(|i| i.session_id == Some(session_id))
        .rev()
        .collect();
    for inv in invocations {
        let sub = invocation_trajectory(&inv, paths);
        let embedded = serde_json::to_value(&sub)
            .map_err(|e| Error::Internal(format!("the trajectory does not serialise: {e}")))?;
        let mut s = step(
            &t.steps,
            &inv.started_at,
            "system",
            format!(
                "Healer stepped in (invocation {}, {})",
                inv.id, inv.scenario
            ),
        );
        s.observation = Some(Observation {
            results: vec![ObservationResult {
                source_call_id: None,
                content: format!("{}: {}", inv.status.as_str(), inv.reason),
                subagent_trajectory_ref: vec![SubagentTrajectoryRef {
                    session_id: sub.session_id.clone(),
                    trajectory_path: None,
                    extra: Some(json!({"trajectory": embedded})),
                }],
            }],
        });
        t.steps.push(s);
    }
    t.final_metrics.total_steps = u32::try_from(t.steps.len()).unwrap_or(u32::MAX);
    serde_json::to_string_pretty(&t)
        .map_err(|e| Error::Internal(format!("the trajectory does not serialise: {e}")))
}

/// Write a session's trajectory (with the invocations that healed it) where Healer points at
/// it; its path.
pub(crate) fn write_session_trajectory(
    services: &Services,
    session_id: i64,
) -> Result<std::path::PathBuf> {
    let paths = &services.paths;
    let text = session_trajectory_with_heals(&services.store, Some(paths), session_id)?;
    let dir = paths.trajectories_dir();
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
    let path = paths.session_trajectory(session_id);
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, format!("{text}\n"))
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))?;
    Ok(path)
}
