//! What is wrong with a project before it is saved, field by field, in words for the person —
//! the add-project form shows each under its field, the CLI prints them.

use std::path::Path;

use super::repo::{canonical, inspect, FolderState};
use super::ProjectInput;
use crate::agent::{not_available, AgentRegistry};
use crate::llm::{Budgets, Provider};
use crate::store::Project;
use crate::workflow::FieldProblem;

/// Bounds of the settings a form may set.
const MAX_PARALLEL: u32 = 8;
const MIN_AGENT_SECS: u32 = 60;
const MIN_COMMAND_SECS: u32 = 10;
const MAX_SECS: u32 = 86_400;
const MIN_TOKEN_BUDGET: u64 = 1_000;
const MAX_STEPS: u32 = 500;

pub(super) fn problem(field: &str, message: impl Into<String>) -> FieldProblem {
    FieldProblem {
        field: field.to_string(),
        message: message.into(),
    }
}

/// Every problem with `input`; empty when it can be saved. `own_id`: the project being
/// changed (its own name and folder are not a clash).
pub fn validate(
    input: &ProjectInput,
    agents: &AgentRegistry,
    existing: &[Project],
    budgets: &Budgets,
    providers: &[Provider],
    own_id: Option<i64>,
) -> Vec<FieldProblem> {
    let mut problems = Vec::new();
    let others = existing.iter().filter(|p| Some(p.id) != own_id);
    let s = &input.settings;

    let path = canonical(Path::new(input.path.trim()));
    let check = inspect(&path);
    if input.path.trim().is_empty() {
        problems.push(problem("path", "Choose the repository's folder"));
    } else if check.state != FolderState::Ready {
        problems.push(problem("path", check.message.clone()));
    } else if let Some(p) = others.clone().find(|p| Path::new(&p.path) == path) {
        problems.push(problem(
            "path",
            format!(
                "This folder is already the project \u{201c}{}\u{201d}",
                p.name
            ),
        ));
    }

    let name = input.name.trim();
    if name.is_empty() {
        problems.push(problem("name", "Give the project a name"));
    } else if name.chars().count() > 80 {
        problems.push(problem("name", "Keep the name under 80 characters"));
    } else if others.clone().any(|p| p.name.eq_ignore_ascii_case(name)) {
        problems.push(problem(
            "name",
            format!("Another project is called \u{201c}{name}\u{201d}"),
        ));
    }

    if check.state == FolderState::Ready {
        let branch_ok = git2::Repository::open(&path).is_ok_and(|r| {
            r.find_branch(&s.main_branch, git2::BranchType::Local)
                .is_ok()
        });
        if !branch_ok {
            problems.push(problem(
                "main_branch",
                format!(
                    "The repository has no branch called \u{201c}{}\u{201d}",
                    s.main_branch
                ),
            ));
        }
    }

    if !agents.has(s.agent) {
        problems.push(problem("agent", capitalised(&not_available(s.agent))));
    } else {
        problems.extend(super::validate_agent::program(s));
    }
    problems.extend(super::validate_agent::model(s, providers));
    problems.extend(super::validate_agent::allowed_tools(s));
    problems.extend(super::validate_agent::approvals(s));

    if s.verify.is_empty() && !s.commit_without_checks {
        problems.push(problem(
            "verify",
            "Add a command that checks the agent's work (its tests, a type check), or choose to commit its work without checks",
        ));
    }
    for (i, v) in s.verify.iter().enumerate() {
        let field = format!("verify.{i}");
        if v.name.trim().is_empty() {
            problems.push(problem(
                &field,
                "Give this command a short name, such as test",
            ));
        } else if s
            .verify
            .iter()
            .take(i)
            .any(|o| o.name.trim() == v.name.trim())
        {
            problems.push(problem(
                &field,
                format!("Two commands are called \u{201c}{}\u{201d}", v.name.trim()),
            ));
        }
        if v.command.trim().is_empty() {
            problems.push(problem(
                &field,
                "The command is empty; fill it in or remove the row",
            ));
        }
    }
    if s.init_script.as_ref().is_some_and(|c| c.contains('\0')) {
        problems.push(problem(
            "init_script",
            "The init script has a character a command cannot hold",
        ));
    }

    if !(1..=MAX_PARALLEL).contains(&s.max_parallel) {
        problems.push(problem(
            "max_parallel",
            format!("Run between 1 and {MAX_PARALLEL} tasks at once"),
        ));
    }
    if !(MIN_AGENT_SECS..=MAX_SECS).contains(&s.agent_time_limit_secs) {
        problems.push(problem(
            "agent_time_limit_secs",
            format!("Give an agent between {MIN_AGENT_SECS} seconds and a day"),
        ));
    }
    if !(MIN_COMMAND_SECS..=MAX_SECS).contains(&s.command_time_limit_secs) {
        problems.push(problem(
            "command_time_limit_secs",
            format!("Give a command between {MIN_COMMAND_SECS} seconds and a day"),
        ));
    }
    if s.token_budget < MIN_TOKEN_BUDGET {
        problems.push(problem(
            "token_budget",
            format!("Allow at least {MIN_TOKEN_BUDGET} tokens per task"),
        ));
    } else if s.token_budget > budgets.per_task_tokens {
        problems.push(problem(
            "token_budget",
            format!(
                "Settings cap every model task at {} tokens; raise that cap first, or ask for less here",
                budgets.per_task_tokens
            ),
        ));
    }
    if !(1..=MAX_STEPS).contains(&s.max_steps) {
        problems.push(problem(
            "max_steps",
            format!("Allow between 1 and {MAX_STEPS} model calls per task"),
        ));
    }
    problems
}

fn capitalised(s: &str) -> String {
    crate::workflow::capitalise(s)
}
