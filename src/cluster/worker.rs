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
    /// The key file, hidden from every script (`None`: the key came from the environment).
    pub(super) key_file: Option<PathBuf>,
    /// Scripts run in namespaces of their own (see [`scripts_namespaces`]).
    pub(super) isolated: bool,
    /// One installation at a time per environment.
    building: Mutex<HashMap<String, Arc<Mutex<()>>>>,
    /// The worker was told to stop: an attempt cancelled now is handed back, not stopped.
    pub(super) draining: Arc<AtomicBool>,
}

impl RunActivities {
    pub fn new(
        name: String,
        cache: PathBuf,
        key_file: Option<PathBuf>,
        isolated: bool,
    ) -> RunActivities {
        RunActivities {
            name,
            cache,
            key_file,
            isolated,
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
        let scheduled_by = ctx.info().workflow_id.clone().unwrap_or_default();
        let mut outcome = AttemptOutcome {
            for_run: scheduled_by.clone(),
            number: input.number,
            worker: self.name.clone(),
            ..AttemptOutcome::default()
        };
        // Only the run its input was sealed for may ask for an attempt: a sealed input copied
        // into another execution (or a standalone activity) is refused, never run.
        if let Some(why) = super::flow::refusal(run, &scheduled_by) {
            tracing::warn!("refused an attempt of “{}”: {why}", run.title);
            outcome.spawn_failed = true;
            outcome.note = Some(format!("the worker refused to run it: {why}"));
            return Ok(outcome);
        }
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
        if !crate::workflow::validate::plain_entry_name(&run.entry) {
            outcome.spawn_failed = true;
            outcome.note = Some(format!(
                "the worker refused to write the script as “{}”: not a plain file name",
                run.entry
            ));
            return Ok(outcome);
        }
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
                registry: groups_registry(&self.cache),
                name: format!("{}-w{}-{}", run.instance, run.workflow_id, input.number),
            }),
            namespaces: match self.isolated {
                true => scripts_namespaces(&scratch, self.key_file.as_deref()).ok(),
                false => None,
            },
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
        // The installers run where the scripts do: the key file hidden (see `contained`).
        let namespaces = match self.isolated {
            true => Some(
                scripts_namespaces(&folder, self.key_file.as_deref())
                    .map_err(|e| format!("the installers' namespaces could not be set up: {e}"))?,
            ),
            false => None,
        };
        let build = async move {
            match namespaces {
                Some(n) => deps::contained(n, build).await,
                None => build.await,
            }
        };
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

/// Where a worker records its scripts' control groups, so the next worker on this machine ends
/// what one that died left running.
pub fn groups_registry(cache: &Path) -> PathBuf {
    cache.join("groups")
}

/// The namespaces a worker's script runs in: its own processes (all of them end with the
/// worker, even when it is killed: the namespace's keeper dies with it), a `/proc` showing
/// only them, and the worker's key file showing empty.
pub fn scripts_namespaces(
    cwd: &Path,
    key_file: Option<&Path>,
) -> Result<crate::contain::namespaces::Prepared, String> {
    let hidden: Vec<&Path> = key_file.into_iter().collect();
    crate::contain::namespaces::Prepared::for_script(cwd, &hidden)
}

/// Whether scripts can be given their namespaces on this machine (`Err`: why not).
pub async fn namespaces_work(cache: &Path, key_file: Option<&Path>) -> Result<(), String> {
    let prepared = scripts_namespaces(cache, key_file)?;
    let mut cmd = tokio::process::Command::new("/bin/sh");
    cmd.args(["-c", "exit 0"])
        .current_dir(cache)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: the hook makes async-signal-safe system calls only, on memory prepared here.
    unsafe {
        cmd.pre_exec(move || crate::contain::namespaces::enter_in_child(&prepared));
    }
    match cmd.status().await {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(format!("a test process in them ended with {status}")),
        Err(e) => {
            let why = format!("the kernel refused them ({e})");
            crate::contain::namespaces::mark_unavailable(why.clone());
            Err(why)
        }
    }
}

/// Where a worker keeps its environments and scratch folders when not told otherwise.
pub fn default_cache() -> PathBuf {
    directories::BaseDirs::new()
        .map(|d| d.cache_dir().join("healer-worker"))
        .unwrap_or_else(|| Path::new("/tmp").join("healer-worker"))
}
