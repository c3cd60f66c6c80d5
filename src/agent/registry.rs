//! The agents this build can run, by kind. The engine fills it (`engine/projects.rs`); the
//! runner asks it for the agent a project chose. An agent that is not registered is refused
//! with a sentence, never stood in for.

use std::sync::Arc;

use super::Agent;
use crate::error::{Error, Result};
use crate::session::AgentKind;

#[derive(Default, Clone)]
pub struct AgentRegistry {
    agents: Vec<Arc<dyn Agent>>,
}

impl AgentRegistry {
    pub fn new() -> AgentRegistry {
        AgentRegistry::default()
    }

    /// Add an agent; a second one of the same kind replaces the first.
    pub fn register(&mut self, agent: Arc<dyn Agent>) {
        self.agents.retain(|a| a.kind() != agent.kind());
        self.agents.push(agent);
    }

    pub fn has(&self, kind: AgentKind) -> bool {
        self.agents.iter().any(|a| a.kind() == kind)
    }

    /// The agent of `kind`, or why this build cannot run it.
    pub fn get(&self, kind: AgentKind) -> Result<Arc<dyn Agent>> {
        self.agents
            .iter()
            .find(|a| a.kind() == kind)
            .cloned()
            .ok_or_else(|| Error::InvalidInput(not_available(kind)))
    }
}

/// "Claude Code is not available in this build", with what the person can do instead.
pub fn not_available(kind: AgentKind) -> String {
    format!(
        "{} is not available in this build; choose Healer's built-in agent for now",
        agent_name(kind)
    )
}

/// The agent's name for a person.
pub fn agent_name(kind: AgentKind) -> &'static str {
    kind.name()
}

/// The program a CLI agent runs, looked for on PATH.
pub fn agent_program(kind: AgentKind) -> Option<&'static str> {
    match kind {
        AgentKind::Builtin => None,
        AgentKind::ClaudeCode => Some("claude"),
        AgentKind::Codex => Some("codex"),
        AgentKind::OpenCode => Some("opencode"),
        AgentKind::GeminiCli => Some("gemini"),
    }
}
