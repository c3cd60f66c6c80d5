//! Whether the service runs on a failure: the project's switch, the scenario's switch, and the
//! invocation limits per session and per task (counted from the store, so a restart does not
//! reset them). Pure.

use crate::failure::{Failure, FailureSource, ProjectScenario};
use crate::store::{HealerConfig, HealerCounters};

/// The policy's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub run: bool,
    /// The scenario it read from the failure (when it could).
    pub scenario: Option<ProjectScenario>,
    /// Why not, in a sentence (or why yes).
    pub reason: String,
}

fn no(scenario: Option<ProjectScenario>, reason: impl Into<String>) -> Decision {
    Decision {
        run: false,
        scenario,
        reason: reason.into(),
    }
}

fn times(n: u32) -> String {
    match n {
        1 => "once".to_string(),
        2 => "twice".to_string(),
        n => format!("{n} times"),
    }
}

pub fn should_run(event: &Failure, config: &HealerConfig, counters: HealerCounters) -> Decision {
    if !matches!(event.source, FailureSource::ProjectTask { .. }) {
        return no(None, "not a project's task");
    }
    let Some(scenario) = ProjectScenario::parse(&event.scenario) else {
        return no(
            None,
            format!(
                "the failure's kind ({}) is not one the healer service knows",
                event.scenario
            ),
        );
    };
    if !config.enabled {
        return no(
            Some(scenario),
            "the healer service is turned off for this project",
        );
    }
    let s = &config.scenarios;
    let (on, what) = match scenario {
        ProjectScenario::InitScriptTypecheckFailure
        | ProjectScenario::InitScriptTestFailure
        | ProjectScenario::InitScriptEnvironmentFailure => {
            (s.on_init_failure, "init script failures")
        }
        ProjectScenario::VerificationFailed => (s.on_verification_failure, "verification failures"),
        ProjectScenario::SubtaskFailed => {
            (s.on_subtask_failure, "tasks the agent could not finish")
        }
        ProjectScenario::RuntimeError => (s.on_runtime_error, "agents that fail to run"),
        ProjectScenario::SubtaskStuck => (s.on_stuck_subtask, "stuck tasks"),
    };
    if !on {
        return no(
            Some(scenario),
            format!("the project's settings leave {what} to you"),
        );
    }
    if counters.session >= config.max_invocations_per_session {
        return no(
            Some(scenario),
            format!(
                "Healer already stepped in {} for this session, the project's limit",
                times(counters.session)
            ),
        );
    }
    if counters.task >= config.max_invocations_per_subtask {
        return no(
            Some(scenario),
            format!(
                "Healer already stepped in {} for this task, the project's limit",
                times(counters.task)
            ),
        );
    }
    Decision {
        run: true,
        scenario: Some(scenario),
        reason: format!("{} is on for this project", what),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::failure::{Evidence, FailureClass};

    fn failure(scenario: ProjectScenario) -> Failure {
        Failure::new(
            FailureSource::ProjectTask {
                project_id: 1,
                task_id: "t1".into(),
                session_id: 7,
            },
            scenario.as_str(),
            scenario.class(),
            Evidence::default(),
        )
    }

    #[test]
    fn at_the_defaults_two_per_session_and_one_per_task() {
        let config = HealerConfig::default();
        let f = failure(ProjectScenario::VerificationFailed);
        let first = should_run(
            &f,
            &config,
            HealerCounters {
                session: 0,
                task: 0,
            },
        );
        assert!(first.run, "{first:?}");
        assert_eq!(first.scenario, Some(ProjectScenario::VerificationFailed));
        let second = should_run(
            &f,
            &config,
            HealerCounters {
                session: 1,
                task: 1,
            },
        );
        assert!(!second.run);
        assert!(
            second.reason.contains("once for this task"),
            "{}",
            second.reason
        );
        let more_per_task = HealerConfig {
            max_invocations_per_subtask: 10,
            ..HealerConfig::default()
        };
        assert!(
            should_run(
                &f,
                &more_per_task,
                HealerCounters {
                    session: 1,
                    task: 1
                }
            )
            .run
        );
        let third = should_run(
            &f,
            &more_per_task,
            HealerCounters {
                session: 2,
                task: 2,
            },
        );
        assert!(!third.run);
        assert!(
            third.reason.contains("twice for this session"),
            "{}",
            third.reason
        );
    }

    #[test]
    fn switches_turn_scenarios_off_and_stuck_tasks_are_off_by_default() {
        let config = HealerConfig::default();
        let zero = HealerCounters::default();
        let stuck = should_run(&failure(ProjectScenario::SubtaskStuck), &config, zero);
        assert!(!stuck.run);
        assert!(stuck.reason.contains("stuck tasks"), "{}", stuck.reason);
        for s in [
            ProjectScenario::InitScriptTypecheckFailure,
            ProjectScenario::InitScriptTestFailure,
            ProjectScenario::InitScriptEnvironmentFailure,
            ProjectScenario::VerificationFailed,
            ProjectScenario::SubtaskFailed,
            ProjectScenario::RuntimeError,
        ] {
            assert!(should_run(&failure(s), &config, zero).run, "{s:?}");
        }
        let off = HealerConfig {
            enabled: false,
            ..HealerConfig::default()
        };
        let d = should_run(&failure(ProjectScenario::VerificationFailed), &off, zero);
        assert!(!d.run && d.reason.contains("turned off"));
        let mut no_init = HealerConfig::default();
        no_init.scenarios.on_init_failure = false;
        assert!(
            !should_run(
                &failure(ProjectScenario::InitScriptTestFailure),
                &no_init,
                zero
            )
            .run
        );
        let script = Failure::new(
            FailureSource::ScriptRun {
                workflow_id: 1,
                run_id: 1,
            },
            "x",
            FailureClass::Logic,
            Evidence::default(),
        );
        assert!(!should_run(&script, &config, zero).run);
    }
}
