//! Plan: an ordered list of remedies for a failure, by rules over its scenario, class and
//! history. Pure: planning never acts.

use crate::breakers::{CostBreaker, RollbackBadFix, SystemicBreaker};
use crate::failure::{Failure, FailureClass, FailureSource};
use crate::maintainer::Maintain;
use crate::memory::KnownFix;
use crate::recovery::{Analyze, AskPerson};

use super::{Recollection, RecordAndNotify, Remedy};

pub trait Planner: Send + Sync {
    fn plan(&self, failure: &Failure, recollection: &Recollection) -> Vec<Box<dyn Remedy>>;
}

/// The recovery manager's rules, by class (transient failures were retried by the runner
/// already): logic → a known fix from memory, else the maintainer, and Level 2 when its fixes did not hold; environment and
/// unknown → Level 2; resource, time limit, and transient past its retries → a HICCUP
/// checkpoint. Recording and telling the person closes every plan (it runs when nothing
/// before it could act, e.g. a self-check).
pub struct RulePlanner;

impl Planner for RulePlanner {
    fn plan(&self, failure: &Failure, _recollection: &Recollection) -> Vec<Box<dyn Remedy>> {
        let mut plan: Vec<Box<dyn Remedy>> = Vec::new();
        if failure.source == FailureSource::SelfCheck {
            // A test alert goes straight to the person, as proof the path works.
            plan.push(Box::new(RecordAndNotify));
            return plan;
        }
        // A fix whose re-run failed differently is undone first, whatever the class.
        plan.push(Box::new(RollbackBadFix));
        match failure.class {
            FailureClass::Logic => {
                plan.push(Box::new(SystemicBreaker));
                plan.push(Box::new(KnownFix));
                plan.push(Box::new(CostBreaker));
                plan.push(Box::new(Maintain));
                plan.push(Box::new(Analyze));
            }
            FailureClass::Environment | FailureClass::Unknown => plan.push(Box::new(Analyze)),
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
