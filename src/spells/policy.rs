//! Whether the service runs on a failure: the project's switch, the scenario's switch, and the
//! invocation limit per task (counted from the store, so a restart does not reset it). The
//! limit caps repairs: past it, the service still runs to contain a task that gave up (the
//! plan keeps no repair spell), so a task cannot fail forever. Pure.

use super::plan::FAILURES_BEFORE_BLOCKING;
use crate::failure::{Failure, FailureSource, ProjectScenario};
use crate::store::HealerConfig;

/// The policy's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub run: bool,
    /// The scenario it read from the failure (when it could).
    pub scenario: Option<ProjectScenario>,
    /// Why not, in a sentence (or why yes).
    pub reason: String,
    /// Past the limit: only containment may run.
    pub contain_only: bool,
}

fn no(scenario: Option<ProjectScenario>, reason: impl Into<String>) -> Decision {
    Decision {
        run: false,
        scenario,
        reason: reason.into(),
        contain_only: false,
    }
}

fn times(n: u32) -> String {
    match n {
        1 => "once".to_string(),
        2 => "twice".to_string(),
        n => format!("{n} times"),
    }
}

/// `ran_for_task`: invocations that ran for the task before; `gives_up`: the give-up condition
/// holds for this failure ([`super::plan::Facts::gives_up`]).
pub fn should_run(
    event: &Failure,
    config: &HealerConfig,
    ran_for_task: u32,
    gives_up: bool,
) -> Decision {
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
        ProjectScenario::VerificationFailed | ProjectScenario::PullRequestCheckFailed => {
            (s.on_verification_failure, "verification failures")
        }
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
    if ran_for_task >= config.max_invocations_per_subtask {
        let stepped_in = format!(
            "Healer already stepped in {} for this task, the project's limit",
            times(ran_for_task)
        );
        if !gives_up {
            return no(
                Some(scenario),
                format!(
                    "{stepped_in}; it steps in again to block the task once it has failed \
                     {FAILURES_BEFORE_BLOCKING} times or the same way again"
                ),
            );
        }
        return Decision {
            run: true,
            scenario: Some(scenario),
            reason: format!(
                "{stepped_in}, and the task gave up: Healer only makes it safe, with no new attempt"
            ),
            contain_only: true,
        };
    }
    Decision {
        run: true,
        scenario: Some(scenario),
        reason: format!("{} is on for this project", what),
        contain_only: false,
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
    fn at_the_defaults_one_repair_per_task_then_containment_once_it_gave_up() {
        let config = HealerConfig::default();
        let f = failure(ProjectScenario::VerificationFailed);
        let first = should_run(&f, &config, 0, false);
        assert!(first.run && !first.contain_only, "{first:?}");
        assert_eq!(first.scenario, Some(ProjectScenario::VerificationFailed));
        let second = should_run(&f, &config, 1, false);
        assert!(!second.run);
        assert!(
            second.reason.contains("once for this task")
                && second.reason.contains("failed 3 times"),
            "{}",
            second.reason
        );
        let third = should_run(&f, &config, 1, true);
        assert!(third.run && third.contain_only, "{third:?}");
        assert!(third.reason.contains("no new attempt"), "{}", third.reason);
        let later = should_run(&f, &config, 5, true);
        assert!(later.run && later.contain_only);
    }

    #[test]
    fn switches_turn_scenarios_off_and_stuck_tasks_are_off_by_default() {
        let config = HealerConfig::default();
        let stuck = should_run(&failure(ProjectScenario::SubtaskStuck), &config, 0, false);
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
            assert!(should_run(&failure(s), &config, 0, false).run, "{s:?}");
        }
        let off = HealerConfig {
            enabled: false,
            ..HealerConfig::default()
        };
        let d = should_run(
            &failure(ProjectScenario::VerificationFailed),
            &off,
            0,
            false,
        );
        assert!(!d.run && d.reason.contains("turned off"));
        let mut no_init = HealerConfig::default();
        no_init.scenarios.on_init_failure = false;
        assert!(
            !should_run(
                &failure(ProjectScenario::InitScriptTestFailure),
                &no_init,
                0,
                false
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
        assert!(!should_run(&script, &config, 0, false).run);
    }
}
