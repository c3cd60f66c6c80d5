//! The periodic judge: for each task in progress whose session this Healer runs, once every
//! `judge_every_secs` (counted per task from its last judgement, kept in the store, or from the
//! session's start), the steering model is shown the task and the session's last assistant
//! turns and answers exactly `{"action": "continue"|"steer"|"replace", "message": string|null}`.
//! The answer is checked against a schema; anything else counts as continue and is recorded as
//! a bad answer, never acted on. No steering model → no judge: only the free detector runs.

use std::sync::Arc;

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{json, Value};

use super::prompt::{question, SYSTEM};
use crate::checkpoint::{
    CheckpointAction, CheckpointOption, CheckpointTrigger, NewCheckpoint, Situation,
};
use crate::error::Result;
use crate::llm::{AgentRun, ChatMessage, LoopSettings, SteeringModel, TaskKind, Tier, ToolSet};
use crate::project::{Projects, SessionStop};
use crate::session::SessionStatus;
use crate::store::{
    HealerMode, JudgeAction, NewSteeringEntry, SessionRecord, SteeringKind, SteeringOrigin,
};
use crate::tasklist::{self, Task, TaskStatus};

/// How often the engine looks for tasks due a judgement: the interval itself is per task.
pub const JUDGE_CHECK_SECS: u64 = 60;

/// Who the judge's comments on a task are by (the runner's comments use the same name).
const AUTHOR: &str = "healer";

/// A usable answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub action: JudgeAction,
    pub message: Option<String>,
}

/// What the judge did for one task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judged {
    pub project_id: i64,
    pub task_id: String,
    pub session_id: i64,
    pub action: JudgeAction,
    pub message: Option<String>,
    /// Why the answer was not used, when it was not (it then counts as continue).
    pub bad_answer: Option<String>,
    pub tokens: u64,
}

/// The schema an answer must pass: exactly the two keys. Sent with the question for the
/// server to enforce where it can, and checked on every answer.
pub fn answer_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "action": {"enum": ["continue", "steer", "replace"]},
            "message": {"type": ["string", "null"], "maxLength": 4000}
        },
        "required": ["action", "message"],
        "additionalProperties": false
    })
}

/// Read an answer: one JSON object that passes the schema (a ```json fence around it is
/// tolerated); steer and replace need a message.
pub fn parse_answer(answer: &str) -> std::result::Result<Answer, String> {
    let value = crate::llm::json_answer(answer, &answer_schema())?;
    let action = value["action"]
        .as_str()
        .and_then(JudgeAction::parse)
        .ok_or_else(|| "no action".to_string())?;
    let message = value["message"]
        .as_str()
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .map(str::to_string);
    if action != JudgeAction::Continue && message.is_none() {
        return Err(format!("{} needs a message", action.as_str()));
    }
    Ok(Answer { action, message })
}

/// Judge every task due at `now` (the engine passes the wall clock every
/// [`JUDGE_CHECK_SECS`]; tests pass a later clock). Returns what was done, per task.
pub async fn judge_due(projects: &Arc<Projects>, now: DateTime<Utc>) -> Result<Vec<Judged>> {
    let services = &projects.services;
    let settings = services.store.steering_settings()?;
    if !settings.enabled {
        return Ok(vec![]);
    }
    let every = chrono::Duration::seconds(i64::from(settings.judge_every_secs));
    let mut judged = Vec::new();
    for id in projects.running_ids() {
        let session = services.store.session(id)?;
        if session.status != SessionStatus::Running {
            continue;
        }
        let Some(task) = task_in_progress(projects, &session)? else {
            continue;
        };
        // The clock starts with each session: a new session of a task judged before is first
        // judged a whole period after it started, not at once on "(no turn yet)".
        let Some(started) = parse_time(&session.started_at) else {
            continue;
        };
        let judged_at = services
            .store
            .task_judgement(session.project_id, &session.task_id)?
            .and_then(|j| parse_time(&j.judged_at));
        let since = judged_at.map_or(started, |j| j.max(started));
        // The time the agent waited for the person's answer is not the agent's: it is neither
        // judged while it waits nor charged for the wait.
        let store = &services.store;
        if store.session_waits_for_you(id)? {
            continue;
        }
        let waited = store.session_waited(
            id,
            &crate::store::rfc3339(since),
            &crate::store::rfc3339(now),
        )?;
        if now.signed_duration_since(since) - waited < every {
            continue;
        }
        // Looked up per task: a model set up meanwhile is used at once.
        let Some(model) = services.llm.steering_model()? else {
            tracing::debug!(
                session_id = id,
                "no steering model: only the loop check runs"
            );
            return Ok(judged);
        };
        judged.push(judge_one(projects, &session, &task, &model, now).await?);
    }
    Ok(judged)
}

/// The session's task, when the task list still says it is in progress.
fn task_in_progress(projects: &Projects, session: &SessionRecord) -> Result<Option<Task>> {
    let project = projects.services.store.project(session.project_id)?;
    let file =
        tasklist::read_file(&std::path::Path::new(&project.path).join(tasklist::TASKS_FILE))?;
    Ok(file
        .task(&session.task_id)
        .filter(|t| t.status == TaskStatus::InProgress)
        .cloned())
}

fn parse_time(s: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

async fn judge_one(
    projects: &Arc<Projects>,
    session: &SessionRecord,
    task: &Task,
    model: &SteeringModel,
    now: DateTime<Utc>,
) -> Result<Judged> {
    let services = &projects.services;
    let store = &services.store;
    let minutes = parse_time(&session.started_at)
        .map_or(0, |start| now.signed_duration_since(start).num_minutes());
    let steps = store.session_steps(session.id, 0)?;
    let changes = worktree_changes(session).await;
    let asked = question(task, minutes, &changes, &steps);
    let (answer, tokens) = ask(projects, task, model, asked).await;
    let (answer, bad_answer) = match answer {
        Ok(answer) => (answer, None),
        Err(why) => (
            Answer {
                action: JudgeAction::Continue,
                message: None,
            },
            Some(why),
        ),
    };
    let at = now.to_rfc3339_opts(SecondsFormat::Millis, true);
    store.set_task_judgement(
        session.project_id,
        &session.task_id,
        &at,
        answer.action,
        bad_answer.is_some(),
    )?;
    let mut entry = NewSteeringEntry::new(
        session.project_id,
        &session.task_id,
        Some(session.id),
        SteeringKind::Judgement,
    );
    entry.action = Some(answer.action);
    entry.message = answer.message.clone();
    entry.tokens = tokens;
    entry.detail = match (&bad_answer, answer.action) {
        (Some(why), _) => {
            format!("The steering model's answer could not be used ({why}), so the agent goes on.")
        }
        (None, JudgeAction::Continue) => {
            "The steering model looked at the progress and let the agent go on.".to_string()
        }
        (None, JudgeAction::Steer) => {
            "The steering model saw the agent drifting and wrote it what to do (the message below)."
                .to_string()
        }
        (None, JudgeAction::Replace) => {
            if store.healer_config(session.project_id)?.mode == HealerMode::Aggressive {
                "The steering model saw no way forward for this agent and replaced it.".to_string()
            } else {
                "The steering model saw no way forward for this agent; Healer asks you before replacing it.".to_string()
            }
        }
    };
    // A steer's message goes into the session's mailbox with the entry, which then shows
    // whether it still waits or was delivered.
    let tell = match (answer.action, answer.message.as_deref()) {
        (JudgeAction::Steer, Some(message)) => Some((session.id, SteeringOrigin::Judge, message)),
        _ => None,
    };
    store.record_steering_telling(&entry, tell)?;
    tracing::info!(
        session_id = session.id,
        action = answer.action.as_str(),
        bad = bad_answer.is_some(),
        tokens,
        "the steering judge looked at the task"
    );
    match (answer.action, answer.message.as_deref()) {
        (JudgeAction::Steer, Some(message)) => steer(projects, session, message)?,
        (JudgeAction::Replace, Some(reason)) => replace(projects, session, reason)?,
        _ => {}
    }
    Ok(Judged {
        project_id: session.project_id,
        task_id: session.task_id.clone(),
        session_id: session.id,
        action: answer.action,
        message: answer.message,
        bad_answer,
        tokens,
    })
}

/// The session's worktree compared with the commit its task started from (a large repository
/// is read off the runtime's threads).
async fn worktree_changes(
    session: &SessionRecord,
) -> std::result::Result<Vec<crate::project::FileChange>, String> {
    let Some(base) = session.base_commit.clone() else {
        return Err("the commit the task started from is not known".to_string());
    };
    let worktree = std::path::PathBuf::from(&session.worktree);
    tokio::task::spawn_blocking(move || crate::project::changes_since(&worktree, &base))
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())
}

/// One question to the steering model; the answer checked, or why it cannot be used.
async fn ask(
    projects: &Projects,
    task: &Task,
    model: &SteeringModel,
    asked: String,
) -> (std::result::Result<Answer, String>, u64) {
    let llm = &projects.services.llm;
    let thread = match llm.start_task(TaskKind::Judge, &format!("Judge: {}", task.title), None) {
        Ok(thread) => thread,
        Err(e) => return (Err(format!("the steering model was not asked: {e}")), 0),
    };
    let run = AgentRun {
        task_id: thread.id,
        tier: Tier::Cheap,
        system: SYSTEM.to_string(),
        history: Vec::new(),
        messages: vec![ChatMessage::User { text: asked }],
        tools: ToolSet::empty(),
        limits: Some(LoopSettings {
            max_steps: 1,
            max_duration_secs: 120,
            max_malformed_replies: 1,
        }),
        max_tokens: Some(u64::from(crate::llm::JUDGE_MAX_TOKENS)),
        task_tokens: None,
        inbox: None,
        temperature: Some(0.0),
        choice: Some(model.choice()),
        answer_schema: Some(answer_schema()),
    };
    match llm.run_agent(run).await {
        Ok(outcome) => {
            let tokens = outcome.usage.total();
            match outcome.answer {
                Some(text) => (parse_answer(&text), tokens),
                None => (
                    Err(format!("no answer ({})", outcome.stop.describe())),
                    tokens,
                ),
            }
        }
        Err(e) => (Err(format!("the steering model failed: {e}")), 0),
    }
}

/// Say on the task what the agent is told (the message is in its mailbox already, put there
/// with the judgement's entry; delivered at the agent's next chance).
fn steer(projects: &Projects, session: &SessionRecord, message: &str) -> Result<()> {
    comment(
        projects,
        session,
        &format!("Healer's steering model told the agent: {message}"),
    )
}

/// End the session so another can start (the runner pins its work and frees the task) — or,
/// when the project's healer mode is conservative, ask the person first at a checkpoint.
fn replace(projects: &Projects, session: &SessionRecord, reason: &str) -> Result<()> {
    let services = &projects.services;
    let config = services.store.healer_config(session.project_id)?;
    if config.mode == HealerMode::Aggressive {
        return projects.end_session(
            session.id,
            SessionStop::Replaced {
                reason: reason.to_string(),
            },
        );
    }
    if services.store.replace_pending(session.id)? {
        return Ok(());
    }
    let project = services.store.project(session.project_id)?;
    let checkpoint = services.raise_checkpoint(NewCheckpoint {
        project_task: Some((
            session.project_id,
            session.task_id.clone(),
            session.task_title.clone(),
        )),
        trigger: CheckpointTrigger::Approval,
        workflow_id: None,
        run_id: None,
        task_id: None,
        signature: None,
        context: format!(
            "{}: Healer's steering model thinks the agent working on \u{201c}{}\u{201d} will not get there: {}. Replacing it stops the agent, keeps its work as a snapshot and puts the task back in the queue for a fresh start.",
            project.name,
            session.task_title,
            reason.trim_end_matches('.')
        ),
        options: vec![
            CheckpointOption::new(
                "Replace the agent",
                "Stop it, keep its work as a snapshot, and start the task again fresh",
                CheckpointAction::Proceed,
            ),
            CheckpointOption::new(
                "Let it continue",
                "Leave the agent at work; the steering model looks again later",
                CheckpointAction::Skip,
            ),
        ],
        affected: vec![],
        situation: Some(Situation {
            title: format!("Replace the agent on \u{201c}{}\u{201d}?", session.task_title),
            recommend: CheckpointAction::Proceed,
            why: "the steering model saw no way forward for this agent".to_string(),
            past: None,
        }),
    })?;
    services
        .store
        .link_replace_checkpoint(checkpoint.id, session.id, reason)
}

fn comment(projects: &Projects, session: &SessionRecord, text: &str) -> Result<()> {
    let project = projects.services.store.project(session.project_id)?;
    let at = crate::store::now();
    projects.modify_tasks(&project, "the steering judge commented", |file| {
        file.update(&session.task_id, &at, |t| t.comment(&at, AUTHOR, text))
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_exactly_the_agreed_object_is_an_answer() {
        let go = parse_answer(r#"{"action": "continue", "message": null}"#).expect("continue");
        assert_eq!(go.action, JudgeAction::Continue);
        let steer = parse_answer(
            "```json\n{\"action\": \"steer\", \"message\": \"Run the tests first.\"}\n```",
        )
        .expect("fenced steer");
        assert_eq!(steer.message.as_deref(), Some("Run the tests first."));
        assert!(
            parse_answer("Looks fine to me, continue.").is_err(),
            "prose"
        );
        assert!(parse_answer(r#"{"action": "pause", "message": null}"#).is_err());
        assert!(
            parse_answer(r#"{"action": "continue"}"#).is_err(),
            "message required"
        );
        assert!(
            parse_answer(r#"{"action": "continue", "message": null, "why": "x"}"#).is_err(),
            "no other key"
        );
        assert!(parse_answer(r#"{"action": "steer", "message": "  "}"#).is_err());
        assert!(parse_answer(r#"{"action": "replace", "message": null}"#).is_err());
        assert!(parse_answer(r#"[{"action": "continue", "message": null}]"#).is_err());
    }
}
