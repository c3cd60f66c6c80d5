//! The session activity of `healer worker` (issue 42): it runs one agent session's work
//! ([`crate::project::on_worker`]) and keeps Temporal and the control room told — the session's
//! newest steps in each heartbeat (sealed by the codec), a beat at least every
//! [`SESSION_BEAT`] so a Stop arrives within a second and a lost worker is noticed — and it
//! asks the workflow for the person's messages every second. A Stop (the workflow cancelled)
//! ends the agent's process group.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use temporalio_client::WorkflowQueryOptions;
use temporalio_macros::activities;
use temporalio_sdk::activities::{ActivityContext, ActivityError};
use tokio_util::sync::CancellationToken;

use super::session_flow::{
    HealerSession, SessionInput, SessionOutcome, WorkerEnding, SESSION_BEAT,
};
use crate::project::on_worker::{self, SessionSink, WorkerPlace};

/// How often the worker asks the workflow for new messages.
const ASK_FOR_MESSAGES: Duration = Duration::from_secs(1);
/// How long a stopped session's work may take to end and be pushed.
const STOP_WAIT: Duration = Duration::from_secs(20);

/// What a worker keeps for sessions.
pub struct SessionActivities {
    pub(super) name: String,
    pub(super) cache: PathBuf,
    /// The worker's forwarder to the control room's model gateway, when it was given one.
    pub(super) gateway: Option<SocketAddr>,
    /// The cluster key came from a file (`--key-file`): sessions are refused, since the agent
    /// runs as the worker's user and could read it.
    pub(super) key_in_file: bool,
    pub(super) draining: Arc<AtomicBool>,
}

#[activities]
impl SessionActivities {
    /// Do one session's work and say how it ended. An error means it could not be carried
    /// out (cancelled by a Stop, or this worker is stopping).
    #[activity]
    pub async fn session(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: SessionInput,
    ) -> Result<SessionOutcome, ActivityError> {
        let for_session = ctx.info().workflow_id.clone().unwrap_or_default();
        let sink = Arc::new(SessionSink::default());
        *sink.for_session.lock().unwrap_or_else(|p| p.into_inner()) = for_session.clone();
        let outcome =
            |ending, summary: String, worked: Option<&on_worker::Worked>| SessionOutcome {
                for_session: for_session.clone(),
                worker: self.name.clone(),
                ending,
                summary,
                pushed: worked.and_then(|w| w.pushed.clone()),
                kept: worked.and_then(|w| w.kept.clone()),
                agent_session_id: worked.and_then(|w| w.agent_session_id.clone()),
                tail: sink.window(),
            };
        // Only the execution its input was sealed for may ask for this work.
        if input.sealed_for != for_session {
            tracing::warn!("refused a session: sealed for another execution");
            return Ok(outcome(
                WorkerEnding::NotRun,
                "The worker refused to run it: its input was sealed for another session"
                    .to_string(),
                None,
            ));
        }
        if self.key_in_file {
            return Ok(outcome(
                WorkerEnding::NotRun,
                format!(
                    "The worker {} keeps its cluster key in a file, which an agent working as the \
                     worker's user could read: start workers that run agents with the key in {}",
                    self.name,
                    super::KEY_ENV
                ),
                None,
            ));
        }
        tracing::info!(
            "session {} of “{}” ({}) started",
            input.session_id,
            input.task_title,
            input.project
        );
        let scratch = self.cache.join("sessions").join(format!(
            "{}-s{}-{}",
            input.instance,
            input.session_id,
            uuid::Uuid::new_v4()
        ));
        let place = WorkerPlace {
            worker: self.name.clone(),
            scratch: scratch.clone(),
            groups: super::worker::groups_registry(&self.cache),
            gateway: self.gateway,
        };
        let cancel = CancellationToken::new();
        let job = {
            let (sink, cancel, input) = (sink.clone(), cancel.clone(), input.clone());
            tokio::spawn(async move { on_worker::work(&place, &input, &sink, &cancel).await })
        };
        tokio::pin!(job);
        let handle = ctx.workflow_handle::<HealerSession>();
        let mut sent = 0u64;
        let mut told = 0u32;
        let mut beat = tokio::time::interval(SESSION_BEAT);
        let mut ask = tokio::time::interval(ASK_FOR_MESSAGES);
        let worked = loop {
            tokio::select! {
                done = &mut job => break done,
                () = sink.changed.notified() => {
                    let now = sink.len();
                    if now != sent {
                        sent = now;
                        let _ = ctx.record_heartbeat(sink.window()).await;
                    }
                }
                _ = beat.tick() => {
                    let _ = ctx.record_heartbeat(sink.window()).await;
                }
                _ = ask.tick() => {
                    if let Some(handle) = &handle {
                        match handle.query(HealerSession::told, told, WorkflowQueryOptions::default()).await {
                            Ok(messages) => {
                                told += u32::try_from(messages.len()).unwrap_or(0);
                                for message in messages {
                                    sink.tell(message);
                                }
                            }
                            Err(e) => tracing::debug!("could not ask for messages: {e}"),
                        }
                    }
                }
                () = ctx.cancelled() => {
                    cancel.cancel();
                    let _ = tokio::time::timeout(STOP_WAIT, &mut job).await;
                    // What the agent's commands started in groups of their own ends too.
                    crate::project::end_marked_processes(&input.instance, input.session_id);
                    let _ = std::fs::remove_dir_all(&scratch);
                    if self.draining.load(Ordering::SeqCst) {
                        return Err(ActivityError::from(std::io::Error::other(
                            "the worker stopped before the session ended; it was handed back",
                        )));
                    }
                    return Err(ActivityError::cancelled());
                }
            }
        };
        crate::project::end_marked_processes(&input.instance, input.session_id);
        let _ = std::fs::remove_dir_all(&scratch);
        let worked = worked.map_err(|e| {
            ActivityError::from(std::io::Error::other(format!(
                "the session's work stopped: {e}"
            )))
        })?;
        Ok(outcome(
            worked.ending.clone(),
            worked.summary.clone(),
            Some(&worked),
        ))
    }
}
