//! Checkpoints: blocking decisions a person answers (Proceed / Skip / Pause, and a trigger's
//! own options), with a recommendation drawn from what they chose before. The work that raised
//! one waits without holding anything: the scheduler leaves the workflow alone while it is
//! pending, and deciding it (now, or after a restart) does what the chosen option says.

mod recommend;

use serde::{Deserialize, Serialize};

pub use recommend::{recommend, recommend_with, History, Recommendation};

/// Why Healer stopped to ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum CheckpointTrigger {
    /// A failure Healer could not get past on its own.
    Hiccup,
    /// Healing would spend more than the budget allows.
    Cost,
    /// The same error in several workflows at once.
    Systemic,
    /// Something is missing or wrong on this machine.
    Environment,
    /// A change that needs the person's approval.
    Approval,
}

impl CheckpointTrigger {
    pub fn as_str(self) -> &'static str {
        match self {
            CheckpointTrigger::Hiccup => "hiccup",
            CheckpointTrigger::Cost => "cost",
            CheckpointTrigger::Systemic => "systemic",
            CheckpointTrigger::Environment => "environment",
            CheckpointTrigger::Approval => "approval",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            CheckpointTrigger::Hiccup,
            CheckpointTrigger::Cost,
            CheckpointTrigger::Systemic,
            CheckpointTrigger::Environment,
            CheckpointTrigger::Approval,
        ]
        .into_iter()
        .find(|t| t.as_str() == s)
    }

    /// The dialog's title.
    pub fn title(self) -> &'static str {
        match self {
            CheckpointTrigger::Hiccup => "A run keeps failing",
            CheckpointTrigger::Cost => "Healing is getting expensive",
            CheckpointTrigger::Systemic => "The same error in several workflows",
            CheckpointTrigger::Environment => "Something is missing on this machine",
            CheckpointTrigger::Approval => "Your approval is needed",
        }
    }
}

/// What choosing an option does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CheckpointAction {
    /// Continue: run the workflow again now.
    Proceed,
    /// Mark this run skipped and go on with the next scheduled one.
    Skip,
    /// Pause the workflow until the person resumes it.
    Pause,
    /// Allow more healing tokens today, then run again.
    AllowTokens { tokens: u32 },
    /// Install the package the person names (in the decision's notes) into the workflow's own
    /// environment, then run again.
    InstallPackage,
    /// An agent's request: let it do this once.
    AllowOnce,
    /// An agent's request: let it do this kind of thing for the rest of the task.
    AllowTask,
    /// An agent's request: let it do this kind of thing in the project from now on.
    AllowAlways,
    /// An agent's request: refuse it; the agent is told why (the decision's notes).
    Deny,
}

impl CheckpointAction {
    /// A stable key for comparing choices across checkpoints ("allow_tokens" for any amount).
    pub fn key(self) -> &'static str {
        match self {
            CheckpointAction::Proceed => "proceed",
            CheckpointAction::Skip => "skip",
            CheckpointAction::Pause => "pause",
            CheckpointAction::AllowTokens { .. } => "allow_tokens",
            CheckpointAction::InstallPackage => "install_package",
            CheckpointAction::AllowOnce => "allow_once",
            CheckpointAction::AllowTask => "allow_task",
            CheckpointAction::AllowAlways => "allow_always",
            CheckpointAction::Deny => "deny",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct CheckpointOption {
    pub label: String,
    pub description: String,
    pub action: CheckpointAction,
    pub recommended: bool,
}

impl CheckpointOption {
    pub fn new(label: &str, description: &str, action: CheckpointAction) -> Self {
        CheckpointOption {
            label: label.to_string(),
            description: description.to_string(),
            action,
            recommended: false,
        }
    }
}

/// The standard options: Proceed, Skip, Pause.
pub fn standard_options() -> Vec<CheckpointOption> {
    vec![
        CheckpointOption::new("Proceed", "Run it again now", CheckpointAction::Proceed),
        CheckpointOption::new(
            "Skip",
            "Leave this run as it is and go on with the next scheduled one",
            CheckpointAction::Skip,
        ),
        CheckpointOption::new(
            "Pause",
            "Stop running it until you resume it",
            CheckpointAction::Pause,
        ),
    ]
}

/// What the Level-2 analyzer chose to do about a failure (the `recoveries` table keeps it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum RecoveryAction {
    /// Run it again with a hint (`HEALER_RECOVERY_HINT`).
    Alternative,
    /// Collect facts about the machine and ask the person.
    Diagnostics,
    /// Release Healer's own stuck state and run again.
    Unblock,
    /// Ask the person.
    Escalate,
}

impl RecoveryAction {
    pub fn as_str(self) -> &'static str {
        match self {
            RecoveryAction::Alternative => "alternative",
            RecoveryAction::Diagnostics => "diagnostics",
            RecoveryAction::Unblock => "unblock",
            RecoveryAction::Escalate => "escalate",
        }
    }
}

/// How a checkpoint was decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct Decision {
    /// The chosen option's number (1-based, as shown).
    pub option: u32,
    pub notes: Option<String>,
    pub decided_at: String,
    /// What Healer did about it, in words.
    pub outcome: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct Checkpoint {
    pub id: i64,
    pub trigger: CheckpointTrigger,
    /// The dialog's title: what happened, in words that fit it (the trigger's own by default).
    pub title: String,
    /// The work it belongs to.
    pub workflow_id: Option<i64>,
    pub run_id: Option<i64>,
    /// The run's number among its workflow's runs (#1, #2 …), for showing.
    pub run_number: Option<u32>,
    pub task_id: Option<i64>,
    /// The workflow's title, for showing.
    pub workflow_title: Option<String>,
    /// The error signature it is about, if any.
    pub signature: Option<String>,
    /// What happened, the goal, the error.
    pub context: String,
    pub options: Vec<CheckpointOption>,
    /// One sentence: which option and why.
    pub recommendation: String,
    pub created_at: String,
    /// `None` while pending.
    pub decision: Option<Decision>,
    /// When it is about several workflows (SYSTEMIC): each of them and its failed run.
    /// Deciding acts on every one.
    pub affected: Vec<AffectedWorkflow>,
    /// When it is about a project's task: the project and the task, by name.
    pub project_task: Option<ProjectTaskRef>,
    /// When an agent asked: what it wants to do, why it asks, where the question stands.
    pub agent_request: Option<crate::approval::AgentAsk>,
}

/// A project's task a checkpoint is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct ProjectTaskRef {
    pub project_id: i64,
    pub project_name: String,
    pub task_id: String,
    pub task_title: String,
}

/// A workflow a checkpoint about several workflows names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct AffectedWorkflow {
    pub workflow_id: i64,
    pub title: String,
    /// Its latest run that failed with the error.
    pub run_id: Option<i64>,
}

impl Checkpoint {
    /// The recommended option's number (1-based).
    pub fn recommended(&self) -> u32 {
        self.options
            .iter()
            .position(|o| o.recommended)
            .map_or(1, |i| u32::try_from(i + 1).unwrap_or(1))
    }

    /// The checkpoint as the CLI prints it.
    pub fn formatted(&self) -> String {
        let mut text = format!("Checkpoint {} — {}", self.id, self.title);
        if let Some(title) = &self.workflow_title {
            text.push_str(&format!(" (\u{201c}{title}\u{201d})"));
        }
        text.push_str("\n\n");
        text.push_str(self.context.trim());
        text.push_str("\n\n");
        if !self.affected.is_empty() {
            text.push_str("Workflows that failed with it:\n");
            for a in &self.affected {
                text.push_str(&format!("  - \u{201c}{}\u{201d}\n", a.title));
            }
            text.push('\n');
        }
        for (i, o) in self.options.iter().enumerate() {
            let mark = if o.recommended { " (recommended)" } else { "" };
            text.push_str(&format!(
                "  [{}] {}{mark} — {}\n",
                i + 1,
                o.label,
                o.description
            ));
        }
        text.push_str(&format!("\nRecommendation: {}\n", self.recommendation));
        text
    }
}

/// A checkpoint to raise.
#[derive(Debug, Clone)]
pub struct NewCheckpoint {
    pub trigger: CheckpointTrigger,
    pub workflow_id: Option<i64>,
    pub run_id: Option<i64>,
    pub task_id: Option<i64>,
    pub signature: Option<String>,
    pub context: String,
    /// Without recommendation flags: [`recommend`] sets them.
    pub options: Vec<CheckpointOption>,
    /// The workflows (and their failed runs) it is about, when more than one.
    pub affected: Vec<(i64, i64)>,
    /// What happened, when the trigger alone says too little (a time limit is not "a run
    /// keeps failing").
    pub situation: Option<Situation>,
    /// The project's task it is about: (project id, task id, task title).
    pub project_task: Option<(i64, String, String)>,
}

/// A checkpoint's own title, and what to recommend when the person has no history to go by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Situation {
    pub title: String,
    pub recommend: CheckpointAction,
    /// Why, as the end of "Skip — …".
    pub why: String,
    /// Only past answers for the same signature count, said this way ("for this kind of
    /// request in this project"); `None`: every scope counts.
    pub past: Option<String>,
}

/// Pending checkpoints (oldest first) and decided ones (newest first).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct CheckpointList {
    pub pending: Vec<Checkpoint>,
    pub decided: Vec<Checkpoint>,
}
