//! Raising a checkpoint: the breakers and the recovery manager do it the same way — recommend an
//! option from past decisions, store it, announce it.

use super::Services;
use crate::checkpoint::{recommend_with, Checkpoint, NewCheckpoint};
use crate::error::{Error, Result};
use crate::events::Event;

impl Services {
    pub(crate) fn raise_checkpoint(&self, new: NewCheckpoint) -> Result<Checkpoint> {
        self.raise_checkpoint_then(new, |_| Ok(()))
    }

    /// As [`Services::raise_checkpoint`], with `link` run on the stored checkpoint's id before
    /// it is announced (what it belongs to, recorded where the announced one can be read).
    pub(crate) fn raise_checkpoint_then(
        &self,
        new: NewCheckpoint,
        link: impl FnOnce(i64) -> Result<()>,
    ) -> Result<Checkpoint> {
        let mut history = self.store.checkpoint_history(
            new.trigger,
            new.workflow_id,
            new.signature.as_deref(),
        )?;
        if let Some(past) = new.situation.as_ref().and_then(|s| s.past.clone()) {
            history.workflow.clear();
            history.anywhere.clear();
            history.signature_scope = Some(past);
        }
        let mut options = new.options;
        let fallback = new
            .situation
            .as_ref()
            .map(|s| (s.recommend, s.why.as_str()));
        let recommendation = recommend_with(new.trigger, &options, &history, fallback)
            .ok_or_else(|| Error::Internal("a checkpoint needs options".to_string()))?;
        for (i, option) in options.iter_mut().enumerate() {
            option.recommended = i == recommendation.index;
        }
        let title = new
            .situation
            .as_ref()
            .map_or(new.trigger.title(), |s| s.title.as_str());
        let checkpoint = self.store.insert_checkpoint(
            new.trigger,
            title,
            new.workflow_id,
            new.run_id,
            new.task_id,
            new.signature.as_deref(),
            &new.context,
            &options,
            &recommendation.sentence,
        )?;
        for (workflow_id, run_id) in &new.affected {
            self.store
                .add_affected(checkpoint.id, *workflow_id, *run_id)?;
        }
        if let Some((project_id, task_id, task_title)) = &new.project_task {
            self.store.set_checkpoint_project_task(
                checkpoint.id,
                *project_id,
                task_id,
                task_title,
            )?;
        }
        link(checkpoint.id)?;
        let checkpoint = self.store.checkpoint(checkpoint.id)?;
        self.bus.emit(Event::CheckpointCreated {
            checkpoint: checkpoint.clone(),
        })?;
        Ok(checkpoint)
    }
}
