//! Provider keys: in the OS keyring, or (headless, no keyring service) in an environment
//! variable the provider names. A key is held in [`ApiKey`], whose Debug and Display say
//! "[redacted]", so it cannot reach a log line or an error message by formatting; it is
//! never written to the database.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::provider::Provider;
use crate::error::LlmError;

/// The keyring "service" under which Healer keeps its keys.
const KEYRING_SERVICE: &str = "healer";

/// Set to `off` to never touch the OS keyring (CI, tests, a machine where probing it hangs).
pub const KEYRING_ENV: &str = "HEALER_KEYRING";

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
    Env {
        var: String,
    },
    /// The provider needs none (a local Ollama).
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
            KeySource::Env { var } => format!("key from ${var}"),
            KeySource::NotNeeded => "no key needed".to_string(),
            KeySource::Missing { var } => {
                format!("no key yet: set one (it is kept in the OS keyring) or export {var}")
            }
        }
    }
}

/// Finds keys. Cheap to clone. The keyring is asked each time (a key set from another process
/// counts at once), unless it was found to have no service: then, for the life of the process,
/// only environment variables are read.
#[derive(Clone)]
pub struct Keys {
    keyring: bool,
    no_service: Arc<AtomicBool>,
}

impl Keys {
    /// The keyring is used unless `HEALER_KEYRING=off`.
    pub fn from_env() -> Self {
        let off =
            crate::secrets::env_var(KEYRING_ENV).is_some_and(|v| v.eq_ignore_ascii_case("off"));
        Keys {
            keyring: !off,
            no_service: Arc::default(),
        }
    }

    /// Never use the keyring: environment variables only.
    pub fn env_only() -> Self {
        Keys {
            keyring: false,
            no_service: Arc::default(),
        }
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
        if let Some(key) = self.in_keyring(&provider.name) {
            return (Some(key), KeySource::Keyring);
        }
        let var = provider.key_var();
        match var.as_deref().and_then(read_env) {
            Some(key) => (
                Some(key),
                KeySource::Env {
                    var: var.unwrap_or_default(),
                },
            ),
            None if !provider.kind.needs_key() => (None, KeySource::NotNeeded),
            None => (
                None,
                KeySource::Missing {
                    var: var.unwrap_or_default(),
                },
            ),
        }
    }

    /// Keep `key` for `provider_name` in the OS keyring.
    pub fn store(&self, provider_name: &str, key: &ApiKey) -> Result<(), LlmError> {
        if !self.keyring {
            return Err(LlmError::Keyring(format!(
                "{KEYRING_ENV}=off; set the key in the provider's environment variable instead"
            )));
        }
        entry(provider_name)?
            .set_password(key.expose())
            .map_err(keyring_error)
    }

    /// Forget `provider_name`'s key in the keyring (nothing to forget is fine).
    pub fn forget(&self, provider_name: &str) -> Result<(), LlmError> {
        if !self.keyring || self.no_service.load(Ordering::Relaxed) {
            return Ok(());
        }
        match entry(provider_name)?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(e) => Err(keyring_error(e)),
        }
    }

    fn in_keyring(&self, provider_name: &str) -> Option<ApiKey> {
        if !self.keyring || self.no_service.load(Ordering::Relaxed) {
            return None;
        }
        match entry(provider_name).map(|e| e.get_password()) {
            Ok(Ok(key)) if !key.trim().is_empty() => Some(ApiKey::new(key)),
            Ok(Ok(_)) | Ok(Err(keyring::Error::NoEntry)) => None,
            Ok(Err(e)) => {
                if matches!(
                    e,
                    keyring::Error::NoStorageAccess(_) | keyring::Error::PlatformFailure(_)
                ) {
                    // Headless: environment variables are the source from now on.
                    self.no_service.store(true, Ordering::Relaxed);
                }
                tracing::debug!("keyring not used: {}", keyring_error(e));
                None
            }
            Err(e) => {
                tracing::debug!("keyring not used: {e}");
                None
            }
        }
    }
}

fn entry(provider_name: &str) -> Result<keyring::Entry, LlmError> {
    keyring::Entry::new(KEYRING_SERVICE, &format!("provider:{provider_name}"))
        .map_err(keyring_error)
}

/// keyring's errors never contain the secret, but say it plainly anyway.
fn keyring_error(e: keyring::Error) -> LlmError {
    let text = match e {
        keyring::Error::NoStorageAccess(_) | keyring::Error::PlatformFailure(_) => {
            "this computer has no keyring service running, so the key cannot be kept there; \
             put it in the provider's environment variable instead and restart Healer"
                .to_string()
        }
        keyring::Error::NoEntry => "no key stored".to_string(),
        // Its payload is the stored secret's bytes: never format it.
        keyring::Error::BadEncoding(_) => "the stored key is not valid text".to_string(),
        other => other.to_string(),
    };
    LlmError::Keyring(text)
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
