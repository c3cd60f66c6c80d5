//! Plan: an ordered list of remedies for a failure, by rules over its scenario, class and
//! history. Pure: planning never acts.

use crate::failure::{Failure, FailureClass};
use crate::maintainer::Maintain;

use super::{Recollection, RecordAndNotify, Remedy};

pub trait Planner: Send + Sync {
    fn plan(&self, failure: &Failure, recollection: &Recollection) -> Vec<Box<dyn Remedy>>;
}

/// The rules: a logic error goes to the maintainer (which repairs it, or tells the person
/// itself); anything else, or a maintainer that could not start, is recorded and told.
pub struct RulePlanner;

impl Planner for RulePlanner {
    fn plan(&self, failure: &Failure, _recollection: &Recollection) -> Vec<Box<dyn Remedy>> {
        let mut plan: Vec<Box<dyn Remedy>> = Vec::new();
        if failure.class == FailureClass::Logic {
            plan.push(Box::new(Maintain));
        }
        plan.push(Box::new(RecordAndNotify));
        plan
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::failure::{Evidence, FailureSource};

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
