//! Circuit breakers: runaway healing stops itself, and each stop is an event and a visible
//! state. Systemic (one signature in several workflows within an hour → SYSTEMIC checkpoint,
//! repairs for it paused until decided), cost (a workflow's healing tokens in a day → COST
//! checkpoint), review (fixed too often in a week → badge and notification), the fix's judge (a
//! fix whose re-run fails earlier or no longer loads is rolled back), survivors (processes runs
//! left behind, while enough live → scheduled runs wait), and the catastrophic rollback after
//! repeated failed repairs.

mod judge;
mod rollback;
mod survivors;

use async_trait::async_trait;
use chrono::Utc;
use serde::{Deserialize, Serialize};

/// The scheduler keeps its pause; the survivors breaker sets it.
pub use crate::scheduler::{paused as scheduler_paused, SCHEDULER_PAUSED};
pub use judge::{RollbackBadFix, Superseded, DEFAULT_TRANSIENT_RERUNS, TRANSIENT_RERUNS};
pub(crate) use rollback::catastrophic_rollback;
pub use rollback::RollbackFailedToo;
pub(crate) use survivors::{check_survivors, resume_scheduler};

use crate::checkpoint::{
    standard_options, CheckpointAction, CheckpointOption, CheckpointTrigger, NewCheckpoint,
};
use crate::error::Result;
use crate::events::Event;
use crate::failure::Failure;
use crate::heal::{
    not_a_script_run, HealContext, Remedy, RemedyReport, RemedyStatus, ScriptFailure,
};
use crate::memory::DecisionKind;
use crate::notification::{NewNotification, NotificationKind};
use crate::scheduler::stamp;
use crate::services::Services;

/// Settings key for the breakers' thresholds.
pub const BREAKERS: &str = "breakers";

/// Settings key prefix: extra healing tokens allowed today for a workflow (COST checkpoints:
/// "Allow more" raises it, the cost breaker reads it).
pub const EXTRA_TOKENS_PREFIX: &str = "healing.extra_tokens.";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(default)]
pub struct BreakerSettings {
    /// The same signature in this many different workflows …
    pub systemic_workflows: u32,
    /// … within this many seconds.
    pub systemic_window_secs: u32,
    /// Healing tokens one workflow may use in a day.
    pub daily_healing_tokens: u32,
    /// What "Allow more" adds.
    pub allow_more_tokens: u32,
    /// More fixes than this …
    pub review_fixes: u32,
    /// … in this many days flags a workflow for review.
    pub review_days: u32,
    /// Live processes left behind by ended runs at which scheduled runs wait.
    pub surviving_groups: u32,
}

impl Default for BreakerSettings {
    fn default() -> Self {
        BreakerSettings {
            systemic_workflows: 3,
            systemic_window_secs: 3600,
            // A typical repair of a 150-line script reads and writes about 33k tokens
            // (`make bench`): a day's allowance covers the fix attempts in a row, once each.
            daily_healing_tokens: 150_000,
            allow_more_tokens: 50_000,
            review_fixes: 5,
            review_days: 7,
            surviving_groups: 3,
        }
    }
}

pub fn settings(store: &crate::store::Store) -> Result<BreakerSettings> {
    Ok(store
        .setting::<BreakerSettings>(BREAKERS)?
        .unwrap_or_default())
}

fn ago(secs: u32) -> String {
    stamp(Utc::now() - chrono::Duration::seconds(i64::from(secs)))
}

/// Tell the bus and the decisions log that a breaker tripped.
pub(crate) fn tripped(
    services: &Services,
    breaker: DecisionKind,
    workflow_id: Option<i64>,
    summary: &str,
    detail: &str,
) -> Result<()> {
    services
        .store
        .log_decision(workflow_id, breaker, summary, detail)?;
    services.bus.emit(Event::BreakerTripped {
        breaker,
        workflow_id,
        detail: summary.to_string(),
    })?;
    Ok(())
}

fn contained(detail: String) -> RemedyReport {
    RemedyReport {
        status: RemedyStatus::Contained,
        detail,
    }
}

fn pass(detail: &str) -> RemedyReport {
    RemedyReport {
        status: RemedyStatus::NotResolved,
        detail: detail.to_string(),
    }
}

/// The systemic breaker: repairs wait while one error spreads. It counts failures of every
/// class (a missing module, a dead host or an expired key are the usual shared causes), raises
/// one checkpoint per signature that names every workflow it hit, and while that checkpoint
/// waits, a failure with the error in any workflow joins its list instead of costing a repair.
pub struct SystemicBreaker;

#[async_trait]
impl Remedy for SystemicBreaker {
    fn name(&self) -> &'static str {
        "systemic_breaker"
    }

    async fn apply(
        &self,
        cx: &HealContext<'_>,
        _heal_id: i64,
        failure: &Failure,
    ) -> Result<RemedyReport> {
        let Some(ScriptFailure {
            services,
            workflow_id,
            run_id,
        }) = cx.script_run(failure)
        else {
            return Ok(not_a_script_run());
        };
        let store = &services.store;
        let limits = settings(store)?;
        let since = ago(limits.systemic_window_secs);
        let trigger = CheckpointTrigger::Systemic.as_str();
        if let Some(id) = store.pending_checkpoint_for_signature(trigger, &failure.signature)? {
            if store.add_affected(id, workflow_id, run_id)? {
                services.bus.emit(Event::CheckpointUpdated {
                    checkpoint: store.checkpoint(id)?,
                })?;
            }
            return Ok(contained(format!(
                "repairs for this error wait until you decide checkpoint {id}"
            )));
        }
        if let Some((_, false)) =
            store.checkpoint_for_signature_since(trigger, &failure.signature, &since)?
        {
            // Decided within the window: the person has seen it; repairs go on.
            return Ok(pass("decided recently"));
        }
        let hits = store.workflow_runs_hit_since(&failure.signature, &since)?;
        if u32::try_from(hits.len()).unwrap_or(u32::MAX) < limits.systemic_workflows {
            return Ok(pass("not spreading"));
        }
        let context = format!(
            "The same error failed {} workflows within {} minutes.\nThe error: {}\n\
             Automatic repairs for it wait until you decide, and these workflows do not run on \
             their schedules meanwhile: one cause (a changed data source, a service that is \
             down, an expired key, something missing on this machine) is more likely than {} \
             separate problems.",
            hits.len(),
            limits.systemic_window_secs / 60,
            failure.summary(),
            hits.len()
        );
        let c = services.raise_checkpoint(NewCheckpoint {
            project_task: None,
            trigger: CheckpointTrigger::Systemic,
            workflow_id: None,
            run_id: Some(run_id),
            task_id: None,
            signature: Some(failure.signature.clone()),
            context,
            options: vec![
                CheckpointOption::new(
                    "Proceed",
                    "Let repairs go on: run each of them again now",
                    CheckpointAction::Proceed,
                ),
                CheckpointOption::new(
                    "Skip",
                    "Leave these failed runs as they are; their schedules go on",
                    CheckpointAction::Skip,
                ),
                CheckpointOption::new(
                    "Pause",
                    "Pause every workflow that failed with it until you resume it",
                    CheckpointAction::Pause,
                ),
            ],
            affected: hits,
            situation: None,
        })?;
        let titles: Vec<String> = c
            .affected
            .iter()
            .map(|a| format!("\u{201c}{}\u{201d}", a.title))
            .collect();
        tripped(
            services,
            DecisionKind::Systemic,
            None,
            &format!(
                "The same error in {} workflows within the hour ({}); repairs for it wait for \
                 your answer to Healer's question",
                c.affected.len(),
                titles.join(", "),
            ),
            &failure.signature,
        )?;
        // One question for all of them: those its workflows were asked on their own about this
        // error are answered by this one.
        let named: Vec<i64> = c.affected.iter().map(|a| a.workflow_id).collect();
        for folded in store.fold_checkpoints(c.id, &failure.signature, &named)? {
            services.bus.emit(Event::CheckpointUpdated {
                checkpoint: store.checkpoint(folded)?,
            })?;
        }
        Ok(contained(format!(
            "systemic: checkpoint {} asks the person; repairs for this error wait",
            c.id
        )))
    }
}

/// The cost breaker: a workflow's healing stops at its daily token allowance.
pub struct CostBreaker;

#[async_trait]
impl Remedy for CostBreaker {
    fn name(&self) -> &'static str {
        "cost_breaker"
    }

    async fn apply(
        &self,
        cx: &HealContext<'_>,
        _heal_id: i64,
        failure: &Failure,
    ) -> Result<RemedyReport> {
        let Some(ScriptFailure {
            services,
            workflow_id,
            run_id,
        }) = cx.script_run(failure)
        else {
            return Ok(not_a_script_run());
        };
        let store = &services.store;
        let limits = settings(store)?;
        let today = crate::llm::today();
        let used = store.healing_tokens_on(workflow_id, &today)?;
        let extra = store
            .setting::<(String, u64)>(&format!("{EXTRA_TOKENS_PREFIX}{workflow_id}"))?
            .filter(|(day, _)| *day == today)
            .map_or(0, |(_, n)| n);
        let allowance = u64::from(limits.daily_healing_tokens) + extra;
        if used < allowance {
            return Ok(pass("within today's healing tokens"));
        }
        if let Some(id) =
            store.pending_checkpoint_of(workflow_id, CheckpointTrigger::Cost.as_str())?
        {
            return Ok(contained(format!("waiting for cost checkpoint {id}")));
        }
        let title = store.workflow(workflow_id)?.title;
        let more = limits.allow_more_tokens;
        let mut options = vec![CheckpointOption::new(
            &format!("Allow {}k more", more / 1000),
            &format!("Let repairs use {more} more tokens today, then run it again"),
            CheckpointAction::AllowTokens { tokens: more },
        )];
        options.extend(
            standard_options()
                .into_iter()
                .filter(|o| o.action != CheckpointAction::Proceed),
        );
        let c = services.raise_checkpoint(NewCheckpoint {
            project_task: None,
            trigger: CheckpointTrigger::Cost,
            workflow_id: Some(workflow_id),
            run_id: Some(run_id),
            task_id: None,
            signature: Some(failure.signature.clone()),
            context: format!(
                "Repairing \u{201c}{title}\u{201d} used {used} tokens today (the allowance is \
                 {allowance}). It failed again: {}.",
                failure.summary()
            ),
            options,
            affected: Vec::new(),
            situation: None,
        })?;
        tripped(
            services,
            DecisionKind::Cost,
            Some(workflow_id),
            &format!(
                "Healing used {used} of {allowance} tokens today; checkpoint {} asks",
                c.id
            ),
            "",
        )?;
        Ok(contained(format!(
            "cost: checkpoint {} asks the person",
            c.id
        )))
    }
}

/// After a fix is stored: flag the workflow for review when it was fixed too often lately.
pub(crate) fn check_review(services: &Services, workflow_id: i64) -> Result<()> {
    let limits = settings(&services.store)?;
    let since = ago(limits.review_days.saturating_mul(86_400));
    let fixes = services.store.fixes_since(workflow_id, &since)?;
    if fixes <= limits.review_fixes || !services.store.set_review(workflow_id, true)? {
        return Ok(());
    }
    let title = services.store.workflow(workflow_id)?.title;
    let mut new = NewNotification::new(
        NotificationKind::Review,
        format!("\u{201c}{title}\u{201d} needs a look"),
        format!(
            "Healer repaired its script {fixes} times in the last {} days. The repairs work, but \
             something keeps changing under it: look at the auto-fix history, or Re-plan it.",
            limits.review_days
        ),
    );
    new.workflow_id = Some(workflow_id);
    new.actions = vec![crate::notification::NotificationAction::Replan];
    let n = services.store.insert_notification(&new)?;
    services
        .bus
        .emit(Event::NotificationCreated { notification: n })?;
    tripped(
        services,
        DecisionKind::Review,
        Some(workflow_id),
        &format!(
            "Fixed {fixes} times in {} days: flagged for review",
            limits.review_days
        ),
        "",
    )
}
