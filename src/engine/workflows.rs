//! The engine's workflow API: what the desktop app and the CLI call.

use tokio::sync::broadcast::error::RecvError;

use super::Handle;
use crate::error::{Error, Result};
use crate::events::Event;
use crate::scheduler::attempts::execute_run_here;
use crate::workflow::{
    example_workflows, refuse, validate, Author, FieldProblem, Run, RunDetail, RunStatus,
    RunTrigger, ScriptVersion, Version, Workflow, WorkflowDetail, WorkflowInput, WorkflowStatus,
    WorkflowSummary,
};

/// How long a command's own engine waits to save a run end the store refused.
const KEPT_END_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

impl Handle {
    pub fn list_workflows(&self) -> Result<Vec<WorkflowSummary>> {
        self.services.store.list_workflow_summaries()
    }

    pub fn workflow(&self, id: i64) -> Result<WorkflowDetail> {
        let workflow = self.services.store.workflow(id)?;
        let active = self.services.store.active_version(id)?;
        let next_run_at = self.services.store.next_run_at(id)?;
        Ok(WorkflowDetail {
            schedule_text: workflow.schedule.describe(),
            folder: self.services.paths.workflow_dir(id).display().to_string(),
            workflow,
            active,
            next_run_at,
        })
    }

    /// A workflow by name (or id), for the CLI.
    pub fn find_workflow(&self, name: &str) -> Result<Workflow> {
        self.services.store.workflow_by_name(name)
    }

    /// Problems with a workflow before it is saved; empty when it can be.
    pub fn validate_workflow(&self, input: &WorkflowInput) -> Vec<FieldProblem> {
        validate(input, true)
    }

    pub fn create_workflow(&self, input: WorkflowInput) -> Result<Workflow> {
        self.create_with_files(&input, &[], &Author::Person)
    }

    /// A new workflow whose first version declares `requirements` (the packages the person
    /// confirmed when creating it).
    pub fn create_workflow_with(
        &self,
        input: WorkflowInput,
        requirements: Vec<String>,
    ) -> Result<Workflow> {
        let requirements = super::deps::checked_requirements(&input.runtime, &requirements)?;
        self.create_inner(&input, &[], &Author::Person, &requirements)
    }

    /// Change a workflow's settings. The code changes only through [`Handle::save_script`].
    pub fn update_workflow(&self, id: i64, input: WorkflowInput) -> Result<Workflow> {
        self.services.update_workflow(id, &input)
    }

    /// A person's save: the next major version (2.0 after 1.3) becomes the one that runs.
    pub fn save_script(&self, id: i64, code: &str, comment: &str) -> Result<ScriptVersion> {
        self.save_script_with(id, code, comment, None)
    }

    /// As [`Handle::save_script`], with the packages the new version declares (`None`: those
    /// of the version that runs now).
    pub fn save_script_with(
        &self,
        id: i64,
        code: &str,
        comment: &str,
        requirements: Option<Vec<String>>,
    ) -> Result<ScriptVersion> {
        if code.trim().is_empty() {
            return Err(Error::InvalidInput("the script is empty".to_string()));
        }
        let comment = if comment.trim().is_empty() {
            "Edited by hand"
        } else {
            comment.trim()
        };
        let workflow = self.services.store.workflow(id)?;
        let requirements = requirements
            .map(|r| super::deps::checked_requirements(&workflow.runtime, &r))
            .transpose()?;
        let version = self.services.store.save_major_with(
            id,
            code,
            comment,
            None,
            &Author::Person,
            requirements.as_deref(),
        )?;
        // The person looked at it: a review flag from repeated fixes is done.
        self.services.store.set_review(id, false)?;
        self.services.bus.emit(Event::VersionSaved {
            workflow_id: id,
            title: workflow.title,
            version: version.version,
            author: Author::Person,
            comment: comment.to_string(),
        })?;
        Ok(version)
    }

    pub fn set_paused(&self, id: i64, paused: bool) -> Result<Workflow> {
        let status = if paused {
            WorkflowStatus::Paused
        } else {
            // Resuming keeps what the last run said.
            let last = self.services.store.list_runs(id, None, 1)?;
            match last.first().map(|r| r.status) {
                Some(RunStatus::Failed) => WorkflowStatus::NeedsAttention,
                _ => WorkflowStatus::Active,
            }
        };
        self.services.store.set_workflow_status(id, status)?;
        if !paused && self.services.store.release_repairs(id)? {
            // Resuming is the person's answer to a repair that gave up: repairs may start.
            self.services.store.log_decision(
                Some(id),
                crate::memory::DecisionKind::RepairsResumed,
                "Resumed: repairs may start again",
                "",
            )?;
        }
        if !paused {
            // Times missed while paused are not caught up: the schedule restarts from now.
            let now = crate::store::now();
            self.services.store.mark_due_handled(id, &now, None)?;
        }
        let workflow = self.services.store.workflow(id)?;
        self.services.bus.emit(Event::WorkflowChanged {
            workflow_id: id,
            title: workflow.title.clone(),
            what: if paused { "paused" } else { "resumed" }.to_string(),
        })?;
        self.services.wake.scheduler.notify_one();
        Ok(workflow)
    }

    /// Delete a workflow, its versions, runs and folder. A run in progress is stopped first.
    pub fn delete_workflow(&self, id: i64) -> Result<()> {
        let workflow = self.services.store.workflow(id)?;
        self.services.active_runs.abort(id);
        self.services.store.forget_all_workflow_secrets(
            &self.services.llm.keep(),
            self.services.instance(),
            id,
        );
        self.services.store.delete_workflow(id)?;
        let paths = &self.services.paths;
        for folder in [paths.workflow_dir(id), paths.run_logs_dir(id)] {
            if let Err(e) = std::fs::remove_dir_all(&folder) {
                if e.kind() != std::io::ErrorKind::NotFound {
                    tracing::warn!("could not remove {}: {e}", folder.display());
                }
            }
        }
        self.services.bus.emit(Event::WorkflowDeleted {
            workflow_id: id,
            title: workflow.title,
        })?;
        self.services.wake.scheduler.notify_one();
        Ok(())
    }

    /// Queue a run now; returns its id. Refused while the workflow has a run open, and while
    /// a question about it waits for the person (the workflow does not run until it is
    /// decided; Proceed runs it).
    pub fn run_now(&self, id: i64) -> Result<i64> {
        let workflow = self.services.store.workflow(id)?;
        if let Some((_, question)) = self.services.store.pending_checkpoint_of_workflow(id)? {
            return Err(Error::InvalidInput(format!(
                "\u{201c}{}\u{201d} waits for your decision ({}); decide it first: Proceed runs it again",
                workflow.title,
                question.trim_end_matches('.')
            )));
        }
        let run_id = self
            .services
            .store
            .enqueue_run(id, RunTrigger::Manual)?
            .ok_or_else(|| {
                Error::InvalidInput(format!(
                    "\"{}\" is already running; wait for that run to finish",
                    workflow.title
                ))
            })?;
        self.services.wake.scheduler.notify_one();
        Ok(run_id)
    }

    /// Run a workflow now and wait for the run to finish (its retries included).
    pub async fn run_and_wait(&self, id: i64) -> Result<RunDetail> {
        let mut events = self.services.bus.subscribe();
        let run_id = match self.run_now(id) {
            Ok(run_id) => run_id,
            // A command's own engine dispatches nothing else: a run waiting in line (a fix's
            // check put back after a crash) is the run asked for, and it runs here.
            Err(refused) if !self.inner.scheduling => {
                self.services.store.queued_run_of(id)?.ok_or(refused)?
            }
            Err(refused) => return Err(refused),
        };
        if !self.inner.scheduling {
            // No scheduler in this process (a CLI command's own engine): run it here.
            if self.services.store.claim_run(run_id)? {
                execute_run_here(&self.services, run_id, id).await;
            }
            // An end the store refused is saved before the command answers, if it can be.
            let patience = tokio::time::Instant::now() + KEPT_END_WAIT;
            while self.services.flush_pending() > 0 && tokio::time::Instant::now() < patience {
                tokio::time::sleep(std::time::Duration::from_millis(250)).await;
            }
            return self.services.store.run_detail(run_id);
        }
        loop {
            match events.recv().await {
                Ok(record) => {
                    if let Event::RunFinished { run_id: done, .. } = record.event {
                        if done == run_id {
                            break;
                        }
                    }
                }
                Err(RecvError::Lagged(_)) => {
                    if is_finished(&self.services.store.run(run_id)?) {
                        break;
                    }
                }
                Err(RecvError::Closed) => {
                    return Err(Error::EngineUnavailable(
                        "the Healer engine stopped during the run (it is recorded as interrupted); run it again".to_string(),
                    ))
                }
            }
        }
        self.services.store.run_detail(run_id)
    }

    pub fn runs(&self, workflow_id: i64, before: Option<i64>, limit: u32) -> Result<Vec<Run>> {
        self.services.store.list_runs(workflow_id, before, limit)
    }

    pub fn run_detail(&self, run_id: i64) -> Result<RunDetail> {
        self.services.store.run_detail(run_id)
    }

    pub fn versions(&self, workflow_id: i64) -> Result<Vec<ScriptVersion>> {
        self.services.store.versions(workflow_id)
    }

    pub fn version(&self, workflow_id: i64, version: Version) -> Result<ScriptVersion> {
        self.services.store.version(workflow_id, version)
    }

    /// Load the example workflows (offered when there are none yet).
    pub fn load_examples(&self) -> Result<Vec<Workflow>> {
        example_workflows()
            .into_iter()
            .map(|example| self.create_with_files(&example.input, &example.files, &Author::Healer))
            .collect()
    }
}

impl Handle {
    /// A new workflow, its folder with the script (and any extra files an example brings).
    fn create_with_files(
        &self,
        input: &WorkflowInput,
        files: &[(&str, &str)],
        author: &Author,
    ) -> Result<Workflow> {
        self.create_inner(input, files, author, "")
    }

    fn create_inner(
        &self,
        input: &WorkflowInput,
        files: &[(&str, &str)],
        author: &Author,
        requirements: &str,
    ) -> Result<Workflow> {
        refuse(validate(input, true))?;
        let services = &self.services;
        let name = unique_name(&input.title, &services.store.workflow_names()?);
        let workflow = services
            .store
            .insert_workflow_with(&name, input, author, requirements)?;
        let folder = services.paths.workflow_dir(workflow.id);
        std::fs::create_dir_all(&folder)
            .map_err(|e| Error::io(format!("cannot create {}", folder.display()), e))?;
        std::fs::write(folder.join(&workflow.entry), &input.code)
            .map_err(|e| Error::io(format!("cannot write into {}", folder.display()), e))?;
        for (file, content) in files {
            std::fs::write(folder.join(file), content).map_err(|e| {
                Error::io(format!("cannot write {file} into {}", folder.display()), e)
            })?;
        }
        services.bus.emit(Event::WorkflowCreated {
            workflow_id: workflow.id,
            title: workflow.title.clone(),
        })?;
        services.wake.scheduler.notify_one();
        Ok(workflow)
    }
}

fn is_finished(run: &Run) -> bool {
    !matches!(run.status, RunStatus::Queued | RunStatus::Running)
}

/// "Daily report" → "daily-report", made unique against `taken`.
fn unique_name(title: &str, taken: &[String]) -> String {
    let mut base = String::new();
    for c in title.trim().chars() {
        if c.is_alphanumeric() {
            base.extend(c.to_lowercase());
        } else if !base.ends_with('-') && !base.is_empty() {
            base.push('-');
        }
    }
    let base = base.trim_end_matches('-');
    let base = if base.is_empty() { "workflow" } else { base };
    let mut name = base.to_string();
    let mut n = 2;
    while taken.iter().any(|t| t == &name) {
        name = format!("{base}-{n}");
        n += 1;
    }
    name
}

#[cfg(test)]
mod tests {
    use super::unique_name;

    #[test]
    fn names_are_slugs_of_titles_and_unique() {
        assert_eq!(unique_name("Daily report!", &[]), "daily-report");
        assert_eq!(
            unique_name("Daily report", &["daily-report".to_string()]),
            "daily-report-2"
        );
        assert_eq!(unique_name("  ", &[]), "workflow");
    }
}
