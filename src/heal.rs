//! The one failure pipeline: policy → memory → plan → act → outcome.
//!
//! Every source of trouble becomes a [`Failure`] and goes through [`Pipeline::heal`]. The hooks
//! are traits so the remedies (circuit breakers, healing memory, the maintainer, recovery) plug
//! in without a second path — and without this module knowing them: the engine assembles the
//! remedy set (its `RulePlanner`) and hands it to [`Pipeline::new`]. Every step is stored in
//! `heals` / `heal_remedies` and announced on the bus.

mod plan;
mod policy;
mod remedy;

use crate::error::Result;
use crate::events::{Bus, Event};
use crate::failure::{Failure, FailureSource};
use crate::services::Services;
use crate::store::{now, Store};

pub use plan::Planner;
pub use policy::{Admission, Policy, SettingsPolicy, HEALING_ENABLED};
pub use remedy::{RecordAndNotify, Remedy, RemedyReport};

/// A heal's record is kept by the store, beside its table.
pub use crate::store::{HealRecord, Outcome, RemedyAttempt, RemedyStatus};

/// What remedies can reach while they act.
pub struct HealContext<'a> {
    pub store: &'a Store,
    pub bus: &'a Bus,
    /// The engine's services, for remedies that start work (model tasks, runs, checkpoints);
    /// `None` in a pipeline run on its own.
    pub(crate) services: Option<&'a Services>,
}

/// A script run's failure with the engine's services behind the pipeline: what most remedies
/// act on.
pub(crate) struct ScriptFailure<'a> {
    pub services: &'a Services,
    pub workflow_id: i64,
    pub run_id: i64,
}

/// What a remedy reports for a failure that is not a script run with an engine behind it.
pub(crate) fn not_a_script_run() -> RemedyReport {
    RemedyReport {
        status: RemedyStatus::NotResolved,
        detail: "only script runs with an engine behind them".to_string(),
    }
}

impl<'a> HealContext<'a> {
    /// The services and the run, when `failure` is a script run and an engine is behind this.
    pub(crate) fn script_run(&self, failure: &Failure) -> Option<ScriptFailure<'a>> {
        match (self.services, &failure.source) {
            (
                Some(services),
                FailureSource::ScriptRun {
                    workflow_id,
                    run_id,
                },
            ) => Some(ScriptFailure {
                services,
                workflow_id: *workflow_id,
                run_id: *run_id,
            }),
            _ => None,
        }
    }

    /// The context of a pipeline the engine runs.
    pub(crate) fn new(services: &'a Services) -> Self {
        HealContext {
            store: &services.store,
            bus: &services.bus,
            services: Some(services),
        }
    }

    /// A pipeline without an engine: remedies that need one report that they could not act.
    pub fn detached(store: &'a Store, bus: &'a Bus) -> Self {
        HealContext {
            store,
            bus,
            services: None,
        }
    }
}

/// Memory of earlier failures with the same signature. The healing-memory issue (#7) fills it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recollection {
    /// How many earlier heals had this signature.
    pub seen_before: u32,
}

/// The policy → memory → plan → act path, with its hooks.
pub struct Pipeline {
    policy: Box<dyn Policy>,
    planner: Box<dyn Planner>,
}

impl Pipeline {
    pub fn new(policy: Box<dyn Policy>, planner: Box<dyn Planner>) -> Self {
        Pipeline { policy, planner }
    }

    /// Take one failure through the whole path and return what happened.
    pub async fn heal(&self, cx: &HealContext<'_>, failure: Failure) -> Result<HealRecord> {
        let heal_id = cx.store.start_heal(&failure)?;
        cx.bus.emit(Event::HealStarted {
            heal_id,
            source: failure.source.describe(),
            scenario: failure.scenario.clone(),
            class: failure.class,
            signature: failure.signature.clone(),
            summary: failure.summary(),
        })?;

        let (outcome, summary) = match self.policy.admit(&failure, cx.store)? {
            Admission::Skip { reason } => (Outcome::Skipped, format!("Skipped: {reason}")),
            Admission::Proceed => {
                if let FailureSource::ScriptRun {
                    workflow_id,
                    run_id,
                } = failure.source
                {
                    cx.store
                        .record_pattern_hit(&failure, Some(workflow_id), Some(run_id))?;
                }
                let recollection = Recollection {
                    seen_before: cx.store.count_heals_with_signature(&failure.signature)?,
                };
                let remedies = self.planner.plan(&failure, &recollection);
                self.act(cx, heal_id, &failure, remedies).await?
            }
        };

        cx.store.finish_heal(heal_id, outcome, &summary)?;
        cx.bus.emit(Event::HealFinished {
            heal_id,
            outcome,
            summary,
        })?;
        cx.store.heal(heal_id)
    }

    /// Run remedies in order until one resolves or contains the failure.
    async fn act(
        &self,
        cx: &HealContext<'_>,
        heal_id: i64,
        failure: &Failure,
        remedies: Vec<Box<dyn Remedy>>,
    ) -> Result<(Outcome, String)> {
        let mut tried = Vec::new();
        for (position, remedy) in remedies.iter().enumerate() {
            let started_at = now();
            let report = match remedy.apply(cx, heal_id, failure).await {
                Ok(report) => report,
                Err(err) => RemedyReport {
                    status: RemedyStatus::Failed,
                    detail: err.to_string(),
                },
            };
            let attempt = RemedyAttempt {
                remedy: remedy.name().to_string(),
                status: report.status,
                detail: report.detail,
                started_at,
                finished_at: now(),
            };
            cx.store.add_remedy_attempt(heal_id, position, &attempt)?;
            cx.bus.emit(Event::RemedyApplied {
                heal_id,
                remedy: attempt.remedy.clone(),
                status: attempt.status,
                detail: attempt.detail.clone(),
            })?;
            tried.push(attempt.remedy.clone());
            if attempt.status.ends_the_heal() {
                return Ok((
                    outcome_of(attempt.status),
                    format!("{}: {}", attempt.remedy, attempt.detail),
                ));
            }
        }
        let summary = if tried.is_empty() {
            "No remedy fits this failure".to_string()
        } else {
            format!("No remedy worked (tried: {})", tried.join(", "))
        };
        Ok((Outcome::Unresolved, summary))
    }
}

fn outcome_of(status: RemedyStatus) -> Outcome {
    match status {
        RemedyStatus::Resolved => Outcome::Resolved,
        RemedyStatus::Contained => Outcome::Contained,
        RemedyStatus::NotResolved | RemedyStatus::Failed => Outcome::Unresolved,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_resolved_and_contained_end_a_heal() {
        assert!(RemedyStatus::Resolved.ends_the_heal());
        assert!(RemedyStatus::Contained.ends_the_heal());
        assert!(!RemedyStatus::NotResolved.ends_the_heal());
        assert!(!RemedyStatus::Failed.ends_the_heal());
    }

    #[test]
    fn names_round_trip() {
        for o in [
            Outcome::Resolved,
            Outcome::Contained,
            Outcome::Unresolved,
            Outcome::Skipped,
        ] {
            assert_eq!(Outcome::parse(o.as_str()), Some(o));
        }
        for s in [
            RemedyStatus::Resolved,
            RemedyStatus::Contained,
            RemedyStatus::NotResolved,
            RemedyStatus::Failed,
        ] {
            assert_eq!(RemedyStatus::parse(s.as_str()), Some(s));
        }
    }
}
