//! The engine's maintainer API: auto-fix tasks and their threads, and running a workflow until
//! the heal its failure starts is over.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::broadcast::error::RecvError;

use super::Handle;
use crate::error::{Error, Result};
use crate::failure::{Failure, FailureClass, FailureSource};
use crate::heal::HealRecord;
use crate::maintainer::inbox::drain;
use crate::maintainer::{AutoFix, AutoFixDetail, AutoFixStatus};
use crate::memory::DecisionKind;
use crate::scheduler::attempts::execute_run_here;
use crate::workflow::{Run, RunDetail, RunStatus};

/// How often a waiter looks at the store even without an event (work another process does).
const SETTLE_LOOK: Duration = Duration::from_millis(500);

/// A run and everything its failure set off: auto-fix tasks and the re-runs of their fixes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct HealedRun {
    /// The run that was asked for.
    pub first: RunDetail,
    /// The workflow's last run once all was over (the first, when nothing followed).
    pub last: Run,
    /// The auto-fix tasks it set off, oldest first.
    pub fixes: Vec<AutoFix>,
    /// One sentence: how it ended.
    pub outcome: String,
}

impl Handle {
    /// A workflow's auto-fix tasks, newest first.
    pub fn autofixes(&self, workflow_id: i64) -> Result<Vec<AutoFix>> {
        self.services.store.all_autofixes(Some(workflow_id), 200)
    }

    /// Auto-fix tasks of every workflow (or one), newest first.
    pub fn all_autofixes(&self, workflow_id: Option<i64>, limit: u32) -> Result<Vec<AutoFix>> {
        self.services.store.all_autofixes(workflow_id, limit)
    }

    /// One auto-fix with its thread and the code before and after.
    pub fn autofix_detail(&self, task_id: i64) -> Result<AutoFixDetail> {
        let store = &self.services.store;
        let fix = store.autofix(task_id)?;
        let thread = store.thread(task_id)?;
        let code = |v| -> Result<Option<String>> {
            match (fix.workflow_id, v) {
                (Some(w), Some(v)) => match store.version(w, v) {
                    Ok(s) => Ok(Some(s.code)),
                    Err(Error::NotFound { .. }) => Ok(None),
                    Err(e) => Err(e),
                },
                _ => Ok(None),
            }
        };
        let failed_summary = match fix.run_id {
            Some(run) => match store.run(run) {
                Ok(run) => Some(run.summary).filter(|s| !s.trim().is_empty()),
                Err(Error::NotFound { .. }) => None,
                Err(e) => return Err(e),
            },
            None => None,
        };
        Ok(AutoFixDetail {
            failed_code: code(fix.from_version)?,
            fixed_code: code(fix.to_version)?,
            failed_summary,
            fix,
            thread,
        })
    }

    /// "Try auto-fix again" on a workflow whose repair gave up: lift the hold and take its last
    /// failed run through the failure pipeline again now (a known fix, or a new repair task).
    pub async fn retry_autofix(&self, workflow_id: i64) -> Result<HealRecord> {
        let store = &self.services.store;
        let workflow = store.workflow(workflow_id)?;
        // A repair that gave up holds its error; one never started for want of a model left
        // a notice instead. Either is what "try again" lifts.
        if !store.release_repairs(workflow_id)? && !store.waits_for_a_model(workflow_id)? {
            return Err(Error::InvalidInput(format!(
                "\u{201c}{}\u{201d} has no repair waiting for you: nothing to try again",
                workflow.title
            )));
        }
        store.log_decision(
            Some(workflow_id),
            DecisionKind::RepairsResumed,
            "Try auto-fix again: a new repair of the last failure",
            "",
        )?;
        let run = store
            .list_runs(workflow_id, None, 50)?
            .into_iter()
            .find(|r| r.status == RunStatus::Failed)
            .ok_or_else(|| {
                Error::InvalidInput(format!(
                    "\u{201c}{}\u{201d} has no failed run to repair",
                    workflow.title
                ))
            })?;
        let detail = store.run_detail(run.id)?;
        let attempt = detail
            .attempts
            .iter()
            .rev()
            .find(|a| a.class.is_some())
            .ok_or_else(|| Error::Internal(format!("run {} has no failed attempt", run.id)))?;
        let failure = Failure::new(
            FailureSource::ScriptRun {
                workflow_id,
                run_id: run.id,
            },
            "script-run",
            attempt.class.unwrap_or(FailureClass::Unknown),
            attempt.evidence.clone().unwrap_or_default(),
        );
        self.services.heal(failure).await
    }

    /// Do a workflow's waiting task work (auto-fix, chat turns) here and now, in order: for an
    /// engine without the scheduler. Returns whether there was any.
    pub async fn work_inbox(&self, workflow_id: i64) -> Result<bool> {
        drain(&self.services, workflow_id).await
    }

    /// Run a workflow's queued runs here and now (an engine without the scheduler), with the
    /// task work they set off.
    pub async fn work_queued_runs(&self, workflow_id: i64) -> Result<()> {
        self.settle_here(workflow_id).await
    }

    /// Run a workflow now and wait for the run and for the heal its failure starts: the
    /// maintainer task, the re-run of its fix, and any repair after that, until the workflow
    /// has no run and no task work open.
    pub async fn run_until_healed(&self, workflow_id: i64) -> Result<HealedRun> {
        let floor = self
            .services
            .store
            .all_autofixes(Some(workflow_id), 1)?
            .first()
            .map_or(0, |f| f.task_id);
        let first = self.run_and_wait(workflow_id).await?;
        if self.inner.scheduling {
            self.wait_until_settled(workflow_id).await?;
        } else {
            self.settle_here(workflow_id).await?;
        }
        let mut fixes: Vec<AutoFix> = self
            .services
            .store
            .all_autofixes(Some(workflow_id), 100)?
            .into_iter()
            .filter(|f| f.task_id > floor)
            .collect();
        fixes.reverse();
        let last = self
            .services
            .store
            .list_runs(workflow_id, None, 1)?
            .into_iter()
            .next()
            .unwrap_or_else(|| first.run.clone());
        // A version Healer made itself (a package installed) says what it changed.
        let by_healer = self
            .services
            .store
            .version(workflow_id, last.version)
            .ok()
            .filter(|v| {
                v.author == crate::workflow::Author::Healer && last.version != first.run.version
            })
            .map(|v| v.change_comment);
        let outcome = describe_outcome(&first.run, &last, &fixes, by_healer.as_deref());
        Ok(HealedRun {
            first,
            last,
            fixes,
            outcome,
        })
    }

    /// No scheduler here (a CLI command's own engine): do the task work and the re-runs in
    /// place, until none is left.
    async fn settle_here(&self, workflow_id: i64) -> Result<()> {
        loop {
            let mut did = drain(&self.services, workflow_id).await?;
            let queued = self
                .services
                .store
                .queued_runs()?
                .into_iter()
                .find(|(_, w)| *w == workflow_id);
            if let Some((run_id, _)) = queued {
                if self.services.store.claim_run(run_id)? {
                    execute_run_here(&self.services, run_id, workflow_id).await;
                    did = true;
                }
            }
            if !did {
                return Ok(());
            }
        }
    }

    /// Wait until the workflow has no open run and no open task work.
    async fn wait_until_settled(&self, workflow_id: i64) -> Result<()> {
        let mut events = self.services.bus.subscribe();
        loop {
            let store = &self.services.store;
            let open_run = store
                .list_runs(workflow_id, None, 1)?
                .first()
                .is_some_and(|r| matches!(r.status, RunStatus::Queued | RunStatus::Running));
            if !open_run && !store.has_open_inbox_items(workflow_id)? {
                return Ok(());
            }
            if let Ok(Err(RecvError::Closed)) =
                tokio::time::timeout(SETTLE_LOOK, events.recv()).await
            {
                return Err(Error::EngineUnavailable(
                    "the Healer engine stopped while the workflow was healing; the repair will be looked at again when it starts".to_string(),
                ));
            }
        }
    }

    /// Wait until an inbox item is done (work here when there is no scheduler).
    pub(crate) async fn wait_for_item(&self, workflow_id: i64, item_id: i64) -> Result<()> {
        if !self.inner.scheduling {
            drain(&self.services, workflow_id).await?;
        }
        let mut events = self.services.bus.subscribe();
        while !self.services.store.inbox_item_done(item_id)? {
            if let Ok(Err(RecvError::Closed)) =
                tokio::time::timeout(SETTLE_LOOK, events.recv()).await
            {
                return Err(Error::EngineUnavailable(
                    "the Healer engine stopped before the planner answered; send the message again"
                        .to_string(),
                ));
            }
        }
        Ok(())
    }
}

fn describe_outcome(first: &Run, last: &Run, fixes: &[AutoFix], by_healer: Option<&str>) -> String {
    if first.status == RunStatus::Succeeded {
        return format!("Run #{} succeeded; nothing to heal", first.number);
    }
    if let (Some(change), RunStatus::Succeeded) = (by_healer, last.status) {
        if fixes.is_empty() {
            return format!(
                "Healed: {change} ({} → {}) and run #{} succeeded",
                first.version, last.version, last.number
            );
        }
    }
    let fixed: Vec<String> = fixes
        .iter()
        .filter_map(|f| match (f.status, f.from_version, f.to_version) {
            (AutoFixStatus::Fixed, Some(a), Some(b)) => Some(format!("{a} → {b}")),
            _ => None,
        })
        .collect();
    if last.id != first.id && last.status == RunStatus::Succeeded {
        return format!(
            "Healed: fixed {} and run #{} of version {} succeeded",
            fixed.join(", then "),
            last.number,
            last.version
        );
    }
    match fixes.last() {
        None => format!(
            "Run #{} failed and no automatic repair started: {}",
            first.number, first.summary
        ),
        Some(f) if f.status == AutoFixStatus::GaveUp => format!(
            "Not healed: the auto-fix gave up — {}; the person was asked to Re-plan",
            f.summary
        ),
        Some(f) => format!(
            "Not healed: the last run (#{}) {}: {} (the auto-fix {})",
            last.number,
            last.status.as_str(),
            last.summary,
            match f.status {
                AutoFixStatus::Working => "is still working",
                AutoFixStatus::Fixed => "made a fix that did not hold",
                AutoFixStatus::Stale => "was overtaken by a newer version",
                AutoFixStatus::GaveUp => "gave up",
                AutoFixStatus::Interrupted => "was interrupted",
            }
        ),
    }
}
