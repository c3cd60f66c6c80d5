//! The healing the engine plugs into its services: the remedy set — which remedies, in what
//! order, for which failure — and the breakers' watch over the processes an attempt leaves. This
//! is the one place that knows every remedy; the pipeline (`heal`) knows only the `Remedy` trait.

use std::sync::Arc;

use async_trait::async_trait;

use crate::breakers::{
    check_survivors, CostBreaker, RollbackBadFix, RollbackFailedToo, Superseded, SystemicBreaker,
};
use crate::error::Result;
use crate::failure::{Failure, FailureClass, FailureSource};
use crate::heal::{
    HealContext, HealRecord, Pipeline, Planner, Recollection, RecordAndNotify, Remedy,
};
use crate::maintainer::{HeldForPerson, KnownFix, Maintain};
use crate::recovery::{Analyze, AskPerson, InstallModule};
use crate::services::{Healing, Services};
use crate::spells::HealerService;

/// The pipeline behind the services' [`Healing`].
pub(super) struct EngineHealing {
    pipeline: Pipeline,
}

impl EngineHealing {
    pub(super) fn new(pipeline: Pipeline) -> Self {
        EngineHealing { pipeline }
    }
}

#[async_trait]
impl Healing for EngineHealing {
    async fn heal(&self, services: &Services, failure: Failure) -> Result<HealRecord> {
        self.pipeline
            .heal(&HealContext::new(services), failure)
            .await
    }

    fn attempt_ended(&self, services: &Arc<Services>, run_id: i64, attempt: u32, escaped: usize) {
        tokio::spawn(check_survivors(services.clone(), run_id, attempt, escaped));
    }
}

/// The recovery manager's rules, by class (transient failures were retried by the runner
/// already). Whatever the class, a bad fix is undone and an error spreading across workflows
/// stops at the systemic breaker first. Then logic → a known fix from memory, else the
/// maintainer, and Level 2 when its fixes did not hold; environment → the missing module
/// installed (no model), else Level 2; unknown → Level 2; resource, time limit, and transient past
/// its retries → a HICCUP checkpoint. Recording and telling the person closes every plan (it
/// runs when nothing before it could act, e.g. a self-check). The remedies' names are stored
/// with every heal, so a remedy keeps its name wherever it moves.
pub struct RulePlanner;

impl Planner for RulePlanner {
    fn plan(&self, failure: &Failure, _recollection: &Recollection) -> Vec<Box<dyn Remedy>> {
        let mut plan: Vec<Box<dyn Remedy>> = Vec::new();
        if failure.source == FailureSource::SelfCheck {
            // A test alert goes straight to the person, as proof the path works.
            plan.push(Box::new(RecordAndNotify));
            return plan;
        }
        if let FailureSource::ProjectTask { .. } = failure.source {
            // The healer service takes a project's failure over (its own policy, plan and
            // spells, see `spells`); when its policy skips it, the person is told here.
            plan.push(Box::new(HealerService));
            plan.push(Box::new(RecordAndNotify));
            return plan;
        }
        // A run of a version a fix already replaced waits for the fix's run.
        plan.push(Box::new(Superseded));
        // The version a rollback put back fails too: the person decides.
        plan.push(Box::new(RollbackFailedToo));
        // A fix whose re-run failed differently is judged first, whatever the class: kept
        // (progress), run again (a passing problem), or undone (it made things worse).
        plan.push(Box::new(RollbackBadFix));
        // A repair that gave up on this error waits for the person: nothing more is spent.
        plan.push(Box::new(HeldForPerson));
        // One cause in several workflows is one question, before any model is asked.
        plan.push(Box::new(SystemicBreaker));
        match failure.class {
            FailureClass::Logic => {
                plan.push(Box::new(KnownFix));
                plan.push(Box::new(CostBreaker));
                plan.push(Box::new(Maintain));
                plan.push(Box::new(Analyze));
            }
            FailureClass::Environment => {
                // A missing module is installed at zero tokens before any model is asked.
                plan.push(Box::new(InstallModule));
                plan.push(Box::new(Analyze));
            }
            FailureClass::Unknown => plan.push(Box::new(Analyze)),
            FailureClass::Resource | FailureClass::Timeout | FailureClass::Transient => {
                plan.push(Box::new(AskPerson))
            }
        }
        plan.push(Box::new(RecordAndNotify));
        plan
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::failure::Evidence;

    #[test]
    fn every_failure_is_at_least_told_to_the_person() {
        for class in [
            FailureClass::Transient,
            FailureClass::Logic,
            FailureClass::Environment,
            FailureClass::Resource,
            FailureClass::Timeout,
            FailureClass::Unknown,
        ] {
            let failure =
                Failure::new(FailureSource::SelfCheck, "test", class, Evidence::default());
            let plan = RulePlanner.plan(&failure, &Recollection::default());
            let names: Vec<_> = plan.iter().map(|r| r.name()).collect();
            assert_eq!(names.last(), Some(&"record_and_notify"), "{class:?}");
        }
    }
}
