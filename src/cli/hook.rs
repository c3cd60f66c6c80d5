//! `healer hook claude-code|codex --session ID`: what the hooks Healer gives an agent's session
//! call (in Claude Code's settings layer or Codex's config, never in the worktree). It reads
//! the hook's JSON on stdin and marks the session alive (a true heartbeat: the agent did
//! something). Then:
//!
//! - `PreToolUse` (both agents): the tool call is judged by the project's approvals; what the
//!   person must decide is asked of the running engine, and the hook waits for the answer in
//!   the store — allowed, or denied with the person's reason (the agent hears it and goes on).
//!   Nothing is allowed that Healer could not judge: a hook that fails denies.
//! - `PostToolUse` / `Stop` (Claude Code): when steering messages wait for the session, it
//!   answers `{"decision": "block", "reason": …}` so that Claude Code gives them to the model
//!   before its next step. Those hooks never break the agent: a problem is said on stderr and
//!   the hook exits 0 with no decision.

use std::io::Read;
use std::time::Duration;

use clap::Subcommand;
use healer::approval::{judge, AgentRequest, Verdict};
use healer::client::{self, Request as EngineRequest, Response};
use healer::engine::AgentAnswer;
use healer::session::SessionStatus;
use healer::{Paths, Result};
use serde_json::{json, Value};

use crate::print::print_json;
use crate::reach::open;

/// The most of the hook's JSON read (it carries paths and a tool's input and output).
const MAX_INPUT_BYTES: u64 = 4 * 1024 * 1024;

/// How long the hook waits for the engine to take its question (not for the person).
const ENGINE_WAIT: Duration = Duration::from_secs(60);

/// The most of a file's new text a question shows.
const PREVIEW_CHARS: usize = 4000;

/// Claude Code's tools that only keep the agent's own notes or manage what it started (a
/// subagent's own tool calls come through this hook too).
const HARMLESS_TOOLS: &[&str] = &[
    "TodoWrite",
    "Task",
    "Agent",
    "ExitPlanMode",
    "BashOutput",
    "KillShell",
    "KillBash",
    "TaskOutput",
];

#[derive(Subcommand)]
pub enum HookCommand {
    /// A Claude Code hook of a session Healer started (reads the hook's JSON on stdin)
    ClaudeCode {
        /// Healer's id of the session
        #[arg(long)]
        session: i64,
        /// The longest a question may wait: what the agent gives this hook, less a margin
        #[arg(long)]
        limit: Option<u32>,
    },
    /// A Claude Code hook of a session on a worker (reads the hook's JSON on stdin, and what
    /// the worker put in the box: the project's approvals, the messages for the agent)
    Worker {
        #[arg(long = "box")]
        dir: std::path::PathBuf,
    },
    /// A Codex hook of a session Healer started (reads the hook's JSON on stdin)
    Codex {
        /// Healer's id of the session
        #[arg(long)]
        session: i64,
        /// The longest a question may wait: what the agent gives this hook, less a margin
        #[arg(long)]
        limit: Option<u32>,
    },
}

/// Which agent's hook this is: their outputs differ.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Agent {
    ClaudeCode,
    Codex,
}

pub async fn run(command: HookCommand, paths: &Paths) -> Result<bool> {
    let (agent, session, limit) = match command {
        HookCommand::ClaudeCode { session, limit } => (Agent::ClaudeCode, session, limit),
        HookCommand::Codex { session, limit } => (Agent::Codex, session, limit),
        HookCommand::Worker { dir } => return on_worker(&dir),
    };
    let hook = read_hook(agent);
    // Codex is given this hook for its tool calls only: what cannot be read is denied.
    let event = hook["hook_event_name"].as_str();
    if event == Some("PreToolUse") || (agent == Agent::Codex && event.is_none()) {
        let denied = match pre_tool_use(paths, session, limit, &hook).await {
            Ok(None) => None,
            Ok(Some(reason)) => Some(reason),
            Err(e) => Some(format!(
                "Healer could not judge this request ({e}), so it was not allowed."
            )),
        };
        return answer_tool_call(agent, denied);
    }
    if agent == Agent::Codex {
        return Ok(true);
    }
    match claude_code(paths, session, &hook) {
        Ok(Some(reason)) => print_json(&json!({"decision": "block", "reason": reason})),
        Ok(None) => Ok(true),
        Err(e) => {
            eprintln!("healer hook: {e}");
            Ok(true)
        }
    }
}

/// The hook's JSON from standard input (`Null` when it cannot be read or is too large), with a
/// panic answered as a denial: a hook that breaks must deny, never let a tool through (Codex
/// runs a tool whose hook said nothing).
fn read_hook(agent: Agent) -> Value {
    std::panic::set_hook(Box::new(move |_| {
        let _ = answer_tool_call(
            agent,
            Some("Healer's check of this request failed, so it was not allowed.".to_string()),
        );
    }));
    let mut input = Vec::new();
    let _ = std::io::stdin()
        .take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut input);
    if input.len() as u64 > MAX_INPUT_BYTES {
        Value::Null
    } else {
        serde_json::from_slice(&input).unwrap_or(Value::Null)
    }
}

/// A Claude Code hook on a worker: a tool call judged by the project's approvals from the box
/// (what would ask the person is refused: a worker cannot ask yet), a step answered with the
/// messages waiting in the box's mail.
fn on_worker(dir: &std::path::Path) -> Result<bool> {
    let hook = read_hook(Agent::ClaudeCode);
    if hook["hook_event_name"].as_str() == Some("PreToolUse") || hook.is_null() {
        let denied = match healer::project::on_worker::WorkerBox::read(dir) {
            Err(e) => Some(format!(
                "Healer could not read the project's approvals on this worker ({e}), so this was not allowed."
            )),
            Ok(found) => match requests_of(&hook) {
                Err(why) => Some(why),
                Ok(requests) => {
                    let place = found.place();
                    requests.iter().find_map(|r| match judge(&found.approvals, &[], &place, r) {
                        Verdict::Allow => None,
                        Verdict::Ask(asking) => Some(format!(
                            "Not allowed: it would need the person's approval ({}), and this session runs on a worker, from where Healer cannot ask yet. Do the task without it.",
                            asking.why
                        )),
                    })
                }
            },
        };
        return answer_tool_call(Agent::ClaudeCode, denied);
    }
    let told = healer::project::on_worker::take_mail(dir);
    if told.is_empty() {
        return Ok(true);
    }
    print_json(&json!({"decision": "block", "reason": told.join("\n\n")}))
}

/// Say the verdict on a tool call as the agent reads it (`denied`: why not).
fn answer_tool_call(agent: Agent, denied: Option<String>) -> Result<bool> {
    let (decision, reason) = match &denied {
        None => ("allow", "Allowed by the project's approvals in Healer"),
        Some(why) => ("deny", why.as_str()),
    };
    // Codex takes only a deny; with no word the command goes ahead (in its sandbox).
    if agent == Agent::Codex && denied.is_none() {
        return Ok(true);
    }
    print_json(&json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    }))
}

/// `None`: the call may go ahead; else why not, for the agent.
async fn pre_tool_use(
    paths: &Paths,
    session: i64,
    limit: Option<u32>,
    hook: &Value,
) -> Result<Option<String>> {
    if hook.is_null() {
        return Ok(Some(
            "Healer could not read this request, so it was not allowed.".to_string(),
        ));
    }
    let store = open(paths)?;
    let record = store.session(session)?;
    if let (Some(theirs), Some(ours)) = (
        hook["session_id"].as_str(),
        record.agent_session_id.as_deref(),
    ) {
        if theirs != ours {
            return Ok(Some(
                "This hook belongs to another session: nothing is allowed through it.".to_string(),
            ));
        }
    }
    if record.status != SessionStatus::Running {
        return Ok(Some(
            "Healer's session for this work has ended.".to_string(),
        ));
    }
    let _ = store.touch_session(session, &healer::store::now(), "asked before a tool call");
    let requests = match requests_of(hook) {
        Ok(requests) => requests,
        Err(why) => return Ok(Some(why)),
    };
    // What the project's approvals allow is answered here, at once; the first request that
    // must be asked (a patch may write several files) goes to the person.
    let project = store.project(record.project_id)?;
    let rules = store.approval_rules(project.id, &record.task_id)?;
    let place = healer::store::place_for(paths.data_dir(), &record, &project);
    let Some(request) = requests
        .into_iter()
        .find(|r| judge(&project.settings.approvals, &rules, &place, r) != Verdict::Allow)
    else {
        return Ok(None);
    };
    // The rest is the engine's to ask the person about; the answer is waited for here.
    let call_id = hook["tool_use_id"].as_str().map(str::to_string);
    let response = client::ask_engine(
        paths,
        "an agent's hook",
        EngineRequest::AskAgent {
            session,
            call_id,
            request,
            limit_secs: limit,
        },
        ENGINE_WAIT,
    )
    .await;
    let answer = match response {
        Ok(Response::AgentAnswer { answer }) => answer,
        Ok(_) => return Ok(Some("Healer answered something else.".to_string())),
        Err(e) => {
            return Ok(Some(format!(
                "Healer could not ask the person supervising you ({e}), so this was not allowed."
            )))
        }
    };
    match answer {
        AgentAnswer::Allowed => Ok(None),
        AgentAnswer::Refused { reason } => Ok(Some(format!("Not allowed: {reason}."))),
        AgentAnswer::Asked { id, deadline_at } => store.hear_for_agent(id, &deadline_at).await,
    }
}

/// What a tool call wants, as approvals judge it (none: the agent's own bookkeeping); `Err`
/// with why it is denied when its input cannot be read.
fn requests_of(hook: &Value) -> std::result::Result<Vec<AgentRequest>, String> {
    let tool = hook["tool_name"].as_str().unwrap_or_default();
    let input = &hook["tool_input"];
    let unreadable =
        || format!("Healer could not read what {tool} was asked to do, so it was not allowed.");
    let text = |key: &str| -> std::result::Result<String, String> {
        match &input[key] {
            Value::String(s) if !s.trim().is_empty() => Ok(s.clone()),
            _ => Err(unreadable()),
        }
    };
    let optional = |key: &str| input[key].as_str().unwrap_or_default().to_string();
    // Where the agent's shell is now (Claude Code says; Codex may name a folder per command).
    let cwd = input["workdir"]
        .as_str()
        .or(hook["cwd"].as_str())
        .map(str::to_string);
    Ok(match tool {
        "Bash" | "shell" | "exec_command" | "Monitor" => {
            let command = match &input["command"] {
                Value::String(s) if !s.trim().is_empty() => s.clone(),
                // A command given as its words: judged as the line they make.
                Value::Array(words) if !words.is_empty() => words
                    .iter()
                    .map(|w| w.as_str().map(shell_word).ok_or_else(unreadable))
                    .collect::<std::result::Result<Vec<_>, _>>()?
                    .join(" "),
                _ => return Err(unreadable()),
            };
            vec![AgentRequest::Command { command, cwd }]
        }
        // Codex's patches name their files on lines of their own: each one is judged.
        "apply_patch" => patch_requests(&text("command")?)?,
        "Write" => vec![AgentRequest::Edit {
            path: text("file_path")?,
            preview: preview(&optional("content")),
        }],
        "Edit" => vec![AgentRequest::Edit {
            path: text("file_path")?,
            preview: preview(&format!(
                "- {}\n+ {}",
                optional("old_string").replace('\n', "\n- "),
                optional("new_string").replace('\n', "\n+ ")
            )),
        }],
        "MultiEdit" => vec![AgentRequest::Edit {
            path: text("file_path")?,
            preview: String::new(),
        }],
        "NotebookEdit" => vec![AgentRequest::Edit {
            path: text("notebook_path")?,
            preview: preview(&optional("new_source")),
        }],
        "Read" => vec![AgentRequest::Read {
            path: text("file_path")?,
        }],
        "NotebookRead" => vec![AgentRequest::Read {
            path: text("notebook_path")?,
        }],
        "Glob" | "Grep" | "LS" => {
            let mut asked = vec![AgentRequest::Read {
                path: input["path"].as_str().unwrap_or(".").to_string(),
            }];
            // An absolute pattern looks wherever it names.
            if let Some(pattern) = input["pattern"]
                .as_str()
                .filter(|p| p.starts_with('/') || p.starts_with('~') || p.contains(".."))
            {
                asked.push(AgentRequest::Read {
                    path: pattern.to_string(),
                });
            }
            asked
        }
        "WebFetch" => vec![AgentRequest::Tool {
            name: tool.to_string(),
            detail: text("url")?,
        }],
        "WebSearch" => vec![AgentRequest::Tool {
            name: tool.to_string(),
            detail: text("query")?,
        }],
        t if HARMLESS_TOOLS.contains(&t) => vec![],
        "" => return Err(unreadable()),
        other => vec![AgentRequest::Tool {
            name: other.to_string(),
            // What it was given, for the person to see.
            detail: preview(&input.to_string()),
        }],
    })
}

/// One word of a command given as a list, as a shell line would write it.
fn shell_word(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// A Codex patch: a change to each file it names (added, updated, deleted or moved to).
fn patch_requests(patch: &str) -> std::result::Result<Vec<AgentRequest>, String> {
    let files: Vec<&str> = patch
        .lines()
        .filter_map(|l| {
            [
                "*** Add File: ",
                "*** Update File: ",
                "*** Delete File: ",
                "*** Move to: ",
            ]
            .iter()
            .find_map(|p| l.strip_prefix(p))
        })
        .map(str::trim)
        .collect();
    if files.is_empty() {
        return Err(
            "Healer could not read which files this patch changes, so it was not allowed."
                .to_string(),
        );
    }
    Ok(files
        .into_iter()
        .map(|path| AgentRequest::Edit {
            path: path.to_string(),
            preview: preview(patch),
        })
        .collect())
}

fn preview(text: &str) -> String {
    match text.char_indices().nth(PREVIEW_CHARS) {
        Some((cut, _)) => format!("{}\n[… more not shown]", &text[..cut]),
        None => text.to_string(),
    }
}

/// The messages to give the model now, if any.
fn claude_code(paths: &Paths, session: i64, hook: &Value) -> Result<Option<String>> {
    let store = open(paths)?;
    let record = store.session(session)?;
    // A hook from another Claude Code session (a settings file copied elsewhere) is ignored.
    let theirs = hook["session_id"].as_str();
    if let (Some(theirs), Some(ours)) = (theirs, record.agent_session_id.as_deref()) {
        if theirs != ours {
            return Ok(None);
        }
    }
    let event = hook["hook_event_name"].as_str().unwrap_or("a hook");
    store.touch_session(
        session,
        &healer::store::now(),
        &format!("Claude Code: {event}"),
    )?;
    let messages = store.take_steering_messages(session, "hook")?;
    if messages.is_empty() {
        return Ok(None);
    }
    Ok(Some(healer::store::for_agent(&messages)))
}
