//! Workflows: a person's scripts that Healer runs on a schedule, with every version kept
//! (major.minor) and every run and attempt recorded. This module holds what they are — the
//! shapes, the rules (schedule, retry, validation, version order) and the runner of one attempt —
//! and needs no store: the store keeps these shapes, and the scheduler (`scheduler/`) runs them
//! and hands failures to the pipeline.

mod examples;
pub mod judge;
mod retry;
pub mod runner;
mod schedule;
pub mod secrets;
pub mod validate;
mod version;

use serde::{Deserialize, Serialize};

use crate::failure::{Evidence, FailureClass};

pub use examples::example_workflows;
pub use retry::RetryPolicy;
pub use schedule::{Schedule, SchedulePreview};
pub use secrets::WorkflowSecret;
pub(crate) use validate::refuse;
pub use validate::{size, validate, FieldProblem, MAX_SCRIPT_BYTES, MAX_TITLE_CHARS};
pub use version::Version;

/// "bad cron" → "Bad cron": engine messages start lower-case to follow "healer: "; a form
/// shows them as sentences.
pub(crate) fn capitalise(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// "1 file", "3 files": a count with its noun, as a person writes it.
pub(crate) fn count(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// What runs the script.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Runtime {
    Python3,
    Node,
    Bash,
    /// A command line in which `{file}` stands for the entry script, e.g. `deno run {file}`.
    Custom {
        command: String,
    },
}

impl Runtime {
    /// The program looked up on PATH.
    pub fn program(&self) -> String {
        match self {
            Runtime::Python3 => "python3".to_string(),
            Runtime::Node => "node".to_string(),
            Runtime::Bash => "bash".to_string(),
            Runtime::Custom { command } => command
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_string(),
        }
    }

    /// The entry file name a new workflow gets.
    pub fn default_entry(&self) -> &'static str {
        match self {
            Runtime::Python3 => "main.py",
            Runtime::Node => "main.js",
            Runtime::Bash | Runtime::Custom { .. } => "main.sh",
        }
    }

    pub fn label(&self) -> String {
        match self {
            Runtime::Python3 => "Python 3".to_string(),
            Runtime::Node => "Node.js".to_string(),
            Runtime::Bash => "Bash".to_string(),
            Runtime::Custom { command } => command.clone(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum WorkflowStatus {
    Active,
    Paused,
    /// The last run failed and was not healed.
    NeedsAttention,
}

impl WorkflowStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            WorkflowStatus::Active => "active",
            WorkflowStatus::Paused => "paused",
            WorkflowStatus::NeedsAttention => "needs_attention",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            WorkflowStatus::Active,
            WorkflowStatus::Paused,
            WorkflowStatus::NeedsAttention,
        ]
        .into_iter()
        .find(|v| v.as_str() == s)
    }
}

/// An environment variable for the script. Not for secrets: these are stored in plain text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct EnvVar {
    pub name: String,
    pub value: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct Workflow {
    pub id: i64,
    /// Unique, for the CLI: "daily-report".
    pub name: String,
    pub title: String,
    pub runtime: Runtime,
    /// The entry script's file name inside the workflow's folder.
    pub entry: String,
    pub schedule: Schedule,
    pub env: Vec<EnvVar>,
    pub timeout_secs: u32,
    pub retry: RetryPolicy,
    pub status: WorkflowStatus,
    pub created_at: String,
    pub updated_at: String,
    /// A maintainer task is repairing it (shown as "healing").
    pub healing: bool,
    /// Automatic fixes since its last green run.
    pub fix_count: u32,
    /// Fixed too often lately: flagged for a person to look at.
    pub review: bool,
}

/// What a person fills in to create a workflow (or edit its settings: `code` is then ignored).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct WorkflowInput {
    pub title: String,
    pub runtime: Runtime,
    /// Defaults to the runtime's `main.*`.
    pub entry: Option<String>,
    pub schedule: Schedule,
    pub env: Vec<EnvVar>,
    pub timeout_secs: u32,
    /// Defaults to [`RetryPolicy::default`].
    pub retry: Option<RetryPolicy>,
    pub code: String,
    /// One line on what the script does.
    pub summary: String,
}

/// Who made a version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Author {
    Person,
    Planner,
    /// Healer itself, on its own decision (a rollback).
    Healer,
    /// A maintainer task (its id).
    Task {
        task_id: i64,
    },
}

impl Author {
    pub fn to_db(&self) -> String {
        match self {
            Author::Person => "person".to_string(),
            Author::Planner => "planner".to_string(),
            Author::Healer => "healer".to_string(),
            Author::Task { task_id } => format!("task:{task_id}"),
        }
    }

    pub fn from_db(s: &str) -> Option<Self> {
        match s {
            "person" => Some(Author::Person),
            "planner" => Some(Author::Planner),
            "healer" => Some(Author::Healer),
            _ => s
                .strip_prefix("task:")
                .and_then(|id| id.parse().ok())
                .map(|task_id| Author::Task { task_id }),
        }
    }
}

/// One version of a workflow's script. Immutable once stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct ScriptVersion {
    pub id: i64,
    pub workflow_id: i64,
    pub version: Version,
    pub code: String,
    pub change_comment: String,
    pub summary: String,
    pub author: Author,
    pub created_at: String,
    /// Whether this is the version that runs.
    pub active: bool,
    /// The packages it declares, one requirement a line in the runtime's notation
    /// (`PyYAML==6.0.2`, `left-pad@1.3.0`). Empty: it needs nothing beyond the standard library.
    pub requirements: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Queued,
    Running,
    Succeeded,
    Failed,
    /// The engine stopped (crash, kill -9) while it ran.
    Interrupted,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Queued => "queued",
            RunStatus::Running => "running",
            RunStatus::Succeeded => "succeeded",
            RunStatus::Failed => "failed",
            RunStatus::Interrupted => "interrupted",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            RunStatus::Queued,
            RunStatus::Running,
            RunStatus::Succeeded,
            RunStatus::Failed,
            RunStatus::Interrupted,
        ]
        .into_iter()
        .find(|v| v.as_str() == s)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum RunTrigger {
    Schedule,
    Manual,
    /// Due while Healer was closed: run once at start-up.
    CatchUp,
    /// The re-run after a maintainer's fix.
    Fix,
    /// The person chose Proceed at a checkpoint.
    Checkpoint,
    /// The recovery manager ran it again (an alternative with a hint, or after unblocking).
    Recovery,
    /// Healer put back the last version of the major that ran green: this run proves it.
    Rollback,
}

impl RunTrigger {
    pub fn as_str(self) -> &'static str {
        match self {
            RunTrigger::Schedule => "schedule",
            RunTrigger::Manual => "manual",
            RunTrigger::CatchUp => "catch_up",
            RunTrigger::Fix => "fix",
            RunTrigger::Checkpoint => "checkpoint",
            RunTrigger::Recovery => "recovery",
            RunTrigger::Rollback => "rollback",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            RunTrigger::Schedule,
            RunTrigger::Manual,
            RunTrigger::CatchUp,
            RunTrigger::Fix,
            RunTrigger::Checkpoint,
            RunTrigger::Recovery,
            RunTrigger::Rollback,
        ]
        .into_iter()
        .find(|v| v.as_str() == s)
    }
}

/// A run: one or more attempts of one version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct Run {
    pub id: i64,
    pub workflow_id: i64,
    /// Its place among the workflow's runs (#1, #2 …), as a person counts them; `id` is the key.
    pub number: u32,
    pub version: Version,
    pub trigger: RunTrigger,
    pub status: RunStatus,
    /// The class of the last failed attempt.
    pub class: Option<FailureClass>,
    pub attempts: u32,
    pub queued_at: String,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    /// One line: "Succeeded in 1.2 s", "KeyError: 'total' (logic)".
    pub summary: String,
    /// The person chose to skip it at a checkpoint.
    pub skipped: bool,
    /// A recovery hint it ran with (`HEALER_RECOVERY_HINT`), from the Level-2 analyzer.
    pub hint: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum AttemptStatus {
    Running,
    Succeeded,
    Failed,
    Interrupted,
}

impl AttemptStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptStatus::Running => "running",
            AttemptStatus::Succeeded => "succeeded",
            AttemptStatus::Failed => "failed",
            AttemptStatus::Interrupted => "interrupted",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            AttemptStatus::Running,
            AttemptStatus::Succeeded,
            AttemptStatus::Failed,
            AttemptStatus::Interrupted,
        ]
        .into_iter()
        .find(|v| v.as_str() == s)
    }
}

/// One execution of the script.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct Attempt {
    pub id: i64,
    pub run_id: i64,
    pub number: u32,
    pub status: AttemptStatus,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub duration_ms: Option<u32>,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub class: Option<FailureClass>,
    pub evidence: Option<Evidence>,
    /// Captured output; when it was larger than the cap, head and tail with a marker between.
    pub stdout: String,
    pub stderr: String,
    /// Bytes left out of the middle of each stream.
    pub stdout_cut: u64,
    pub stderr_cut: u64,
    /// What the script wrote to the file named in HEALER_RESULT (JSON text), if anything.
    pub result: Option<String>,
    /// Anything Healer itself has to say about this attempt ("retrying in 2 s").
    pub note: Option<String>,
    /// The cluster worker that ran it (`None`: this computer).
    pub worker: Option<String>,
}

/// A run with its attempts, for the run view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct RunDetail {
    pub run: Run,
    pub attempts: Vec<Attempt>,
    /// What was installed into the workflow's environment before this run, and how it went.
    pub setup: Option<String>,
}

/// A row of the workflows list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct WorkflowSummary {
    pub id: i64,
    pub name: String,
    pub title: String,
    pub status: WorkflowStatus,
    pub runtime: Runtime,
    /// "Every day at 07:00", "Every 15 minutes", "Only when run by hand".
    pub schedule_text: String,
    pub version: Version,
    pub last_run: Option<Run>,
    pub next_run_at: Option<String>,
    /// A run is queued or running now.
    pub busy: bool,
    /// A maintainer task is repairing it.
    pub healing: bool,
    /// Flagged for review (fixed too often lately).
    pub review: bool,
}

/// Everything the workflow page shows at the top.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct WorkflowDetail {
    pub workflow: Workflow,
    pub active: ScriptVersion,
    pub schedule_text: String,
    pub next_run_at: Option<String>,
    pub folder: String,
}
