//! Provider keys: in the OS keyring, in Healer's own secrets file where no keyring service runs
//! and the person chose it, or in an environment variable the provider names. A key is held in [`ApiKey`], whose Debug and Display say
//! "[redacted]", so it cannot reach a log line or an error message by formatting; it is
//! never written to the database.

use serde::{Deserialize, Serialize};

use super::provider::Provider;
use crate::error::LlmError;
use crate::secrets::{Keep, KeepError, KeptIn};

pub use crate::secrets::KEYRING_ENV;

/// A secret. Only [`ApiKey::expose`] gives the text, at the one place a header is built.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(key.into().trim().to_string())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey([redacted])")
    }
}

impl std::fmt::Display for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[redacted]")
    }
}

/// Remove `key`, and every other known secret, from text a provider sent back (some echo the
/// key in their error messages).
pub fn scrub(text: &str, key: Option<&ApiKey>) -> String {
    let text = match key {
        Some(key) if key.0.len() >= 4 => text.replace(&key.0, "[redacted]"),
        _ => text.to_string(),
    };
    crate::secrets::redact_owned(text)
}

/// Where a provider's key comes from, as Settings shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum KeySource {
    Keyring,
    /// Healer's own secrets file (no keyring service on this computer).
    File,
    Env {
        var: String,
    },
    /// The provider needs none (Ollama, a server on this computer or the local network).
    NotNeeded,
    /// None found; `var` is the environment variable that would be read.
    Missing {
        var: String,
    },
}

impl KeySource {
    pub fn describe(&self) -> String {
        match self {
            KeySource::Keyring => "key from the OS keyring".to_string(),
            KeySource::File => "key from Healer's secrets file".to_string(),
            KeySource::Env { var } => format!("key from ${var}"),
            KeySource::NotNeeded => "no key needed".to_string(),
            KeySource::Missing { var } => {
                format!("no key yet: set one (it is kept in the OS keyring) or export {var}")
            }
        }
    }
}

/// Finds keys: where Healer keeps them ([`Keep`]: the OS keyring, or its own secrets file once
/// the person chose it), else the environment variable the provider names. Cheap to clone.
#[derive(Clone)]
pub struct Keys {
    keep: Keep,
}

impl Keys {
    /// The keyring unless `HEALER_KEYRING=off`, and the secrets file in `data_dir` once chosen.
    pub fn new(data_dir: &std::path::Path) -> Self {
        Keys {
            keep: Keep::new(data_dir),
        }
    }

    /// Keys kept in `keep`.
    pub fn with(keep: Keep) -> Self {
        Keys { keep }
    }

    /// Never a kept key: environment variables only.
    pub fn env_only() -> Self {
        Keys {
            keep: Keep::nowhere(),
        }
    }

    /// Where keys are kept.
    pub fn keep(&self) -> &Keep {
        &self.keep
    }

    /// The key for `provider` and where it came from. Blocking (the keyring is a D-Bus call
    /// on Linux): call it from a blocking context.
    pub fn resolve(&self, provider: &Provider) -> (Option<ApiKey>, KeySource) {
        let (key, source) = self.find(provider);
        if let Some(key) = &key {
            // Wherever it turns up next (a script's output, a model's reply), it is redacted.
            crate::secrets::remember(key.expose());
        }
        (key, source)
    }

    fn find(&self, provider: &Provider) -> (Option<ApiKey>, KeySource) {
        if let Some((key, kept_in)) = self.keep.get(&account(&provider.name)) {
            let source = match kept_in {
                KeptIn::Keyring => KeySource::Keyring,
                KeptIn::File => KeySource::File,
            };
            return (Some(ApiKey::new(key)), source);
        }
        if !provider.needs_key() {
            // A server at home is not sent a key from the environment meant for a hosted one
            // (OPENAI_API_KEY): only a key kept for it, or a variable named for it.
            return match provider.key_env.as_deref().and_then(read_env) {
                Some(key) => (
                    Some(key),
                    KeySource::Env {
                        var: provider.key_env.clone().unwrap_or_default(),
                    },
                ),
                None => (None, KeySource::NotNeeded),
            };
        }
        let var = provider.key_var();
        match var.as_deref().and_then(read_env) {
            Some(key) => (
                Some(key),
                KeySource::Env {
                    var: var.unwrap_or_default(),
                },
            ),
            None => (
                None,
                KeySource::Missing {
                    var: var.unwrap_or_default(),
                },
            ),
        }
    }

    /// Keep `key` for `provider_name`: in the OS keyring, or the secrets file once chosen.
    pub fn store(&self, provider_name: &str, key: &ApiKey) -> Result<KeptIn, LlmError> {
        self.keep
            .set(&account(provider_name), key.expose())
            .map_err(keep_error)
    }

    /// Forget `provider_name`'s key wherever it is kept (nothing to forget is fine).
    pub fn forget(&self, provider_name: &str) -> Result<(), LlmError> {
        self.keep
            .forget(&account(provider_name))
            .map_err(keep_error)
    }
}

fn account(provider_name: &str) -> String {
    format!("provider:{provider_name}")
}

fn keep_error(e: KeepError) -> LlmError {
    match e {
        KeepError::NoPlace => LlmError::NoKeyring,
        other => LlmError::Keyring(other.to_string()),
    }
}

/// The key in `var`: from the vault sealing moved it to, or the environment.
fn read_env(var: &str) -> Option<ApiKey> {
    crate::secrets::env_var(var)
        .filter(|v| !v.trim().is_empty())
        .map(ApiKey::new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_formats_as_redacted() {
        let key = ApiKey::new("sk-secret-123");
        assert_eq!(format!("{key} {key:?}"), "[redacted] ApiKey([redacted])");
        assert_eq!(key.expose(), "sk-secret-123");
    }

    #[test]
    fn scrub_removes_an_echoed_key() {
        let key = ApiKey::new("sk-secret-123");
        assert_eq!(
            scrub("Incorrect API key provided: sk-secret-123.", Some(&key)),
            "Incorrect API key provided: [redacted]."
        );
    }
}
