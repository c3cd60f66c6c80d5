//! Before a run's first attempt: install what the version declares into the workflow's own
//! environment. What the installer printed is kept with the run; a failed installation is the
//! run's failure (an attempt that never started the script), handed to the pipeline like any.

use std::sync::Arc;

use crate::deps::SETUP_FAILED;
use crate::error::Result;
use crate::events::Event;
use crate::failure::{Evidence, FailureClass};
use crate::services::{Prepared, Services};
use crate::store::AttemptEnd;
use crate::workflow::{ScriptVersion, Workflow};

/// `Some` when the installation failed: the class and evidence of the run's failure.
pub(super) async fn prepare(
    services: &Arc<Services>,
    workflow: &Workflow,
    version: &ScriptVersion,
    run_id: i64,
    run_number: u32,
) -> Result<Option<(FailureClass, Option<Evidence>)>> {
    let store = &services.store;
    let (log, error) = match services.prepare_environment(workflow, version).await? {
        Prepared::Ready => return Ok(None),
        Prepared::Installed { log } => {
            store.set_run_setup_log(run_id, &log)?;
            return Ok(None);
        }
        Prepared::Failed { log, error } => (log, error),
    };
    store.set_run_setup_log(run_id, &log)?;
    let first_line = error.lines().next().unwrap_or_default().to_string();
    let evidence = Evidence {
        error_type: None,
        message: format!("{SETUP_FAILED}: {first_line}"),
        stack: None,
    };
    let attempt_id = store.start_attempt(run_id, 1)?;
    let end = AttemptEnd {
        succeeded: false,
        duration_ms: 0,
        exit_code: None,
        signal: None,
        timed_out: false,
        class: Some(FailureClass::Environment),
        evidence: Some(evidence.clone()),
        stdout_cut: 0,
        stderr_cut: 0,
        stdout: String::new(),
        stderr: error.clone(),
        result: None,
        note: Some(
            "The script did not run: the packages its version declares could not be installed"
                .to_string(),
        ),
    };
    store.finish_attempt(attempt_id, &end)?;
    services.bus.emit(Event::AttemptFinished {
        run_id,
        run_number,
        workflow_id: workflow.id,
        attempt: 1,
        succeeded: false,
        class: Some(FailureClass::Environment),
        summary: evidence.message.clone(),
        retry_in_ms: None,
    })?;
    Ok(Some((FailureClass::Environment, Some(evidence))))
}
