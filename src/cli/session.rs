//! `healer session …`: an agent's session on a project's task, step by step, as an ATIF
//! trajectory, or stopped; and the loop detector over any transcript file.

use std::path::PathBuf;
use std::time::Duration;

use clap::Subcommand;
use healer::agent::transcript;
use healer::client::{Request, Response};
use healer::looping;
use healer::project;
use healer::session::{StepKind, StepSource};
use healer::{Error, Paths, Result};

use crate::print::print_json;
use crate::project::status_word;
use crate::reach::{act, open, unexpected};

/// Characters of one step `session show` prints.
const SHOWN_CHARS: usize = 2_000;

#[derive(Subcommand)]
pub enum SessionCommand {
    /// A session's steps: what the agent said, each tool it called and what came back
    Show {
        id: i64,
        #[arg(long)]
        json: bool,
    },
    /// Write the session as an ATIF-v1.7 trajectory (to standard output, or --out), with the
    /// healer service's invocations on it linked as sub-agent trajectories
    ExportAtif {
        id: i64,
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Run the loop detector over a transcript (Claude Code JSONL, a Codex rollout or an ATIF
    /// trajectory): looping or progressing, with the rule and the steps that show it. Exits 0
    /// either way.
    Check {
        file: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Write the agent of a running session a message: it waits in the session's mailbox and
    /// reaches the agent at its next chance (its conversation, Claude Code's hook, Codex's
    /// resume)
    Say {
        id: i64,
        text: String,
        #[arg(long)]
        json: bool,
    },
    /// Stop a running session (its worktree is kept)
    Stop {
        id: i64,
        #[arg(long)]
        json: bool,
    },
}

pub async fn run(command: SessionCommand, paths: &Paths) -> Result<bool> {
    match command {
        SessionCommand::Show { id, json } => {
            let store = open(paths)?;
            let detail = project::session_detail(&store, id)?;
            if json {
                return print_json(&detail);
            }
            let s = &detail.session;
            println!(
                "Session {} ({}, {}) of \u{201c}{}\u{201d} on task {} \u{201c}{}\u{201d}",
                s.id,
                s.agent.as_str(),
                status_word(s.status),
                detail.project_name,
                s.task_id,
                s.task_title
            );
            for stored in &detail.steps {
                let step = &stored.step;
                let who = match (step.source, step.kind) {
                    (_, StepKind::ToolCall) => {
                        format!("→ {}", step.tool.as_deref().unwrap_or("tool"))
                    }
                    (_, StepKind::ToolResult) => format!(
                        "← {}{}",
                        step.tool.as_deref().unwrap_or("result"),
                        if step.is_error { " (error)" } else { "" }
                    ),
                    (StepSource::System, _) => "healer".to_string(),
                    (StepSource::User, _) => "prompt".to_string(),
                    (StepSource::Agent, _) => "agent".to_string(),
                };
                println!("── {who} · {}", step.at);
                let body = step
                    .arguments
                    .as_deref()
                    .filter(|_| step.kind == StepKind::ToolCall)
                    .unwrap_or(&step.text);
                if !body.trim().is_empty() {
                    println!("{}", cut(body.trim()));
                }
            }
            if !s.summary.is_empty() {
                println!("  → {}", s.summary);
            }
            Ok(true)
        }
        SessionCommand::ExportAtif { id, out } => {
            let store = open(paths)?;
            // With a step for each healer invocation, linked to its own trajectory.
            let text = healer::spells::session_trajectory_with_heals(&store, Some(paths), id)?;
            match out {
                Some(path) => {
                    std::fs::write(&path, format!("{text}\n"))
                        .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))?;
                    eprintln!("Wrote the trajectory of session {id} to {}", path.display());
                }
                None => println!("{text}"),
            }
            Ok(true)
        }
        SessionCommand::Check { file, json } => check(&file, json),
        SessionCommand::Say { id, text, json } => {
            // The mailbox is stored: whichever engine runs the session delivers it.
            let store = open(paths)?;
            let entry = store.say_to_session(id, &text)?;
            if json {
                return print_json(&entry);
            }
            println!("Your message waits for the agent's next chance to read it; the task's timeline shows when it was delivered");
            Ok(true)
        }
        SessionCommand::Stop { id, json } => {
            match act(paths, Request::StopSession { id }, Duration::from_secs(30)).await? {
                Response::Done if json => print_json(&serde_json::json!({"stopped": id})),
                Response::Done => {
                    println!("Stopping session {id}; its worktree is kept");
                    Ok(true)
                }
                _ => unexpected(),
            }
        }
    }
}

fn check(file: &std::path::Path, json: bool) -> Result<bool> {
    let read = transcript::read_file(file)?;
    let verdict = looping::check(&read.steps);
    if json {
        return print_json(&verdict);
    }
    match verdict.rule {
        Some(rule) => {
            println!(
                "Looping: {} ({} steps read).",
                upper_first(rule.describe()),
                verdict.steps
            );
            for line in &verdict.evidence {
                println!("  {line}");
            }
            if let Some(message) = &verdict.message {
                println!("What Healer would tell the agent: {message}");
            }
        }
        None => println!("Progressing: no loop in {} steps read.", verdict.steps),
    }
    if read.skipped_lines > 0 {
        println!(
            "{} line(s) of the file were not complete records and were left out.",
            read.skipped_lines
        );
    }
    Ok(true)
}

fn upper_first(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

fn cut(text: &str) -> String {
    match text.char_indices().nth(SHOWN_CHARS) {
        Some((at, _)) => format!(
            "{}\n[{} more characters]",
            text.get(..at).unwrap_or_default(),
            text.chars().count() - SHOWN_CHARS
        ),
        None => text.to_string(),
    }
}
