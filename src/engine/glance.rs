//! Healer's state at a glance, for a tray icon or a status line: which workflows are being
//! repaired, what waits for the person (workflows that need attention, decisions to make), and
//! whether scheduled runs are paused. Read from the store, so it is the same for every caller.

use serde::{Deserialize, Serialize};

use super::Handle;
use crate::error::Result;
use crate::events::Event;
use crate::scheduler::SCHEDULER_PAUSED;
use crate::workflow::WorkflowStatus;

/// What a person pausing every schedule sees as the reason.
pub const PAUSED_BY_YOU: &str = "You paused all schedules.";

/// The state in one word: what the icon shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Mood {
    Healthy,
    Healing,
    NeedsYou,
}

/// Something that waits for the person, and where it is shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Waiting {
    /// A workflow whose last failure was not healed.
    Workflow { workflow_id: i64, title: String },
    /// A decision Healer asks for.
    Checkpoint {
        checkpoint_id: i64,
        /// "A run keeps failing (“Exchange rates”)".
        title: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct Glance {
    /// Titles of the workflows being repaired now.
    pub healing: Vec<String>,
    /// Oldest decision first, then workflows by title.
    pub waiting: Vec<Waiting>,
    /// Why scheduled runs are paused, if they are.
    pub paused: Option<String>,
}

impl Glance {
    pub fn mood(&self) -> Mood {
        if !self.waiting.is_empty() {
            Mood::NeedsYou
        } else if !self.healing.is_empty() {
            Mood::Healing
        } else {
            Mood::Healthy
        }
    }

    /// One line: "All is well", "Repairing “Weekly sales report”", "2 things need you".
    pub fn sentence(&self) -> String {
        let state = match (self.waiting.len(), self.healing.as_slice()) {
            (0, []) => "All is well".to_string(),
            (0, [one]) => format!("Repairing \u{201c}{one}\u{201d}"),
            (0, many) => format!("Repairing {} workflows", many.len()),
            (1, _) => "1 thing needs you".to_string(),
            (n, _) => format!("{n} things need you"),
        };
        match self.paused {
            Some(_) => format!("{state} · schedules paused"),
            None => state,
        }
    }
}

impl Handle {
    pub fn glance(&self) -> Result<Glance> {
        let store = &self.services.store;
        let mut waiting: Vec<Waiting> = store
            .pending_checkpoints()?
            .into_iter()
            .map(|c| Waiting::Checkpoint {
                checkpoint_id: c.id,
                title: match &c.workflow_title {
                    Some(w) => format!("{} (\u{201c}{w}\u{201d})", c.trigger.title()),
                    None => c.trigger.title().to_string(),
                },
            })
            .collect();
        let workflows = store.list_workflow_summaries()?;
        waiting.extend(
            workflows
                .iter()
                .filter(|w| w.status == WorkflowStatus::NeedsAttention)
                .map(|w| Waiting::Workflow {
                    workflow_id: w.id,
                    title: w.title.clone(),
                }),
        );
        Ok(Glance {
            healing: workflows
                .into_iter()
                .filter(|w| w.healing)
                .map(|w| w.title)
                .collect(),
            waiting,
            paused: crate::scheduler::paused(store)?,
        })
    }

    /// Stop every scheduled run until [`Handle::resume_scheduler`]; runs by hand still go.
    pub fn pause_scheduler(&self) -> Result<()> {
        let store = &self.services.store;
        if crate::scheduler::paused(store)?.is_some() {
            return Ok(());
        }
        store.set_setting(SCHEDULER_PAUSED, &PAUSED_BY_YOU)?;
        self.services.bus.emit(Event::SchedulerPaused {
            reason: PAUSED_BY_YOU.to_string(),
        })?;
        self.services.wake.scheduler.notify_one();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glance(healing: &[&str], waiting: usize, paused: bool) -> Glance {
        Glance {
            healing: healing.iter().map(|s| s.to_string()).collect(),
            waiting: (0..waiting)
                .map(|i| Waiting::Checkpoint {
                    checkpoint_id: i as i64,
                    title: "A run keeps failing".to_string(),
                })
                .collect(),
            paused: paused.then(|| PAUSED_BY_YOU.to_string()),
        }
    }

    #[test]
    fn what_waits_for_the_person_outranks_a_repair_in_progress() {
        assert_eq!(glance(&[], 0, false).mood(), Mood::Healthy);
        assert_eq!(glance(&["Report"], 0, false).mood(), Mood::Healing);
        assert_eq!(glance(&["Report"], 2, false).mood(), Mood::NeedsYou);
        assert_eq!(
            glance(&["Report"], 0, false).sentence(),
            "Repairing \u{201c}Report\u{201d}"
        );
        assert_eq!(
            glance(&["A", "B"], 0, true).sentence(),
            "Repairing 2 workflows · schedules paused"
        );
        assert_eq!(glance(&["A"], 2, false).sentence(), "2 things need you");
    }
}
