//! The built-in agent's `run_command` (in the worktree, through the sandbox: its own process
//! group, a time limit, capped output, writes confined by Landlock where the kernel has it)
//! and `finish(summary)`, which ends the session.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};

use super::workspace::Workspace;
use crate::error::Result;
use crate::llm::Tool;
use crate::sandbox::{run_in_place, InPlace, SandboxLimits};

/// A command's time limit when the model names none.
const DEFAULT_COMMAND_SECS: u64 = 120;
/// Output kept per stream (the loop cuts what the model is given further).
const OUTPUT_BYTES: usize = 32 * 1024;
/// The data memory of each process a command starts: compilers and test runners need more
/// than a workflow's sandbox allows.
const COMMAND_MEMORY_BYTES: u64 = 8 * 1024 * 1024 * 1024;

pub struct RunCommand(pub Arc<Workspace>);

/// How long past a question's deadline the command still waits for the engine's look to deny
/// it, before it is denied here.
const PAST_DEADLINE_SECS: i64 = 90;

/// The session a command belongs to, for asking the person first.
#[derive(Clone)]
pub struct Asking {
    pub(crate) services: Arc<crate::services::Services>,
    pub(crate) session_id: i64,
}

impl std::fmt::Debug for Asking {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Asking")
            .field("session_id", &self.session_id)
            .finish()
    }
}

impl Asking {
    /// Whether `command` may run: `None`, or what the model is told instead (the person's
    /// reason with a deny). The question waits in the store: the engine may stop meanwhile.
    async fn may_run(&self, command: &str) -> Result<Option<String>> {
        use crate::services::Heard;
        let request = crate::approval::AgentRequest::Command {
            command: command.to_string(),
            cwd: None,
        };
        match self
            .services
            .ask_agent(self.session_id, None, request, None)?
        {
            Heard::Allowed => Ok(None),
            Heard::Refused(reason) => Ok(Some(format!("Not run: {reason}."))),
            Heard::Asked(asked) => {
                let until = chrono::DateTime::parse_from_rfc3339(&asked.ask.deadline_at)
                    .map(|d| d.with_timezone(&chrono::Utc))
                    .unwrap_or_else(|_| chrono::Utc::now())
                    + chrono::Duration::seconds(PAST_DEADLINE_SECS);
                let answer = self.services.store.hear_answer(asked.ask.id, until).await?;
                Ok(crate::approval::told_agent(&answer))
            }
        }
    }
}

#[async_trait]
impl Tool for RunCommand {
    fn name(&self) -> &str {
        "run_command"
    }
    fn description(&self) -> &str {
        "Run a shell command (bash -c) in the worktree, e.g. the tests. It may write only inside the worktree and its own temp folder; it is stopped after timeout_secs (default 120)."
    }
    fn schema(&self) -> Value {
        json!({"type": "object", "properties": {
            "command": {"type": "string", "minLength": 1},
            "timeout_secs": {"type": "integer", "minimum": 1}},
            "required": ["command"], "additionalProperties": false})
    }
    async fn call(&self, args: Value) -> Result<String> {
        let command = args
            .get("command")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let wanted = args
            .get("timeout_secs")
            .and_then(Value::as_u64)
            .unwrap_or(DEFAULT_COMMAND_SECS);
        if let Some(asking) = &self.0.asking {
            if let Some(denied) = asking.may_run(command).await? {
                return Ok(denied);
            }
        }
        let timeout = Duration::from_secs(wanted).min(self.0.command_limit);
        let run = run_in_place(&InPlace {
            cwd: &self.0.root,
            tmp: &self.0.tmp,
            command,
            env: &self.0.env,
            limits: SandboxLimits {
                timeout,
                memory_bytes: COMMAND_MEMORY_BYTES,
                output_bytes: OUTPUT_BYTES,
                // Builds write large files and may fetch their dependencies: only memory and time
                // are bounded here (the worktree is the project's, not a scratch copy).
                disk_bytes: 0,
                processes: 0,
                network: true,
            },
            groups: self.0.groups.as_deref(),
        })
        .await?;
        // The sandbox's words are about a scratch copy; here the child works in place.
        Ok(run
            .describe()
            .replace("the scratch copy", "the worktree and its temp folder"))
    }
}

pub struct Finish;

#[async_trait]
impl Tool for Finish {
    fn name(&self) -> &str {
        "finish"
    }
    fn description(&self) -> &str {
        "Say the task is done, with a short summary of what you changed. Healer then runs the project's verification commands."
    }
    fn schema(&self) -> Value {
        json!({"type": "object", "properties": {"summary": {"type": "string", "minLength": 1}},
               "required": ["summary"], "additionalProperties": false})
    }
    async fn call(&self, args: Value) -> Result<String> {
        Ok(args
            .get("summary")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .trim()
            .to_string())
    }
    fn ends_loop(&self) -> bool {
        true
    }
}
