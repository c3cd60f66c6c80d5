//! Steering's settings (key `steering`): every bound of the loop, with its default. Kept below
//! the store because the project runner reads them too (how often it may resume an agent to
//! deliver a message).

use serde::{Deserialize, Serialize};

use super::Store;
use crate::error::{Error, Result};

pub const STEERING_KEY: &str = "steering";

/// Defaults, named so the docs and the test at the defaults can point at them.
pub const DEFAULT_JUDGE_INTERVAL_SECS: u32 = 15 * 60;
pub const DEFAULT_ZOMBIE_AFTER_SECS: u32 = 30 * 60;
pub const DEFAULT_JUDGE_TURNS: u32 = 10;
pub const DEFAULT_MAX_LOOP_MESSAGES: u32 = 3;
pub const DEFAULT_MAX_RESUMES: u32 = 3;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(default)]
pub struct SteeringSettings {
    /// Watch sessions at all (the loop detector, the judge, zombies).
    pub enabled: bool,
    /// How often the judge looks at each task in progress.
    pub judge_interval_secs: u32,
    /// The agent's last turns the judge reads.
    pub judge_turns: u32,
    /// A session with no new activity for this long is stuck: it is ended.
    pub zombie_after_secs: u32,
    /// Loop messages sent into one session; loops past it are recorded, and the judge looks
    /// at once instead.
    pub max_loop_messages: u32,
    /// Times one session may be resumed to deliver a message (agents without a hook).
    pub max_resumes: u32,
    /// Watch the Claude Code sessions a person runs themselves (`~/.claude/projects`), read
    /// only.
    pub watch_claude_projects: bool,
}

impl Default for SteeringSettings {
    fn default() -> Self {
        SteeringSettings {
            enabled: true,
            judge_interval_secs: DEFAULT_JUDGE_INTERVAL_SECS,
            judge_turns: DEFAULT_JUDGE_TURNS,
            zombie_after_secs: DEFAULT_ZOMBIE_AFTER_SECS,
            max_loop_messages: DEFAULT_MAX_LOOP_MESSAGES,
            max_resumes: DEFAULT_MAX_RESUMES,
            watch_claude_projects: false,
        }
    }
}

impl SteeringSettings {
    /// What is wrong with these settings, in a sentence; `None` when they can be saved.
    pub fn problem(&self) -> Option<String> {
        if self.judge_interval_secs == 0 {
            return Some("the judge's interval must be at least one second".to_string());
        }
        if self.zombie_after_secs == 0 {
            return Some(
                "the time before a silent session counts as stuck must be at least one second"
                    .to_string(),
            );
        }
        if self.judge_turns == 0 || self.judge_turns > 50 {
            return Some("the judge reads between 1 and 50 of the agent's last turns".to_string());
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
