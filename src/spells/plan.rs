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
    /// The failing check could not run on this computer (a missing program or module): no
    /// verdict on the agent's work.
    pub could_not_run: bool,
}

impl Facts {
    /// The give-up condition: the task failed [`FAILURES_BEFORE_BLOCKING`] times, or the same
    /// way again. Then Healer contains the task rather than trying again.
    pub fn gives_up(&self) -> bool {
        self.failures >= FAILURES_BEFORE_BLOCKING || self.repeated
    }
}

/// The spells that try to repair (a new attempt of the agent, an emergency subtask): the
/// invocation limits cap these. Containment — a rewind, a block with a follow-up, a progress
/// note — is never capped once the give-up condition holds, so a task cannot fail forever.
pub const REPAIRS: [&str; 3] = [rerun::RESUME, rerun::MINIMAL, rerun::TYPECHECK];

/// The spells for a failure, in order, as the rules say (before the project's lists).
pub fn rules(scenario: ProjectScenario, facts: Facts) -> Vec<&'static str> {
    use ProjectScenario::*;
    let give_up = facts.gives_up();
    match scenario {
        InitScriptTypecheckFailure => vec![rerun::TYPECHECK, progress::NAME],
        // The tests fail before the agent changed anything: the main branch is red.
        InitScriptTestFailure => vec![progress::NAME, blocked::NAME],
        InitScriptEnvironmentFailure => vec![doctor::NAME, progress::NAME, blocked::NAME],
        // Nothing to undo: the check never ran. The task waits, saying what is missing.
        VerificationFailed if facts.could_not_run => vec![progress::NAME, blocked::NAME],
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
        // The host's check is the verdict: the agent picks its session up with the check's log
        // (or the built-in agent starts from the log alone); its green fix is pushed.
        PullRequestCheckFailed if give_up => vec![blocked::NAME, progress::NAME],
        PullRequestCheckFailed => vec![rerun::RESUME, rerun::MINIMAL, progress::NAME],
    }
}

/// The plan: the rules' spells the project's lists allow; past the project's limit
/// (`contain_only`), only containment.
pub fn plan(
    scenario: ProjectScenario,
    facts: Facts,
    config: &HealerConfig,
    contain_only: bool,
) -> Vec<&'static str> {
    rules(scenario, facts)
        .into_iter()
        .filter(|s| config.allows(s) && !(contain_only && REPAIRS.contains(s)))
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
            plan(InitScriptTypecheckFailure, f, &c, false),
            ["fix_typecheck_errors", "update_progress_with_guidance"]
        );
        assert_eq!(
            plan(InitScriptTestFailure, f, &c, false),
            [
                "update_progress_with_guidance",
                "mark_task_blocked_with_followup"
            ]
        );
        assert_eq!(
            plan(InitScriptEnvironmentFailure, f, &c, false),
            [
                "run_tasks_doctor_like_checks",
                "update_progress_with_guidance",
                "mark_task_blocked_with_followup"
            ]
        );
        assert_eq!(
            plan(VerificationFailed, Facts { flaky: true, ..f }, &c, false),
            [
                "retry_with_claude_code_resume",
                "update_progress_with_guidance"
            ]
        );
        assert_eq!(
            plan(VerificationFailed, f, &c, false),
            [
                "rewind_uncommitted_changes",
                "mark_task_blocked_with_followup"
            ]
        );
        assert_eq!(
            plan(VerificationFailed, Facts { failures: 3, ..f }, &c, false),
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
                &c,
                false
            ),
            ["fix_typecheck_errors", "update_progress_with_guidance"]
        );
        assert_eq!(
            plan(SubtaskFailed, Facts { failures: 2, ..f }, &c, false),
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
                &c,
                false
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
                &c,
                false
            ),
            [
                "mark_task_blocked_with_followup",
                "update_progress_with_guidance"
            ]
        );
        assert_eq!(
            plan(SubtaskStuck, f, &c, false),
            [
                "run_tasks_doctor_like_checks",
                "update_progress_with_guidance",
                "mark_task_blocked_with_followup"
            ]
        );
        assert_eq!(
            plan(RuntimeError, f, &c, false),
            [
                "retry_with_minimal_subagent",
                "update_progress_with_guidance"
            ]
        );
        assert_eq!(
            plan(RuntimeError, Facts { failures: 3, ..f }, &c, false),
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
            plan(VerificationFailed, f, &forbidden, false),
            ["mark_task_blocked_with_followup"]
        );
        let only = HealerConfig {
            allowed_spells: vec!["update_progress_with_guidance".into()],
            ..HealerConfig::default()
        };
        assert_eq!(
            plan(InitScriptTypecheckFailure, f, &only, false),
            ["update_progress_with_guidance"]
        );
        assert!(plan(VerificationFailed, f, &only, false).is_empty());
    }

    #[test]
    fn past_the_limit_only_containment_is_left() {
        let c = HealerConfig::default();
        let given_up = Facts {
            failures: 3,
            flaky: true,
            ..Facts::default()
        };
        assert_eq!(
            plan(VerificationFailed, given_up, &c, true),
            ["update_progress_with_guidance"]
        );
        assert_eq!(
            plan(SubtaskFailed, given_up, &c, true),
            [
                "mark_task_blocked_with_followup",
                "update_progress_with_guidance"
            ]
        );
        assert_eq!(
            plan(InitScriptTypecheckFailure, Facts::default(), &c, true),
            ["update_progress_with_guidance"]
        );
    }
}
