//! The maintainer: when a script fails on a logic error, one bounded repair task per failure
//! reads the evidence, tries fixes in the sandbox, and stores a fix as the next minor version —
//! or gives up with an explanation that reaches the person with a Re-plan button.
//!
//! Entering maintenance is a remedy of the failure pipeline ([`Maintain`]); the task itself
//! runs from the inbox ([`inbox`]), where planner items go before maintainer items and one item
//! per workflow runs at a time.

pub(crate) mod context;
mod escalate;
pub(crate) mod inbox;
mod job;

pub use job::TIERS_BY_ATTEMPT;
mod remedy;
mod tools;

use serde::{Deserialize, Serialize};

use crate::llm::TaskThread;
use crate::workflow::Version;

pub use escalate::escalate;
pub(crate) use escalate::first_line;
pub use remedy::Maintain;
pub(crate) use tools::{record_fix, scratch_root};

/// Settings key: automatic fixes in a row before the person is asked (default 3).
pub const MAX_FIX_ATTEMPTS: &str = "maintainer.max_fix_attempts";
pub const DEFAULT_MAX_FIX_ATTEMPTS: u32 = 3;

/// How an auto-fix task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum AutoFixStatus {
    /// Waiting its turn or working.
    Working,
    /// Its fix is stored as the next minor version.
    Fixed,
    /// Its fix was not applied: the script changed to a new major meanwhile.
    Stale,
    /// It found no fix; the person was asked.
    GaveUp,
    /// Healer stopped while it worked.
    Interrupted,
}

impl AutoFixStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            AutoFixStatus::Working => "working",
            AutoFixStatus::Fixed => "fixed",
            AutoFixStatus::Stale => "stale",
            AutoFixStatus::GaveUp => "gave_up",
            AutoFixStatus::Interrupted => "interrupted",
        }
    }

    /// The stored outcome (`None`: still working).
    pub fn parse_outcome(s: Option<&str>) -> Option<Self> {
        match s {
            None => Some(AutoFixStatus::Working),
            Some("fixed") => Some(AutoFixStatus::Fixed),
            Some("stale") => Some(AutoFixStatus::Stale),
            Some("gave_up") => Some(AutoFixStatus::GaveUp),
            Some("interrupted") => Some(AutoFixStatus::Interrupted),
            Some(_) => None,
        }
    }
}

/// One maintainer task as the Auto-fix tab lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct AutoFix {
    pub task_id: i64,
    pub workflow_id: Option<i64>,
    pub title: String,
    pub status: AutoFixStatus,
    /// The failed run it repairs.
    pub run_id: Option<i64>,
    /// The version that failed ("1.0").
    pub from_version: Option<Version>,
    /// The version its fix became ("1.1").
    pub to_version: Option<Version>,
    pub fix_comment: Option<String>,
    /// How the task ended, in words (the loop's summary or the reason it gave up).
    pub summary: String,
    /// Tokens its model calls used.
    pub tokens: u64,
    pub created_at: String,
    pub finished_at: Option<String>,
}

/// An auto-fix with its whole thread and the code before and after.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct AutoFixDetail {
    pub fix: AutoFix,
    pub thread: TaskThread,
    /// The failed version's code.
    pub failed_code: Option<String>,
    /// The fix's code, once stored.
    pub fixed_code: Option<String>,
}

/// What an inbox item asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InboxKind {
    Planner,
    Maintainer,
}

impl InboxKind {
    pub fn as_str(self) -> &'static str {
        match self {
            InboxKind::Planner => "planner",
            InboxKind::Maintainer => "maintainer",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "planner" => Some(InboxKind::Planner),
            "maintainer" => Some(InboxKind::Maintainer),
            _ => None,
        }
    }
}

/// Work waiting for a task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InboxItem {
    pub id: i64,
    pub workflow_id: i64,
    pub task_id: i64,
    pub kind: InboxKind,
    /// A maintainer item's failed run.
    pub run_id: Option<i64>,
    /// A planner item's message from the person.
    pub message: Option<String>,
}

/// What entering maintenance did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entered {
    /// A maintainer task and its inbox item exist now.
    Started { task_id: i64, item_id: i64 },
    /// The fix count has reached the limit: the person must decide.
    Exhausted { fix_count: u32 },
}

/// What the `fix` tool's transaction did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FixResult {
    /// Stored as `version`, made active; `rerun` is the queued re-run (none if a run was open).
    Applied {
        version: Version,
        rerun: Option<i64>,
    },
    /// The workflow is on another major now: nothing stored.
    Stale { active: Version },
}
