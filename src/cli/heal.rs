//! The CLI of healing: a test alert, running until healed, the auto-fix tasks, notifications,
//! Re-plan.

use std::time::Duration;

use healer::client::{self, Request, Response};
use healer::llm::MessageRole;
use healer::maintainer::AutoFix;
use healer::workflow::RunStatus;
use healer::{Paths, Result};

use crate::print::{print_json, print_run};
use crate::reach::{act, open, unexpected, ANSWER_WAIT};

/// How long `--until-healed` and `replan` wait for a running engine: model work included.
const HEAL_WAIT: Duration = Duration::from_secs(30 * 60);

pub async fn run_until_healed(paths: &Paths, name: String, json: bool) -> Result<bool> {
    let workflow = open(paths)?.workflow_by_name(&name)?;
    let request = Request::RunWorkflow {
        workflow: name,
        until_healed: true,
    };
    let Response::Healed { healed } = act(paths, request, HEAL_WAIT).await? else {
        return unexpected();
    };
    let ok = healed.last.status == RunStatus::Succeeded;
    if json {
        print_json(&healed)?;
        return Ok(ok);
    }
    print_run(&workflow.title, &healed.first);
    for fix in &healed.fixes {
        println!("{}", autofix_line(fix));
    }
    if healed.last.id != healed.first.run.id {
        println!(
            "Run #{} (version {}): {}",
            healed.last.number, healed.last.version, healed.last.summary
        );
    }
    println!("{}", healed.outcome);
    Ok(ok)
}

/// `healer task list --workflow NAME`: the workflow's tasks (auto-fix and chat).
pub fn workflow_tasks(paths: &Paths, name: &str, limit: u32, json: bool) -> Result<bool> {
    let store = open(paths)?;
    let workflow = store.workflow_by_name(name)?;
    let fixes = store.all_autofixes(Some(workflow.id), limit)?;
    if json {
        return print_json(&fixes);
    }
    if fixes.is_empty() {
        println!("No auto-fix tasks for \"{}\" yet.", workflow.title);
    }
    for fix in &fixes {
        println!("{}", autofix_line(fix));
    }
    Ok(true)
}

fn autofix_line(fix: &AutoFix) -> String {
    let change = match (fix.from_version, fix.to_version) {
        (Some(a), Some(b)) => format!("{a} → {b}"),
        (Some(a), None) => format!("{a}"),
        _ => String::new(),
    };
    let comment = fix
        .fix_comment
        .as_deref()
        .map(|c| format!(" — {c}"))
        .unwrap_or_default();
    format!(
        "#{:<5} auto-fix {:<11} {change:<11} {} tokens{comment}\n       {}",
        fix.task_id,
        fix.status.as_str(),
        fix.tokens,
        fix.summary
    )
}

pub async fn replan(paths: &Paths, name: String, message: String, json: bool) -> Result<bool> {
    let request = Request::Replan {
        workflow: name,
        message,
    };
    let Response::Chat { chat } = act(paths, request, HEAL_WAIT).await? else {
        return unexpected();
    };
    if json {
        print_json(&chat)?;
        return Ok(chat.last_error.is_none());
    }
    if let Some(error) = &chat.last_error {
        // The model could not answer: nothing was done, and the person must know why.
        eprintln!("The planner could not answer: {error}");
        if error.starts_with("no model is set up") {
            eprintln!("{}", crate::NO_MODEL_HINT);
        }
        return Ok(false);
    }
    // The turn just taken: everything after the person's last message.
    let start = chat
        .messages
        .iter()
        .rposition(|m| m.role == MessageRole::User)
        .map_or(0, |i| i + 1);
    for m in &chat.messages[start..] {
        match m.role {
            MessageRole::Assistant => {
                for call in &m.tool_calls {
                    if call.name != "ask" {
                        println!("[planner used {}]", call.name);
                    }
                }
                if !m.content.trim().is_empty() {
                    println!("{}", m.content.trim());
                }
            }
            MessageRole::Tool if m.is_error => {
                println!(
                    "[{} failed: {}]",
                    m.tool_name.as_deref().unwrap_or("tool"),
                    m.content
                );
            }
            _ => {}
        }
    }
    if let Some(q) = &chat.question {
        println!("\nThe planner asks: {q}\n(answer with: healer replan <name> \"your answer\")");
    }
    Ok(true)
}

pub fn notifications(paths: &Paths, json: bool) -> Result<bool> {
    let store = open(paths)?;
    let list = store.list_notifications()?;
    if json {
        return print_json(&list);
    }
    println!("{} unread", list.unread);
    for n in &list.items {
        let mark = if n.read { " " } else { "•" };
        println!("{mark} {}  {}", n.created_at, n.title);
        for line in n.body.lines() {
            println!("    {line}");
        }
        if let Some(run) = n.run_id {
            println!("    (run {})", store.run_name(run));
        }
        if n.repeats > 0 {
            println!(
                "    It failed {} more time{} since{}.",
                n.repeats,
                if n.repeats == 1 { "" } else { "s" },
                n.repeated_at
                    .as_deref()
                    .map(|at| format!(" (last at {at})"))
                    .unwrap_or_default()
            );
        }
        for action in &n.actions {
            let hint = match action {
                healer::notification::NotificationAction::OpenTask => {
                    match (n.project_name.as_deref(), n.project_task.as_deref()) {
                        (Some(project), Some(task)) => {
                            println!("    → Open the task: healer project tasks {project:?} (task {task})");
                            continue;
                        }
                        _ => continue,
                    }
                }
                healer::notification::NotificationAction::AnswerQuestion => match n.checkpoint_id {
                    Some(id) => {
                        println!("    → Answer the question: healer checkpoint decide {id} (healer checkpoint list shows it)");
                        continue;
                    }
                    None => continue,
                },
                healer::notification::NotificationAction::Replan => {
                    "Re-plan: healer replan <workflow> \"what should change\""
                }
                healer::notification::NotificationAction::OpenSettings => {
                    "Open settings: healer provider add … and healer tier set …"
                }
                healer::notification::NotificationAction::RetryAutofix => {
                    "Try auto-fix again: healer workflow retry-fix <workflow>"
                }
            };
            println!("    → {hint}");
        }
    }
    Ok(true)
}

/// `healer check`: a harmless failure through the whole pipeline.
pub async fn check(paths: &Paths, json: bool) -> Result<bool> {
    let response = client::act(paths, "healer check", Request::SendTestAlert, ANSWER_WAIT).await?;
    let Response::TestAlert { heal } = response else {
        return unexpected();
    };
    if json {
        return print_json(&heal);
    }
    let outcome = heal.outcome.map(|o| o.as_str()).unwrap_or("running");
    println!("Test alert: heal {} {outcome}: {}", heal.id, heal.summary);
    Ok(true)
}
