//! The maintainer: when a script fails on a logic error, one bounded repair task per failure
//! reads the evidence, tries fixes in the sandbox, and stores a fix as the next minor version —
//! or gives up with an explanation that reaches the person with a Re-plan button.
//!
//! Entering maintenance is a remedy of the failure pipeline ([`Maintain`]); the task itself
//! runs from the inbox ([`inbox`]), where planner items go before maintainer items and one item
//! per workflow runs at a time.

pub(crate) mod context;
mod escalate;
mod held;
pub(crate) mod inbox;
mod job;
mod known_fix;

pub use job::{PROVIDER_WAITS, TIERS_BY_ATTEMPT};
mod remedy;
mod tools;

use serde::{Deserialize, Serialize};

use crate::llm::TaskThread;

pub(crate) use escalate::first_line;
pub use escalate::{escalate, KEEP_SCHEDULE_AFTER_GIVE_UP};
pub use held::HeldForPerson;
pub use known_fix::KnownFix;
pub use remedy::Maintain;
pub(crate) use tools::{record_fix, scratch_root};

/// The maintainer's records are kept by the store, beside their tables.
pub use crate::store::{AutoFix, AutoFixStatus, Entered, FixResult, InboxItem, InboxKind};

/// Settings key: automatic fixes in a row before the person is asked (default 3).
pub const MAX_FIX_ATTEMPTS: &str = "maintainer.max_fix_attempts";
pub const DEFAULT_MAX_FIX_ATTEMPTS: u32 = 3;

/// An auto-fix with its whole thread and the code before and after.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct AutoFixDetail {
    pub fix: AutoFix,
    pub thread: TaskThread,
    /// The failed version's code.
    pub failed_code: Option<String>,
    /// The fix's code, once stored.
    pub fixed_code: Option<String>,
    /// How the failed run it repairs ended, in the run's own words ("KeyError: 'total'
    /// (logic)"), for the person; the prompt the model got stays folded.
    pub failed_summary: Option<String>,
}
