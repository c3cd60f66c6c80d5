//! Connecting, looking, disconnecting, and choosing where a workflow runs: the acts behind
//! `healer cluster …`, `healer workflow runs-on` and Settings → "Run on more computers". They
//! need the store and the secrets keep only, so a command does them without an engine; a
//! running engine sees the change at its next look (every few seconds).

use serde::{Deserialize, Serialize};
use temporalio_client::schedules::DeleteScheduleOptions;
use temporalio_client::WorkflowCancelOptions;

use super::flow::HealerRun;

use super::codec::ClusterKey;
use super::connection::{
    connect, control_key, kept_control_key, queue_workers, ClusterSettings, QueueWorkers,
    CLUSTER_SETTINGS,
};
use crate::error::{Error, Result};
use crate::secrets::Keep;
use crate::store::Store;

/// What the cluster looks like from here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ClusterStatus {
    /// The connection saved (absent: everything runs on this computer).
    pub settings: Option<ClusterSettings>,
    /// It answered just now.
    pub reachable: bool,
    /// Why it did not, in words for the person.
    pub problem: Option<String>,
    /// The queues in use, with the workers polling each.
    pub queues: Vec<QueueWorkers>,
    /// How many workflows run on the cluster.
    pub workflows_on_cluster: u32,
}

pub use crate::store::RunsOn;

/// The identity the control room shows the cluster.
fn identity() -> String {
    "healer control room".to_string()
}

/// Test `settings` and, when the cluster answers, save them. Nothing is saved otherwise.
pub async fn connect_cluster(
    store: &Store,
    keep: &Keep,
    instance: &str,
    settings: ClusterSettings,
) -> Result<ClusterStatus> {
    let settings = ClusterSettings {
        address: settings.address.trim().to_string(),
        namespace: settings.namespace.trim().to_string(),
        queue: settings.queue.trim().to_string(),
        ..settings
    };
    if let Some(problem) = settings.problem() {
        return Err(Error::InvalidInput(problem));
    }
    // The address first: a cluster that does not answer says so before anything is kept.
    // Asking for the queue's workers proves the namespace exists and the API key is accepted.
    let probe = kept_control_key(keep, instance).unwrap_or_else(ClusterKey::generate);
    let client = connect(&settings, &probe, &identity()).await?;
    queue_workers(&client, &settings.namespace, &settings.queue).await?;
    // Then the cluster key, made and kept now (a computer without a place for it says so).
    control_key(keep, instance)?;
    store.set_setting(CLUSTER_SETTINGS, &settings)?;
    cluster_status(store, keep, instance).await
}

/// Test settings without saving them (the window's Test button).
pub async fn test_cluster(
    keep: &Keep,
    instance: &str,
    settings: &ClusterSettings,
) -> Result<QueueWorkers> {
    if let Some(problem) = settings.problem() {
        return Err(Error::InvalidInput(problem));
    }
    // A test reads only who polls the queue: no payload is sealed, so the cluster key is not
    // needed (nor made) yet. Connecting is what keeps one.
    let key = kept_control_key(keep, instance).unwrap_or_else(ClusterKey::generate);
    let client = connect(settings, &key, &identity()).await?;
    queue_workers(&client, settings.namespace.trim(), settings.queue.trim()).await
}

/// Whether the cluster answers, and the workers of every queue in use.
pub async fn cluster_status(store: &Store, keep: &Keep, instance: &str) -> Result<ClusterStatus> {
    let settings: Option<ClusterSettings> = store.setting(CLUSTER_SETTINGS)?;
    let on_cluster = store.cluster_workflows()?;
    let mut status = ClusterStatus {
        settings: settings.clone(),
        reachable: false,
        problem: None,
        queues: Vec::new(),
        workflows_on_cluster: u32::try_from(on_cluster.len()).unwrap_or(u32::MAX),
    };
    let Some(settings) = settings else {
        return Ok(status);
    };
    let key = control_key(keep, instance)?;
    let client = match connect(&settings, &key, &identity()).await {
        Ok(client) => client,
        Err(e) => {
            status.problem = Some(e.to_string());
            return Ok(status);
        }
    };
    let mut queues: Vec<String> = vec![settings.queue.clone()];
    for (_, queue) in on_cluster {
        if !queues.contains(&queue) {
            queues.push(queue);
        }
    }
    for queue in queues {
        match queue_workers(&client, &settings.namespace, &queue).await {
            Ok(workers) => status.queues.push(workers),
            Err(e) => {
                status.problem = Some(e.to_string());
                return Ok(status);
            }
        }
    }
    status.reachable = true;
    Ok(status)
}

/// Take every workflow back to this computer, take their schedules off the cluster, and forget
/// the connection. The titles of the workflows brought back are returned.
pub async fn disconnect_cluster(store: &Store, keep: &Keep, instance: &str) -> Result<Vec<String>> {
    let settings: Option<ClusterSettings> = store.setting(CLUSTER_SETTINGS)?;
    let Some(settings) = settings else {
        return Ok(Vec::new());
    };
    let schedules = store.cluster_schedules()?;
    if !schedules.is_empty() {
        let key = control_key(keep, instance)?;
        let client = connect(&settings, &key, &identity()).await.map_err(|e| {
            Error::Cluster(format!(
                "{e}. Healer needs to reach it to take the schedules it put there off, so that they stop starting runs"
            ))
        })?;
        for schedule in schedules {
            let deleted = client
                .get_schedule_handle(schedule.schedule_id.clone())
                .delete(DeleteScheduleOptions::default())
                .await;
            if let Err(e) = deleted {
                if !e.to_string().to_lowercase().contains("not found") {
                    return Err(Error::Cluster(format!(
                        "a schedule could not be taken off the cluster: {e}"
                    )));
                }
            }
            store.forget_cluster_schedule(schedule.workflow_id)?;
        }
    }
    let mut back = Vec::new();
    for (workflow_id, _) in store.cluster_workflows()? {
        store.set_cluster_queue(workflow_id, None)?;
        if let Ok(w) = store.workflow(workflow_id) {
            back.push(w.title);
        }
    }
    // A project's sessions come home too (issue 42).
    for project in store.list_projects()? {
        if project.settings.runs_on != RunsOn::Local {
            let mut settings = project.settings.clone();
            settings.runs_on = RunsOn::Local;
            store.update_project(project.id, &project.name, &settings)?;
            back.push(project.name);
        }
    }
    store.delete_setting(CLUSTER_SETTINGS)?;
    Ok(back)
}

/// Where a workflow runs.
pub fn runs_on(store: &Store, workflow_id: i64) -> Result<RunsOn> {
    Ok(match store.cluster_queue(workflow_id)? {
        Some(queue) => RunsOn::Cluster { queue },
        None => RunsOn::Local,
    })
}

/// Choose where a workflow runs. The cluster needs a connection: refused with a sentence
/// without one. `RunsOn::Cluster` with an empty queue takes the connection's default.
pub fn set_runs_on(store: &Store, workflow_id: i64, runs_on: RunsOn) -> Result<RunsOn> {
    let workflow = store.workflow(workflow_id)?;
    let chosen = match runs_on {
        RunsOn::Local => None,
        RunsOn::Cluster { queue } => {
            let settings = refuse_without_connection(store, &workflow.title)?;
            let queue = queue.trim();
            if queue.contains(char::is_whitespace) {
                return Err(Error::InvalidInput(format!(
                    "“{queue}” is not a queue name: it may not hold spaces"
                )));
            }
            Some(if queue.is_empty() {
                settings.queue
            } else {
                queue.to_string()
            })
        }
    };
    store.set_cluster_queue(workflow_id, chosen.as_deref())?;
    runs_on_of(chosen)
}

fn runs_on_of(queue: Option<String>) -> Result<RunsOn> {
    Ok(match queue {
        Some(queue) => RunsOn::Cluster { queue },
        None => RunsOn::Local,
    })
}

/// The connection, or the sentence that says there is none (for `title`, or a new workflow).
pub fn refuse_without_connection(store: &Store, title: &str) -> Result<ClusterSettings> {
    store.setting::<ClusterSettings>(CLUSTER_SETTINGS)?.ok_or_else(|| {
        Error::Cluster(format!(
            "“{title}” cannot run on the cluster: this Healer is not connected to one. Connect it first in Settings → More computers"
        ))
    })
}

/// Stop a run in progress on the cluster: Temporal cancels its attempt, the worker ends the
/// script's process group, and the engine waiting for it stores it as stopped.
pub async fn stop_cluster_run(
    store: &Store,
    keep: &Keep,
    instance: &str,
    run_id: i64,
) -> Result<()> {
    let temporal_id = store
        .open_cluster_runs()?
        .into_iter()
        .find(|(id, ..)| *id == run_id)
        .map(|(_, _, t, _)| t)
        .ok_or_else(|| Error::InvalidInput("that run is not running on the cluster".to_string()))?;
    let settings = refuse_without_connection(store, "this run")?;
    let key = control_key(keep, instance)?;
    let client = connect(&settings, &key, &identity()).await?;
    client
        .get_workflow_handle::<HealerRun>(temporal_id)
        .cancel(
            WorkflowCancelOptions::builder()
                .reason("stopped by the person".to_string())
                .build(),
        )
        .await
        .map_err(|e| Error::Cluster(format!("the cluster did not stop the run: {e}")))
}

/// Cancel a session's workflow on the cluster (its control room died while it ran).
pub async fn cancel_session(
    store: &Store,
    keep: &Keep,
    instance: &str,
    temporal_id: &str,
) -> Result<()> {
    let settings = store
        .setting::<ClusterSettings>(CLUSTER_SETTINGS)?
        .ok_or_else(|| Error::Cluster("this Healer is not connected to a cluster".to_string()))?;
    let key = control_key(keep, instance)?;
    let client = connect(&settings, &key, &identity()).await?;
    match client
        .get_workflow_handle::<super::session_flow::HealerSession>(temporal_id.to_string())
        .cancel(
            WorkflowCancelOptions::builder()
                .reason("its control room stopped while it ran".to_string())
                .build(),
        )
        .await
    {
        Ok(()) => Ok(()),
        Err(e)
            if e.to_string().to_lowercase().contains("not found")
                || e.to_string().contains("completed") =>
        {
            Ok(())
        }
        Err(e) => Err(Error::Cluster(format!(
            "the cluster did not cancel the session: {e}"
        ))),
    }
}
