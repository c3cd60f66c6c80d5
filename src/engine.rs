//! The Engine: on top of everything else. It takes the lease, builds the services every part
//! shares, assembles the remedy set into the pipeline, starts the background loops, and is the
//! API the desktop shell and the CLI call. Nothing below imports it: the parts get what they need
//! through [`Services`].

mod approvals;
mod checkpoints;
mod cluster;
mod comments;
mod deps;
mod finishing;
mod glance;
mod healer;
mod healing;
mod llm;
mod logs;
mod maintainer;
mod memory;
mod planner;
mod projects;
mod pull_requests;
mod requests;
mod review;
mod scripts;
mod secrets;
mod startup;
mod workflows;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::error::{Error, ErrorPayload, Result};
use crate::events::{Bus, Event, EventRecord};
use crate::failure::{Evidence, Failure, FailureClass, FailureSource};
use crate::heal::{HealRecord, Pipeline, SettingsPolicy};
use crate::lease::Lease;
use crate::maintainer::inbox::inbox_loop;
use crate::notification::NotificationList;
use crate::paths::Paths;
use crate::scheduler::schedule_loop;
use crate::services::Services;
use crate::store::{known_schema_version, Store};
use crate::workflow::runner::OutputChunk;
pub use approvals::AgentAnswer;
pub use comments::CommentsSent;
pub use deps::{dependencies_in, propose_packages_in};
pub use finishing::{Acceptance, Discarded};
pub use glance::{Glance, Mood, Waiting, PAUSED_BY_YOU};
use healing::EngineHealing;
pub use healing::RulePlanner;
pub use maintainer::HealedRun;
pub use pull_requests::token_account as project_token_account;
use requests::{serve_agent_hooks, serve_requests};
pub use requests::{Request, Response};
pub use review::{editor_invocation, terminal_program};
pub use scripts::SaveOutcome;
use startup::settle_crash_leftovers;

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
    /// The longest workflow title the engine accepts, so the window cuts at the same place.
    pub max_title_chars: u32,
}

/// How an engine starts.
pub struct EngineOptions {
    pub pipeline: Pipeline,
    /// Run the scheduler. An engine that a CLI command starts for its own length does not:
    /// it must not start catching up on schedules while the person only asked for one thing.
    pub scheduler: bool,
    /// Where model provider keys are found; `None`: the OS keyring, then the environment
    /// (tests use the environment only, so a developer's keyring is never touched).
    pub keys: Option<crate::llm::Keys>,
    /// Where a person's own Claude Code transcripts are watched when Settings allow it;
    /// `None`: `$CLAUDE_CONFIG_DIR/projects`, else `~/.claude/projects`.
    pub claude_projects: Option<std::path::PathBuf>,
    /// Where a person's own opencode sessions are read when Settings allow it; `None`:
    /// `$XDG_DATA_HOME/opencode/opencode.db`, else `~/.local/share/opencode/opencode.db`.
    pub opencode_db: Option<std::path::PathBuf>,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            // The remedy set: the engine's rules over every remedy it knows.
            pipeline: Pipeline::new(Box::new(SettingsPolicy), Box::new(RulePlanner)),
            scheduler: true,
            keys: None,
            claude_projects: None,
            opencode_db: None,
        }
    }
}

/// The engine's API. Cheap to clone: the engine's own tasks hold one, and [`Engine`] derefs
/// to it.
#[derive(Clone)]
pub struct Handle {
    pub(crate) services: Arc<Services>,
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

/// The engine's own state, beside the services it hands down.
pub(crate) struct Inner {
    role: String,
    /// Whether this engine runs the scheduler and the inbox worker; an engine a CLI command
    /// starts does the work it is asked for in place instead.
    scheduling: bool,
    /// Projects at work: the agent registry, the sessions running, the task-list watchers.
    projects: Arc<crate::project::Projects>,
    /// Where the person's own Claude Code sessions are (when watching them is on).
    claude_projects: Option<std::path::PathBuf>,
    /// Where the person's own opencode sessions are (when watching them is on).
    opencode_db: Option<std::path::PathBuf>,
    /// The person's transcripts already read for the Sessions page.
    own_verdicts: crate::steering::own::VerdictCache,
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
        let llm = match options.keys {
            Some(keys) => crate::llm::Llm::with(
                store.clone(),
                bus.clone(),
                keys,
                crate::llm::ollama::base_url_from_env(),
            ),
            None => crate::llm::Llm::new(store.clone(), bus.clone(), paths.data_dir()),
        };
        let healing = Box::new(EngineHealing::new(options.pipeline));
        let services = Arc::new(Services::new(paths, store, bus, llm, healing));
        settle_crash_leftovers(&services)?;
        services.bus.emit(Event::EngineStarted {
            pid: std::process::id(),
            version: env!("CARGO_PKG_VERSION").to_string(),
        })?;
        tracing::info!(
            data_dir = %services.paths.data_dir().display(),
            role,
            "engine started"
        );
        let projects = crate::project::Projects::new(
            services.clone(),
            projects::agents(&services),
            options.scheduler,
        );
        // A task list saved over by another program while no engine ran: tasks left in
        // progress by sessions that ended are settled (after the crash leftovers above).
        projects.reconcile_all();
        if options.scheduler {
            // Hand edits of task lists show on the board; a CLI command's engine needs none.
            projects.watch_all()?;
        }
        for problem in crate::secrets::sealed().map_or(&[][..], |s| &s.problems[..]) {
            tracing::warn!("provider keys are less well hidden: {problem}");
        }
        let claude_projects = options
            .claude_projects
            .clone()
            .or_else(crate::steering::own::claude_projects_dir);
        let opencode_db = options
            .opencode_db
            .clone()
            .or_else(crate::steering::own_opencode::opencode_db);
        let inner = Arc::new(Inner {
            claude_projects,
            opencode_db,
            own_verdicts: Default::default(),
            role: role.to_string(),
            scheduling: options.scheduler,
            projects,
            _lease: lease,
        });

        let cancel = CancellationToken::new();
        let mut tasks = JoinSet::new();
        let handle = Handle { services, inner };
        // Before any task can run: what a killed Healer left of the healer service.
        if let Err(e) = handle.settle_healer_leftovers() {
            tracing::warn!("could not settle the healer service's leftovers: {e}");
        }
        // An agent's question answered half way when Healer stopped, or answered while its
        // session was ended: made whole, and carried to the agent.
        if let Err(e) = handle.settle_questions() {
            tracing::warn!("could not settle the agents' questions: {e}");
        }
        tasks.spawn(crate::services::flush_loop(
            handle.services.clone(),
            cancel.clone(),
        ));
        // Wherever sessions run (the app, the daemon, a command's own engine).
        tasks.spawn(projects::stuck_loop(handle.clone(), cancel.clone()));
        tasks.spawn(crate::spells::run_loop(
            handle.services.clone(),
            handle.inner.projects.clone(),
            cancel.clone(),
        ));
        // A question answered while no engine carried its invocation on (the one that recorded
        // the answer stopped first) is acted on now.
        {
            let (services, projects) = (handle.services.clone(), handle.inner.projects.clone());
            tasks.spawn(async move {
                if let Err(e) = crate::spells::resume_answered(&services, &projects).await {
                    tracing::warn!("could not carry on the answered healer questions: {e}");
                }
            });
        }
        tasks.spawn(healer::scan_loop(handle.clone(), cancel.clone()));
        // A conflict the person asked the agent to resolve, then accept, whose session did not
        // end: started again, by the engine that stays (not a command's own, which would stop
        // it again when it answers).
        if handle.inner.scheduling {
            let handle = handle.clone();
            tasks.spawn(async move {
                if let Err(e) = handle.carry_on_accepting().await {
                    tracing::warn!("could not carry on the accepts under way: {e}");
                }
            });
        }
        tasks.spawn(pull_requests::watch_loop(handle.clone(), cancel.clone()));
        tasks.spawn(projects::judge_loop(handle.clone(), cancel.clone()));
        if handle.inner.scheduling {
            // An engine a command started for itself answers only that command: it would
            // otherwise take other commands' requests and could end before answering them.
            tasks.spawn(serve_requests(handle.clone(), cancel.clone()));
            tasks.spawn(schedule_loop(handle.services.clone(), cancel.clone()));
            // Runs it started on the cluster and had not stored are waited for again; the
            // cluster's schedules are kept in step and their runs brought in.
            crate::cluster::reattach(&handle.services);
            tasks.spawn(crate::cluster::cluster_loop(
                handle.services.clone(),
                cancel.clone(),
            ));
            // The person's own sessions are watched by the long-running engine only.
            tasks.spawn(projects::own_sessions_loop(handle.clone(), cancel.clone()));
            tasks.spawn(inbox_loop(handle.services.clone(), cancel.clone()));
            // The long-running engine (app, daemon) looks for a local model once.
            tasks.spawn(crate::llm::detect_ollama_at_start(
                handle.services.llm.clone(),
            ));
        } else {
            // The agents it runs ask through their hooks, which only an engine answers.
            tasks.spawn(serve_agent_hooks(handle.clone(), cancel.clone()));
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
        // Sessions first: they record how they ended while the store and bus are there.
        self.inner.projects.shutdown().await;
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
        // Run ends kept while the store refused: a last try; what still fails stays in the
        // journal for the next start.
        if self.services.flush_pending() > 0 {
            tracing::error!(
                "some run results could not be saved yet; they are kept in {} for the next start",
                self.services.paths.pending_dir().display()
            );
        }
        if let Err(e) = self.services.bus.emit(Event::EngineStopped {
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
        &self.services.store
    }

    pub fn paths(&self) -> &Paths {
        &self.services.paths
    }

    pub fn subscribe(&self) -> broadcast::Receiver<EventRecord> {
        self.services.bus.subscribe()
    }

    /// Live output of running attempts (not persisted; the stored logs are on the attempts).
    pub fn subscribe_output(&self) -> broadcast::Receiver<OutputChunk> {
        self.services.output.subscribe()
    }

    pub fn emit(&self, event: Event) -> Result<EventRecord> {
        self.services.bus.emit(event)
    }

    pub fn info(&self) -> Result<AppInfo> {
        let paths = &self.services.paths;
        Ok(AppInfo {
            version: env!("CARGO_PKG_VERSION").to_string(),
            data_dir: display(paths.data_dir().to_path_buf()),
            db_path: display(paths.db()),
            log_dir: display(paths.log_dir()),
            schema_version: self.services.store.schema_version()?,
            pid: std::process::id(),
            max_title_chars: u32::try_from(crate::workflow::MAX_TITLE_CHARS).unwrap_or(u32::MAX),
        })
    }

    pub fn events(&self, before: Option<i64>, limit: u32) -> Result<Vec<EventRecord>> {
        self.services.store.list_events(before, limit)
    }

    /// The notification centre. A "no model" notice still open once a model is set up says
    /// so and offers the repair, instead of pointing to a setting that is done.
    pub fn notifications(&self) -> Result<NotificationList> {
        let mut list = self.services.store.list_notifications()?;
        if list
            .items
            .iter()
            .any(|n| n.kind == crate::notification::NotificationKind::NoModel && !n.resolved)
            && self
                .services
                .llm
                .resolve_tier(crate::llm::Tier::Cheap)
                .is_ok()
        {
            for n in &mut list.items {
                if n.kind == crate::notification::NotificationKind::NoModel && !n.resolved {
                    n.body = format!(
                        "{} A model is set up now: Healer can try the repair again.",
                        n.body
                    );
                    n.actions = vec![crate::notification::NotificationAction::RetryAutofix];
                }
            }
        }
        Ok(list)
    }

    /// Mark notifications read; an empty list marks all.
    pub fn mark_notifications_read(&self, ids: &[i64]) -> Result<()> {
        self.services.store.mark_notifications_read(ids)
    }

    /// Put one notification away (the centre no longer lists it).
    pub fn dismiss_notification(&self, id: i64) -> Result<()> {
        self.services.store.dismiss_notification(id)
    }

    pub fn heals(&self, limit: u32) -> Result<Vec<HealRecord>> {
        self.services.store.list_heals(limit)
    }

    /// Take a failure through the heal pipeline.
    pub async fn heal(&self, failure: Failure) -> Result<HealRecord> {
        self.services.heal(failure).await
    }

    /// Send a harmless test failure through the whole pipeline; the person gets a notification.
    pub async fn send_test_alert(&self) -> Result<HealRecord> {
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

    /// Act on a request, as the engine (used for requests made in this process too).
    pub async fn perform(&self, request: Request) -> Result<Response> {
        requests::perform(self, request).await
    }
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("data_dir", &self.services.paths.data_dir())
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

pub(crate) fn failed_result(message: &str) -> String {
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
