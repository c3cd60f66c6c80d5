//! Raising a checkpoint: the breakers and the recovery manager do it the same way — recommend an
//! option from past decisions, store it, announce it.

use super::Services;
use crate::checkpoint::{recommend_with, Checkpoint, NewCheckpoint};
use crate::error::{Error, Result};
use crate::events::Event;

impl Services {
    pub(crate) fn raise_checkpoint(&self, new: NewCheckpoint) -> Result<Checkpoint> {
        let history = self.store.checkpoint_history(
            new.trigger,
            new.workflow_id,
            new.signature.as_deref(),
        )?;
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
        let checkpoint = if new.affected.is_empty() && new.project_task.is_none() {
            checkpoint
        } else {
            self.store.checkpoint(checkpoint.id)?
        };
        self.bus.emit(Event::CheckpointCreated {
            checkpoint: checkpoint.clone(),
        })?;
        Ok(checkpoint)
    }
}
