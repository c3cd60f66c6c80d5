//! How a process that is not the engine gets the engine to act: it becomes the engine for the
//! length of the command when none runs, else it writes a request row that the running engine
//! answers in the store. Either way the action runs exactly once, in the engine.
//!
//! An engine a command started for itself answers nothing but that command, so while one runs
//! a request waits; the moment the lease is free again, the waiting command withdraws its
//! request and becomes the engine itself. The lease is also how a dead engine is noticed: a
//! request it had taken, with the lease free, was abandoned — said within a second.

use std::time::{Duration, Instant};

use crate::engine::{Engine, EngineOptions};
use crate::error::{Error, ErrorPayload, Result};
use crate::lease::Lease;
use crate::paths::Paths;
use crate::store::{RequestRow, RequestStatus, Store};

/// The engine's request vocabulary, which it answers; a client only sends it.
pub use crate::engine::{Request, Response};

/// How long a client waits before it says why no answer comes (a full disk).
const QUIET_WAIT: Duration = Duration::from_secs(3);

/// What a waiting command tells the person when the disk of the data folder is full: the
/// engine cannot save what it did (nor its answer) until there is room.
fn disk_full_notice(paths: &Paths) -> Option<String> {
    let free = crate::error::free_space(paths.data_dir())?;
    (free < crate::error::NEEDED_FREE_BYTES / 8).then(|| {
        format!(
            "Still waiting for the Healer engine: the disk holding {} is full ({} KB left), so \
             it cannot save what it did. Free at least {} MB there; the answer comes once there \
             is room.",
            paths.data_dir().display(),
            free / 1024,
            crate::error::NEEDED_FREE_BYTES / (1024 * 1024)
        )
    })
}

/// How often a waiting client looks for the answer.
const ANSWER_POLL: Duration = Duration::from_millis(50);

/// How often a waiting client looks whether the engine is still there (the lease).
const LEASE_LOOK: Duration = Duration::from_millis(250);

/// How long a client keeps trying to read or write the store while it is locked.
const STORE_PATIENCE: Duration = Duration::from_secs(60);

/// Have the engine act on `request`, waiting at most `wait` for a running engine's answer.
pub async fn act(paths: &Paths, role: &str, request: Request, wait: Duration) -> Result<Response> {
    paths.ensure()?;
    match Lease::try_acquire(paths, role)? {
        Some(lease) => act_here(paths, role, lease, request).await,
        None => ask_running_engine(paths, role, request, wait, true).await,
    }
}

/// Have the running engine act on `request`; never become the engine (an agent's hook asks
/// the engine that runs its session, and when none runs there is nobody to ask).
pub async fn ask_engine(
    paths: &Paths,
    role: &str,
    request: Request,
    wait: Duration,
) -> Result<Response> {
    if !Lease::is_held(paths)? {
        return Err(Error::EngineUnavailable(
            "no Healer engine is running to ask".to_string(),
        ));
    }
    ask_running_engine(paths, role, request, wait, false).await
}

/// Be the engine for this one request: no scheduler (it must not start catching up on
/// schedules), and no other process's requests.
async fn act_here(paths: &Paths, role: &str, lease: Lease, request: Request) -> Result<Response> {
    let options = EngineOptions {
        scheduler: false,
        ..EngineOptions::default()
    };
    let engine = Engine::start_with_lease(paths.clone(), role, lease, options).await?;
    let response = engine.perform(request).await;
    engine.shutdown().await;
    response
}

async fn ask_running_engine(
    paths: &Paths,
    role: &str,
    request: Request,
    wait: Duration,
    may_become: bool,
) -> Result<Response> {
    // The running engine may be an older Healer: its data is not upgraded under it.
    let store = Store::open_without_upgrade(&paths.db(), Some(Lease::holder(paths)))?;
    let payload = serde_json::to_string(&request)
        .map_err(|e| Error::Internal(format!("request does not serialise: {e}")))?;
    let kind = payload_kind(&request);
    let id = patiently(|| store.insert_request(kind, &payload)).await?;
    let deadline = Instant::now() + wait;
    let mut next_lease_look = Instant::now() + LEASE_LOOK;
    let mut told_full = Instant::now() + QUIET_WAIT;
    loop {
        let row = patiently(|| store.request(id)).await?;
        if let Some(answer) = answered(row.as_ref())? {
            return answer;
        }
        if Instant::now() >= told_full {
            // Once a minute at most: the person at the terminal sees why nothing comes.
            told_full = Instant::now() + Duration::from_secs(60);
            if let Some(full) = disk_full_notice(paths) {
                eprintln!("{full}");
            }
        }
        let taken = row.as_ref().map(|r| r.status) == Some(RequestStatus::Taken);
        if Instant::now() >= next_lease_look {
            next_lease_look = Instant::now() + LEASE_LOOK;
            let holder = Lease::holder(paths);
            if !may_become && !Lease::is_held(paths)? {
                let _ = patiently(|| store.withdraw_request(id, WITHDRAWN)).await?;
                if let Some(answer) = answered(patiently(|| store.request(id)).await?.as_ref())? {
                    return answer;
                }
                return Err(Error::EngineUnavailable(format!(
                    "the Healer engine ({holder}) stopped before it answered"
                )));
            }
            if let Some(lease) = Lease::try_acquire(paths, role)? {
                // No engine runs now. If it never took the request, do it here.
                if !taken && patiently(|| store.withdraw_request(id, WITHDRAWN)).await? {
                    drop(store);
                    return act_here(paths, role, lease, request).await;
                }
                // It was taken by an engine that is gone: it may have answered as it stopped.
                if let Some(answer) = answered(patiently(|| store.request(id)).await?.as_ref())? {
                    return answer;
                }
                // It died with the request in hand. Starting here settles what it left.
                drop(store);
                let engine = Engine::start_with_lease(
                    paths.clone(),
                    role,
                    lease,
                    EngineOptions {
                        scheduler: false,
                        ..EngineOptions::default()
                    },
                )
                .await;
                if let Ok(engine) = engine {
                    engine.shutdown().await;
                }
                return Err(Error::EngineUnavailable(format!(
                    "the Healer engine ({holder}) stopped while it worked on this (it was killed or crashed); what it was doing is recorded as interrupted — run the command again"
                )));
            }
        }
        if Instant::now() >= deadline {
            let holder = Lease::holder(paths);
            let withdrawn = patiently(|| store.withdraw_request(id, WITHDRAWN)).await?;
            let secs = wait.as_secs();
            return Err(Error::EngineUnavailable(
                if withdrawn && holder.starts_with("healer CLI") {
                    format!(
                    "another healer command ({holder}) has been using the data folder for {secs} s; nothing was done — try again when it ends, or run `healer daemon` so that commands are answered at once"
                )
                } else if withdrawn {
                    format!(
                    "the running Healer engine ({holder}) did not take this within {secs} s; nothing was done — try again, or restart it"
                )
                } else {
                    format!(
                    "the running Healer engine ({holder}) is still working on it after {secs} s; its result will show in Activity"
                )
                },
            ));
        }
        tokio::time::sleep(ANSWER_POLL).await;
    }
}

const WITHDRAWN: &str =
    "{\"code\":\"engine_unavailable\",\"message\":\"the asker stopped waiting\"}";

/// The engine's answer, if the request has one: its response, or its error as it said it.
fn answered(row: Option<&RequestRow>) -> Result<Option<Result<Response>>> {
    let Some(row) = row else {
        return Err(Error::Internal(
            "the request disappeared from the store before it was answered".to_string(),
        ));
    };
    Ok(match row.status {
        RequestStatus::Done => Some(decode::<Response>(row.result.as_deref())),
        RequestStatus::Failed => Some(Err(Error::Answered(decode::<ErrorPayload>(
            row.result.as_deref(),
        )?))),
        RequestStatus::Pending | RequestStatus::Taken => None,
    })
}

/// Run a store call, trying again while the database is locked by another process (a long
/// write, a backup), for at most [`STORE_PATIENCE`].
async fn patiently<T>(mut call: impl FnMut() -> Result<T>) -> Result<T> {
    let deadline = Instant::now() + STORE_PATIENCE;
    let mut pause = Duration::from_millis(20);
    loop {
        match call() {
            Err(e) if e.is_locked() && Instant::now() < deadline => {
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(1));
            }
            other => return other,
        }
    }
}

fn payload_kind(request: &Request) -> &'static str {
    match request {
        Request::Ping => "ping",
        Request::SendTestAlert => "send_test_alert",
        Request::CreateWorkflow { .. } => "create_workflow",
        Request::SaveScript { .. } => "save_script",
        Request::ReinstallDependencies { .. } => "reinstall_dependencies",
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
        Request::AcceptTask { .. } => "accept_task",
        Request::ResolveConflict { .. } => "resolve_conflict",
        Request::DiscardTask { .. } => "discard_task",
        Request::OpenPullRequest { .. } => "open_pull_request",
        Request::CommentOnLines { .. } => "comment_on_lines",
        Request::ReviewComments { .. } => "review_comments",
        Request::RestoreSnapshot { .. } => "restore_snapshot",
        Request::AskAgent { .. } => "ask_agent",
    }
}

fn decode<T: serde::de::DeserializeOwned>(raw: Option<&str>) -> Result<T> {
    let raw =
        raw.ok_or_else(|| Error::Internal("the engine answered with no result".to_string()))?;
    serde_json::from_str(raw)
        .map_err(|e| Error::Internal(format!("the engine's answer is not readable: {e}")))
}
