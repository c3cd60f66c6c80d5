//! Steering's settings (key `steering`): every bound, with its default. Kept beside the store
//! because the project runner reads them as a session runs.

use serde::{Deserialize, Serialize};

use super::Store;
use crate::error::{Error, Result};

pub const STEERING_KEY: &str = "steering";

/// Defaults, named so the docs and the test at the defaults can point at them.
pub const DEFAULT_ZOMBIE_AFTER_SECS: u32 = 30 * 60;
pub const DEFAULT_MAX_LOOP_MESSAGES: u32 = 3;
pub const DEFAULT_JUDGE_EVERY_SECS: u32 = 15 * 60;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(default)]
pub struct SteeringSettings {
    /// Watch sessions at all (the loop detector, zombies).
    pub enabled: bool,
    /// A session with no new activity for this long is stuck: it is ended.
    pub zombie_after_secs: u32,
    /// Loop messages sent into one session; loops past it are recorded only.
    pub max_loop_messages: u32,
    /// How often the steering model looks at each task in progress (per task, counted from
    /// its last look, or from the session's start).
    pub judge_every_secs: u32,
    /// Also watch the Claude Code and opencode sessions the person runs themselves
    /// (`~/.claude/projects`, opencode's database): shown with their loop verdicts, never
    /// written into. Off unless the person turns it on.
    pub watch_own_sessions: bool,
}

impl Default for SteeringSettings {
    fn default() -> Self {
        SteeringSettings {
            enabled: true,
            zombie_after_secs: DEFAULT_ZOMBIE_AFTER_SECS,
            max_loop_messages: DEFAULT_MAX_LOOP_MESSAGES,
            judge_every_secs: DEFAULT_JUDGE_EVERY_SECS,
            watch_own_sessions: false,
        }
    }
}

impl SteeringSettings {
    /// What is wrong with these settings, in a sentence; `None` when they can be saved.
    pub fn problem(&self) -> Option<String> {
        if self.zombie_after_secs == 0 {
            return Some(
                "the time before a silent session counts as stuck must be at least one second"
                    .to_string(),
            );
        }
        if self.judge_every_secs < 60 {
            return Some(
                "the steering model looks at a task at most once a minute: set one minute or more"
                    .to_string(),
            );
        }
        None
    }
}

impl Store {
    pub fn steering_settings(&self) -> Result<SteeringSettings> {
        Ok(self.setting(STEERING_KEY)?.unwrap_or_default())
    }

    pub fn set_steering_settings(&self, settings: &SteeringSettings) -> Result<()> {
        if let Some(problem) = settings.problem() {
            return Err(Error::InvalidInput(problem));
        }
        self.set_setting(STEERING_KEY, settings)
    }
}
