//! The healer service's settings per project (`HealerConfig`), kept beside the store because
//! the runner, the steering loop and the service all read them; and the invocation counters
//! its policy reads, counted from the stored invocations so a restart does not reset them.

use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};

use super::{now, Store};
use crate::error::{Error, Result};

/// Defaults, named so the docs and the tests at the defaults can point at them.
pub const DEFAULT_MAX_INVOCATIONS_PER_TASK: u32 = 1;
/// Hours a task may stay in progress before the stuck scan reports it.
pub const DEFAULT_STUCK_AFTER_HOURS: u32 = 2;

/// Whether a spell that discards work asks first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum HealerMode {
    /// A spell that discards work (a rewind) asks through a checkpoint first.
    Conservative,
    /// Every spell of the plan runs without asking.
    Aggressive,
}

/// Which failures wake the healer service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(default, rename_all = "camelCase")]
pub struct HealerScenarios {
    pub on_init_failure: bool,
    pub on_verification_failure: bool,
    pub on_subtask_failure: bool,
    pub on_runtime_error: bool,
    pub on_stuck_subtask: bool,
}

impl Default for HealerScenarios {
    fn default() -> Self {
        HealerScenarios {
            on_init_failure: true,
            on_verification_failure: true,
            on_subtask_failure: true,
            on_runtime_error: true,
            on_stuck_subtask: false,
        }
    }
}

/// A project's healer settings (the defaults are the issue's).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(default, rename_all = "camelCase")]
pub struct HealerConfig {
    pub enabled: bool,
    /// Invocations (not skipped) that may try to repair one task, all its sessions together.
    /// Past it, Healer still makes the task safe (blocks it with a follow-up) once it gave up.
    pub max_invocations_per_subtask: u32,
    pub scenarios: HealerScenarios,
    /// Spells that may run; empty: all.
    pub allowed_spells: Vec<String>,
    /// Spells that never run.
    pub forbidden_spells: Vec<String>,
    pub mode: HealerMode,
    /// A task in progress longer than this is reported by the stuck scan.
    pub stuck_after_hours: u32,
}

impl Default for HealerConfig {
    fn default() -> Self {
        HealerConfig {
            enabled: true,
            max_invocations_per_subtask: DEFAULT_MAX_INVOCATIONS_PER_TASK,
            scenarios: HealerScenarios::default(),
            allowed_spells: vec![],
            forbidden_spells: vec![],
            mode: HealerMode::Conservative,
            stuck_after_hours: DEFAULT_STUCK_AFTER_HOURS,
        }
    }
}

impl HealerConfig {
    /// What is wrong with these settings, in a sentence; `None` when they can be saved.
    pub fn problem(&self) -> Option<String> {
        if self.stuck_after_hours == 0 {
            return Some(
                "a task must be allowed at least one hour before it counts as stuck".to_string(),
            );
        }
        None
    }

    /// Whether the allowed and forbidden lists let `spell` run.
    pub fn allows(&self, spell: &str) -> bool {
        (self.allowed_spells.is_empty() || self.allowed_spells.iter().any(|s| s == spell))
            && !self.forbidden_spells.iter().any(|s| s == spell)
    }
}

impl Store {
    /// A project's healer settings (the defaults when none were saved).
    pub fn healer_config(&self, project_id: i64) -> Result<HealerConfig> {
        let json: Option<String> = self.call(|c| {
            c.query_row(
                "SELECT config FROM healer_configs WHERE project_id = ?1",
                [project_id],
                |r| r.get(0),
            )
            .optional()
        })?;
        match json {
            None => Ok(HealerConfig::default()),
            Some(json) => serde_json::from_str(&json).map_err(|e| {
                Error::Internal(format!(
                    "the healer settings of project {project_id} cannot be read: {e}"
                ))
            }),
        }
    }

    pub fn set_healer_config(&self, project_id: i64, config: &HealerConfig) -> Result<()> {
        if let Some(problem) = config.problem() {
            return Err(Error::InvalidInput(problem));
        }
        self.project(project_id)?;
        let json = serde_json::to_string(config)
            .map_err(|e| Error::Internal(format!("cannot save the healer settings: {e}")))?;
        self.call(|c| {
            c.execute(
                "INSERT INTO healer_configs (project_id, config, updated_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT (project_id) DO UPDATE SET config = ?2, updated_at = ?3",
                params![project_id, json, now()],
            )
        })?;
        Ok(())
    }

    /// The policy's counter: invocations that ran (not skipped) for this task, all its
    /// sessions together.
    pub fn healer_invocations_of_task(&self, project_id: i64, task_id: &str) -> Result<u32> {
        self.call(|c| {
            c.query_row(
                "SELECT COUNT(*) FROM healer_invocations
                 WHERE project_id = ?1 AND task_id = ?2 AND status != 'skipped'",
                params![project_id, task_id],
                |r| r.get(0),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ProjectSettings;

    #[test]
    fn a_project_without_saved_settings_has_the_issues_defaults() {
        let dir = tempfile::tempdir().expect("test setup");
        let store = Store::open(&dir.path().join("h.db")).expect("test setup");
        let p = store
            .insert_project("p", "/tmp/p", &ProjectSettings::default())
            .expect("test setup");
        let config = store.healer_config(p.id).expect("test setup");
        assert!(config.enabled);
        assert_eq!(config.max_invocations_per_subtask, 1);
        assert!(config.scenarios.on_init_failure);
        assert!(config.scenarios.on_verification_failure);
        assert!(config.scenarios.on_subtask_failure);
        assert!(config.scenarios.on_runtime_error);
        assert!(!config.scenarios.on_stuck_subtask);
        assert!(config.allowed_spells.is_empty() && config.forbidden_spells.is_empty());
        assert_eq!(config.mode, HealerMode::Conservative);
        assert_eq!(config.stuck_after_hours, 2);
        assert!(config.allows("rewind_uncommitted_changes"));
    }

    #[test]
    fn saved_settings_are_read_back_and_lists_filter_spells() {
        let dir = tempfile::tempdir().expect("test setup");
        let store = Store::open(&dir.path().join("h.db")).expect("test setup");
        let p = store
            .insert_project("p", "/tmp/p", &ProjectSettings::default())
            .expect("test setup");
        let config = HealerConfig {
            mode: HealerMode::Aggressive,
            allowed_spells: vec!["a".into(), "b".into()],
            forbidden_spells: vec!["b".into()],
            ..HealerConfig::default()
        };
        store.set_healer_config(p.id, &config).expect("test setup");
        let back = store.healer_config(p.id).expect("test setup");
        assert_eq!(back, config);
        assert!(back.allows("a"));
        assert!(!back.allows("b"), "forbidden wins over allowed");
        assert!(!back.allows("c"), "not in the allowed list");
        let bad = HealerConfig {
            stuck_after_hours: 0,
            ..HealerConfig::default()
        };
        assert!(store.set_healer_config(p.id, &bad).is_err());
        assert!(store.set_healer_config(p.id + 99, &config).is_err());
    }

    #[test]
    fn settings_saved_with_the_old_per_session_limit_still_read() {
        let old = r#"{"enabled":true,"maxInvocationsPerSession":2,"maxInvocationsPerSubtask":3}"#;
        let config: HealerConfig = serde_json::from_str(old).expect("reads");
        assert_eq!(config.max_invocations_per_subtask, 3);
        assert_eq!(config.mode, HealerMode::Conservative);
    }
}
