//! Secrets the engine holds (provider keys) and how they are kept in: the process's environment
//! is sealed at start, and every known secret value is redacted from text before it is stored,
//! logged, shown or sent.
//!
//! Sealing, first thing in `main` while the process has one thread: variables whose names look
//! secret move out of the environment into a vault only this process reads
//! ([`env_var`]); the others are copied to the heap; then the *initial* environment block — the
//! bytes `/proc/<pid>/environ` shows for the life of the process, whatever `setenv` does later
//! — is overwritten with zeros. Last, the process is made undumpable, so that a process of the
//! same user without CAP_SYS_PTRACE cannot read its memory (`/proc/<pid>/mem`, ptrace) either.
//! What this does and does not contain is written down in docs/containment.md.

mod keep;
mod seal;

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

pub use keep::{Keep, KeepError, KeepStatus, KeptIn, FILE_PROTECTS, KEYRING_ENV};
pub use seal::Sealed;

/// What replaces a secret in text.
pub const REDACTED: &str = "[redacted]";

/// Shorter values are not treated as secrets: redacting "1" or "off" everywhere would garble
/// text, and no provider key is this short.
pub const MIN_SECRET_CHARS: usize = 8;

/// Words that make a variable name look like a secret (compared case-insensitively).
const SECRET_WORDS: [&str; 6] = ["KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CRED"];

/// The providers' usual key variables: sealed even if a name did not look secret.
pub const PROVIDER_KEY_VARS: [&str; 2] = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY"];

/// Whether a variable name looks like it holds a secret: it contains KEY, TOKEN, SECRET,
/// PASSWORD, PASSWD or CRED in any case. Deliberately broad (`MONKEY_COUNT` counts too): a
/// variable wrongly withheld makes a run fail visibly, a key wrongly passed leaks silently.
pub fn looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_WORDS.iter().any(|word| upper.contains(word))
}

static VAULT: OnceLock<HashMap<String, String>> = OnceLock::new();
static SEALED: OnceLock<Sealed> = OnceLock::new();
static KNOWN: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Seal this process's environment (see the module's notes). Call it first in `main`, before
/// any thread starts: it changes the environment. Returns what was done and what could not be.
pub fn seal_process() -> Sealed {
    let mut vault = HashMap::new();
    for (name, value) in std::env::vars_os() {
        let (Some(name_text), Some(value_text)) = (name.to_str(), value.to_str()) else {
            continue;
        };
        if looks_secret(name_text) || PROVIDER_KEY_VARS.contains(&name_text) {
            remember(value_text);
            vault.insert(name_text.to_string(), value_text.to_string());
            std::env::remove_var(&name);
        }
    }
    let _ = VAULT.set(vault);
    let sealed = seal::seal();
    let _ = SEALED.set(sealed.clone());
    sealed
}

/// How this process was sealed; `None` when it was not (a test calling the library).
pub fn sealed() -> Option<&'static Sealed> {
    SEALED.get()
}

/// A variable of this process's environment: from the vault when sealing moved it there, else
/// from the environment (a process that never sealed, such as a test, reads it directly).
pub fn env_var(name: &str) -> Option<String> {
    VAULT
        .get()
        .and_then(|vault| vault.get(name).cloned())
        .or_else(|| std::env::var(name).ok())
}

/// From now on, redact `value` wherever text is stored, logged, shown or sent.
pub fn remember(value: &str) {
    let value = value.trim();
    if value.chars().count() < MIN_SECRET_CHARS {
        return;
    }
    let mut known = KNOWN.write().unwrap_or_else(|p| p.into_inner());
    if !known.iter().any(|k| k == value) {
        known.push(value.to_string());
        // Longest first, so a key that contains another is replaced whole.
        known.sort_by_key(|k| std::cmp::Reverse(k.len()));
    }
}

/// `text` with every known secret replaced by [`REDACTED`].
pub fn redact(text: &str) -> Cow<'_, str> {
    let known = KNOWN.read().unwrap_or_else(|p| p.into_inner());
    let mut out = Cow::Borrowed(text);
    for secret in known.iter() {
        if out.contains(secret.as_str()) {
            out = Cow::Owned(out.replace(secret.as_str(), REDACTED));
        }
    }
    out
}

/// [`redact`] for bytes that may not be UTF-8 (a script's raw output).
pub fn redact_bytes(bytes: &[u8]) -> Cow<'_, [u8]> {
    let known = KNOWN.read().unwrap_or_else(|p| p.into_inner());
    let mut out = Cow::Borrowed(bytes);
    for secret in known.iter() {
        if let Cow::Owned(replaced) = redact_one(&out, secret) {
            out = Cow::Owned(replaced);
        }
    }
    out
}

/// `bytes` with every `secret` replaced by [`REDACTED`]; borrowed when there is none.
pub fn redact_one<'a>(bytes: &'a [u8], secret: &str) -> Cow<'a, [u8]> {
    let finder = memchr::memmem::Finder::new(secret.as_bytes());
    if secret.is_empty() || finder.find(bytes).is_none() {
        return Cow::Borrowed(bytes);
    }
    let mut replaced = Vec::with_capacity(bytes.len());
    let mut last = 0;
    for at in finder.find_iter(bytes) {
        replaced.extend_from_slice(bytes.get(last..at).unwrap_or_default());
        replaced.extend_from_slice(REDACTED.as_bytes());
        last = at + secret.len();
    }
    replaced.extend_from_slice(bytes.get(last..).unwrap_or_default());
    Cow::Owned(replaced)
}

/// [`redact`] for an owned string, without a copy when nothing is secret.
pub fn redact_owned(text: String) -> String {
    match redact(&text) {
        Cow::Borrowed(_) => text,
        Cow::Owned(redacted) => redacted,
    }
}

/// [`redact_owned`] for an optional string.
pub fn redact_option(text: Option<String>) -> Option<String> {
    text.map(redact_owned)
}

/// Write `bytes` to `path` readable and writable by its owner only (an older file of that name
/// is made private too), and sync it: the secrets file, its key, a cluster key for workers.
pub fn write_private(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    file.write_all(bytes)?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_looking_names_are_recognised_in_any_case() {
        for name in [
            "OPENAI_API_KEY",
            "api_key",
            "GithubToken",
            "CLIENT_SECRET",
            "DB_PASSWORD",
            "passwd",
            "KEYRING",
            "ACME_PROVIDER_CRED",
        ] {
            assert!(looks_secret(name), "{name}");
        }
        for name in ["CITY", "REPORT_DIR", "DEBUG", "PATH", "LANG"] {
            assert!(!looks_secret(name), "{name}");
        }
    }

    #[test]
    fn a_remembered_value_is_redacted_and_short_ones_are_not_secrets() {
        remember("sk-unit-test-value-91c2");
        remember("sk-unit-test-value-91c2-longer");
        remember("short");
        assert_eq!(
            redact("a sk-unit-test-value-91c2-longer b sk-unit-test-value-91c2 c short"),
            "a [redacted] b [redacted] c short"
        );
        assert!(matches!(redact("nothing here"), Cow::Borrowed(_)));
    }
}
