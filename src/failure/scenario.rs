//! The situations a project's run can fail in. A `Failure` carries its scenario as text (the
//! pipeline stores and matches text, so script runs keep theirs); projects name theirs with
//! this enum, and the healer service's rules (the next issue's spells) match on it.

use serde::{Deserialize, Serialize};

use super::FailureClass;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
pub enum ProjectScenario {
    /// The init script failed on a type check (`tsc`, `mypy`, `cargo check` …).
    InitScriptTypecheckFailure,
    /// The init script failed on tests.
    InitScriptTestFailure,
    /// The init script failed for anything else: a missing tool, a failed install, no network.
    InitScriptEnvironmentFailure,
    /// The agent finished, and a verification command failed.
    VerificationFailed,
    /// The agent ended its session without finishing the task: it gave up, or hit its token,
    /// step or malformed-reply bound.
    SubtaskFailed,
    /// The agent's process failed: it could not start, exited non-zero, printed a stream that
    /// could not be read, or ran past its time limit.
    RuntimeError,
}

impl ProjectScenario {
    pub const ALL: [ProjectScenario; 6] = [
        ProjectScenario::InitScriptTypecheckFailure,
        ProjectScenario::InitScriptTestFailure,
        ProjectScenario::InitScriptEnvironmentFailure,
        ProjectScenario::VerificationFailed,
        ProjectScenario::SubtaskFailed,
        ProjectScenario::RuntimeError,
    ];

    /// As stored in `Failure::scenario` (and matched by rules).
    pub fn as_str(self) -> &'static str {
        match self {
            ProjectScenario::InitScriptTypecheckFailure => "InitScriptTypecheckFailure",
            ProjectScenario::InitScriptTestFailure => "InitScriptTestFailure",
            ProjectScenario::InitScriptEnvironmentFailure => "InitScriptEnvironmentFailure",
            ProjectScenario::VerificationFailed => "VerificationFailed",
            ProjectScenario::SubtaskFailed => "SubtaskFailed",
            ProjectScenario::RuntimeError => "RuntimeError",
        }
    }

    pub fn parse(s: &str) -> Option<ProjectScenario> {
        ProjectScenario::ALL.into_iter().find(|p| p.as_str() == s)
    }

    /// What happened, for a person.
    pub fn describe(self) -> &'static str {
        match self {
            ProjectScenario::InitScriptTypecheckFailure => {
                "the init script failed on a type check before the agent started"
            }
            ProjectScenario::InitScriptTestFailure => {
                "the init script failed on tests before the agent started"
            }
            ProjectScenario::InitScriptEnvironmentFailure => {
                "the init script could not prepare the worktree"
            }
            ProjectScenario::VerificationFailed => "the agent's change did not pass verification",
            ProjectScenario::SubtaskFailed => "the agent stopped without finishing the task",
            ProjectScenario::RuntimeError => "the agent itself failed",
        }
    }

    /// The class the pipeline starts from; the runner may say better (a time limit).
    pub fn class(self) -> FailureClass {
        match self {
            ProjectScenario::InitScriptTypecheckFailure
            | ProjectScenario::InitScriptTestFailure
            | ProjectScenario::VerificationFailed
            | ProjectScenario::SubtaskFailed => FailureClass::Logic,
            ProjectScenario::InitScriptEnvironmentFailure => FailureClass::Environment,
            ProjectScenario::RuntimeError => FailureClass::Unknown,
        }
    }

    /// Which of the three init-script scenarios a failed init script's output shows.
    pub fn of_init_output(output: &str) -> ProjectScenario {
        let text = output.to_ascii_lowercase();
        const TYPECHECK: [&str; 7] = [
            "error ts",
            "tsc ",
            "type error",
            "mypy",
            "pyright",
            "error[e",
            "cannot find type",
        ];
        const TESTS: [&str; 8] = [
            "test result: failed",
            "tests failed",
            "failing",
            " failed,",
            "assertionerror",
            "failures:",
            "not ok ",
            "failed tests",
        ];
        if TYPECHECK.iter().any(|m| text.contains(m)) {
            ProjectScenario::InitScriptTypecheckFailure
        } else if TESTS.iter().any(|m| text.contains(m)) {
            ProjectScenario::InitScriptTestFailure
        } else {
            ProjectScenario::InitScriptEnvironmentFailure
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_init_output_picks_its_scenario() {
        for s in ProjectScenario::ALL {
            assert_eq!(ProjectScenario::parse(s.as_str()), Some(s));
        }
        let of = ProjectScenario::of_init_output;
        assert_eq!(
            of("src/a.ts(3,1): error TS2322: Type 'string' is not assignable"),
            ProjectScenario::InitScriptTypecheckFailure
        );
        assert_eq!(
            of("test result: FAILED. 3 passed; 1 failed"),
            ProjectScenario::InitScriptTestFailure
        );
        assert_eq!(
            of("=== 1 failed, 4 passed in 0.2s ==="),
            ProjectScenario::InitScriptTestFailure
        );
        assert_eq!(
            of("bash: npm: command not found"),
            ProjectScenario::InitScriptEnvironmentFailure
        );
    }
}
