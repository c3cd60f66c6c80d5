//! Plan: an ordered list of remedies for a failure, by rules over its scenario, class and
//! history. Pure: planning never acts. The rules name the remedies, so they live where the
//! remedies are known: the engine's `RulePlanner`.

use crate::failure::Failure;

use super::{Recollection, Remedy};

/// Chooses the remedies for a failure, in order.
pub trait Planner: Send + Sync {
    fn plan(&self, failure: &Failure, recollection: &Recollection) -> Vec<Box<dyn Remedy>>;
}
