//! What an agent on a provider configured in Healer gets before its session: a pass of the
//! model gateway instead of the provider's key, and its own folder cleared of what an earlier
//! session's agent wrote there (docs/agents.md, "The model gateway").

use std::sync::Arc;

use super::agent_setup;
use super::run::Ctx;
use super::runner::SessionStop;
use crate::agent::ModelEndpoint;
use crate::error::Result;
use crate::session::AgentKind;

impl Ctx<'_> {
    /// A pass of the model gateway for this session's agent: the gateway adds `endpoint`'s
    /// key, counts what the session uses onto it, and stops it at the project's cap.
    pub(super) async fn open_pass(
        &self,
        endpoint: &ModelEndpoint,
        for_workers: bool,
    ) -> Result<crate::gateway::SessionPass> {
        let gateway = self.projects.gateway().await?;
        let services = self.projects.services.clone();
        let projects = Arc::downgrade(self.projects);
        let session_id = self.session_id;
        let settings = &self.project.settings;
        gateway.open(crate::gateway::GrantSpec {
            session_id,
            for_workers,
            upstream: endpoint.base_url.clone(),
            kind: endpoint.kind,
            key: endpoint.key.clone(),
            prices: endpoint.prices.clone(),
            cap: crate::gateway::SpendCap {
                cents: settings.session_cap_cents,
                tokens: settings.session_cap_tokens,
            },
            on_use: Box::new(move |usage, cost| {
                if let Err(e) = services
                    .store
                    .add_session_model_use(session_id, usage, cost)
                {
                    tracing::warn!(session_id, "could not count the model's use: {e}");
                }
            }),
            on_cap: Box::new(move |reason| {
                tracing::info!(session_id, "{reason}");
                if let Some(projects) = projects.upgrade() {
                    let _ = projects.end_session(session_id, SessionStop::OverCap { reason });
                }
            }),
        })
    }

    /// The agent's own folder for this project as Healer makes it before each session: what
    /// an earlier session's agent wrote there (a settings file naming another endpoint, a hook,
    /// instructions) is gone, and only what the agent needs to resume stays (its transcripts).
    pub(super) fn fresh_agent_home(&self) -> Result<()> {
        let settings = &self.project.settings;
        let kind = settings.agent;
        // Claude Code on the person's own login uses their own folder: not Healer's to clear.
        let healers = match kind {
            // Codex, opencode and Gemini CLI always run in a folder Healer keeps for them.
            AgentKind::Codex | AgentKind::OpenCode | AgentKind::GeminiCli => true,
            AgentKind::ClaudeCode => settings.agent_provider.is_some(),
            AgentKind::Builtin => false,
        };
        if !healers {
            return Ok(());
        }
        agent_setup::fresh_home(&self.agent_home(), kind).map_err(|e| {
            crate::error::Error::io(format!("cannot prepare {}", self.agent_home().display()), e)
        })
    }
}
