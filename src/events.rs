//! Typed events on one bus. Every event is persisted in the `events` table (so Activity and
//! `healer events` show history) and then broadcast to live subscribers (the UI bridge, tests).

use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

use crate::checkpoint::{Checkpoint, CheckpointTrigger, RecoveryAction};
use crate::error::Result;
use crate::failure::FailureClass;
use crate::llm::{MessageRole, TaskKind, TaskStatus};
use crate::memory::DecisionKind;
use crate::notification::Notification;
use crate::session::{AgentKind, SessionStatus};
use crate::store::{AutoFixStatus, InvocationStatus, Outcome, RemedyStatus, Store};
use crate::workflow::{Author, RunStatus, RunTrigger, Version};

/// Something that happened in the engine that a person or another process may care about.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Event {
    EngineStarted {
        pid: u32,
        version: String,
    },
    EngineStopped {
        pid: u32,
    },
    /// Crash leftovers were found and settled at start-up.
    RecoveredAtStartup {
        summary: String,
    },
    HealStarted {
        heal_id: i64,
        source: String,
        scenario: String,
        class: FailureClass,
        signature: String,
        summary: String,
    },
    RemedyApplied {
        heal_id: i64,
        remedy: String,
        status: RemedyStatus,
        detail: String,
    },
    HealFinished {
        heal_id: i64,
        outcome: Outcome,
        summary: String,
    },
    /// A contained heal's failure is gone: the version of a repair ran past it.
    HealResolved {
        heal_id: i64,
        workflow_id: i64,
        version: Version,
        run_id: i64,
        task_id: Option<i64>,
    },
    NotificationCreated {
        notification: Notification,
    },
    /// A notification changed: what it is about happened again ("failed 3 more times since").
    NotificationUpdated {
        notification: Notification,
    },
    WorkflowCreated {
        workflow_id: i64,
        title: String,
    },
    /// Its settings changed, or it was paused or resumed.
    WorkflowChanged {
        workflow_id: i64,
        title: String,
        what: String,
    },
    WorkflowDeleted {
        workflow_id: i64,
        title: String,
    },
    VersionSaved {
        workflow_id: i64,
        title: String,
        version: Version,
        author: Author,
        comment: String,
    },
    RunStarted {
        run_id: i64,
        /// Its number among the workflow's runs (#1, #2 …); 0 in events stored before runs
        /// were numbered.
        #[serde(default)]
        run_number: u32,
        workflow_id: i64,
        title: String,
        trigger: RunTrigger,
    },
    AttemptFinished {
        run_id: i64,
        /// Its number among the workflow's runs (#1, #2 …); 0 in events stored before runs
        /// were numbered.
        #[serde(default)]
        run_number: u32,
        workflow_id: i64,
        attempt: u32,
        succeeded: bool,
        class: Option<FailureClass>,
        summary: String,
        /// When another attempt follows, after how long.
        retry_in_ms: Option<u32>,
    },
    RunFinished {
        run_id: i64,
        /// Its number among the workflow's runs (#1, #2 …); 0 in events stored before runs
        /// were numbered.
        #[serde(default)]
        run_number: u32,
        workflow_id: i64,
        title: String,
        status: RunStatus,
        summary: String,
    },
    /// A task with a model thread began (maintainer, planner …).
    TaskStarted {
        task_id: i64,
        task_kind: TaskKind,
        title: String,
    },
    /// A step was added to a task's thread: assistant text, a tool call, a tool result.
    TaskMessageAdded {
        task_id: i64,
        message_id: i64,
        role: MessageRole,
        summary: String,
    },
    TaskFinished {
        task_id: i64,
        status: TaskStatus,
        summary: String,
    },
    /// A logic failure put a workflow in maintenance: a maintainer task will repair it.
    MaintenanceStarted {
        workflow_id: i64,
        task_id: i64,
        run_id: i64,
        /// Its number among the workflow's runs (#1, #2 …); 0 in events stored before runs
        /// were numbered.
        #[serde(default)]
        run_number: u32,
        title: String,
    },
    /// A maintainer task ended: fixed (a re-run follows), stale, gave up, or interrupted; or,
    /// still working, it says what it waits for (a model provider that is down).
    MaintenanceFinished {
        workflow_id: i64,
        task_id: Option<i64>,
        status: AutoFixStatus,
        summary: String,
    },
    /// The planner answered a message in a workflow's chat (`question`: it asks the person).
    PlannerReplied {
        workflow_id: i64,
        task_id: i64,
        question: Option<String>,
        summary: String,
    },
    /// Healer stopped a piece of work to ask the person.
    CheckpointCreated {
        checkpoint: Checkpoint,
    },
    /// A pending checkpoint changed: another workflow failed with the error it is about.
    CheckpointUpdated {
        checkpoint: Checkpoint,
    },
    /// The person decided a checkpoint, and Healer acted on it.
    CheckpointDecided {
        checkpoint_id: i64,
        trigger: CheckpointTrigger,
        workflow_id: Option<i64>,
        /// The run it was about.
        run_id: Option<i64>,
        /// The chosen option's label.
        choice: String,
        outcome: String,
    },
    /// The Level-2 analyzer (or its absence) chose what to do about a failure.
    RecoveryDecided {
        workflow_id: i64,
        run_id: i64,
        /// Its number among the workflow's runs (#1, #2 …); 0 in events stored before runs
        /// were numbered.
        #[serde(default)]
        run_number: u32,
        action: RecoveryAction,
        detail: String,
    },
    /// A circuit breaker stopped runaway healing (systemic, cost, review, rollback, survivors,
    /// catastrophic rollback).
    BreakerTripped {
        breaker: DecisionKind,
        workflow_id: Option<i64>,
        detail: String,
    },
    /// Model providers, tiers or budgets changed.
    LlmSettingsChanged {
        what: String,
    },
    /// The connection to a Temporal cluster changed (connected, disconnected).
    ClusterChanged {
        what: String,
    },
    /// The person paused every scheduled run (a breaker pausing them is `BreakerTripped`).
    SchedulerPaused {
        reason: String,
    },
    /// Packages were installed into a workflow's own environment (or could not be).
    EnvironmentBuilt {
        workflow_id: i64,
        title: String,
        ok: bool,
        summary: String,
    },
    ProjectAdded {
        project_id: i64,
        name: String,
    },
    /// Its settings changed.
    ProjectChanged {
        project_id: i64,
        name: String,
        what: String,
    },
    /// Healer forgot it (the repository is untouched).
    ProjectRemoved {
        project_id: i64,
        name: String,
    },
    /// The project's task list changed: by Healer, or by a person or an agent editing the file.
    ProjectTasksChanged {
        project_id: i64,
        name: String,
        /// Lines or links in the file that are wrong (each is reported, none dropped).
        problems: u32,
        what: String,
    },
    /// An agent began a session on a project's task (the steps stream live, and are stored).
    SessionStarted {
        session_id: i64,
        project_id: i64,
        task_id: String,
        task_title: String,
        agent: AgentKind,
    },
    SessionFinished {
        session_id: i64,
        project_id: i64,
        task_id: String,
        task_title: String,
        status: SessionStatus,
        summary: String,
        /// The commit that closed the task, when verification passed.
        commit: Option<String>,
    },
    /// The healer service woke on a project failure (it is recorded even when it skips).
    HealerInvocationStart {
        invocation_id: i64,
        project_id: i64,
        task_id: String,
        session_id: Option<i64>,
        scenario: String,
        at: String,
    },
    /// One spell of an invocation ran.
    HealerSpellApplied {
        invocation_id: i64,
        project_id: i64,
        task_id: String,
        spell: String,
        success: bool,
        summary: String,
    },
    HealerInvocationComplete {
        invocation_id: i64,
        project_id: i64,
        task_id: String,
        scenario: String,
        status: InvocationStatus,
        /// The spells tried, in order.
        spells: Vec<String>,
        reason: String,
    },
}

impl Event {
    /// The snake_case name of the variant, as stored in the `kind` column.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::EngineStarted { .. } => "engine_started",
            Event::EngineStopped { .. } => "engine_stopped",
            Event::RecoveredAtStartup { .. } => "recovered_at_startup",
            Event::HealStarted { .. } => "heal_started",
            Event::RemedyApplied { .. } => "remedy_applied",
            Event::HealFinished { .. } => "heal_finished",
            Event::HealResolved { .. } => "heal_resolved",
            Event::NotificationCreated { .. } => "notification_created",
            Event::NotificationUpdated { .. } => "notification_updated",
            Event::WorkflowCreated { .. } => "workflow_created",
            Event::WorkflowChanged { .. } => "workflow_changed",
            Event::WorkflowDeleted { .. } => "workflow_deleted",
            Event::VersionSaved { .. } => "version_saved",
            Event::RunStarted { .. } => "run_started",
            Event::AttemptFinished { .. } => "attempt_finished",
            Event::RunFinished { .. } => "run_finished",
            Event::TaskStarted { .. } => "task_started",
            Event::TaskMessageAdded { .. } => "task_message_added",
            Event::TaskFinished { .. } => "task_finished",
            Event::MaintenanceStarted { .. } => "maintenance_started",
            Event::MaintenanceFinished { .. } => "maintenance_finished",
            Event::PlannerReplied { .. } => "planner_replied",
            Event::CheckpointCreated { .. } => "checkpoint_created",
            Event::CheckpointUpdated { .. } => "checkpoint_updated",
            Event::CheckpointDecided { .. } => "checkpoint_decided",
            Event::RecoveryDecided { .. } => "recovery_decided",
            Event::BreakerTripped { .. } => "breaker_tripped",
            Event::LlmSettingsChanged { .. } => "llm_settings_changed",
            Event::ClusterChanged { .. } => "cluster_changed",
            Event::SchedulerPaused { .. } => "scheduler_paused",
            Event::EnvironmentBuilt { .. } => "environment_built",
            Event::ProjectAdded { .. } => "project_added",
            Event::ProjectChanged { .. } => "project_changed",
            Event::ProjectRemoved { .. } => "project_removed",
            Event::ProjectTasksChanged { .. } => "project_tasks_changed",
            Event::SessionStarted { .. } => "session_started",
            Event::SessionFinished { .. } => "session_finished",
            Event::HealerInvocationStart { .. } => "healer_invocation_start",
            Event::HealerSpellApplied { .. } => "healer_spell_applied",
            Event::HealerInvocationComplete { .. } => "healer_invocation_complete",
        }
    }
}

/// An event as stored: its id (increasing), when it happened (RFC 3339, UTC) and what.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct EventRecord {
    pub id: i64,
    pub at: String,
    pub event: Event,
}

/// How many events a slow subscriber may fall behind before it starts missing some. A UI that
/// lags that far re-reads the `events` table instead.
const BUS_CAPACITY: usize = 1024;

/// The event bus: persist, then broadcast.
#[derive(Clone)]
pub struct Bus {
    store: Store,
    tx: broadcast::Sender<EventRecord>,
}

impl Bus {
    pub fn new(store: Store) -> Self {
        let (tx, _) = broadcast::channel(BUS_CAPACITY);
        Bus { store, tx }
    }

    pub fn emit(&self, event: Event) -> Result<EventRecord> {
        let record = self.store.insert_event(&event)?;
        // No subscriber is not an error: the event is in the store either way.
        let _ = self.tx.send(record.clone());
        Ok(record)
    }

    pub fn subscribe(&self) -> broadcast::Receiver<EventRecord> {
        self.tx.subscribe()
    }
}

impl Event {
    /// One line for a person, as `healer events` prints it.
    pub fn describe(&self) -> String {
        match self {
            Event::EngineStarted { pid, version } => {
                format!("Engine started (pid {pid}, version {version})")
            }
            Event::EngineStopped { pid } => format!("Engine stopped (pid {pid})"),
            Event::RecoveredAtStartup { summary } => summary.clone(),
            Event::HealStarted {
                heal_id,
                source,
                class,
                summary,
                ..
            } => format!(
                "Heal {heal_id} started for {source} ({}): {summary}",
                class.as_str()
            ),
            Event::RemedyApplied {
                heal_id,
                remedy,
                status,
                detail,
            } => format!("Heal {heal_id}: {remedy} → {}: {detail}", status.as_str()),
            Event::HealFinished {
                heal_id,
                outcome,
                summary,
            } => format!("Heal {heal_id} {}: {summary}", outcome.as_str()),
            Event::HealResolved {
                heal_id,
                version,
                run_id,
                ..
            } => format!("Heal {heal_id} resolved by {version} (run {run_id})"),
            Event::NotificationCreated { notification } => {
                format!("Notification: {}", notification.title)
            }
            Event::NotificationUpdated { notification } => format!(
                "Notification: {} (again, {} more time(s) since)",
                notification.title, notification.repeats
            ),
            Event::WorkflowCreated { title, .. } => format!("Workflow \"{title}\" created"),
            Event::WorkflowChanged { title, what, .. } => format!("Workflow \"{title}\": {what}"),
            Event::WorkflowDeleted { title, .. } => format!("Workflow \"{title}\" deleted"),
            Event::VersionSaved {
                title,
                version,
                comment,
                ..
            } => format!("\"{title}\" version {version} saved: {comment}"),
            Event::RunStarted {
                run_id,
                run_number,
                title,
                trigger,
                ..
            } => format!(
                "Run {} of \"{title}\" started ({})",
                run_label(*run_id, *run_number),
                trigger.as_str()
            ),
            Event::AttemptFinished {
                run_id,
                run_number,
                attempt,
                summary,
                ..
            } => format!(
                "Run {}, attempt {attempt}: {summary}",
                run_label(*run_id, *run_number)
            ),
            Event::RunFinished {
                run_id,
                run_number,
                title,
                summary,
                ..
            } => format!(
                "Run {} of \"{title}\": {summary}",
                run_label(*run_id, *run_number)
            ),
            Event::TaskStarted {
                task_id,
                task_kind,
                title,
            } => format!("Task {task_id} ({}) started: {title}", task_kind.as_str()),
            Event::TaskMessageAdded {
                task_id, summary, ..
            } => format!("Task {task_id}: {summary}"),
            Event::TaskFinished {
                task_id,
                status,
                summary,
            } => format!("Task {task_id} {}: {summary}", status.as_str()),
            Event::MaintenanceStarted { task_id, title, .. } => {
                format!("Auto-fix thread {task_id} started for \u{201c}{title}\u{201d}")
            }
            Event::MaintenanceFinished {
                task_id, summary, ..
            } => match task_id {
                Some(id) => format!("Auto-fix thread {id}: {summary}"),
                None => format!("Auto-fix: {summary}"),
            },
            Event::PlannerReplied {
                question, summary, ..
            } => match question {
                Some(q) => format!("The planner asks: {q}"),
                None => format!("The planner answered: {summary}"),
            },
            Event::CheckpointCreated { checkpoint } => format!(
                "Checkpoint {}: {} — waiting for you",
                checkpoint.id, checkpoint.title
            ),
            Event::CheckpointUpdated { checkpoint } => format!(
                "Checkpoint {}: now about {} workflows",
                checkpoint.id,
                checkpoint.affected.len()
            ),
            Event::CheckpointDecided {
                checkpoint_id,
                choice,
                outcome,
                ..
            } => format!("Checkpoint {checkpoint_id}: you chose {choice}. {outcome}"),
            Event::RecoveryDecided { action, detail, .. } => {
                format!("Recovery: {} — {detail}", action.as_str())
            }
            Event::BreakerTripped {
                breaker, detail, ..
            } => format!("Breaker {}: {detail}", breaker.as_str()),
            Event::LlmSettingsChanged { what } => format!("Model settings: {what}"),
            Event::ClusterChanged { what } => format!("Other computers: {what}"),
            Event::SchedulerPaused { reason } => format!("Scheduled runs paused: {reason}"),
            Event::EnvironmentBuilt { title, summary, .. } => {
                format!("\u{201c}{title}\u{201d}: {summary}")
            }
            Event::ProjectAdded { name, .. } => format!("Project \"{name}\" added"),
            Event::ProjectChanged { name, what, .. } => format!("Project \"{name}\": {what}"),
            Event::ProjectRemoved { name, .. } => format!("Project \"{name}\" removed"),
            Event::ProjectTasksChanged {
                name,
                problems,
                what,
                ..
            } => match problems {
                0 => format!("Tasks of \"{name}\": {what}"),
                n => format!("Tasks of \"{name}\": {what} ({n} problem(s) in the file)"),
            },
            Event::SessionStarted {
                session_id,
                task_title,
                agent,
                ..
            } => format!(
                "Session {session_id} ({}) started on \u{201c}{task_title}\u{201d}",
                agent.as_str()
            ),
            Event::SessionFinished {
                session_id,
                summary,
                ..
            } => format!("Session {session_id}: {summary}"),
            Event::HealerInvocationStart {
                invocation_id,
                task_id,
                scenario,
                ..
            } => {
                format!("Healer invocation {invocation_id} started on task {task_id} ({scenario})")
            }
            Event::HealerSpellApplied {
                invocation_id,
                spell,
                success,
                summary,
                ..
            } => format!(
                "Healer invocation {invocation_id}: {spell} {}: {summary}",
                if *success { "worked" } else { "did not work" }
            ),
            Event::HealerInvocationComplete {
                invocation_id,
                status,
                reason,
                ..
            } => format!(
                "Healer invocation {invocation_id} {}: {reason}",
                status.as_str()
            ),
        }
    }
}

/// "#3" (the workflow's own count); events stored before runs were numbered carry 0 and are
/// named by their id.
fn run_label(run_id: i64, run_number: u32) -> String {
    if run_number > 0 {
        format!("#{run_number}")
    } else {
        run_id.to_string()
    }
}
