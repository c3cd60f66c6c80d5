//! Changing a workflow's settings: the engine's API and the planner's `schedule` tool do it the
//! same way, and the scheduler must hear of it (the schedule may be among them).

use super::Services;
use crate::error::Result;
use crate::events::Event;
use crate::workflow::{refuse, validate, Workflow, WorkflowInput};

impl Services {
    /// Change a workflow's settings. The code changes only through a new version.
    pub(crate) fn update_workflow(&self, id: i64, input: &WorkflowInput) -> Result<Workflow> {
        refuse(validate(input, false))?;
        let workflow = self.store.update_workflow(id, input)?;
        self.bus.emit(Event::WorkflowChanged {
            workflow_id: id,
            title: workflow.title.clone(),
            what: "settings changed".to_string(),
        })?;
        self.wake.scheduler.notify_one();
        Ok(workflow)
    }
}
