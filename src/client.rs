//! How a process that is not the engine gets the engine to act: it becomes the engine for the
//! length of the command when none runs, else it writes a request row that the running engine
//! answers in the store. Either way the action runs exactly once, in the engine.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::checkpoint::Checkpoint;
use crate::engine::{Engine, EngineOptions, HealedRun};
use crate::error::{Error, ErrorPayload, Result};
use crate::heal::HealRecord;
use crate::lease::Lease;
use crate::paths::Paths;
use crate::planner::PlannerChat;
use crate::store::{RequestStatus, Store};
use crate::workflow::{RunDetail, ScriptVersion, Workflow, WorkflowInput};

/// How often a waiting client looks for the answer.
const ANSWER_POLL: Duration = Duration::from_millis(50);

/// What another process can ask the engine to do. Workflows are named by name or id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Request {
    Ping,
    SendTestAlert,
    CreateWorkflow {
        input: Box<WorkflowInput>,
    },
    SaveScript {
        workflow: String,
        code: String,
        comment: String,
    },
    SetPaused {
        workflow: String,
        paused: bool,
    },
    DeleteWorkflow {
        workflow: String,
    },
    /// Run now and answer when the run has finished (`until_healed`: and when the heal its
    /// failure starts is over too).
    RunWorkflow {
        workflow: String,
        #[serde(default)]
        until_healed: bool,
    },
    /// Decide a checkpoint (`option` 1-based; `None`: the recommended one).
    DecideCheckpoint {
        id: i64,
        option: Option<u32>,
        notes: Option<String>,
    },
    /// One planner turn in the workflow's chat, answered when it is over.
    Replan {
        workflow: String,
        message: String,
    },
    LoadExamples,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Response {
    Pong { pid: u32, role: String },
    TestAlert { heal: Box<HealRecord> },
    Workflow { workflow: Box<Workflow> },
    Version { version: Box<ScriptVersion> },
    Run { detail: Box<RunDetail> },
    Healed { healed: Box<HealedRun> },
    Chat { chat: Box<PlannerChat> },
    Checkpoint { checkpoint: Box<Checkpoint> },
    Workflows { workflows: Vec<Workflow> },
    Done,
}

/// Have the engine act on `request`, waiting at most `wait` for a running engine's answer.
pub async fn act(paths: &Paths, role: &str, request: Request, wait: Duration) -> Result<Response> {
    paths.ensure()?;
    match Lease::try_acquire(paths, role)? {
        Some(lease) => {
            // This process is the engine only for this command: no scheduler (it must not
            // start catching up on schedules), just the one action.
            let options = EngineOptions {
                scheduler: false,
                ..EngineOptions::default()
            };
            let engine = Engine::start_with_lease(paths.clone(), role, lease, options).await?;
            let response = engine.perform(request).await;
            engine.shutdown().await;
            response
        }
        None => ask_running_engine(paths, &request, wait).await,
    }
}

async fn ask_running_engine(paths: &Paths, request: &Request, wait: Duration) -> Result<Response> {
    let store = Store::open(&paths.db())?;
    let payload = serde_json::to_string(request)
        .map_err(|e| Error::Internal(format!("request does not serialise: {e}")))?;
    let kind = payload_kind(request);
    let id = store.insert_request(kind, &payload)?;
    let deadline = Instant::now() + wait;
    loop {
        if let Some(row) = store.request(id)? {
            match row.status {
                RequestStatus::Done => return decode::<Response>(row.result.as_deref()),
                RequestStatus::Failed => {
                    let error = decode::<ErrorPayload>(row.result.as_deref())?;
                    return Err(Error::EngineUnavailable(error.message));
                }
                RequestStatus::Pending | RequestStatus::Taken => {}
            }
        }
        if Instant::now() >= deadline {
            let holder = Lease::holder(paths);
            let withdrawn = store.withdraw_request(
                id,
                "{\"code\":\"engine_unavailable\",\"message\":\"the asker stopped waiting\"}",
            )?;
            return Err(Error::EngineUnavailable(if withdrawn {
                format!(
                    "the running engine ({holder}) did not take the request within {}s; it was withdrawn and will not run",
                    wait.as_secs()
                )
            } else {
                format!(
                    "the running engine ({holder}) is still working on it after {}s; its result will show in Activity",
                    wait.as_secs()
                )
            }));
        }
        tokio::time::sleep(ANSWER_POLL).await;
    }
}

fn payload_kind(request: &Request) -> &'static str {
    match request {
        Request::Ping => "ping",
        Request::SendTestAlert => "send_test_alert",
        Request::CreateWorkflow { .. } => "create_workflow",
        Request::SaveScript { .. } => "save_script",
        Request::SetPaused { .. } => "set_paused",
        Request::DeleteWorkflow { .. } => "delete_workflow",
        Request::RunWorkflow { .. } => "run_workflow",
        Request::Replan { .. } => "replan",
        Request::DecideCheckpoint { .. } => "decide_checkpoint",
        Request::LoadExamples => "load_examples",
    }
}

fn decode<T: serde::de::DeserializeOwned>(raw: Option<&str>) -> Result<T> {
    let raw =
        raw.ok_or_else(|| Error::Internal("the engine answered with no result".to_string()))?;
    serde_json::from_str(raw)
        .map_err(|e| Error::Internal(format!("the engine's answer is not readable: {e}")))
}
