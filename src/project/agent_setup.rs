//! What an agent needs from the runner besides its prompt (docs/agents.md): the marks every
//! process of the session carries (Stop, the sweep after a session and crash recovery find
//! them by these), the program the project names, the tools Claude Code may use, a folder of
//! Healer's per project for the agent's own settings, and — when the project chose a model
//! provider configured in Healer — that provider's address and key, which reach only the
//! agent's process.

use std::path::{Path, PathBuf};

use crate::agent::process::SESSION_VAR;
use crate::agent::{agent_name, ModelEndpoint};
use crate::llm::{Llm, ProviderKind};
use crate::session::AgentKind;
use crate::store::ProjectSettings;

/// The variable naming the Healer (a hash of its data folder) a process belongs to: two
/// Healers on one machine never end each other's processes.
pub const INSTANCE_VAR: &str = "HEALER_INSTANCE";

/// The marks of session `session_id`: every process of it (the agent, its tools, the init
/// script and the checks) carries both in its environment.
pub fn marks(instance: &str, session_id: i64) -> Vec<(String, String)> {
    vec![
        (INSTANCE_VAR.to_string(), instance.to_string()),
        (SESSION_VAR.to_string(), session_id.to_string()),
    ]
}

/// Where an external agent keeps its own settings for a project, in Healer's data folder
/// (never under /tmp: Codex refuses to keep its sandbox helper there).
pub fn agent_home(data_dir: &Path, project_id: i64, kind: AgentKind) -> PathBuf {
    data_dir
        .join("agents")
        .join(project_id.to_string())
        .join(kind.as_str())
}

/// The agent's environment from the runner: the marks, and the folder of its own settings.
/// Claude Code keeps the person's `~/.claude` on its own login, and gets a folder of Healer's
/// when Healer gives it a provider: the person's settings may name another endpoint or key,
/// which would win over Healer's.
pub fn agent_env(
    settings: &ProjectSettings,
    home: &Path,
    marks: &[(String, String)],
) -> Vec<(String, String)> {
    let mut env = marks.to_vec();
    match settings.agent {
        AgentKind::Codex => env.push(("CODEX_HOME".to_string(), home.display().to_string())),
        AgentKind::ClaudeCode if settings.agent_provider.is_some() => {
            env.push(("CLAUDE_CONFIG_DIR".to_string(), home.display().to_string()));
        }
        _ => {}
    }
    env
}

/// The provider the project chose for its external agent, with its key; `Ok(None)` on the
/// agent's own login. `Err` is a sentence for the task: why the agent cannot start.
pub async fn endpoint(
    llm: &Llm,
    settings: &ProjectSettings,
) -> std::result::Result<Option<ModelEndpoint>, String> {
    let Some(name) = settings
        .agent_provider
        .as_deref()
        .filter(|_| settings.agent != AgentKind::Builtin)
    else {
        return Ok(None);
    };
    let agent = agent_name(settings.agent);
    let (provider, key) = llm.provider_with_key(name).await.map_err(|e| {
        format!("{agent} was to use the model provider \u{201c}{name}\u{201d}, but {e}")
    })?;
    if let Some(why) = wire_mismatch(settings.agent, provider.kind) {
        return Err(format!("{agent} cannot use \u{201c}{name}\u{201d}: {why}"));
    }
    let base = provider.base_url.trim_end_matches('/').to_string();
    let base_url = match provider.kind {
        // Healer's Ollama address is the server's; its OpenAI-style API is under /v1.
        ProviderKind::Ollama => format!("{base}/v1"),
        _ => base,
    };
    Ok(Some(ModelEndpoint {
        provider: provider.name,
        base_url,
        key,
    }))
}

/// Why `agent` cannot talk to a provider of `kind`, if it cannot: Claude Code speaks only
/// Anthropic's Messages API, Codex only OpenAI's Responses API.
pub fn wire_mismatch(agent: AgentKind, kind: ProviderKind) -> Option<&'static str> {
    match (agent, kind) {
        (AgentKind::ClaudeCode, ProviderKind::Anthropic) => None,
        (AgentKind::ClaudeCode, _) => {
            Some("Claude Code speaks only Anthropic's API; choose an Anthropic provider")
        }
        (AgentKind::Codex, ProviderKind::Anthropic) => Some(
            "Codex speaks only OpenAI's Responses API; choose an OpenAI-compatible provider \
             or Ollama",
        ),
        _ => None,
    }
}
