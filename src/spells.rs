//! The healer service for projects: when a task's init script, verification or agent fails,
//! it wakes (policy), looks (context), chooses spells by rules (plan), casts them in order —
//! rewinding only after pinning a snapshot, asking first in conservative mode — re-checks
//! what a spell claims to have fixed, and records one invocation with every spell and its
//! outcome. It reaches the pipeline as one remedy (`healer_service`) that hands the failure
//! over; the service's own loop does the work, so the pipeline and the runner never wait for
//! an agent a spell starts. See docs/healer-service.md for the rule table.

pub(crate) mod atif;
mod blocked;
mod context;
mod doctor;
mod plan;
mod policy;
mod progress;
mod rerun;
mod resume;
mod rewind;
mod scan;
mod service;
mod tell;

use async_trait::async_trait;

use crate::error::Result;
use crate::failure::Failure;
use crate::project::Projects;
use crate::services::Services;
use crate::store::{HealerConfig, Project};

pub use atif::{invocation_trajectory, session_trajectory_with_heals};
pub use context::InvocationContext;
pub use doctor::{doctor, Doctor};
pub use plan::{plan, Facts};
pub use policy::{should_run, Decision};
pub(crate) use resume::{resume, resume_answered};
pub use scan::{scan, StuckKind, StuckReport, StuckTask, REPEATED_SESSIONS, UNATTENDED_GRACE};
pub(crate) use service::run_loop;
pub use service::HealerService;

pub use crate::store::{
    HealerInvocation, HealerMode, HealerScenarios, InvocationStatus, SnapshotRecord, SpellRun,
};

/// Every spell's stable name, in the order the docs list them. Stored with every invocation:
/// a name never changes once shipped.
pub const SPELLS: [&str; 8] = [
    rewind::UNCOMMITTED,
    rewind::LAST_GREEN,
    blocked::NAME,
    rerun::MINIMAL,
    rerun::RESUME,
    rerun::TYPECHECK,
    progress::NAME,
    doctor::NAME,
];

/// What a spell reports.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpellReport {
    /// It did what it set out to do.
    pub success: bool,
    /// It claims the failure is fixed: the service checks again before saying resolved.
    pub claims_fix: bool,
    /// One sentence for a person.
    pub summary: String,
    pub snapshot_id: Option<i64>,
    pub followup_task: Option<String>,
    /// The person chose Pause: no further spell runs.
    pub stop: bool,
    /// It asked the person (this checkpoint) and is cast again with the answer: the invocation
    /// waits, stored, until then.
    pub waits_for: Option<i64>,
    /// The agent session it started (linked from the invocation's trajectory).
    pub session_id: Option<i64>,
}

impl SpellReport {
    pub(crate) fn done(summary: impl Into<String>) -> Self {
        SpellReport {
            success: true,
            summary: summary.into(),
            ..SpellReport::default()
        }
    }

    pub(crate) fn not_done(summary: impl Into<String>) -> Self {
        SpellReport {
            success: false,
            summary: summary.into(),
            ..SpellReport::default()
        }
    }
}

/// What a spell acts with.
#[derive(Clone, Copy)]
pub struct SpellContext<'a> {
    pub(crate) services: &'a Services,
    pub(crate) projects: &'a std::sync::Arc<Projects>,
    pub project: &'a Project,
    pub config: &'a HealerConfig,
    pub failure: &'a Failure,
    pub context: &'a InvocationContext,
    pub invocation_id: i64,
    /// The person's answer to the question this spell asked, when it is cast again with it.
    pub answer: Option<crate::checkpoint::CheckpointAction>,
}

#[async_trait]
pub trait Spell: Send + Sync {
    /// A stable snake_case name, stored with every invocation.
    fn name(&self) -> &'static str;

    /// It discards work (a rewind): in conservative mode the person is asked first.
    fn discards_work(&self) -> bool {
        false
    }

    async fn cast(&self, cx: &SpellContext<'_>) -> Result<SpellReport>;
}

/// The spell of a name.
pub fn spell(name: &str) -> Option<Box<dyn Spell>> {
    Some(match name {
        rewind::UNCOMMITTED => Box::new(rewind::RewindUncommitted),
        rewind::LAST_GREEN => Box::new(rewind::RewindToLastGreen),
        blocked::NAME => Box::new(blocked::MarkBlocked),
        rerun::MINIMAL => Box::new(rerun::MinimalSubagent),
        rerun::RESUME => Box::new(rerun::ResumeWithGuidance),
        rerun::TYPECHECK => Box::new(rerun::FixTypecheck),
        progress::NAME => Box::new(progress::ProgressGuidance),
        doctor::NAME => Box::new(doctor::TasksDoctor),
        _ => return None,
    })
}

/// A spell's name in words, for the window and the progress log.
pub fn spell_in_words(name: &str) -> &'static str {
    match name {
        rewind::UNCOMMITTED => "put the worktree back to its last commit (the changes are kept in a snapshot)",
        rewind::LAST_GREEN => "put the branch back to its last commit that passed the checks (the work is kept in a snapshot)",
        blocked::NAME => "marked the task blocked and wrote a follow-up task",
        rerun::MINIMAL => "retried with the built-in agent, told only the failure and the files it names",
        rerun::RESUME => "asked the agent to continue its own session, with the failure and guidance",
        rerun::TYPECHECK => "asked the agent to fix the type errors, then checked again",
        progress::NAME => "wrote a summary and next steps into the progress notes",
        doctor::NAME => "checked the task list for problems",
        _ => "tried a repair",
    }
}

/// How a session ended, in words.
pub(crate) fn status_words(status: crate::session::SessionStatus) -> &'static str {
    use crate::session::SessionStatus::*;
    match status {
        Running => "still running",
        Finished => "finished",
        Failed => "failed",
        TimedOut => "past its time limit",
        Stopped => "stopped",
        Interrupted => "interrupted",
    }
}
