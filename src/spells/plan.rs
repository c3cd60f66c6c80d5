//! The rule planner of the healer service: scenario and facts → spells in order, then the
//! project's allowed / forbidden lists. Pure. The table is docs/healer-service.md.

use super::{blocked, doctor, progress, rerun, rewind};
use crate::failure::ProjectScenario;
use crate::store::HealerConfig;

/// After this many failed sessions of one task, it is blocked with a follow-up rather than
/// tried again.
pub const FAILURES_BEFORE_BLOCKING: u32 = 3;

/// What the context says that changes the plan.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Facts {
    /// The same verification passed on this commit before: the failure looks flaky.
    pub flaky: bool,
    /// Failed sessions of the task, this one included.
    pub failures: u32,
    /// The failure's signature came back across sessions of the task.
    pub repeated: bool,
    /// The failing output names type-checker errors.
    pub type_errors: bool,
}

/// The spells for a failure, in order, as the rules say (before the project's lists).
pub fn rules(scenario: ProjectScenario, facts: Facts) -> Vec<&'static str> {
    use ProjectScenario::*;
    let give_up = facts.failures >= FAILURES_BEFORE_BLOCKING || facts.repeated;
    match scenario {
        InitScriptTypecheckFailure => vec![rerun::TYPECHECK, progress::NAME],
        // The tests fail before the agent changed anything: the main branch is red.
        InitScriptTestFailure => vec![progress::NAME, blocked::NAME],
        InitScriptEnvironmentFailure => vec![doctor::NAME, progress::NAME, blocked::NAME],
        VerificationFailed if facts.flaky => vec![rerun::RESUME, progress::NAME],
        // An agent that committed its own red work: back to the last green commit.
        VerificationFailed if give_up => {
            vec![rewind::LAST_GREEN, blocked::NAME, progress::NAME]
        }
        VerificationFailed => vec![rewind::UNCOMMITTED, blocked::NAME],
        SubtaskFailed if give_up => vec![blocked::NAME, progress::NAME],
        SubtaskFailed if facts.type_errors => vec![rerun::TYPECHECK, progress::NAME],
        SubtaskFailed => vec![rerun::RESUME, progress::NAME],
        SubtaskStuck => vec![doctor::NAME, progress::NAME, blocked::NAME],
        RuntimeError if give_up => vec![progress::NAME, blocked::NAME],
        RuntimeError => vec![rerun::MINIMAL, progress::NAME],
    }
}

/// The plan: the rules' spells the project's lists allow.
pub fn plan(scenario: ProjectScenario, facts: Facts, config: &HealerConfig) -> Vec<&'static str> {
    rules(scenario, facts)
        .into_iter()
        .filter(|s| config.allows(s))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ProjectScenario::*;

    /// The table of docs/healer-service.md, row by row.
    #[test]
    fn the_table_as_written_down() {
        let f = Facts::default();
        let c = HealerConfig::default();
        assert_eq!(
            plan(InitScriptTypecheckFailure, f, &c),
            ["fix_typecheck_errors", "update_progress_with_guidance"]
        );
        assert_eq!(
            plan(InitScriptTestFailure, f, &c),
            [
                "update_progress_with_guidance",
                "mark_task_blocked_with_followup"
            ]
        );
        assert_eq!(
            plan(InitScriptEnvironmentFailure, f, &c),
            [
                "run_tasks_doctor_like_checks",
                "update_progress_with_guidance",
                "mark_task_blocked_with_followup"
            ]
        );
        assert_eq!(
            plan(VerificationFailed, Facts { flaky: true, ..f }, &c),
            [
                "retry_with_claude_code_resume",
                "update_progress_with_guidance"
            ]
        );
        assert_eq!(
            plan(VerificationFailed, f, &c),
            [
                "rewind_uncommitted_changes",
                "mark_task_blocked_with_followup"
            ]
        );
        assert_eq!(
            plan(VerificationFailed, Facts { failures: 3, ..f }, &c),
            [
                "rewind_to_last_green_commit",
                "mark_task_blocked_with_followup",
                "update_progress_with_guidance"
            ]
        );
        assert_eq!(
            plan(
                SubtaskFailed,
                Facts {
                    type_errors: true,
                    failures: 1,
                    ..f
                },
                &c
            ),
            ["fix_typecheck_errors", "update_progress_with_guidance"]
        );
        assert_eq!(
            plan(SubtaskFailed, Facts { failures: 2, ..f }, &c),
            [
                "retry_with_claude_code_resume",
                "update_progress_with_guidance"
            ]
        );
        assert_eq!(
            plan(
                SubtaskFailed,
                Facts {
                    failures: 3,
                    type_errors: true,
                    ..f
                },
                &c
            ),
            [
                "mark_task_blocked_with_followup",
                "update_progress_with_guidance"
            ]
        );
        assert_eq!(
            plan(
                SubtaskFailed,
                Facts {
                    repeated: true,
                    ..f
                },
                &c
            ),
            [
                "mark_task_blocked_with_followup",
                "update_progress_with_guidance"
            ]
        );
        assert_eq!(
            plan(SubtaskStuck, f, &c),
            [
                "run_tasks_doctor_like_checks",
                "update_progress_with_guidance",
                "mark_task_blocked_with_followup"
            ]
        );
        assert_eq!(
            plan(RuntimeError, f, &c),
            [
                "retry_with_minimal_subagent",
                "update_progress_with_guidance"
            ]
        );
        assert_eq!(
            plan(RuntimeError, Facts { failures: 3, ..f }, &c),
            [
                "update_progress_with_guidance",
                "mark_task_blocked_with_followup"
            ]
        );
    }

    #[test]
    fn the_projects_lists_filter_the_plan() {
        let f = Facts::default();
        let forbidden = HealerConfig {
            forbidden_spells: vec!["rewind_uncommitted_changes".into()],
            ..HealerConfig::default()
        };
        assert_eq!(
            plan(VerificationFailed, f, &forbidden),
            ["mark_task_blocked_with_followup"]
        );
        let only = HealerConfig {
            allowed_spells: vec!["update_progress_with_guidance".into()],
            ..HealerConfig::default()
        };
        assert_eq!(
            plan(InitScriptTypecheckFailure, f, &only),
            ["update_progress_with_guidance"]
        );
        assert!(plan(VerificationFailed, f, &only).is_empty());
    }
}
