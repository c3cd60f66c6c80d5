//! The runner's side of a [`Channel`]: what an adapter that talks to its agent while it works
//! (opencode's server) reaches — the session's mailbox, and the person through the project's
//! approvals, exactly as an agent's hook reaches them (`healer hook`), in this process.

use std::sync::Arc;

use async_trait::async_trait;

use crate::agent::Channel;
use crate::approval::AgentRequest;
use crate::llm::{scrub, ApiKey};
use crate::services::Heard;
use crate::services::Services;

pub(super) struct RunnerChannel {
    pub services: Arc<Services>,
    pub session_id: i64,
    /// The pass the agent was given: the model read it wherever a command printed it, and may
    /// put it into a request; it never reaches the store or a checkpoint.
    pub key: Option<ApiKey>,
}

impl RunnerChannel {
    fn scrubbed(&self, request: AgentRequest) -> AgentRequest {
        let key = self.key.as_ref();
        match request {
            AgentRequest::Command { command, cwd } => AgentRequest::Command {
                command: scrub(&command, key),
                cwd: cwd.map(|c| scrub(&c, key)),
            },
            AgentRequest::Edit { path, preview } => AgentRequest::Edit {
                path: scrub(&path, key),
                preview: scrub(&preview, key),
            },
            AgentRequest::Read { path } => AgentRequest::Read {
                path: scrub(&path, key),
            },
            AgentRequest::Tool { name, detail } => AgentRequest::Tool {
                name: scrub(&name, key),
                detail: scrub(&detail, key),
            },
        }
    }
}

#[async_trait]
impl Channel for RunnerChannel {
    fn waiting(&self) -> bool {
        self.services
            .store
            .steering_waiting(self.session_id)
            .unwrap_or(false)
    }

    fn take_messages(&self, via: &str) -> Option<String> {
        let messages = match self
            .services
            .store
            .take_steering_messages(self.session_id, via)
        {
            Ok(messages) => messages,
            Err(e) => {
                tracing::warn!(session_id = self.session_id, "messages not taken: {e}");
                return None;
            }
        };
        let text = crate::store::for_agent(&messages);
        (!text.is_empty()).then_some(text)
    }

    async fn ask(&self, call: Option<String>, request: AgentRequest) -> Option<String> {
        let request = self.scrubbed(request);
        let heard = self
            .services
            .ask_agent(self.session_id, call.as_deref(), request, None);
        let asked = match heard {
            Ok(Heard::Allowed) => return None,
            Ok(Heard::Refused(reason)) => return Some(format!("Not allowed: {reason}.")),
            Ok(Heard::Asked(asked)) => asked,
            Err(e) => {
                return Some(format!(
                    "Healer could not ask the person supervising you ({e}), so this was not \
                     allowed."
                ))
            }
        };
        self.services
            .store
            .hear_for_agent(asked.ask.id, &asked.ask.deadline_at)
            .await
            .unwrap_or_else(|e| {
                Some(format!(
                    "Healer could not hear the person's answer ({e}), so this was not allowed."
                ))
            })
    }
}
