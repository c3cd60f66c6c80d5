//! The `config.toml` Healer writes into the Codex home it keeps for a project, before each
//! session. Codex 0.169 takes approvals and the sandbox only from its config when resuming
//! (`exec resume` has no `--sandbox`; without the config a resumed thread silently runs
//! read-only), and it phones home (plugin marketplace, analytics, metrics) unless told not to.

use std::path::{Path, PathBuf};

use toml::{Table, Value};

use crate::error::{Error, Result};

/// Where Codex's commands may write.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CodexSandbox {
    /// The worktree and /tmp, no network; commands run in bubblewrap, in a PID namespace that
    /// dies with Codex, so a Stop leaves nothing behind.
    #[default]
    WorkspaceWrite,
    /// No sandbox: for machines where bubblewrap cannot run. Commands may outlive a kill of
    /// Codex; Healer's sweep ends them.
    DangerFullAccess,
}

impl CodexSandbox {
    pub fn as_str(self) -> &'static str {
        match self {
            CodexSandbox::WorkspaceWrite => "workspace-write",
            CodexSandbox::DangerFullAccess => "danger-full-access",
        }
    }
}

/// A model provider for Codex other than its built-in OpenAI one (it speaks only the OpenAI
/// Responses API: `wire_api = "chat"` is refused).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodexProvider {
    /// The provider's key in `model_providers`.
    pub id: String,
    pub name: String,
    /// Up to and including `/v1`: Codex posts to `{base_url}/responses`.
    pub base_url: String,
    /// The variable holding the key (sent as a Bearer token); none sends no key.
    pub env_key: Option<String>,
    /// Codex's defaults (4 and 5) when `None`; 0 makes a failing server fail at once.
    pub request_max_retries: Option<u32>,
    pub stream_max_retries: Option<u32>,
    pub stream_idle_timeout_ms: Option<u64>,
}

/// How Healer sets Codex up, besides what a session's spec says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CodexSettings {
    pub sandbox: CodexSandbox,
    pub provider: Option<CodexProvider>,
    /// A model catalog (`model_catalog_json`) for a model Codex does not know.
    pub model_catalog: Option<PathBuf>,
}

/// The config's text for `settings` and the session's model.
pub(super) fn render(settings: &CodexSettings, model: Option<&str>) -> Result<String> {
    let mut root = Table::new();
    if let Some(model) = model {
        root.insert("model".into(), model.into());
    }
    root.insert("approval_policy".into(), "never".into());
    root.insert("sandbox_mode".into(), settings.sandbox.as_str().into());
    root.insert("check_for_update_on_startup".into(), false.into());
    if let Some(catalog) = &settings.model_catalog {
        root.insert(
            "model_catalog_json".into(),
            catalog.to_string_lossy().into_owned().into(),
        );
    }
    if let Some(p) = &settings.provider {
        root.insert("model_provider".into(), p.id.clone().into());
        let mut entry = Table::new();
        entry.insert("name".into(), p.name.clone().into());
        entry.insert("base_url".into(), p.base_url.clone().into());
        entry.insert("wire_api".into(), "responses".into());
        if let Some(key) = &p.env_key {
            entry.insert("env_key".into(), key.clone().into());
        }
        let numbers = [
            ("request_max_retries", p.request_max_retries.map(u64::from)),
            ("stream_max_retries", p.stream_max_retries.map(u64::from)),
            ("stream_idle_timeout_ms", p.stream_idle_timeout_ms),
        ];
        for (name, value) in numbers {
            if let Some(n) = value {
                entry.insert(
                    name.into(),
                    Value::Integer(i64::try_from(n).unwrap_or(i64::MAX)),
                );
            }
        }
        root.insert(
            "model_providers".into(),
            table([(p.id.as_str(), entry.into())]),
        );
    }
    // Off: the plugin marketplace (git ls-remote to GitHub, chatgpt.com look-ups), analytics
    // and metrics; and retrying a refused connection forever (it would outlast any time limit
    // at Codex's own pace).
    root.insert(
        "features".into(),
        table([
            ("plugins", false.into()),
            ("unbounded_connection_retries", false.into()),
        ]),
    );
    root.insert("analytics".into(), table([("enabled", false.into())]));
    root.insert("otel".into(), table([("metrics_exporter", "none".into())]));
    toml::to_string(&root)
        .map_err(|e| Error::Internal(format!("Codex's settings do not serialise: {e}")))
}

/// Write the config into `codex_home` (created if missing).
pub(super) fn write(codex_home: &Path, text: &str) -> Result<()> {
    std::fs::create_dir_all(codex_home).map_err(|e| {
        Error::io(
            format!("cannot create Codex's folder {}", codex_home.display()),
            e,
        )
    })?;
    let path = codex_home.join("config.toml");
    std::fs::write(&path, text).map_err(|e| {
        Error::io(
            format!("cannot write Codex's settings {}", path.display()),
            e,
        )
    })
}

fn table<const N: usize>(entries: [(&str, Value); N]) -> Value {
    Value::Table(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_names_the_provider_and_keeps_codex_offline() {
        let settings = CodexSettings {
            provider: Some(CodexProvider {
                id: "local".to_string(),
                name: "Local \"model\"".to_string(),
                base_url: "http://127.0.0.1:9/v1".to_string(),
                env_key: Some("LOCAL_KEY".to_string()),
                request_max_retries: Some(0),
                stream_max_retries: None,
                stream_idle_timeout_ms: None,
            }),
            ..CodexSettings::default()
        };
        let text = render(&settings, Some("m-1")).expect("renders");
        let parsed: Table = toml::from_str(&text).expect("valid TOML");
        assert_eq!(parsed["model"].as_str(), Some("m-1"));
        assert_eq!(parsed["model_provider"].as_str(), Some("local"));
        assert_eq!(parsed["sandbox_mode"].as_str(), Some("workspace-write"));
        assert_eq!(parsed["approval_policy"].as_str(), Some("never"));
        let entry = &parsed["model_providers"]["local"];
        assert_eq!(entry["name"].as_str(), Some("Local \"model\""));
        assert_eq!(entry["wire_api"].as_str(), Some("responses"));
        assert_eq!(entry["request_max_retries"].as_integer(), Some(0));
        assert!(entry.get("stream_max_retries").is_none());
        assert_eq!(parsed["features"]["plugins"].as_bool(), Some(false));
    }
}
