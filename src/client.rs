//! How a process that is not the engine gets the engine to act: it becomes the engine for the
//! length of the command when none runs, else it writes a request row that the running engine
//! answers in the store. Either way the action runs exactly once, in the engine.

use std::time::{Duration, Instant};

use crate::engine::{Engine, EngineOptions};
use crate::error::{Error, ErrorPayload, Result};
use crate::lease::Lease;
use crate::paths::Paths;
use crate::store::{RequestStatus, Store};

/// The engine's request vocabulary, which it answers; a client only sends it.
pub use crate::engine::{Request, Response};

/// How often a waiting client looks for the answer.
const ANSWER_POLL: Duration = Duration::from_millis(50);

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
        Request::RetryAutofix { .. } => "retry_autofix",
        Request::AddProject { .. } => "add_project",
        Request::RemoveProject { .. } => "remove_project",
        Request::RunProject { .. } => "run_project",
        Request::StopSession { .. } => "stop_session",
    }
}

fn decode<T: serde::de::DeserializeOwned>(raw: Option<&str>) -> Result<T> {
    let raw =
        raw.ok_or_else(|| Error::Internal("the engine answered with no result".to_string()))?;
    serde_json::from_str(raw)
        .map_err(|e| Error::Internal(format!("the engine's answer is not readable: {e}")))
}
