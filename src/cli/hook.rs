//! `healer hook claude-code --session ID`: what Claude Code's `PostToolUse` and `Stop` hooks
//! call in a session Healer started (the runner writes them into the worktree). It reads the
//! hook's JSON on stdin, marks the session alive (a true heartbeat: Claude Code did something),
//! and when steering messages wait for the session, answers `{"decision": "block", "reason":
//! …}` so that Claude Code gives them to the model before its next step. A hook must never
//! break the agent: any problem is said on stderr and the hook exits 0 with no decision.

use std::io::Read;

use clap::Subcommand;
use healer::{Paths, Result};
use serde_json::{json, Value};

use crate::print::print_json;
use crate::reach::open;

/// The most of the hook's JSON read (it carries paths and a tool's input and output).
const MAX_INPUT_BYTES: u64 = 4 * 1024 * 1024;

#[derive(Subcommand)]
pub enum HookCommand {
    /// A Claude Code hook of a session Healer started (reads the hook's JSON on stdin)
    ClaudeCode {
        /// Healer's id of the session
        #[arg(long)]
        session: i64,
    },
}

pub fn run(command: HookCommand, paths: &Paths) -> Result<bool> {
    let HookCommand::ClaudeCode { session } = command;
    let mut input = String::new();
    let _ = std::io::stdin()
        .take(MAX_INPUT_BYTES)
        .read_to_string(&mut input);
    let hook: Value = serde_json::from_str(&input).unwrap_or(Value::Null);
    match claude_code(paths, session, &hook) {
        Ok(Some(reason)) => print_json(&json!({"decision": "block", "reason": reason})),
        Ok(None) => Ok(true),
        Err(e) => {
            eprintln!("healer hook: {e}");
            Ok(true)
        }
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
    Ok(Some(
        messages
            .iter()
            .map(|m| m.for_agent())
            .collect::<Vec<_>>()
            .join("\n\n"),
    ))
}
