//! The engine's checkpoint API: raising one (with its recommendation), listing, and deciding —
//! which does what the chosen option says, now or after a restart.

use super::{Handle, Inner};
use crate::checkpoint::{recommend, Checkpoint, CheckpointAction, CheckpointList, NewCheckpoint};
use crate::error::{Error, Result};
use crate::events::Event;
use crate::workflow::{RunTrigger, WorkflowStatus};

/// How many decided checkpoints the list shows.
const DECIDED_SHOWN: u32 = 100;

/// Settings key prefix: extra healing tokens allowed today for a workflow (COST checkpoints).
pub const EXTRA_TOKENS_PREFIX: &str = "healing.extra_tokens.";

impl Inner {
    /// Raise a checkpoint: recommend an option from past decisions, store it, announce it.
    pub(crate) fn raise_checkpoint(&self, new: NewCheckpoint) -> Result<Checkpoint> {
        let history = self.store.checkpoint_history(
            new.trigger,
            new.workflow_id,
            new.signature.as_deref(),
        )?;
        let mut options = new.options;
        let recommendation = recommend(new.trigger, &options, &history)
            .ok_or_else(|| Error::Internal("a checkpoint needs options".to_string()))?;
        for (i, option) in options.iter_mut().enumerate() {
            option.recommended = i == recommendation.index;
        }
        let checkpoint = self.store.insert_checkpoint(
            new.trigger,
            new.workflow_id,
            new.run_id,
            new.task_id,
            new.signature.as_deref(),
            &new.context,
            &options,
            &recommendation.sentence,
        )?;
        self.bus.emit(Event::CheckpointCreated {
            checkpoint: checkpoint.clone(),
        })?;
        Ok(checkpoint)
    }
}

impl Handle {
    /// Pending checkpoints (oldest first) and past decisions (newest first).
    pub fn checkpoints(&self) -> Result<CheckpointList> {
        Ok(CheckpointList {
            pending: self.inner.store.pending_checkpoints()?,
            decided: self.inner.store.decided_checkpoints(DECIDED_SHOWN)?,
        })
    }

    pub fn checkpoint(&self, id: i64) -> Result<Checkpoint> {
        self.inner.store.checkpoint(id)
    }

    /// Decide a checkpoint: `option` is 1-based (`None`: the recommended one). The work it
    /// held goes on as the option says.
    pub fn decide_checkpoint(
        &self,
        id: i64,
        option: Option<u32>,
        notes: Option<&str>,
    ) -> Result<Checkpoint> {
        let store = &self.inner.store;
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
        if !store.decide_checkpoint(id, number, chosen.action, notes)? {
            return Err(Error::InvalidInput(format!(
                "checkpoint {id} was decided already"
            )));
        }
        let outcome = match checkpoint.workflow_id {
            Some(workflow_id) => self.act_on(&checkpoint, workflow_id, chosen.action)?,
            None => "Nothing was waiting on it".to_string(),
        };
        store.set_checkpoint_outcome(id, &outcome)?;
        self.inner.bus.emit(Event::CheckpointDecided {
            checkpoint_id: id,
            workflow_id: checkpoint.workflow_id,
            choice: chosen.label,
            outcome,
        })?;
        self.inner.wake.notify_one();
        store.checkpoint(id)
    }

    fn act_on(
        &self,
        checkpoint: &Checkpoint,
        workflow_id: i64,
        action: CheckpointAction,
    ) -> Result<String> {
        let store = &self.inner.store;
        let run_again = || -> Result<String> {
            Ok(
                match store.enqueue_run_with_hint(workflow_id, RunTrigger::Checkpoint, None)? {
                    Some(run) => format!("Run {run} started"),
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
                match checkpoint.run_id {
                    Some(run) => format!("Run {run} skipped; the next scheduled run goes ahead"),
                    None => "Skipped; the next scheduled run goes ahead".to_string(),
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
        })
    }
}
