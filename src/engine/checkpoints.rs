//! The engine's checkpoint API: listing, and deciding — which does what the chosen option says,
//! now or after a restart (installing a package the person named, too). Raising one is the services' (`Services::raise_checkpoint`): the
//! breakers and the recovery manager do it too.

use super::Handle;
use crate::breakers::EXTRA_TOKENS_PREFIX;
use crate::checkpoint::{Checkpoint, CheckpointAction, CheckpointList};
use crate::deps::{Ecosystem, PackageQuestion, Requirement};
use crate::error::{Error, Result};
use crate::events::Event;
use crate::recovery::{install_missing, Installed, MissingImport};
use crate::workflow::{RunTrigger, WorkflowStatus};

/// How many decided checkpoints the list shows.
const DECIDED_SHOWN: u32 = 100;

impl Handle {
    /// Pending checkpoints (oldest first) and past decisions (newest first).
    pub fn checkpoints(&self) -> Result<CheckpointList> {
        Ok(CheckpointList {
            pending: self.services.store.pending_checkpoints()?,
            decided: self.services.store.decided_checkpoints(DECIDED_SHOWN)?,
        })
    }

    pub fn checkpoint(&self, id: i64) -> Result<Checkpoint> {
        self.services.store.checkpoint(id)
    }

    /// Decide a checkpoint: `option` is 1-based (`None`: the recommended one). The work it
    /// held goes on as the option says; "Try another package name…" installs the package
    /// named in `notes` before it answers.
    pub async fn decide_checkpoint(
        &self,
        id: i64,
        option: Option<u32>,
        notes: Option<&str>,
    ) -> Result<Checkpoint> {
        let store = &self.services.store;
        let checkpoint = store.checkpoint(id)?;
        if checkpoint.decision.is_some() {
            return Err(Error::InvalidInput(format!(
                "checkpoint {id} was decided already"
            )));
        }
        let number = option.unwrap_or_else(|| checkpoint.recommended());
        let chosen = usize::try_from(number)
            .ok()
            .and_then(|n| n.checked_sub(1))
            .and_then(|i| checkpoint.options.get(i))
            .ok_or_else(|| {
                Error::InvalidInput(format!(
                    "there is no option {number}: choose 1 to {}",
                    checkpoint.options.len()
                ))
            })?
            .clone();
        let notes = notes.map(str::trim).filter(|n| !n.is_empty());
        // A package name is checked before the choice is recorded: a typo can be corrected.
        let package = match chosen.action {
            CheckpointAction::InstallPackage => Some(self.named_package(&checkpoint, notes)?),
            _ => None,
        };
        // An agent's question: its answer is recorded (and carried to the agent) first.
        let answered = match store.approval_of_checkpoint(id)? {
            Some(approval) => Some(self.answer_question(&approval, chosen.action, notes)?),
            None => None,
        };
        if !store.decide_checkpoint(id, number, chosen.action, notes)? {
            return Err(Error::InvalidInput(format!(
                "checkpoint {id} was decided already"
            )));
        }
        let outcome = match (checkpoint.workflow_id, package) {
            _ if answered.is_some() => answered.unwrap_or_default(),
            (Some(_), Some((question, package))) => self.install_named(&question, &package).await?,
            (Some(workflow_id), None) => self.act_on(&checkpoint, workflow_id, chosen.action)?,
            (None, _) if !checkpoint.affected.is_empty() => {
                self.act_on_each(&checkpoint, chosen.action)?
            }
            (None, _) => match store.replace_checkpoint(id)? {
                Some(pending) => self.decide_replace(&pending, chosen.action),
                None => match store.invocation_waiting_on(id)? {
                    // The healer service's question: its invocation carries on here, in this
                    // engine, and the outcome says what was done.
                    Some(invocation) => {
                        match crate::spells::resume(
                            &self.services,
                            self.projects(),
                            invocation,
                            chosen.action,
                        )
                        .await
                        {
                            Ok(Some(done)) => done,
                            // Another look took it up between the read and the claim: what it
                            // did is the outcome, once it is done.
                            Ok(None) => self.outcome_when_done(id).await?,
                            Err(e) => format!("Healer could not carry on: {e}"),
                        }
                    }
                    // Taken up by this engine's look for answered questions the moment the
                    // answer was recorded: what it did is the outcome, once it is done.
                    None if store.invocation_acting_on(id)?.is_some() => {
                        self.outcome_when_done(id).await?
                    }
                    None if outcome_of(store, id)?.is_some() => {
                        outcome_of(store, id)?.unwrap_or_default()
                    }
                    None => format!("Recorded: {}", chosen.label),
                },
            },
        };
        store.set_checkpoint_outcome(id, &outcome)?;
        self.services.bus.emit(Event::CheckpointDecided {
            checkpoint_id: id,
            trigger: checkpoint.trigger,
            workflow_id: checkpoint.workflow_id,
            run_id: checkpoint.run_id,
            choice: chosen.label,
            outcome,
        })?;
        self.services.wake.scheduler.notify_one();
        store.checkpoint(id)
    }

    /// The outcome of checkpoint `id` once the act on its answer has set it (bounded).
    async fn outcome_when_done(&self, id: i64) -> Result<String> {
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(600);
        loop {
            let said = self
                .services
                .store
                .checkpoint(id)?
                .decision
                .map(|d| d.outcome);
            match said {
                Some(outcome) if !outcome.is_empty() => return Ok(outcome),
                _ if tokio::time::Instant::now() >= deadline => {
                    return Ok("Healer is still carrying out your answer".to_string())
                }
                _ => tokio::time::sleep(std::time::Duration::from_millis(100)).await,
            }
        }
    }

    /// The person answered the steering judge's question: replace the agent, or let it go on.
    fn decide_replace(
        &self,
        pending: &crate::store::PendingReplace,
        action: CheckpointAction,
    ) -> String {
        if action != CheckpointAction::Proceed {
            return "The agent goes on; the steering model looks again later".to_string();
        }
        match self.replace_session(pending.session_id, &pending.reason) {
            Ok(()) => "The agent is being replaced: its work is kept as a snapshot and the task is open again".to_string(),
            Err(e) => format!("The agent was not replaced: {e}"),
        }
    }

    /// A checkpoint about several workflows: the option acts on each, and the outcome names
    /// them.
    fn act_on_each(&self, checkpoint: &Checkpoint, action: CheckpointAction) -> Result<String> {
        let store = &self.services.store;
        let mut done = Vec::new();
        for a in &checkpoint.affected {
            let title = format!("\u{201c}{}\u{201d}", a.title);
            done.push(match action {
                CheckpointAction::Proceed | CheckpointAction::AllowTokens { .. } => {
                    match store.enqueue_run_with_hint(
                        a.workflow_id,
                        RunTrigger::Checkpoint,
                        None,
                    )? {
                        Some(run) => format!("{title} runs again (run {run})"),
                        None => format!("{title} had a run open already"),
                    }
                }
                CheckpointAction::Skip => {
                    if let Some(run) = a.run_id {
                        store.mark_run_skipped(run)?;
                    }
                    if store.workflow(a.workflow_id)?.status == WorkflowStatus::NeedsAttention {
                        store.set_workflow_status(a.workflow_id, WorkflowStatus::Active)?;
                    }
                    match a.run_id {
                        Some(run) => format!("{title}: run {run} skipped"),
                        None => format!("{title} skipped"),
                    }
                }
                CheckpointAction::Pause => {
                    self.set_paused(a.workflow_id, true)?;
                    title
                }
                // Only a single workflow's missing-module question offers an install; only an
                // agent's question offers allow and deny.
                CheckpointAction::InstallPackage
                | CheckpointAction::AllowOnce
                | CheckpointAction::AllowTask
                | CheckpointAction::AllowAlways
                | CheckpointAction::Deny => format!("{title}: nothing was done"),
            });
        }
        Ok(match action {
            CheckpointAction::Pause => format!("Paused {} until you resume them", done.join(", ")),
            CheckpointAction::Skip => format!(
                "{}; their next scheduled runs go ahead, and repairs resume for new failures",
                done.join("; ")
            ),
            _ => format!("Repairs go on: {}", done.join("; ")),
        })
    }

    fn act_on(
        &self,
        checkpoint: &Checkpoint,
        workflow_id: i64,
        action: CheckpointAction,
    ) -> Result<String> {
        let store = &self.services.store;
        let run_again = || -> Result<String> {
            Ok(
                match store.enqueue_run_with_hint(workflow_id, RunTrigger::Checkpoint, None)? {
                    Some(run) => format!("Run {} started", store.run_name(run)),
                    None => "A run was open already".to_string(),
                },
            )
        };
        Ok(match action {
            CheckpointAction::Proceed => run_again()?,
            CheckpointAction::Skip => {
                if let Some(run) = checkpoint.run_id {
                    store.mark_run_skipped(run)?;
                }
                let w = store.workflow(workflow_id)?;
                if w.status == WorkflowStatus::NeedsAttention {
                    store.set_workflow_status(workflow_id, WorkflowStatus::Active)?;
                }
                let next = if w.status == WorkflowStatus::Paused {
                    "it stays paused until you resume it"
                } else if matches!(w.schedule, crate::workflow::Schedule::Manual) {
                    "it runs again when you run it"
                } else {
                    "the next scheduled run goes ahead"
                };
                match checkpoint.run_id {
                    Some(run) => format!("Run {} skipped; {next}", store.run_name(run)),
                    None => format!("Skipped; {next}"),
                }
            }
            CheckpointAction::Pause => {
                self.set_paused(workflow_id, true)?;
                "Paused until you resume it".to_string()
            }
            CheckpointAction::AllowTokens { tokens } => {
                let key = format!("{EXTRA_TOKENS_PREFIX}{workflow_id}");
                let today = crate::llm::today();
                let (day, extra) = store
                    .setting::<(String, u64)>(&key)?
                    .filter(|(day, _)| *day == today)
                    .unwrap_or((today, 0));
                store.set_setting(&key, &(day, extra + u64::from(tokens)))?;
                format!("Allowed {tokens} more tokens today. {}", run_again()?)
            }
            // Decided with its package name, in `decide_checkpoint`.
            CheckpointAction::InstallPackage => run_again()?,
            // Only an agent's question offers these; it is decided in `decide_checkpoint`.
            CheckpointAction::AllowOnce
            | CheckpointAction::AllowTask
            | CheckpointAction::AllowAlways
            | CheckpointAction::Deny => "Nothing was done".to_string(),
        })
    }

    /// The package a person named for "Try another package name…", checked as a name the
    /// workflow's registry could hold.
    fn named_package(
        &self,
        checkpoint: &Checkpoint,
        notes: Option<&str>,
    ) -> Result<(PackageQuestion, String)> {
        let question = self
            .services
            .store
            .package_question(checkpoint.id)?
            .ok_or_else(|| {
                Error::InvalidInput(format!(
                    "checkpoint {} is not about a package; choose another option",
                    checkpoint.id
                ))
            })?;
        let workflow = self.services.store.workflow(question.workflow_id)?;
        let ecosystem = Ecosystem::of(&workflow.runtime).ok_or_else(|| {
            Error::InvalidInput("a shell workflow has no packages of its own".to_string())
        })?;
        let name = notes.unwrap_or_default();
        if name.is_empty() {
            return Err(Error::InvalidInput(format!(
                "give the name of the {} package that provides {}",
                ecosystem.tool(),
                question.module
            )));
        }
        let requirement = Requirement::parse(ecosystem, name).map_err(Error::InvalidInput)?;
        Ok((question, requirement.name))
    }

    /// Install the package a person named for a missing import, as the remedy would have.
    async fn install_named(&self, question: &PackageQuestion, package: &str) -> Result<String> {
        let store = &self.services.store;
        let workflow = store.workflow(question.workflow_id)?;
        let ecosystem = Ecosystem::of(&workflow.runtime).ok_or_else(|| {
            Error::InvalidInput("a shell workflow has no packages of its own".to_string())
        })?;
        let version = store.active_version(workflow.id)?;
        let missing = MissingImport {
            workflow: &workflow,
            ecosystem,
            version: &version,
            module: &question.module,
            signature: &question.signature,
            run_id: None,
            replaces: Some(&question.package),
        };
        Ok(
            match install_missing(&self.services, &missing, Some(package)).await? {
                Installed::Saved { version, comment } => {
                    format!("Healer {comment} as version {version}; it runs again now")
                }
                Installed::Asked { .. } => {
                    format!("{package} could not be installed either; Healer asks you again")
                }
                Installed::Stale { active } => {
                    format!("Nothing was installed: the workflow is on version {active} now")
                }
            },
        )
    }
}

/// What was done about checkpoint `id`'s answer, once something was.
fn outcome_of(store: &crate::store::Store, id: i64) -> Result<Option<String>> {
    Ok(store
        .checkpoint(id)?
        .decision
        .map(|d| d.outcome)
        .filter(|o| !o.is_empty()))
}
