//! One run, attempt by attempt: run the script, record the attempt, retry what is worth
//! retrying, and hand a final failure to the heal pipeline.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::OwnedSemaphorePermit;

use crate::error::{Error, Result};
use crate::events::Event;
use crate::failure::{Evidence, Failure, FailureClass, FailureSource};
use crate::services::{RunEnd, Services};
use crate::store::AttemptEnd;
use crate::workflow::judge::{judge, seconds};
use crate::workflow::runner::{self, GroupSpec, RunSpec};
use crate::workflow::{EnvVar, RunStatus, ScriptVersion, Workflow};

/// Run `run_id` (already claimed: status running) to the end. Never fails: whatever goes
/// wrong is recorded on the run.
pub(crate) async fn execute_run(
    services: &Arc<Services>,
    run_id: i64,
    workflow_id: i64,
    permit: Option<OwnedSemaphorePermit>,
) {
    // A workflow on the cluster runs there: it holds no slot of this computer.
    if let Ok(Some(queue)) = services.store.cluster_queue(workflow_id) {
        drop(permit);
        crate::cluster::execute_run(services, run_id, workflow_id, queue).await;
        return;
    }
    if let Err(e) = try_execute_run(services, run_id, workflow_id, permit).await {
        tracing::error!(run = run_id, "run failed inside Healer: {e}");
        let summary = format!("Healer could not run it: {e}");
        end_without_verdict(services, run_id, workflow_id, RunStatus::Failed, summary).await;
    }
}

/// End a run that got no verdict of its own — Healer could not run it, it was stopped, its
/// record is gone from the cluster — with `status` and the sentence that says why.
pub(crate) async fn end_without_verdict(
    services: &Arc<Services>,
    run_id: i64,
    workflow_id: i64,
    status: RunStatus,
    summary: String,
) {
    let title = services
        .store
        .workflow(workflow_id)
        .map(|w| w.title)
        .unwrap_or_default();
    services
        .record_run_end(RunEnd {
            run_id,
            workflow_id,
            title,
            attempt: None,
            status,
            class: None,
            signature: None,
            summary,
        })
        .await;
}

/// Carry out a claimed run to its end in an engine with no scheduler (a command's own): when
/// it waits out a retry's backoff, wait here and give it its next attempt when due.
pub(crate) async fn execute_run_here(services: &Arc<Services>, run_id: i64, workflow_id: i64) {
    execute_run(services, run_id, workflow_id, None).await;
    loop {
        let due = match services.store.retry_at(run_id) {
            Ok(Some(due)) => due,
            _ => return,
        };
        let wait = chrono::DateTime::parse_from_rfc3339(&due)
            .ok()
            .and_then(|t| {
                (t.with_timezone(&chrono::Utc) - chrono::Utc::now())
                    .to_std()
                    .ok()
            })
            .unwrap_or_default();
        tokio::time::sleep(wait).await;
        match services.store.claim_run(run_id) {
            Ok(true) => execute_run(services, run_id, workflow_id, None).await,
            _ => return,
        }
    }
}

async fn try_execute_run(
    services: &Arc<Services>,
    run_id: i64,
    workflow_id: i64,
    permit: Option<OwnedSemaphorePermit>,
) -> Result<()> {
    let workflow = services.store.workflow(workflow_id)?;
    let run = services.store.run(run_id)?;
    let version = services.store.version(workflow_id, run.version)?;
    let folder = services.paths.workflow_dir(workflow_id);
    // A run back from a retry's backoff goes on with its next attempt.
    let number = services.store.next_attempt(run_id)?;
    let resumed = number > 1;
    // An announcement the store cannot take now does not stop the run.
    let announced = match resumed {
        true => Ok(()),
        false => services
            .bus
            .emit(Event::RunStarted {
                run_id,
                run_number: run.number,
                workflow_id,
                title: workflow.title.clone(),
                trigger: run.trigger,
            })
            .map(|_| ()),
    };
    if let Err(e) = announced {
        tracing::warn!(run = run_id, "could not announce the run: {e}");
    }

    let logs = services.paths.run_logs_dir(workflow_id);
    runner::prune_full_logs(&logs);
    // The workflow's own environment holds what this version declares before its script runs,
    // and nothing changes it while the script runs.
    let environment = services.environments.lock(workflow_id).await;
    let set_up = match resumed {
        false => super::setup::prepare(services, &workflow, &version, run_id, run.number).await?,
        true => None,
    };
    let secrets = secrets_for_run(services, workflow_id).await;
    let (class, evidence) = if let Some(failed) = set_up {
        failed
    } else {
        // One attempt: a retry is a new dispatch of the run, after its backoff.
        'attempt: {
            // Written before every attempt: a script may delete or change its own file.
            write_entry(&folder, &workflow.entry, &version)?;
            let attempt_id = services
                .patiently(|store| store.start_attempt(run_id, number))
                .await?;
            crate::failpoint::hit("run.attempt_started");
            let spec = RunSpec {
                folder: folder.clone(),
                runtime: workflow.runtime.clone(),
                entry: workflow.entry.clone(),
                env: run_env(
                    &workflow,
                    &secrets,
                    &folder,
                    run.hint.as_deref(),
                    services.instance(),
                ),
                timeout: Duration::from_secs(u64::from(workflow.timeout_secs)),
                run_id,
                attempt: number,
                full_log_dir: Some(logs.clone()),
                group: Some(GroupSpec {
                    registry: services.paths.groups_dir(),
                    name: format!("{}-run{run_id}-{number}", services.instance()),
                }),
                namespaces: None,
            };
            let store = services.store.clone();
            let execution = runner::execute(
                &spec,
                move |pgid| {
                    if let Err(e) = store.set_attempt_pgid(attempt_id, pgid) {
                        tracing::warn!(
                            "could not record the process group of attempt {attempt_id}: {e}"
                        );
                    }
                    crate::failpoint::hit("run.script_running");
                },
                Some(&services.output),
            )
            .await;

            let judged = judge(
                &execution.exit,
                &execution.stdout.text,
                &execution.stderr.text,
                execution.duration,
                &workflow.entry,
                spec.timeout,
            );
            let retry_in = judged
                .class
                .filter(|c| workflow.retry.retries(*c, number))
                .map(|_| workflow.retry.delay(number, rand::random::<f64>()));
            let note = join_notes(
                execution.note.clone(),
                retry_in.map(|d| format!("Retrying in {}", seconds(d))),
            );
            let end = AttemptEnd {
                succeeded: judged.class.is_none(),
                duration_ms: millis(execution.duration),
                exit_code: execution.exit.code,
                signal: execution.exit.signal,
                timed_out: execution.exit.timed_out,
                class: judged.class,
                evidence: judged.evidence.clone(),
                stdout_cut: execution.stdout.cut,
                stderr_cut: execution.stderr.cut,
                stdout: execution.stdout.text,
                stderr: execution.stderr.text,
                result: execution.result,
                note,
            };
            services.attempt_ended(run_id, number, execution.escaped);
            if let Err(e) = services
                .patiently(|store| store.finish_attempt(attempt_id, &end))
                .await
            {
                // The store refuses for now: the attempt's end becomes the run's, kept until it
                // can be written; no retry and no heal while Healer cannot record them.
                services.keep_run_end(
                    RunEnd {
                        run_id,
                        workflow_id,
                        title: workflow.title.clone(),
                        status: if end.succeeded {
                            RunStatus::Succeeded
                        } else {
                            RunStatus::Failed
                        },
                        class: judged.class,
                        // Not known before the failure is built: its fixes stay pending.
                        signature: None,
                        summary: judged.summary.clone(),
                        attempt: Some((attempt_id, end)),
                    },
                    &e,
                );
                return Ok(());
            }
            crate::failpoint::hit("run.attempt_recorded");
            if let Err(e) = services.bus.emit(Event::AttemptFinished {
                run_id,
                run_number: run.number,
                workflow_id,
                attempt: number,
                succeeded: end.succeeded,
                class: judged.class,
                summary: judged.summary.clone(),
                retry_in_ms: retry_in.map(millis),
            }) {
                tracing::warn!(run = run_id, "could not announce the attempt's end: {e}");
            }

            match (judged.class, retry_in) {
                (None, _) => {
                    let duration = execution.duration;
                    return conclude(
                        services,
                        &workflow,
                        run_id,
                        number,
                        Concluded::Succeeded { duration },
                        permit,
                    )
                    .await;
                }
                (Some(_), Some(pause)) => {
                    // The backoff is waited out with nothing held: the run is queued again
                    // for when its next attempt is due (the scheduler wakes for it), its slot
                    // and its environment free for other runs meanwhile, and a restart
                    // leaves it waiting rather than interrupted.
                    let due = chrono::Utc::now()
                        + chrono::Duration::from_std(pause).unwrap_or(chrono::Duration::zero());
                    services
                        .patiently(|store| {
                            store.wait_to_retry(run_id, &super::stamp(due), number + 1)
                        })
                        .await?;
                    crate::failpoint::hit("run.waiting_to_retry");
                    drop(environment);
                    drop(permit);
                    return Ok(());
                }
                (Some(class), None) => break 'attempt (class, judged.evidence),
            }
        }
    };
    drop(environment);
    conclude(
        services,
        &workflow,
        run_id,
        number,
        Concluded::Failed { class, evidence },
        permit,
    )
    .await
}

/// How a run ended, whatever ran it (this computer, or a worker of the cluster).
pub(crate) enum Concluded {
    Succeeded {
        duration: Duration,
    },
    Failed {
        class: FailureClass,
        evidence: Option<Evidence>,
    },
}

/// End a run after `number` attempts: record it, and hand a failure to the heal pipeline
/// (after giving back the run slot, if it holds one).
pub(crate) async fn conclude(
    services: &Arc<Services>,
    workflow: &Workflow,
    run_id: i64,
    number: u32,
    concluded: Concluded,
    permit: Option<OwnedSemaphorePermit>,
) -> Result<()> {
    let workflow_id = workflow.id;
    let (class, evidence) = match concluded {
        Concluded::Succeeded { duration } => {
            let after = if number > 1 {
                format!(" on attempt {number}")
            } else {
                String::new()
            };
            let summary = format!("Succeeded in {}{after}", seconds(duration));
            return finish(services, workflow, run_id, None, summary).await;
        }
        Concluded::Failed { class, evidence } => (class, evidence),
    };

    let evidence = evidence.unwrap_or_else(|| Evidence {
        error_type: None,
        message: "it failed without saying why".to_string(),
        stack: None,
    });
    let attempts = if number > 1 {
        format!(", after {number} attempts")
    } else {
        String::new()
    };
    let failure = Failure::new(
        FailureSource::ScriptRun {
            workflow_id,
            run_id,
        },
        "script-run",
        class,
        evidence,
    );
    let summary = match class.in_words() {
        Some(words) => format!("{} ({words}{attempts})", failure.summary()),
        None if attempts.is_empty() => failure.summary(),
        None => format!(
            "{} ({})",
            failure.summary(),
            attempts.trim_start_matches(", ")
        ),
    };
    finish(
        services,
        workflow,
        run_id,
        Some((class, &failure.signature)),
        summary,
    )
    .await?;
    // The heal does not hold a run slot: other workflows go on.
    drop(permit);
    services.heal(failure).await?;
    Ok(())
}

/// Record how the run ended (`failed` is `None` for a success, else the class and signature),
/// update the workflow's status, and announce it — now, or as soon as the store accepts writes.
async fn finish(
    services: &Services,
    workflow: &Workflow,
    run_id: i64,
    failed: Option<(FailureClass, &str)>,
    summary: String,
) -> Result<()> {
    let class = failed.map(|(class, _)| class);
    let status = if class.is_none() {
        RunStatus::Succeeded
    } else {
        RunStatus::Failed
    };
    services
        .record_run_end(RunEnd {
            run_id,
            workflow_id: workflow.id,
            title: workflow.title.clone(),
            attempt: None,
            status,
            class,
            signature: failed.map(|(_, signature)| signature.to_string()),
            summary,
        })
        .await;
    crate::failpoint::hit("run.finished");
    if class.is_none() {
        // The heal record's story ends with the version whose run got past the failure.
        if let Err(e) = resolve_heals(services, workflow.id, run_id) {
            tracing::warn!(run = run_id, "could not mark the heals it resolved: {e}");
        }
    }
    if class.is_none() {
        // Good news waits for the store like the run's end did; it is not worth failing for.
        if let Err(e) = super::repaired::tell_if_repaired(services, workflow, run_id) {
            tracing::warn!(run = run_id, "could not tell that the repair held: {e}");
        }
    }
    Ok(())
}

/// A repair's version ran green: the heals that started that repair (and the ones before it
/// for the same error) are resolved by it.
pub(crate) fn resolve_heals(services: &Services, workflow_id: i64, run_id: i64) -> Result<()> {
    let Some((task_id, signature)) = services.store.repair_of_run(run_id)? else {
        return Ok(());
    };
    let version = services.store.run(run_id)?.version;
    for heal_id in services
        .store
        .resolve_heals(workflow_id, &signature, version, run_id)?
    {
        services.bus.emit(Event::HealResolved {
            heal_id,
            workflow_id,
            version,
            run_id,
            task_id: Some(task_id),
        })?;
    }
    Ok(())
}

/// Write the version's code as the entry script, atomically (a reader never sees half).
fn write_entry(folder: &Path, entry: &str, version: &ScriptVersion) -> Result<()> {
    std::fs::create_dir_all(folder)
        .map_err(|e| Error::io(format!("cannot create {}", folder.display()), e))?;
    let path = folder.join(entry);
    let tmp = folder.join(format!(".{entry}.healer-tmp"));
    std::fs::write(&tmp, &version.code)
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))
}

/// The workflow's variables, this Healer's instance marker, the recovery hint the run was
/// given, if any, and its own environment (venv / node_modules) in front.
/// The workflow's secrets for this run (from the keyring or Healer's secrets file). One whose
/// value is gone is left out and said in the log: the script then fails on its own terms,
/// which the person sees.
pub(crate) async fn secrets_for_run(services: &Arc<Services>, workflow_id: i64) -> Vec<EnvVar> {
    let store = services.store.clone();
    let keep = services.llm.keep();
    let mark = services.instance().to_string();
    let found = tokio::task::spawn_blocking(move || {
        store.workflow_secrets_for_run(&keep, &mark, workflow_id)
    })
    .await;
    match found {
        Ok(Ok((env, missing))) => {
            if !missing.is_empty() {
                tracing::warn!(
                    workflow_id,
                    "the value of secret(s) {} was not found; the run goes without",
                    missing.join(", ")
                );
            }
            env
        }
        Ok(Err(e)) => {
            tracing::warn!(workflow_id, "the workflow's secrets could not be read: {e}");
            Vec::new()
        }
        Err(e) => {
            tracing::warn!(workflow_id, "the workflow's secrets could not be read: {e}");
            Vec::new()
        }
    }
}

fn run_env(
    workflow: &Workflow,
    secrets: &[EnvVar],
    folder: &Path,
    hint: Option<&str>,
    instance: &str,
) -> Vec<EnvVar> {
    let mut env = workflow.env.clone();
    env.extend(secrets.iter().cloned());
    let base_path = std::env::var("PATH").unwrap_or_default();
    env.extend(crate::deps::run_environment(
        &workflow.runtime,
        folder,
        &base_path,
    ));
    env.push(EnvVar {
        name: "HEALER_INSTANCE".to_string(),
        value: instance.to_string(),
    });
    if let Some(hint) = hint {
        env.push(EnvVar {
            name: "HEALER_RECOVERY_HINT".to_string(),
            value: hint.to_string(),
        });
    }
    env
}

fn join_notes(a: Option<String>, b: Option<String>) -> Option<String> {
    match (a, b) {
        (Some(a), Some(b)) => Some(format!("{a}. {b}")),
        (a, b) => a.or(b),
    }
}

fn millis(d: Duration) -> u32 {
    u32::try_from(d.as_millis()).unwrap_or(u32::MAX)
}
