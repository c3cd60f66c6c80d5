//! Schedules on the cluster: a cluster workflow's schedule is a Temporal Schedule (overlap:
//! skip), kept in step with the workflow — made when it joins the cluster, changed when a new
//! version is saved or the schedule changes, paused with the workflow, taken off when it
//! leaves the cluster or is deleted. Its runs happen while the control room is closed or
//! asleep; the control room brings in every finished run it has not stored (found by
//! Temporal's `TemporalScheduledById` search attribute) and heals its failures.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use futures::StreamExt;
use sha2::{Digest, Sha256};
use temporalio_client::schedules::{
    CreateScheduleOptions, DeleteScheduleOptions, ScheduleAction, ScheduleOverlapPolicy,
    ScheduleSpec,
};
use temporalio_client::{Client, WorkflowListOptions};
use tokio_util::sync::CancellationToken;

use super::control::{client, run_input, settings, store_answer, wait_for_outcome};
use super::flow::{schedule_id_for, HealerRun, SealedFor};
use crate::error::{Error, Result};
use crate::services::Services;
use crate::store::ClusterSchedule;
use crate::workflow::{Schedule, WorkflowStatus};

/// How often the control room looks at the cluster's schedules and their runs.
pub const LOOK_EVERY: Duration = Duration::from_secs(5);

/// Keep schedules in step and bring in the runs they started, until `cancel`.
pub(crate) async fn cluster_loop(services: Arc<Services>, cancel: CancellationToken) {
    let mut complained = false;
    loop {
        let looked = look(&services).await;
        match looked {
            Ok(()) => complained = false,
            Err(e) if !complained => {
                tracing::warn!("the cluster's schedules could not be brought up to date: {e}");
                complained = true;
            }
            Err(_) => {}
        }
        tokio::select! {
            () = cancel.cancelled() => break,
            () = tokio::time::sleep(LOOK_EVERY) => {}
        }
    }
}

async fn look(services: &Arc<Services>) -> Result<()> {
    let on_cluster = services.store.cluster_workflows()?;
    let kept = services.store.cluster_schedules()?;
    if on_cluster.is_empty() && kept.is_empty() {
        return Ok(());
    }
    if settings(services)?.is_none() {
        return Ok(());
    }
    let (_, client) = client(services).await?;
    // Schedules of workflows that left the cluster (or were deleted) come off first.
    for schedule in &kept {
        if !on_cluster.iter().any(|(id, _)| *id == schedule.workflow_id) {
            import_runs(services, &client, schedule).await?;
            remove(&client, &schedule.schedule_id).await?;
            services
                .store
                .forget_cluster_schedule(schedule.workflow_id)?;
        }
    }
    for (workflow_id, queue) in on_cluster {
        let kept = kept.iter().find(|s| s.workflow_id == workflow_id).cloned();
        let kept = sync(services, &client, workflow_id, &queue, kept).await?;
        if let Some(schedule) = kept {
            import_runs(services, &client, &schedule).await?;
        }
    }
    Ok(())
}

/// Make the workflow's schedule on the cluster what the workflow says; the schedule kept.
async fn sync(
    services: &Arc<Services>,
    client: &Client,
    workflow_id: i64,
    queue: &str,
    kept: Option<ClusterSchedule>,
) -> Result<Option<ClusterSchedule>> {
    let workflow = services.store.workflow(workflow_id)?;
    let spec = match &workflow.schedule {
        Schedule::Manual => None,
        Schedule::Interval { seconds } => Some(ScheduleSpec::from_interval(Duration::from_secs(
            u64::from(*seconds),
        ))),
        Schedule::Cron { expression } => Some(
            ScheduleSpec::builder()
                .cron_strings(vec![expression.clone()])
                .timezone_name(local_zone())
                .build(),
        ),
    };
    let Some(spec) = spec else {
        if let Some(kept) = kept {
            remove(client, &kept.schedule_id).await?;
            services.store.forget_cluster_schedule(workflow_id)?;
        }
        return Ok(None);
    };
    let version = services.store.active_version(workflow_id)?;
    let paused = workflow.status == WorkflowStatus::Paused;
    let schedule_id = schedule_id_for(services.instance(), workflow_id);
    // What the schedule is made of, from the store alone (this runs every few seconds): the
    // workflow's settings, its version, its environment's lock, its secrets by name and when
    // each was saved — never their values, so nothing is read from the keyring until the
    // schedule must change.
    let secrets = services.store.workflow_secrets(workflow_id)?;
    let environment = services
        .store
        .environment(workflow_id)?
        .map(|r| (r.ok, r.requirements, r.lock));
    let made_of = serde_json::to_vec(&(
        &workflow.title,
        &workflow.schedule,
        &workflow.runtime,
        &workflow.entry,
        &workflow.env,
        workflow.timeout_secs,
        &workflow.retry,
        version.id,
        &secrets,
        environment,
        paused,
        queue,
    ))
    .map_err(|e| Error::Internal(e.to_string()))?;
    let fingerprint = format!("{:x}", Sha256::digest(made_of));
    if kept.as_ref().is_some_and(|k| k.fingerprint == fingerprint) {
        return Ok(kept);
    }
    let sealed_for = SealedFor::Schedule(schedule_id.clone());
    let input = run_input(services, sealed_for, &workflow, &version, 0, None).await?;
    let window = catch_up_window(&workflow.schedule);
    let action = ScheduleAction::start_workflow(HealerRun::run, input, queue, schedule_id.clone());
    let handle = client.get_schedule_handle(schedule_id.clone());
    let exists = handle.describe(Default::default()).await.is_ok();
    if exists {
        handle
            .update(
                move |update| {
                    update
                        .set_spec(spec)
                        .set_action(action)
                        .set_paused(paused)
                        .set_overlap_policy(ScheduleOverlapPolicy::Skip)
                        .set_catchup_window(window);
                },
                Default::default(),
            )
            .await
            .map_err(|e| Error::Cluster(format!("the schedule could not be changed: {e}")))?;
    } else {
        let handle = client
            .create_schedule(
                schedule_id.clone(),
                CreateScheduleOptions::builder()
                    .action(action.clone())
                    .spec(spec)
                    .overlap_policy(ScheduleOverlapPolicy::Skip)
                    .paused(paused)
                    .note("Healer's schedule of a workflow".to_string())
                    .build(),
            )
            .await
            .map_err(|e| Error::Cluster(format!("the schedule could not be made: {e}")))?;
        // The action goes again with every update: the SDK's update sends back what it
        // described, opened by the codec, so an update without it would store the run's
        // input — its code and secrets — in plain text in Temporal.
        handle
            .update(
                move |update| {
                    update.set_action(action).set_catchup_window(window);
                },
                Default::default(),
            )
            .await
            .map_err(|e| Error::Cluster(format!("the schedule could not be changed: {e}")))?;
    }
    let schedule = ClusterSchedule {
        workflow_id,
        schedule_id,
        fingerprint,
    };
    services.store.save_cluster_schedule(&schedule)?;
    Ok(Some(schedule))
}

/// A missed time still runs if the cluster could not start it for this long (the server was
/// down): one interval, at least a minute; an hour for a cron schedule.
fn catch_up_window(schedule: &Schedule) -> Duration {
    match schedule {
        Schedule::Interval { seconds } => Duration::from_secs(u64::from(*seconds).max(60)),
        _ => Duration::from_secs(3600),
    }
}

fn local_zone() -> String {
    iana_time_zone::get_timezone().unwrap_or_else(|_| "UTC".to_string())
}

async fn remove(client: &Client, schedule_id: &str) -> Result<()> {
    match client
        .get_schedule_handle(schedule_id.to_string())
        .delete(DeleteScheduleOptions::default())
        .await
    {
        Ok(()) => Ok(()),
        Err(e) if e.to_string().to_lowercase().contains("not found") => Ok(()),
        Err(e) => Err(Error::Cluster(format!(
            "the schedule could not be taken off: {e}"
        ))),
    }
}

/// Bring in every finished run the schedule started that is not stored yet, oldest first.
async fn import_runs(
    services: &Arc<Services>,
    client: &Client,
    schedule: &ClusterSchedule,
) -> Result<()> {
    let query = format!(
        "TemporalScheduledById = '{}' AND ExecutionStatus != 'Running'",
        schedule.schedule_id
    );
    let mut found = Vec::new();
    let mut stream = client.list_workflows(query, WorkflowListOptions::default());
    while let Some(execution) = stream.next().await {
        let execution = execution
            .map_err(|e| Error::Cluster(format!("the cluster's runs could not be listed: {e}")))?;
        let id = execution.id().to_string();
        if services.store.has_cluster_run(&id)? {
            continue;
        }
        found.push((
            execution.start_time(),
            id,
            execution.task_queue().to_string(),
        ));
    }
    found.sort();
    for (started, temporal_id, queue) in found {
        // The run has ended (the query says so): its answer first, so the run is stored under
        // the version that ran, not the one active now.
        let answer = wait_for_outcome(services, client, &temporal_id).await;
        let workflow = services.store.workflow(schedule.workflow_id)?;
        let ran = match &answer {
            Ok(outcome) => services.store.script_id_of(workflow.id, &outcome.version)?,
            Err(_) => None,
        };
        let script_id = match ran {
            Some(id) => id,
            None => services.store.active_version(workflow.id)?.id,
        };
        let started = started.map(stamp);
        let Some(run_id) = services.store.import_cluster_run(
            workflow.id,
            script_id,
            &temporal_id,
            &queue,
            started.as_deref(),
        )?
        else {
            continue;
        };
        tracing::info!(
            workflow = workflow.id,
            run = run_id,
            "a run the cluster's schedule started is brought in"
        );
        store_answer(services, run_id, workflow.id, answer).await?;
    }
    Ok(())
}

fn stamp(at: SystemTime) -> String {
    chrono::DateTime::<chrono::Utc>::from(at).to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
