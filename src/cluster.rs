//! Runs on more computers (issue 26): a workflow may run on a **Temporal** cluster instead of
//! this computer. Temporal does what a cluster needs — durable runs, retries, heartbeats,
//! schedules that fire while the laptop sleeps, any number of workers — and Healer adds
//! nothing that coordinates workers itself:
//!
//! - [`flow`]: `HealerRun`, one run as a Temporal workflow (the attempt loop, deterministic);
//! - [`worker`]: the attempt activity and `healer worker`, which runs it anywhere;
//! - `control`: the control room's side — start, wait, store, heal, re-attach after a restart;
//! - `schedules`: a cluster workflow's schedule as a Temporal Schedule, and its runs imported;
//! - [`session_flow`] / [`session_worker`]: `HealerSession`, a project's agent session on a
//!   worker, and the worker's side of it (issue 42); [`gateway_access`]: how workers reach the
//!   control room's model gateway;
//! - [`codec`]: every payload sealed with the cluster key, so Temporal stores only ciphertext;
//! - [`connection`]: the settings, the key, the client, the workers a queue has.

pub mod codec;
pub mod connection;
mod control;
pub mod flow;
pub mod gateway_access;
mod manage;
mod schedules;
pub mod session_flow;
pub mod session_worker;
pub mod worker;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use temporalio_sdk::runtime::worker_tuner::{FixedSizeSlotSupplier, TunerHolder};
use temporalio_sdk::runtime::PollerBehavior;
use temporalio_sdk::{Runtime, Worker, WorkerOptions};

pub use codec::ClusterKey;
pub use connection::{
    connect, queue_workers, worker_key, ClusterSettings, ClusterWorker, QueueWorkers,
    CLUSTER_SETTINGS, DEFAULT_NAMESPACE, DEFAULT_QUEUE, KEY_ENV,
};
pub(crate) use control::{client as cluster_client, execute_run, reattach};
pub use flow::HealerRun;
pub use manage::{
    cancel_session, cluster_status, connect_cluster, disconnect_cluster, refuse_without_connection,
    runs_on, set_runs_on, stop_cluster_run, test_cluster, ClusterStatus, RunsOn,
};
pub(crate) use schedules::cluster_loop;
use worker::RunActivities;

use crate::error::{Error, Result};

/// How `healer worker` runs.
#[derive(Debug, Clone)]
pub struct WorkerSetup {
    pub settings: ClusterSettings,
    /// Shown in the control room's workers list and on every attempt it runs.
    pub name: String,
    /// Attempts at once.
    pub concurrency: usize,
    /// Environments and scratch folders.
    pub cache: PathBuf,
    /// After SIGTERM, how long running attempts may take to finish before they are handed
    /// back (they then run again on another worker).
    pub drain: Duration,
    /// The file the cluster key was read from (hidden from every script); `None`: the key came
    /// from `HEALER_CLUSTER_KEY`.
    pub key_file: Option<PathBuf>,
    /// The control room's model gateway as this worker reaches it (`http://host:port`), for
    /// agent sessions; its token is read from `HEALER_GATEWAY_TOKEN`.
    pub gateway: Option<String>,
}

/// The default drain time after SIGTERM.
pub const DEFAULT_DRAIN: Duration = Duration::from_secs(60);

/// How many polls for attempts a worker keeps open with `slots` attempts at once. Each open poll
/// holds one of the slots; the ones left free let Temporal hand the attempt a run has just
/// scheduled straight back to the worker that scheduled it (eager execution: one trip through
/// the queue fewer). With every slot held by a poll (the SDK's default of five pollers against
/// four slots) that never happens.
fn attempt_pollers(slots: usize) -> PollerBehavior {
    PollerBehavior::SimpleMaximum((slots / 2).max(1))
}

/// Run a worker until SIGTERM or Ctrl-C (then drain). `ready` is called once it polls.
pub async fn run_worker(setup: WorkerSetup, key: ClusterKey, ready: impl FnOnce()) -> Result<()> {
    std::fs::create_dir_all(&setup.cache)
        .map_err(|e| Error::io(format!("cannot create {}", setup.cache.display()), e))?;
    // What a worker killed here left running (its scripts' control groups) ends first: the
    // attempt ran again elsewhere, and two copies of a script must not run at once.
    let ended = crate::contain::sweep(&worker::groups_registry(&setup.cache));
    if ended > 0 {
        tracing::info!("ended {ended} script(s) an earlier worker on this machine left running");
    }
    let isolated = match worker::namespaces_work(&setup.cache, setup.key_file.as_deref()).await {
        Ok(()) => true,
        Err(why) if setup.key_file.is_some() => {
            return Err(Error::InvalidInput(format!(
                "this machine cannot give scripts namespaces of their own ({why}), so a \
                 script could read the key file: start the worker with the key in \
                 {KEY_ENV} instead of --key-file"
            )))
        }
        Err(why) => {
            tracing::warn!(
                "scripts run without namespaces of their own ({why}): one left running when \
                 this worker is killed is ended when a worker next starts here"
            );
            false
        }
    };
    let runtime = Runtime::from_current_tokio(Default::default())
        .map_err(|e| Error::Internal(format!("the Temporal runtime could not start: {e}")))?;
    let client = connect(&setup.settings, &key, &setup.name).await?;
    let slots = setup.concurrency.max(1);
    let tuner = TunerHolder::builder()
        .workflow_task_slot_supplier(FixedSizeSlotSupplier::new(slots.max(2) * 2))
        .activity_task_slot_supplier(FixedSizeSlotSupplier::new(slots))
        .local_activity_task_slot_supplier(FixedSizeSlotSupplier::new(1))
        .nexus_task_slot_supplier(FixedSizeSlotSupplier::new(1))
        .build();
    let activities = RunActivities::new(
        setup.name.clone(),
        setup.cache.clone(),
        setup.key_file.clone(),
        isolated,
    );
    let draining = activities.draining.clone();
    let gateway = match &setup.gateway {
        Some(address) => {
            let token =
                crate::secrets::env_var(gateway_access::GATEWAY_TOKEN_ENV).ok_or_else(|| {
                    Error::InvalidInput(format!(
                    "a worker given --gateway needs its token in {}: the control room makes one \
                     per worker (Settings → More computers, or `healer cluster worker-token NAME`)",
                    gateway_access::GATEWAY_TOKEN_ENV
                ))
                })?;
            let shutdown_forwarder = tokio_util::sync::CancellationToken::new();
            let addr = crate::gateway::forwarder(
                address,
                crate::llm::ApiKey::new(token),
                shutdown_forwarder.clone(),
            )
            .await?;
            // Lives as long as the worker.
            std::mem::forget(shutdown_forwarder);
            Some(addr)
        }
        None => None,
    };
    let sessions = session_worker::SessionActivities {
        name: setup.name.clone(),
        cache: setup.cache.clone(),
        gateway,
        key_in_file: setup.key_file.is_some(),
        draining: draining.clone(),
    };
    let options = WorkerOptions::new(setup.settings.queue.clone())
        .register_workflow::<HealerRun>()
        .map_err(|e| Error::Internal(format!("HealerRun could not be registered: {e}")))?
        .register_workflow::<session_flow::HealerSession>()
        .map_err(|e| Error::Internal(format!("HealerSession could not be registered: {e}")))?
        .register_activities(activities)
        .register_activities(sessions)
        // Heartbeats reach Temporal as often as they are made (an attempt beats every 5 s, a
        // session every half second and at each step), so a Stop arrives within a second and
        // a session's steps reach the window at once.
        .max_heartbeat_throttle_interval(session_flow::SESSION_BEAT)
        .default_heartbeat_throttle_interval(session_flow::SESSION_BEAT)
        .client_identity_override(setup.name.clone())
        .tuner(tuner)
        .activity_task_poller_behavior(attempt_pollers(slots))
        .graceful_shutdown_period(setup.drain)
        .build();
    let mut worker = Worker::new(&runtime, client, options)
        .map_err(|e| Error::Cluster(format!("the worker could not start: {e}")))?;
    let shutdown = Arc::new(worker.shutdown_handle());
    let stop = shutdown.clone();
    tokio::spawn(async move {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(term) => term,
                Err(e) => {
                    tracing::error!("cannot listen for SIGTERM: {e}");
                    return;
                }
            };
        tokio::select! {
            _ = term.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
        tracing::info!("stopping: running attempts may finish");
        draining.store(true, std::sync::atomic::Ordering::SeqCst);
        stop();
    });
    ready();
    worker
        .run()
        .await
        .map_err(|e| Error::Cluster(format!("the worker stopped: {e}")))
}
