//! The runs in flight: one task per workflow at most, and a way to stop it.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use tokio::task::AbortHandle;

/// Workflow id → the run its task is running, with the handle that stops the task (its process
/// group goes with it).
#[derive(Default)]
pub(crate) struct ActiveRuns {
    runs: Mutex<HashMap<i64, (i64, AbortHandle)>>,
}

impl ActiveRuns {
    pub(crate) fn contains(&self, workflow_id: i64) -> bool {
        self.lock().contains_key(&workflow_id)
    }

    pub(crate) fn insert(&self, workflow_id: i64, run_id: i64, abort: AbortHandle) {
        self.lock().insert(workflow_id, (run_id, abort));
    }

    /// The run a workflow's task is running now, if any.
    pub(crate) fn run_of(&self, workflow_id: i64) -> Option<i64> {
        self.lock().get(&workflow_id).map(|(run, _)| *run)
    }

    pub(crate) fn remove(&self, workflow_id: i64) {
        self.lock().remove(&workflow_id);
    }

    /// Stop the run a workflow's task is running, if any.
    pub(crate) fn abort(&self, workflow_id: i64) -> bool {
        match self.lock().remove(&workflow_id) {
            Some((_, abort)) => {
                abort.abort();
                true
            }
            None => false,
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<i64, (i64, AbortHandle)>> {
        self.runs.lock().unwrap_or_else(|p| p.into_inner())
    }
}
