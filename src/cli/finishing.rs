//! `healer project accept|discard|pr|token|comment|comments`: finishing an agent's work from the
//! command line, the same acts as the task page's buttons (docs/finishing.md).

use healer::client::{Request, Response};
use healer::{Paths, Result};

use super::project::{ProjectCommand, RUN_WAIT};
use crate::print::print_json;
use crate::reach::{act, open, unexpected};

pub async fn run(command: ProjectCommand, paths: &Paths) -> Result<bool> {
    match command {
        ProjectCommand::Accept {
            name,
            task,
            how,
            resolve,
            json,
        } => {
            let how = how
                .as_deref()
                .map(healer::project::finish::AcceptHow::parse)
                .transpose()?;
            let request = Request::AcceptTask {
                project: name.clone(),
                task: task.clone(),
                how,
            };
            let Response::Accepted { acceptance } = act(paths, request, RUN_WAIT).await? else {
                return unexpected();
            };
            use healer::engine::Acceptance;
            if let (Acceptance::Conflict { .. }, true) = (&acceptance, resolve) {
                if !json {
                    println!("{}", said_of(&acceptance));
                }
                let request = Request::ResolveConflict {
                    project: name,
                    task,
                    how,
                    wait: true,
                };
                let Response::Session { session } = act(paths, request, RUN_WAIT).await? else {
                    return unexpected();
                };
                if json {
                    print_json(&session)?;
                } else {
                    println!(
                        "Session {} on \u{201c}{}\u{201d}: {}",
                        session.id, session.task_title, session.summary
                    );
                }
                return Ok(session.merged);
            }
            if json {
                print_json(&acceptance)?;
            } else {
                println!("{}", said_of(&acceptance));
            }
            Ok(matches!(acceptance, Acceptance::Accepted { .. }))
        }
        ProjectCommand::Pr {
            name,
            task,
            api_url,
            json,
        } => {
            let request = Request::OpenPullRequest {
                project: name,
                task,
                api_url,
            };
            let Response::PullRequest { pull_request } = act(paths, request, RUN_WAIT).await?
            else {
                return unexpected();
            };
            if json {
                print_json(&pull_request)?;
            } else {
                println!(
                    "The branch is pushed, and its pull request is {}: {}",
                    pull_request.state, pull_request.url
                );
            }
            Ok(true)
        }
        ProjectCommand::Comment {
            name,
            task,
            at,
            text,
            json,
        } => {
            let (path, line_start, line_end) = lines_at(&at)?;
            let request = Request::CommentOnLines {
                project: name,
                task,
                path,
                line_start,
                line_end,
                text,
            };
            let Response::Comment { comment } = act(paths, request, RUN_WAIT).await? else {
                return unexpected();
            };
            if json {
                print_json(&comment)?;
            } else {
                println!(
                    "Kept your comment on {}; send it to the agent with the others when you are done.",
                    where_of(&comment)
                );
            }
            Ok(true)
        }
        ProjectCommand::Comments {
            name,
            task,
            send,
            json,
        } => {
            let request = Request::ReviewComments {
                project: name,
                task,
                send,
            };
            let Response::Comments { comments, sent } = act(paths, request, RUN_WAIT).await? else {
                return unexpected();
            };
            if json {
                print_json(&serde_json::json!({ "comments": comments, "sent": sent }))?;
                return Ok(true);
            }
            if let Some(sent) = &sent {
                println!("{}", sent.said);
            }
            if comments.is_empty() {
                println!("No comments on this task's change.");
            }
            for c in &comments {
                let state = if c.addressed_at.is_some() {
                    "answered: the agent changed these lines"
                } else if c.sent_at.is_some() {
                    "sent to the agent"
                } else {
                    "waiting to be sent"
                };
                println!(
                    "{} ({state})
  {}",
                    where_of(c),
                    c.text
                );
            }
            Ok(true)
        }
        ProjectCommand::Token { name } => {
            let store = open(paths)?;
            let project = store.project_by_name(&name)?;
            let token = healer::capped::read_stdin_text(
                healer::capped::SECRET_BYTES,
                "the token on standard input",
            )?;
            let token = token.trim();
            if token.is_empty() {
                return Err(healer::error::Error::InvalidInput(
                    "standard input held no token".to_string(),
                ));
            }
            let keep = healer::secrets::Keep::new(paths.data_dir());
            let account = healer::engine::project_token_account(&paths.instance_mark(), project.id);
            keep.set(&account, token).map_err(|e| match e {
                healer::secrets::KeepError::NoPlace => healer::error::Error::NoSecretPlace,
                other => healer::error::Error::Internal(other.to_string()),
            })?;
            println!(
                "Kept the token for \u{201c}{}\u{201d}'s pull requests in your secrets.",
                project.name
            );
            Ok(true)
        }
        ProjectCommand::Discard { name, task, json } => {
            let request = Request::DiscardTask {
                project: name,
                task,
            };
            let Response::Discarded { discarded } = act(paths, request, RUN_WAIT).await? else {
                return unexpected();
            };
            if json {
                print_json(&discarded)?;
            } else {
                println!("{}", discarded.said);
            }
            Ok(true)
        }
        _ => unexpected(),
    }
}

/// `greet.py:12` or `greet.py:12-15` as (file, first line, last line).
fn lines_at(at: &str) -> Result<(String, u32, u32)> {
    let bad = || {
        healer::error::Error::InvalidInput(format!(
            "--at takes a file and a line, or lines: greet.py:12 or greet.py:12-15 (not {at:?})"
        ))
    };
    let (path, lines) = at.rsplit_once(':').ok_or_else(bad)?;
    let (first, last) = lines.split_once('-').unwrap_or((lines, lines));
    let first: u32 = first.trim().parse().map_err(|_| bad())?;
    let last: u32 = last.trim().parse().map_err(|_| bad())?;
    if path.is_empty() || first == 0 || last < first {
        return Err(bad());
    }
    Ok((path.to_string(), first, last))
}

/// "greet.py line 12", "greet.py lines 12–15".
fn where_of(c: &healer::store::ReviewComment) -> String {
    if c.line_start == c.line_end {
        format!("{} line {}", c.path, c.line_start)
    } else {
        format!("{} lines {}\u{2013}{}", c.path, c.line_start, c.line_end)
    }
}

/// What accepting came to, in the engine's sentence (with the failed check's output).
fn said_of(acceptance: &healer::engine::Acceptance) -> String {
    use healer::engine::Acceptance;
    match acceptance {
        Acceptance::Accepted { said, .. } | Acceptance::Left { said } => said.clone(),
        Acceptance::Conflict { said, .. } => said.clone(),
        Acceptance::ChecksFailed { said, output, .. } => format!("{said}\n{output}"),
    }
}
