//! `healer worker`: runs attempts of cluster workflows on any machine that has the `healer`
//! binary. It needs no Healer data folder and no model key: only the cluster's address and
//! the cluster key (to open what the control room sealed). Each attempt runs with the same
//! runner as the local engine — its own process group, control group, time limit and output
//! caps — in a scratch folder of its own, with the workflow's packages installed into an
//! environment cached on the worker per list of packages. It heartbeats while the script
//! runs; a Stop from the control room cancels it and the process group is ended.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use sha2::{Digest, Sha256};
use temporalio_macros::activities;
use temporalio_sdk::activities::{ActivityContext, ActivityError};
use tokio::sync::Mutex;

use super::flow::{AttemptInput, AttemptOutcome, HEARTBEAT_EVERY};
use crate::deps::{self, Ecosystem};
use crate::workflow::runner::{self, GroupSpec, RunSpec, KILL_GRACE};
use crate::workflow::EnvVar;

/// What a worker keeps between attempts: its name and its cache folder.
pub struct RunActivities {
    pub(super) name: String,
    pub(super) cache: PathBuf,
    /// One installation at a time per environment.
    building: Mutex<HashMap<String, Arc<Mutex<()>>>>,
    /// The worker was told to stop: an attempt cancelled now is handed back, not stopped.
    pub(super) draining: Arc<AtomicBool>,
}

impl RunActivities {
    pub fn new(name: String, cache: PathBuf) -> RunActivities {
        RunActivities {
            name,
            cache,
            building: Mutex::new(HashMap::new()),
            draining: Arc::default(),
        }
    }
}

#[activities]
impl RunActivities {
    /// Run one attempt of a run's script and say how it went. A script that fails is not an
    /// error here: the workflow judges it. An error means the attempt could not be carried
    /// out (cancelled by a Stop, or this worker is shutting down).
    #[activity]
    pub async fn attempt(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: AttemptInput,
    ) -> Result<AttemptOutcome, ActivityError> {
        let run = &input.run;
        tracing::info!(
            "attempt {} of “{}” (run {}) started",
            input.number,
            run.title,
            run.run_id
        );
        let mut outcome = AttemptOutcome {
            worker: self.name.clone(),
            ..AttemptOutcome::default()
        };
        let environment = match Ecosystem::of(&run.runtime) {
            Some(ecosystem) if !run.requirements.is_empty() => {
                match self.environment(&ctx, ecosystem, &run.requirements).await {
                    Ok(folder) => Some(folder),
                    Err(error) => {
                        outcome.setup_failed = Some(error);
                        return Ok(outcome);
                    }
                }
            }
            _ => None,
        };
        let scratch = self.cache.join("attempts").join(format!(
            "{}-w{}-{}",
            run.instance,
            run.workflow_id,
            uuid::Uuid::new_v4()
        ));
        let written = std::fs::create_dir_all(&scratch)
            .and_then(|()| std::fs::write(scratch.join(&run.entry), &run.code));
        if let Err(e) = written {
            outcome.spawn_failed = true;
            outcome.note = Some(format!("the worker could not write the script: {e}"));
            return Ok(outcome);
        }
        let base_path = std::env::var("PATH").unwrap_or_default();
        let mut env = run.env.clone();
        env.extend(run.secrets.iter().cloned());
        if let Some(folder) = &environment {
            env.extend(deps::run_environment(&run.runtime, folder, &base_path));
        }
        env.push(EnvVar {
            name: "HEALER_INSTANCE".to_string(),
            value: run.instance.clone(),
        });
        if let Some(hint) = &run.hint {
            env.push(EnvVar {
                name: "HEALER_RECOVERY_HINT".to_string(),
                value: hint.clone(),
            });
        }
        let spec = RunSpec {
            folder: scratch.clone(),
            runtime: run.runtime.clone(),
            entry: run.entry.clone(),
            env,
            timeout: Duration::from_secs(u64::from(run.timeout_secs)),
            run_id: run.run_id,
            attempt: input.number,
            full_log_dir: None,
            group: Some(GroupSpec {
                registry: self.cache.join("groups"),
                name: format!("{}-w{}-{}", run.instance, run.workflow_id, input.number),
            }),
        };
        // The secrets this run carries are redacted from what it prints, as at home.
        for var in &run.secrets {
            crate::secrets::remember(&var.value);
        }
        let pgid = Arc::new(AtomicI32::new(0));
        let seen = pgid.clone();
        let task = tokio::spawn(async move {
            runner::execute(&spec, move |id| seen.store(id, Ordering::SeqCst), None).await
        });
        tokio::pin!(task);
        // The first beat one period in: Temporal counts the attempt as started already, so a
        // beat at once is a round trip nobody needs.
        let mut beat = tokio::time::interval_at(
            tokio::time::Instant::now() + HEARTBEAT_EVERY,
            HEARTBEAT_EVERY,
        );
        let execution = loop {
            tokio::select! {
                done = &mut task => break done,
                _ = beat.tick() => {
                    if let Err(e) = ctx.record_heartbeat(self.name.clone()).await {
                        tracing::warn!("could not heartbeat: {e}");
                    }
                }
                () = ctx.cancelled() => {
                    end_group(pgid.load(Ordering::SeqCst)).await;
                    let _ = (&mut task).await;
                    let _ = std::fs::remove_dir_all(&scratch);
                    if self.draining.load(Ordering::SeqCst) {
                        tracing::info!("attempt {} handed back: this worker is stopping", input.number);
                        return Err(ActivityError::from(std::io::Error::other(
                            "the worker stopped before the attempt ended; it was handed back",
                        )));
                    }
                    return Err(ActivityError::cancelled());
                }
            }
        };
        let _ = std::fs::remove_dir_all(&scratch);
        let execution = execution.map_err(|e| {
            ActivityError::from(std::io::Error::other(format!(
                "the attempt's runner failed: {e}"
            )))
        })?;
        outcome.exit_code = execution.exit.code;
        outcome.signal = execution.exit.signal;
        outcome.timed_out = execution.exit.timed_out;
        outcome.spawn_failed = execution.exit.spawn_failed;
        outcome.stdout = execution.stdout.text;
        outcome.stdout_cut = execution.stdout.cut;
        outcome.stderr = execution.stderr.text;
        outcome.stderr_cut = execution.stderr.cut;
        outcome.result = execution.result;
        outcome.duration_ms = u64::try_from(execution.duration.as_millis()).unwrap_or(u64::MAX);
        outcome.note = execution.note;
        Ok(outcome)
    }
}

impl RunActivities {
    /// The folder of an environment holding `requirements` (built once per list, then
    /// reused), or the installer's error.
    async fn environment(
        &self,
        ctx: &ActivityContext,
        ecosystem: Ecosystem,
        requirements: &[String],
    ) -> Result<PathBuf, String> {
        let mut hash = Sha256::new();
        hash.update(ecosystem.as_str());
        for line in requirements {
            hash.update(b"\n");
            hash.update(line.as_bytes());
        }
        let key = format!("{:x}", hash.finalize());
        let folder = self.cache.join("environments").join(&key[..24]);
        let ready = folder.join(".healer-ready");
        let lock = {
            let mut building = self.building.lock().await;
            building.entry(key).or_default().clone()
        };
        let _held = lock.lock().await;
        if ready.exists() {
            return Ok(folder);
        }
        let parsed = deps::parse_requirements(ecosystem, &requirements.join("\n"))
            .map_err(|e| format!("a package Healer cannot install: {e}"))?;
        std::fs::create_dir_all(&folder).map_err(|e| e.to_string())?;
        tracing::info!(
            "installing {} into a new environment (kept for later attempts that need the same)",
            requirements.join(", ")
        );
        let build = deps::build(
            ecosystem,
            &folder,
            &parsed,
            true,
            Duration::from_secs(deps::DEFAULT_INSTALL_TIMEOUT_SECS),
        );
        tokio::pin!(build);
        let mut beat = tokio::time::interval(HEARTBEAT_EVERY);
        let built = loop {
            tokio::select! {
                built = &mut build => break built,
                _ = beat.tick() => { let _ = ctx.record_heartbeat(self.name.clone()).await; }
            }
        };
        if !built.ok {
            return Err(built
                .error
                .unwrap_or_else(|| "the installer failed".to_string()));
        }
        std::fs::write(&ready, built.lock.join("\n")).map_err(|e| e.to_string())?;
        Ok(folder.clone())
    }
}

/// End a cancelled attempt's process group: SIGTERM, then SIGKILL after the grace.
async fn end_group(pgid: i32) {
    use nix::sys::signal::{killpg, Signal};
    use nix::unistd::Pid;
    if pgid <= 0 {
        return;
    }
    let group = Pid::from_raw(pgid);
    if killpg(group, Signal::SIGTERM).is_err() {
        return;
    }
    tokio::time::sleep(KILL_GRACE).await;
    let _ = killpg(group, Signal::SIGKILL);
}

/// Where a worker keeps its environments and scratch folders when not told otherwise.
pub fn default_cache() -> PathBuf {
    directories::BaseDirs::new()
        .map(|d| d.cache_dir().join("healer-worker"))
        .unwrap_or_else(|| Path::new("/tmp").join("healer-worker"))
}
