//! `HealerSession`: one coding agent's session of a project that runs on the cluster, written
//! as a Temporal workflow (issue 42). Its one long activity runs on a `healer worker` that has
//! the agents installed ([`super::session_worker`]): fetch the repository from its remote,
//! branch `healer/<task>` from the commit the control room names, run the agent against the
//! control room's model gateway, run the project's checks, commit, push the branch. The
//! worker sends the session's steps back in its heartbeats (sealed by the codec like every
//! payload); the person's messages and steering arrive as the signal [`HealerSession::tell`],
//! which the worker reads with the query [`HealerSession::told`]; Stop cancels the workflow.
//! A worker that stops sending heartbeats is noticed by Temporal after
//! [`SESSION_HEARTBEAT_TIMEOUT`]: the session ends as lost, and the task is open again with
//! what was pushed kept.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use temporalio_common::RetryPolicy as TemporalRetry;
use temporalio_macros::{workflow, workflow_methods};
use temporalio_sdk::{
    ActivityCancellationType, ActivityExecutionError, ActivityOptions, ApplicationFailure,
    SyncWorkflowContext, WorkflowContext, WorkflowContextView, WorkflowResult,
};

use super::session_worker::SessionActivities;
use crate::failure::Evidence;
use crate::llm::ProviderKind;
use crate::session::{SessionStatus, SessionStep};
use crate::store::ProjectSettings;

/// How often a session's worker beats while nothing new happened (a step beats at once).
pub const SESSION_BEAT: Duration = Duration::from_millis(500);
/// Silence after which Temporal gives a session's worker up as lost: the design's zombie rule
/// for a session elsewhere. (An agent that is alive but does nothing is the steering loop's,
/// as at home: its worker still beats.)
pub const SESSION_HEARTBEAT_TIMEOUT: Duration = Duration::from_secs(30);
/// Time a session may take beyond its agent's and checks' limits: fetching the repository,
/// committing and pushing.
const SESSION_ALLOWANCE: Duration = Duration::from_secs(15 * 60);
/// Times an agent on a worker is resumed with messages that came while its turn ran.
pub const MAX_RESUMES: u64 = 3;
/// The most of one step's text that crosses Temporal (the control room stores 64 KB).
pub const STEP_CHARS: usize = 16 * 1024;
/// The most step text one heartbeat carries: the newest steps, in order.
pub const WINDOW_BYTES: usize = 256 * 1024;

/// The model as the agent on the worker reaches it: a pass of the control room's gateway
/// (never the provider's key), and the path of the provider's base URL behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GatewayPass {
    pub provider: String,
    pub kind: ProviderKind,
    /// The path after the gateway's address (`/v1`, or empty).
    pub path: String,
    /// The session's pass: refused by the gateway once the session has ended.
    pub token: String,
}

/// What a session needs, all of it: a worker has no Healer data folder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionInput {
    /// The Temporal id it was sealed for: a copy started under another id runs nothing.
    pub sealed_for: String,
    pub instance: String,
    pub session_id: i64,
    pub project: String,
    pub task_id: String,
    pub task_title: String,
    pub prompt: String,
    /// An earlier session of the agent's own to continue, with this prompt as its message.
    pub resume: Option<String>,
    /// Run the checks and commit (false: the healer service's emergency subtask, which it
    /// checks itself: the work is only pushed).
    #[serde(default = "yes")]
    pub verify: bool,
    pub settings: ProjectSettings,
    /// Where the repository is fetched from and the branch pushed to, without credentials:
    /// the worker's own sign-in is used.
    pub remote: String,
    /// The main branch's commit the branch starts from (unless the branch is on the remote).
    pub base: String,
    pub model: Option<GatewayPass>,
}

/// A window of the session's steps, numbered from `from` (0 is the first step).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StepWindow {
    /// The execution whose steps these are (a window copied into another session's heartbeat
    /// is not that session's).
    #[serde(default)]
    pub for_session: String,
    pub from: u64,
    pub steps: Vec<SessionStep>,
}

/// How the work on the worker ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WorkerEnding {
    /// The checks passed; `commit` is the branch's new tip (pushed).
    Green { commit: String },
    /// The agent changed nothing.
    NoChange,
    /// No check and no word that unchecked work may be committed.
    Unchecked,
    /// The agent ended badly (or the program did not run).
    AgentFailed {
        status: SessionStatus,
        exit_code: Option<i32>,
        program_failed: bool,
    },
    /// The init script or a check failed (`could_not_run`: the check's program is missing on
    /// the worker, which says nothing of the work).
    CheckFailed {
        init: bool,
        could_not_run: bool,
        evidence: Evidence,
    },
    /// The worker could not do its part (fetch, branch, push): in its words.
    NotRun,
    /// Cancelled by the control room.
    Stopped,
    /// An emergency subtask's work, pushed unchecked for the healer service to check.
    HandedBack,
}

fn yes() -> bool {
    true
}

/// What the worker says when the session ends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionOutcome {
    /// The execution it answers (an outcome copied from another session is not this one's).
    pub for_session: String,
    pub worker: String,
    pub ending: WorkerEnding,
    pub summary: String,
    /// The branch's tip on the remote after the session (what was pushed is kept).
    pub pushed: Option<String>,
    /// The worker's own commit of what the agent left unchecked (a session that did not pass
    /// its checks), when it made one: opened in the control room as changes not committed.
    #[serde(default)]
    pub kept: Option<String>,
    pub agent_session_id: Option<String>,
    /// The last steps, so none said just before the end is missed.
    pub tail: StepWindow,
}

/// How the workflow ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionResult {
    pub ran_as: String,
    pub outcome: Option<SessionOutcome>,
    /// The worker was lost (in Healer's words), when it was.
    pub lost: Option<String>,
    pub stopped: bool,
}

#[workflow]
#[derive(Default)]
pub struct HealerSession {
    /// The person's messages and steering's guidance, in the order they were sent.
    told: Vec<String>,
}

#[workflow_methods]
impl HealerSession {
    #[run]
    pub async fn run(
        ctx: &mut WorkflowContext<Self>,
        input: SessionInput,
    ) -> WorkflowResult<SessionResult> {
        let ran_as = ctx.workflow_id().to_string();
        if input.sealed_for != ran_as {
            tracing::warn!("refused to run session {ran_as}: sealed for another");
            return Err(ApplicationFailure::non_retryable(format!(
                "Healer refused this session: its input was sealed for another one ({}), not for {ran_as}",
                input.sealed_for
            ))
            .into());
        }
        let settings = &input.settings;
        let options = ActivityOptions::with_start_to_close_timeout(session_limit(settings))
            .task_queue(ctx.task_queue().to_string())
            .heartbeat_timeout(SESSION_HEARTBEAT_TIMEOUT)
            // A lost session is not run again by Temporal: the task goes back to open in the
            // control room, which starts the next session (on any worker).
            .retry_policy(TemporalRetry::builder().maximum_attempts(1).build())
            .cancellation_type(ActivityCancellationType::WaitCancellationCompleted)
            .build();
        let result = |outcome, lost, stopped| SessionResult {
            ran_as: ran_as.clone(),
            outcome,
            lost,
            stopped,
        };
        match ctx
            .execute_activity(SessionActivities::session, input.clone(), options)
            .await
        {
            Ok(outcome) if outcome.for_session != ran_as => Ok(result(
                None,
                Some("its answer was another session's".to_string()),
                false,
            )),
            Ok(outcome) => Ok(result(Some(outcome), None, false)),
            Err(ActivityExecutionError::Cancelled(_))
                if ctx.cancellation_token().is_cancelled() =>
            {
                Ok(result(None, None, true))
            }
            Err(e) => {
                let why = super::flow::innermost(&e);
                Ok(result(
                    None,
                    Some(super::flow::known_loss(&why).to_string()),
                    false,
                ))
            }
        }
    }

    /// A message for the agent (the person's, or steering's guidance).
    #[signal]
    pub fn tell(&mut self, _ctx: &mut SyncWorkflowContext<Self>, message: String) {
        self.told.push(message);
    }

    /// The messages from number `since` on (the worker asks with how many it has).
    #[query]
    pub fn told(&self, _ctx: &WorkflowContextView, since: u32) -> Vec<String> {
        self.told
            .iter()
            .skip(usize::try_from(since).unwrap_or(usize::MAX))
            .cloned()
            .collect()
    }
}

/// The longest a session's work may take on its worker: the agent's and the checks' limits,
/// and time to fetch, commit and push.
pub fn session_limit(settings: &ProjectSettings) -> Duration {
    let checks = u64::from(settings.command_time_limit_secs) * (settings.verify.len() as u64 + 1);
    // The agent may be resumed with messages that came while its turn ran, each time within
    // its own limit.
    let agent = u64::from(settings.agent_time_limit_secs) * (1 + MAX_RESUMES);
    Duration::from_secs(agent + checks) + SESSION_ALLOWANCE
}

/// A new Temporal id for a session (stored before it starts; nobody can guess it).
pub fn new_session_id(instance: &str, project_id: i64, session_id: i64) -> String {
    let nonce: u64 = rand::random();
    format!("healer-{instance}-p{project_id}-s{session_id}-{nonce:016x}")
}
