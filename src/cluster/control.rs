//! The control room's side of a run on the cluster: the engine that started it (the app or
//! `healer daemon`) starts `HealerRun` under a deterministic id, waits for its result, stores
//! the run and its attempts as for a local run (with the worker's name) and hands a final
//! failure to the same healing pipeline. After a restart it attaches again to every run it
//! started and had not stored; a run is stored once, whatever happens in between.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use temporalio_client::errors::{WorkflowGetResultError, WorkflowStartError};
use temporalio_client::{
    Client, WorkflowGetResultOptions, WorkflowIdConflictPolicy, WorkflowIdReusePolicy,
    WorkflowStartOptions,
};

use super::connection::{connect, control_key, ClusterSettings, CLUSTER_SETTINGS};
use super::flow::{new_run_id, AttemptRecord, HealerRun, RunInput, RunOutcome, SealedFor, LOST};
use crate::error::{Error, Result};
use crate::events::Event;
use crate::failure::Evidence;
use crate::scheduler::attempts::{conclude, end_without_verdict, secrets_for_run, Concluded};
use crate::services::Services;
use crate::store::AttemptEnd;
use crate::workflow::{EnvVar, RunStatus, ScriptVersion, Workflow};

/// How long to wait before asking the cluster again for a result it could not give.
const ASK_AGAIN: Duration = Duration::from_secs(3);

type Clients = Mutex<HashMap<String, Client>>;

fn clients() -> &'static Clients {
    static CLIENTS: std::sync::OnceLock<Clients> = std::sync::OnceLock::new();
    CLIENTS.get_or_init(Clients::default)
}

/// The cluster this Healer is connected to, if it is.
pub(crate) fn settings(services: &Services) -> Result<Option<ClusterSettings>> {
    services.store.setting::<ClusterSettings>(CLUSTER_SETTINGS)
}

/// A client for the connected cluster (made once per engine and settings).
pub(crate) async fn client(services: &Services) -> Result<(ClusterSettings, Client)> {
    let settings = settings(services)?.ok_or_else(|| {
        Error::Cluster(
            "this Healer is not connected to a cluster: connect one in Settings → More computers"
                .to_string(),
        )
    })?;
    let cache_key = format!("{}|{settings:?}", services.instance());
    if let Some(client) = clients().lock().map_err(poisoned)?.get(&cache_key) {
        return Ok((settings, client.clone()));
    }
    let key = control_key(&services.llm.keep(), services.instance())?;
    let client = connect(&settings, &key, &identity()).await?;
    clients()
        .lock()
        .map_err(poisoned)?
        .insert(cache_key, client.clone());
    Ok((settings, client))
}

fn poisoned<T>(_: T) -> Error {
    Error::Internal("the cluster clients' lock was poisoned".to_string())
}

fn identity() -> String {
    let host = super::connection::host_name().unwrap_or_else(|| "this computer".to_string());
    format!("healer control room on {host}")
}

/// What a run needs, from the store: the script, its packages (the version's lock when this
/// Healer has built it, else the declared list), variables and secrets.
pub(crate) async fn run_input(
    services: &Arc<Services>,
    sealed_for: SealedFor,
    workflow: &Workflow,
    version: &ScriptVersion,
    run_id: i64,
    hint: Option<String>,
) -> Result<RunInput> {
    let wanted = version.requirements.join("\n");
    let requirements = match services.store.environment(workflow.id)? {
        Some(r) if r.ok && r.requirements == wanted && !r.lock.is_empty() => {
            r.lock.lines().map(str::to_string).collect()
        }
        _ => version.requirements.clone(),
    };
    let secrets: Vec<EnvVar> = secrets_for_run(services, workflow.id).await;
    Ok(RunInput {
        sealed_for,
        instance: services.instance().to_string(),
        workflow_id: workflow.id,
        run_id,
        title: workflow.title.clone(),
        version: version.version.to_string(),
        runtime: workflow.runtime.clone(),
        entry: workflow.entry.clone(),
        code: version.code.clone(),
        requirements,
        env: workflow.env.clone(),
        secrets,
        timeout_secs: workflow.timeout_secs,
        retry: workflow.retry.clone(),
        hint,
    })
}

/// Carry out a claimed run on the cluster, on `queue`, and store how it went.
pub(crate) async fn execute_run(
    services: &Arc<Services>,
    run_id: i64,
    workflow_id: i64,
    queue: String,
) {
    if let Err(e) = try_execute_run(services, run_id, workflow_id, &queue).await {
        tracing::error!(
            run = run_id,
            "a run on the cluster could not be carried out: {e}"
        );
        let summary = format!("Healer could not run it on the cluster: {e}");
        end_without_verdict(services, run_id, workflow_id, RunStatus::Failed, summary).await;
    }
}

async fn try_execute_run(
    services: &Arc<Services>,
    run_id: i64,
    workflow_id: i64,
    queue: &str,
) -> Result<()> {
    let run = services.store.run(run_id)?;
    let title = services.store.workflow(workflow_id)?.title;
    let temporal_id = new_run_id(services.instance(), workflow_id, run.number);
    // Marked before it is started: a crash after this line re-attaches, never starts twice.
    services
        .store
        .mark_cluster_run(run_id, &temporal_id, queue)?;
    crate::failpoint::hit("cluster.run_marked");
    if let Err(e) = services.bus.emit(Event::RunStarted {
        run_id,
        run_number: run.number,
        workflow_id,
        title,
        trigger: run.trigger,
    }) {
        tracing::warn!(run = run_id, "could not announce the run: {e}");
    }
    let (_, client) = client(services).await?;
    start_or_attach(services, &client, run_id, workflow_id, &temporal_id, queue).await
}

/// Start the run under its id unless Temporal has it already (started before a crash, or
/// finished since), then wait for it and store it. A run a cluster schedule started is only
/// attached to.
async fn start_or_attach(
    services: &Arc<Services>,
    client: &Client,
    run_id: i64,
    workflow_id: i64,
    temporal_id: &str,
    queue: &str,
) -> Result<()> {
    let run = services.store.run(run_id)?;
    // A run a schedule on the cluster started was brought in: only attached to.
    let schedule = super::flow::schedule_id_for(services.instance(), workflow_id);
    if !SealedFor::Schedule(schedule).admits(temporal_id) {
        let workflow = services.store.workflow(workflow_id)?;
        let version = services.store.version(workflow_id, run.version)?;
        let sealed_for = SealedFor::Run(temporal_id.to_string());
        let input = run_input(
            services,
            sealed_for,
            &workflow,
            &version,
            run_id,
            run.hint.clone(),
        )
        .await?;
        let options = WorkflowStartOptions::new(queue.to_string(), temporal_id.to_string())
            .id_reuse_policy(WorkflowIdReusePolicy::RejectDuplicate)
            .id_conflict_policy(WorkflowIdConflictPolicy::UseExisting)
            .build();
        match client.start_workflow(HealerRun::run, input, options).await {
            Ok(_) | Err(WorkflowStartError::AlreadyStarted { .. }) => {}
            Err(e) => {
                return Err(Error::Cluster(format!(
                    "the cluster did not start the run: {e}"
                )))
            }
        }
    }
    wait_and_store(services, client, run_id, workflow_id, temporal_id).await
}

/// Attach again to every run this Healer started on the cluster and had not stored.
pub(crate) fn reattach(services: &Arc<Services>) {
    let open = match services.store.open_cluster_runs() {
        Ok(open) => open,
        Err(e) => {
            tracing::error!("could not list the runs on the cluster: {e}");
            return;
        }
    };
    for (run_id, workflow_id, temporal_id, queue) in open {
        let services = services.clone();
        tokio::spawn(async move {
            let result = async {
                let (_, client) = client(&services).await?;
                start_or_attach(
                    &services,
                    &client,
                    run_id,
                    workflow_id,
                    &temporal_id,
                    &queue,
                )
                .await
            }
            .await;
            services.wake.scheduler.notify_one();
            if let Err(e) = result {
                tracing::error!(
                    run = run_id,
                    "could not attach to the run on the cluster: {e}"
                );
            }
        });
    }
}

/// Wait for the run's result (through the cluster's own restarts and this network's drops)
/// and store it.
pub(crate) async fn wait_and_store(
    services: &Arc<Services>,
    client: &Client,
    run_id: i64,
    workflow_id: i64,
    temporal_id: &str,
) -> Result<()> {
    let answer = wait_for_outcome(services, client, temporal_id).await;
    store_answer(services, run_id, workflow_id, answer).await
}

/// The outcome of the execution `temporal_id`, once it has ended; `Err` says in words why
/// there is none to store. Only an outcome this Healer can believe comes back: it opened with
/// the cluster key (the codec refuses anything else) and it names this very execution and this
/// Healer — an answer copied from another run, or made for another Healer, is refused.
pub(crate) async fn wait_for_outcome(
    services: &Arc<Services>,
    client: &Client,
    temporal_id: &str,
) -> std::result::Result<RunOutcome, String> {
    let handle = client.get_workflow_handle::<HealerRun>(temporal_id.to_string());
    let outcome = loop {
        match handle.get_result(WorkflowGetResultOptions::default()).await {
            Ok(outcome) => break outcome,
            Err(WorkflowGetResultError::Rpc(status)) => {
                tracing::warn!(
                    temporal_id,
                    "the cluster did not answer ({}); asking again",
                    status.message()
                );
                tokio::time::sleep(ASK_AGAIN).await;
            }
            Err(WorkflowGetResultError::Cancelled { .. }) => {
                return Err("it was stopped".to_string())
            }
            Err(WorkflowGetResultError::Terminated { .. }) => {
                return Err("it was ended on the cluster (terminated)".to_string())
            }
            Err(WorkflowGetResultError::TimedOut) => {
                return Err("it timed out on the cluster".to_string())
            }
            Err(WorkflowGetResultError::NotFound(_)) => {
                return Err(
                    "the cluster has no record of it (its history may have been removed)"
                        .to_string(),
                )
            }
            Err(e) => {
                let said = e.to_string();
                tracing::warn!(
                    temporal_id,
                    "an answer from the cluster was refused: {said}"
                );
                if said.contains(super::codec::NOT_SEALED) || said.contains(super::codec::OTHER_KEY)
                {
                    return Err(REFUSED.to_string());
                }
                return Err(format!("the cluster could not say how it went: {said}"));
            }
        }
    };
    if outcome.ran_as != temporal_id || outcome.instance != services.instance() {
        tracing::warn!(
            temporal_id,
            ran_as = outcome.ran_as,
            "refused an answer made for another run"
        );
        return Err(REFUSED.to_string());
    }
    Ok(outcome)
}

/// Why a run has no result to store when what the cluster answered was not believed.
const REFUSED: &str = "the answer the cluster gave was not one this Healer's workers made for \
     this run, so it was not stored (someone else who can reach the cluster may have sent it)";

/// Store what [`wait_for_outcome`] found: the run and its attempts, or its end without one.
pub(crate) async fn store_answer(
    services: &Arc<Services>,
    run_id: i64,
    workflow_id: i64,
    answer: std::result::Result<RunOutcome, String>,
) -> Result<()> {
    let workflow = services.store.workflow(workflow_id)?;
    match answer {
        Ok(outcome) if outcome.workflow_id == workflow_id => {
            store_outcome(services, &workflow, run_id, &outcome).await
        }
        Ok(_) => {
            let summary = format!("Not finished: {REFUSED}");
            end_without_verdict(
                services,
                run_id,
                workflow_id,
                RunStatus::Interrupted,
                summary,
            )
            .await;
            Ok(())
        }
        Err(why) => {
            let summary = format!("Not finished: {why}");
            end_without_verdict(
                services,
                run_id,
                workflow_id,
                RunStatus::Interrupted,
                summary,
            )
            .await;
            Ok(())
        }
    }
}

/// Store a finished run's attempts, end the run, and heal a final failure.
pub(crate) async fn store_outcome(
    services: &Arc<Services>,
    workflow: &Workflow,
    run_id: i64,
    outcome: &RunOutcome,
) -> Result<()> {
    // The version that ran (a run started here ran the one it was queued with; one a schedule
    // started, the one its schedule was made with).
    if let Some(script_id) = services.store.script_id_of(workflow.id, &outcome.version)? {
        services.store.set_run_script(run_id, script_id)?;
    }
    let run = services.store.run(run_id)?;
    // A store cut short by a crash is done again whole: each attempt once.
    services.store.clear_cluster_attempts(run_id)?;
    for (index, record) in outcome.attempts.iter().enumerate() {
        let attempt_id = services
            .patiently(|store| store.start_attempt(run_id, record.number))
            .await?;
        let end = attempt_end(record, index + 1 == outcome.attempts.len());
        services
            .patiently(|store| store.finish_attempt(attempt_id, &end))
            .await?;
        if let Some(worker) = record.outcome.as_ref().map(|o| o.worker.as_str()) {
            services.store.set_attempt_worker(attempt_id, worker)?;
        }
        crate::failpoint::hit("cluster.attempt_stored");
        if let Err(e) = services.bus.emit(Event::AttemptFinished {
            run_id,
            run_number: run.number,
            workflow_id: workflow.id,
            attempt: record.number,
            succeeded: end.succeeded,
            class: record.class,
            summary: record.summary.clone(),
            retry_in_ms: record
                .retry_in_ms
                .map(|ms| u32::try_from(ms).unwrap_or(u32::MAX)),
        }) {
            tracing::warn!(run = run_id, "could not announce an attempt's end: {e}");
        }
    }
    let attempts = u32::try_from(outcome.attempts.len()).unwrap_or(u32::MAX);
    if outcome.stopped {
        let summary = "Stopped by you".to_string();
        end_without_verdict(
            services,
            run_id,
            workflow.id,
            RunStatus::Interrupted,
            summary,
        )
        .await;
        return Ok(());
    }
    let last = outcome.attempts.last();
    let concluded = match last {
        Some(record) if outcome.succeeded() => Concluded::Succeeded {
            duration: Duration::from_millis(record.outcome.as_ref().map_or(0, |o| o.duration_ms)),
        },
        Some(record) => Concluded::Failed {
            class: record
                .class
                .unwrap_or(crate::failure::FailureClass::Unknown),
            evidence: record.evidence.clone(),
        },
        None => Concluded::Failed {
            class: crate::failure::FailureClass::Unknown,
            evidence: None,
        },
    };
    conclude(services, workflow, run_id, attempts, concluded, None).await
}

/// How an attempt is stored; `last`: the run's last attempt (no other one came after it).
fn attempt_end(record: &AttemptRecord, last: bool) -> AttemptEnd {
    match &record.outcome {
        Some(o) => AttemptEnd {
            succeeded: record.class.is_none(),
            duration_ms: u32::try_from(o.duration_ms).unwrap_or(u32::MAX),
            exit_code: o.exit_code,
            signal: o.signal,
            timed_out: o.timed_out,
            class: record.class,
            evidence: record.evidence.clone(),
            stdout: o.stdout.clone(),
            stderr: match &o.setup_failed {
                Some(error) => error.clone(),
                None => o.stderr.clone(),
            },
            stdout_cut: o.stdout_cut,
            stderr_cut: o.stderr_cut,
            result: o.result.clone(),
            note: match (&o.note, record.retry_in_ms) {
                (Some(note), Some(ms)) => Some(format!(
                    "{note}. Retrying in {}",
                    crate::workflow::judge::seconds(Duration::from_millis(ms))
                )),
                (None, Some(ms)) => Some(format!(
                    "Retrying in {}",
                    crate::workflow::judge::seconds(Duration::from_millis(ms))
                )),
                (note, None) => note.clone(),
            },
        },
        None => AttemptEnd {
            succeeded: false,
            duration_ms: 0,
            exit_code: None,
            signal: None,
            timed_out: false,
            class: record.class,
            evidence: record.evidence.clone().or(Some(Evidence {
                error_type: None,
                message: LOST.to_string(),
                stack: None,
            })),
            stdout: String::new(),
            stderr: String::new(),
            stdout_cut: 0,
            stderr_cut: 0,
            result: None,
            note: Some(match last {
                false => format!("{}; it ran again on another worker", capitalised(LOST)),
                true => format!("{}; no worker finished the run", capitalised(LOST)),
            }),
        },
    }
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().collect::<String>() + chars.as_str())
        .unwrap_or_default()
}
