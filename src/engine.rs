//! The Engine: owns the store, the event bus, the lease and the background tasks. The desktop
//! shell and the CLI are thin callers of this API.

mod checkpoints;
mod llm;
mod maintainer;
mod memory;
mod requests;
mod workflows;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::{broadcast, Notify};
use tokio::task::{AbortHandle, JoinSet};
use tokio_util::sync::CancellationToken;

use crate::error::{Error, ErrorPayload, Result};
use crate::events::{Bus, Event, EventRecord};
use crate::failure::{Evidence, Failure, FailureClass, FailureSource};
use crate::heal::{HealContext, HealRecord, Pipeline};
use crate::lease::Lease;
use crate::maintainer::inbox::inbox_loop;
use crate::notification::NotificationList;
use crate::paths::Paths;
use crate::store::{known_schema_version, Store};
use crate::workflow::runner::{end_leftover_group, OutputChunk};
use crate::workflow::scheduler::schedule_loop;
pub use checkpoints::EXTRA_TOKENS_PREFIX;
pub use maintainer::HealedRun;
use requests::serve_requests;
pub use requests::{Request, Response};

/// How long shutdown waits for background tasks before abandoning them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// How often the request watcher looks at the store even when no file event came (a safety net
/// for file systems where change notification is unreliable).
const REQUEST_SAFETY_POLL: Duration = Duration::from_secs(5);

/// After a file event, when to look for another process's commit (cumulative pauses).
const COMMIT_SETTLE: [Duration; 3] = [
    Duration::from_millis(5),
    Duration::from_millis(50),
    Duration::from_millis(250),
];

/// What the UI shows about the engine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct AppInfo {
    pub version: String,
    pub data_dir: String,
    pub db_path: String,
    pub log_dir: String,
    pub schema_version: i64,
    pub pid: u32,
}

/// How many chunks of live output a slow viewer may fall behind; the stored log is complete.
const OUTPUT_CAPACITY: usize = 4096;

/// How an engine starts.
pub struct EngineOptions {
    pub pipeline: Pipeline,
    /// Run the scheduler. An engine that a CLI command starts for its own length does not:
    /// it must not start catching up on schedules while the person only asked for one thing.
    pub scheduler: bool,
    /// Where model provider keys are found; `None`: the OS keyring, then the environment
    /// (tests use the environment only, so a developer's keyring is never touched).
    pub keys: Option<crate::llm::Keys>,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            pipeline: Pipeline::default(),
            scheduler: true,
            keys: None,
        }
    }
}

/// The engine's API. Cheap to clone: the engine's own tasks hold one, and [`Engine`] derefs
/// to it.
#[derive(Clone)]
pub struct Handle {
    pub(crate) inner: Arc<Inner>,
}

/// The running engine: its API ([`Handle`], by deref) plus ownership of the background tasks,
/// which stop when it is shut down or dropped.
pub struct Engine {
    handle: Handle,
    cancel: CancellationToken,
    tasks: Mutex<JoinSet<()>>,
    stopped: AtomicBool,
}

impl std::ops::Deref for Engine {
    type Target = Handle;

    fn deref(&self) -> &Handle {
        &self.handle
    }
}

/// What the engine's tasks share.
pub(crate) struct Inner {
    pub(crate) paths: Paths,
    pub(crate) store: Store,
    pub(crate) bus: Bus,
    pub(crate) output: broadcast::Sender<OutputChunk>,
    /// The model layer: providers, tiers, budgets, agent loops.
    pub(crate) llm: crate::llm::Llm,
    /// Wakes the scheduler: a run was requested, a schedule changed, a run finished.
    pub(crate) wake: Notify,
    /// Wakes the inbox worker: a maintainer or planner item was queued or finished.
    pub(crate) inbox_wake: Notify,
    pipeline: Pipeline,
    role: String,
    scheduling: bool,
    /// Workflow id → the run its task is running, so a workflow never runs twice at once.
    active: Mutex<HashMap<i64, (i64, AbortHandle)>>,
    /// This engine, for work spawned from code that holds only `&Inner`.
    me: std::sync::Weak<Inner>,
    _lease: Lease,
}

impl Engine {
    /// Become the engine for `paths`: take the lease, open the store, settle what a crash left
    /// half-done, and start the background tasks. `role` names this process in messages
    /// ("desktop app", "healer daemon"). Must be called within a tokio runtime.
    pub async fn start(paths: Paths, role: &str) -> Result<Engine> {
        paths.ensure()?;
        let lease = Lease::acquire(&paths, role)?;
        Engine::start_with_lease(paths, role, lease, EngineOptions::default()).await
    }

    /// Start with a lease already taken (tests give their own pipeline hooks).
    pub async fn start_with_lease(
        paths: Paths,
        role: &str,
        lease: Lease,
        options: EngineOptions,
    ) -> Result<Engine> {
        let store = Store::open(&paths.db())?;
        let bus = Bus::new(store.clone());
        let (output, _) = broadcast::channel(OUTPUT_CAPACITY);
        let llm = match options.keys {
            Some(keys) => crate::llm::Llm::with(
                store.clone(),
                bus.clone(),
                keys,
                crate::llm::ollama::base_url_from_env(),
            ),
            None => crate::llm::Llm::new(store.clone(), bus.clone()),
        };
        let inner = Arc::new_cyclic(|me| Inner {
            me: me.clone(),
            paths,
            store,
            bus,
            output,
            llm,
            wake: Notify::new(),
            inbox_wake: Notify::new(),
            pipeline: options.pipeline,
            role: role.to_string(),
            scheduling: options.scheduler,
            active: Mutex::new(HashMap::new()),
            _lease: lease,
        });
        inner.settle_crash_leftovers()?;
        inner.bus.emit(Event::EngineStarted {
            pid: std::process::id(),
            version: env!("CARGO_PKG_VERSION").to_string(),
        })?;
        tracing::info!(
            data_dir = %inner.paths.data_dir().display(),
            role,
            "engine started"
        );

        let cancel = CancellationToken::new();
        let mut tasks = JoinSet::new();
        let handle = Handle { inner };
        tasks.spawn(serve_requests(handle.clone(), cancel.clone()));
        if handle.inner.scheduling {
            tasks.spawn(schedule_loop(handle.inner.clone(), cancel.clone()));
            tasks.spawn(inbox_loop(handle.inner.clone(), cancel.clone()));
            // The long-running engine (app, daemon) looks for a local model once.
            tasks.spawn(crate::llm::detect_ollama_at_start(handle.inner.llm.clone()));
        }
        Ok(Engine {
            handle,
            cancel,
            tasks: Mutex::new(tasks),
            stopped: AtomicBool::new(false),
        })
    }

    /// How many background tasks are still running.
    pub fn running_tasks(&self) -> usize {
        self.lock_tasks().len()
    }

    /// Stop the background tasks and wait for them; the lease goes when the engine is dropped.
    pub async fn shutdown(&self) {
        if self.stopped.swap(true, Ordering::SeqCst) {
            return;
        }
        self.cancel.cancel();
        let mut tasks = std::mem::take(&mut *self.lock_tasks());
        let drained = tokio::time::timeout(SHUTDOWN_GRACE, async {
            while tasks.join_next().await.is_some() {}
        })
        .await;
        if drained.is_err() {
            tracing::warn!("background tasks did not stop in time; aborting them");
            tasks.abort_all();
        }
        if let Err(e) = self.inner.bus.emit(Event::EngineStopped {
            pid: std::process::id(),
        }) {
            tracing::warn!("could not record the engine stop: {e}");
        }
        tracing::info!(role = %self.inner.role, "engine stopped");
    }

    fn lock_tasks(&self) -> std::sync::MutexGuard<'_, JoinSet<()>> {
        self.tasks.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Handle {
    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    pub fn paths(&self) -> &Paths {
        &self.inner.paths
    }

    pub fn subscribe(&self) -> broadcast::Receiver<EventRecord> {
        self.inner.bus.subscribe()
    }

    /// Live output of running attempts (not persisted; the stored logs are on the attempts).
    pub fn subscribe_output(&self) -> broadcast::Receiver<OutputChunk> {
        self.inner.output.subscribe()
    }

    pub fn emit(&self, event: Event) -> Result<EventRecord> {
        self.inner.bus.emit(event)
    }

    pub fn info(&self) -> Result<AppInfo> {
        let paths = &self.inner.paths;
        Ok(AppInfo {
            version: env!("CARGO_PKG_VERSION").to_string(),
            data_dir: display(paths.data_dir().to_path_buf()),
            db_path: display(paths.db()),
            log_dir: display(paths.log_dir()),
            schema_version: self.inner.store.schema_version()?,
            pid: std::process::id(),
        })
    }

    pub fn events(&self, before: Option<i64>, limit: u32) -> Result<Vec<EventRecord>> {
        self.inner.store.list_events(before, limit)
    }

    pub fn notifications(&self) -> Result<NotificationList> {
        self.inner.store.list_notifications()
    }

    /// Mark notifications read; an empty list marks all.
    pub fn mark_notifications_read(&self, ids: &[i64]) -> Result<()> {
        self.inner.store.mark_notifications_read(ids)
    }

    pub fn heals(&self, limit: u32) -> Result<Vec<HealRecord>> {
        self.inner.store.list_heals(limit)
    }

    /// Take a failure through the heal pipeline.
    pub async fn heal(&self, failure: Failure) -> Result<HealRecord> {
        self.inner.heal(failure).await
    }

    /// Send a harmless test failure through the whole pipeline; the person gets a notification.
    pub async fn send_test_alert(&self) -> Result<HealRecord> {
        self.inner.send_test_alert().await
    }

    /// Act on a request, as the engine (used for requests made in this process too).
    pub async fn perform(&self, request: Request) -> Result<Response> {
        requests::perform(self, request).await
    }
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("data_dir", &self.inner.paths.data_dir())
            .field("role", &self.inner.role)
            .finish()
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        // Dropping the JoinSet aborts whatever is still running; cancel first so tasks that
        // check the token stop at a clean point.
        self.cancel.cancel();
    }
}

impl Inner {
    /// A marker of this data folder, set as `HEALER_INSTANCE` in every run's environment so the
    /// processes of one Healer are never taken for another's.
    pub(crate) fn instance(&self) -> String {
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(self.paths.data_dir().to_string_lossy().as_bytes());
        digest.iter().take(6).map(|b| format!("{b:02x}")).collect()
    }

    /// This engine as an owned handle (`None` only while it is being dropped).
    pub(crate) fn me(&self) -> Option<Arc<Inner>> {
        self.me.upgrade()
    }

    pub(crate) fn is_active(&self, workflow_id: i64) -> bool {
        self.lock_active().contains_key(&workflow_id)
    }

    pub(crate) fn set_active(&self, workflow_id: i64, run_id: i64, abort: AbortHandle) {
        self.lock_active().insert(workflow_id, (run_id, abort));
    }

    /// The run a workflow's task is running now, if any.
    pub(crate) fn active_run(&self, workflow_id: i64) -> Option<i64> {
        self.lock_active().get(&workflow_id).map(|(run, _)| *run)
    }

    pub(crate) fn finish_active(&self, workflow_id: i64) {
        self.lock_active().remove(&workflow_id);
    }

    /// Stop the run a workflow's task is running, if any (its process group goes with it).
    pub(crate) fn abort_active(&self, workflow_id: i64) -> bool {
        match self.lock_active().remove(&workflow_id) {
            Some((_, abort)) => {
                abort.abort();
                true
            }
            None => false,
        }
    }

    fn lock_active(&self) -> std::sync::MutexGuard<'_, HashMap<i64, (i64, AbortHandle)>> {
        self.active.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Nothing stays "running" forever: settle what a crash left half-done.
    fn settle_crash_leftovers(&self) -> Result<()> {
        let leftovers = self.store.interrupt_open_runs()?;
        let mut ended = 0;
        for attempt in &leftovers {
            if let Some(pgid) = attempt.pgid {
                if end_leftover_group(pgid, attempt.run_id) {
                    ended += 1;
                }
            }
        }
        if !leftovers.is_empty() {
            tracing::warn!(
                "{} run(s) were interrupted by an unclean stop; ended {ended} process group(s) they left",
                leftovers.len()
            );
        }
        let runs = leftovers.len();
        // Before tasks: a task whose item was being worked on is interrupted; one whose item
        // is still pending waits for its turn.
        let items = self.store.settle_taken_inbox_items()?;
        if items > 0 {
            tracing::warn!("{items} auto-fix or chat turn(s) were interrupted");
        }
        let heals = self.store.interrupt_running_heals()?;
        let tasks = self.store.interrupt_running_tasks()?;
        let requests = self.store.fail_taken_requests(&failed_result(
            "the engine stopped before it finished this request",
        ))?;
        if heals + requests + runs + tasks > 0 {
            let summary = format!(
                "Settled after an unclean stop: {runs} run(s), {heals} heal(s) and {tasks} task(s) marked interrupted, {requests} request(s) answered as failed"
            );
            tracing::warn!("{summary}");
            self.bus.emit(Event::RecoveredAtStartup { summary })?;
        }
        Ok(())
    }

    pub(crate) async fn heal(&self, failure: Failure) -> Result<HealRecord> {
        let cx = HealContext {
            store: &self.store,
            bus: &self.bus,
            engine: Some(self),
        };
        self.pipeline.heal(&cx, failure).await
    }

    async fn send_test_alert(&self) -> Result<HealRecord> {
        let failure = Failure::new(
            FailureSource::SelfCheck,
            "self-check",
            FailureClass::Unknown,
            Evidence {
                error_type: Some("TestAlert".to_string()),
                message: "a test alert sent on purpose".to_string(),
                stack: None,
            },
        );
        self.heal(failure).await
    }
}

fn failed_result(message: &str) -> String {
    to_json(&ErrorPayload::from(Error::EngineUnavailable(
        message.to_string(),
    )))
}

fn to_json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|e| format!("{{\"unserialisable\":\"{e}\"}}"))
}

fn display(path: PathBuf) -> String {
    path.display().to_string()
}

/// The schema this build writes, for `healer status`.
pub fn schema_version_known() -> i64 {
    known_schema_version()
}
