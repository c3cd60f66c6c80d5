//! Healer's own coding agent: the bounded tool loop of the model layer over the project's
//! tier, with tools confined to the task's worktree (read_file, list_files, search,
//! write_file, edit_file, run_command, finish). Its thread is a model task like any other;
//! each stored message becomes session steps as it is stored.

mod command;
mod files;
mod search;
mod workspace;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{Agent, AgentUpdate, SessionEnd, SessionSpec};
use crate::error::{Error, Result};
use crate::events::Event;
use crate::llm::{
    AgentRun, ChatMessage, LoopSettings, MessageRole, StopReason, TaskKind, TaskStatus,
    ThreadMessage, Tool, ToolSet,
};
use crate::services::Services;
use crate::session::{AgentKind, SessionStatus, SessionStep, StepKind, StepSource, StepUsage};
pub use workspace::Workspace;

/// Replies in a row the model may get wrong before the session ends.
const MAX_MALFORMED_REPLIES: u32 = 3;

const SYSTEM: &str = "You are Healer's coding agent. You work on one task of a software project, in a git worktree of its repository that is your working directory. Use the tools: list_files and search to find your way, read_file before you change a file, edit_file for small changes (its search text must occur exactly once), write_file for new or rewritten files, run_command to build and test (paths are relative to the worktree; you can write only inside it). Do not commit and do not edit the .healer folder: when you call finish, Healer runs the project's verification commands and commits your change if they pass. Keep changes to what the task asks. When the task is done, call finish with a short summary of what you changed.";

pub struct Builtin {
    services: Arc<Services>,
}

impl Builtin {
    pub(crate) fn new(services: Arc<Services>) -> Builtin {
        Builtin { services }
    }
}

#[async_trait]
impl Agent for Builtin {
    fn kind(&self) -> AgentKind {
        AgentKind::Builtin
    }

    async fn run(
        &self,
        spec: SessionSpec,
        updates: mpsc::UnboundedSender<AgentUpdate>,
        cancel: CancellationToken,
    ) -> Result<SessionEnd> {
        let services = &self.services;
        let session = services.store.session(spec.session_id)?;
        let settings = services.store.project(session.project_id)?.settings;
        let root = std::fs::canonicalize(&spec.cwd).map_err(|e| {
            Error::io(
                format!("cannot open the worktree {}", spec.cwd.display()),
                e,
            )
        })?;
        let tmp = services
            .paths
            .data_dir()
            .join("sessions")
            .join(spec.session_id.to_string());
        std::fs::create_dir_all(&tmp)
            .map_err(|e| Error::io(format!("cannot create {}", tmp.display()), e))?;
        let ws = Arc::new(Workspace {
            root,
            tmp,
            env: spec.env.clone(),
            command_limit: Duration::from_secs(u64::from(settings.command_time_limit_secs)),
            groups: spec.groups.clone(),
            asking: Some(command::Asking {
                services: services.clone(),
                session_id: spec.session_id,
            }),
        });
        let tools: Vec<Arc<dyn Tool>> = vec![
            Arc::new(files::ReadFile(ws.clone())),
            Arc::new(files::ListFiles(ws.clone())),
            Arc::new(search::Search(ws.clone())),
            Arc::new(files::WriteFile(ws.clone())),
            Arc::new(files::EditFile(ws.clone())),
            Arc::new(command::RunCommand(ws.clone())),
            Arc::new(command::Finish),
        ];
        // A resume continues the earlier session's thread: its messages are sent again as
        // history, and only the new ones become this session's steps.
        let earlier = match spec.resume.as_deref().map(str::parse::<i64>) {
            Some(Ok(id)) => {
                let thread = services.store.thread(id)?;
                services.store.reopen_task(id)?;
                Some(thread)
            }
            Some(Err(_)) => {
                return Err(Error::InvalidInput(format!(
                    "the built-in agent cannot resume {:?}: not one of its threads",
                    spec.resume.unwrap_or_default()
                )))
            }
            None => None,
        };
        let task = match &earlier {
            Some(thread) => thread.task.clone(),
            None => services.llm.start_task(
                TaskKind::Agent,
                &format!("Built-in agent on \u{201c}{}\u{201d}", session.task_title),
                None,
            )?,
        };
        let history: Vec<ChatMessage> = earlier
            .as_ref()
            .map(|t| t.messages.iter().filter_map(|m| m.to_chat()).collect())
            .unwrap_or_default();
        let _ = updates.send(AgentUpdate::Started {
            agent_session_id: task.id.to_string(),
            transcript: None,
        });
        let run = AgentRun {
            task_id: task.id,
            tier: settings.tier,
            system: SYSTEM.to_string(),
            history,
            messages: vec![ChatMessage::User { text: spec.prompt }],
            tools: ToolSet::new(tools)?,
            limits: Some(LoopSettings {
                max_steps: settings.max_steps,
                max_duration_secs: u32::try_from(spec.time_limit.as_secs()).unwrap_or(u32::MAX),
                max_malformed_replies: MAX_MALFORMED_REPLIES,
            }),
            // The project's tokens per task, read and written: reaching them ends the session
            // cleanly (the per-task cap of Settings still holds above them).
            max_tokens: Some(settings.token_budget),
            task_tokens: Some(settings.token_budget),
            inbox: Some(steering_inbox(services.clone(), spec.session_id)),
            // The tier's temperature, else the provider's: a coding agent is not a repair.
            temperature: None,
            choice: None,
            answer_schema: None,
        };

        // Steps follow the thread: each stored message is announced on the bus.
        let mut events = services.bus.subscribe();
        let mut forwarded = earlier
            .as_ref()
            .and_then(|t| t.messages.last().map(|m| m.id))
            .unwrap_or(0);
        let looped = services.llm.run_agent(run);
        tokio::pin!(looped);
        let result = loop {
            tokio::select! {
                biased;
                () = cancel.cancelled() => break None,
                result = &mut looped => break Some(result),
                event = events.recv() => match event {
                    Ok(record) => {
                        if let Event::TaskMessageAdded { task_id, .. } = record.event {
                            if task_id == task.id {
                                self.forward(task.id, &mut forwarded, &updates);
                            }
                        }
                    }
                    Err(RecvError::Lagged(_)) => self.forward(task.id, &mut forwarded, &updates),
                    Err(RecvError::Closed) => {}
                },
            }
        };
        self.forward(task.id, &mut forwarded, &updates);
        let Some(result) = result else {
            // Dropping the loop ended the command it was running, with its process group.
            let summary = "Stopped by the person".to_string();
            services
                .store
                .finish_task(task.id, TaskStatus::Stopped, &summary)?;
            services.bus.emit(Event::TaskFinished {
                task_id: task.id,
                status: TaskStatus::Stopped,
                summary: summary.clone(),
            })?;
            return Ok(end(SessionStatus::Stopped, summary, task.id));
        };
        let outcome = result?;
        Ok(match outcome.stop {
            StopReason::Answered => end(
                SessionStatus::Finished,
                outcome.answer.unwrap_or_default(),
                task.id,
            ),
            StopReason::TimeLimit => end(
                SessionStatus::TimedOut,
                format!(
                    "The built-in agent {} ({} s) before it finished",
                    outcome.stop.describe(),
                    spec.time_limit.as_secs()
                ),
                task.id,
            ),
            StopReason::TokenLimit => end(
                SessionStatus::Failed,
                format!(
                    "The built-in agent stopped at its token budget ({} tokens, the project's setting) before it finished",
                    settings.token_budget
                ),
                task.id,
            ),
            other => end(
                SessionStatus::Failed,
                format!("The built-in agent {} before it finished", other.describe()),
                task.id,
            ),
        })
    }
}

impl Builtin {
    /// Send the thread's messages stored since the last call as steps.
    fn forward(
        &self,
        task_id: i64,
        forwarded: &mut i64,
        updates: &mpsc::UnboundedSender<AgentUpdate>,
    ) {
        let messages = match self.services.store.thread(task_id) {
            Ok(thread) => thread.messages,
            Err(e) => {
                tracing::warn!(task_id, "cannot read the built-in agent's thread: {e}");
                return;
            }
        };
        let after = *forwarded;
        for message in messages.iter().filter(|m| m.id > after) {
            for step in steps_of(message) {
                let _ = updates.send(AgentUpdate::Step(step));
            }
            *forwarded = message.id;
        }
    }
}

/// Steering's messages for this session, taken from the store as they arrive: each becomes
/// the next user message of the thread.
fn steering_inbox(services: Arc<Services>, session_id: i64) -> crate::llm::Inbox {
    Box::new(
        move || match services.store.take_steering_messages(session_id, "thread") {
            Ok(messages) => messages.iter().map(|m| m.for_agent()).collect(),
            Err(e) => {
                tracing::warn!(session_id, "steering messages could not be read: {e}");
                vec![]
            }
        },
    )
}

fn end(status: SessionStatus, summary: String, task_id: i64) -> SessionEnd {
    SessionEnd {
        status,
        exit_code: None,
        summary,
        agent_session_id: Some(task_id.to_string()),
        program_failed: false,
    }
}

/// A stored message of the thread as flat session steps: a reply's text, then each call.
pub fn steps_of(message: &ThreadMessage) -> Vec<SessionStep> {
    let step = |source, kind, text: &str| SessionStep {
        at: message.at.clone(),
        source,
        kind,
        text: text.to_string(),
        tool: None,
        arguments: None,
        call_id: None,
        is_error: false,
        model: message.model.clone(),
        usage: None,
    };
    match message.role {
        // Healer's reminder after an unusable reply is Healer speaking, not the person.
        MessageRole::System | MessageRole::Nudge => {
            vec![step(StepSource::System, StepKind::Text, &message.content)]
        }
        MessageRole::User => vec![step(StepSource::User, StepKind::Text, &message.content)],
        MessageRole::Tool => vec![SessionStep {
            tool: message.tool_name.clone(),
            call_id: message.tool_call_id.clone(),
            is_error: message.is_error,
            model: None,
            ..step(StepSource::Agent, StepKind::ToolResult, &message.content)
        }],
        MessageRole::Assistant => {
            let usage = message.usage.map(|u| StepUsage {
                prompt_tokens: u.prompt_tokens,
                completion_tokens: u.completion_tokens,
                cached_tokens: u.cached_tokens,
            });
            let mut steps = Vec::new();
            if !message.content.trim().is_empty() || message.tool_calls.is_empty() {
                steps.push(step(StepSource::Agent, StepKind::Text, &message.content));
            }
            for call in &message.tool_calls {
                steps.push(SessionStep {
                    tool: Some(call.name.clone()),
                    arguments: Some(call.arguments.clone()),
                    call_id: Some(call.id.clone()),
                    ..step(StepSource::Agent, StepKind::ToolCall, "")
                });
            }
            if let Some(first) = steps.first_mut() {
                first.usage = usage;
            }
            steps
        }
    }
}
