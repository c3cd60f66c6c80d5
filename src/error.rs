//! Errors of the engine. Every error has a stable [`ErrorCode`] so that callers across a
//! process or IPC boundary (the UI, `--json` output) switch on the code, never on the text.

mod llm;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use llm::{BudgetCap, LlmError};

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("the database at {path} is corrupt or is not a Healer database ({detail}). Nothing was changed: move the file aside to start fresh, or restore it from a backup")]
    CorruptDatabase { path: PathBuf, detail: String },

    #[error("the database at {path} was written by a newer Healer (schema {found}, this build knows up to {known}). Nothing was changed: install the newer Healer, or point HEALER_DATA_DIR at another folder")]
    SchemaTooNew {
        path: PathBuf,
        found: i64,
        known: i64,
    },

    #[error("cannot use the data folder {path}: {detail}. Make it writable, or set HEALER_DATA_DIR to a folder you can write")]
    DataDir { path: PathBuf, detail: String },

    #[error("another Healer engine is already running for {data_dir} ({holder}). Only one may run at a time: stop it first, or use the running one")]
    EngineRunning { data_dir: PathBuf, holder: String },

    /// No engine could act (it stopped, or never took the request): the message says which.
    #[error("{0}")]
    EngineUnavailable(String),

    /// The running engine refused or failed the request; its own error, as it said it.
    #[error("{0}")]
    Answered(ErrorPayload),

    #[error("{what} not found")]
    NotFound { what: String },

    #[error("{0}")]
    InvalidInput(String),

    #[error("database error: {0}")]
    Store(#[from] rusqlite::Error),

    #[error("{context}: {}", plain_io(source))]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },

    #[error("{0}")]
    Internal(String),

    /// A model call (or getting ready for one) failed.
    #[error(transparent)]
    Llm(#[from] LlmError),
}

impl Error {
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }

    /// The database was locked by another process for longer than the busy timeout (or is
    /// locked in a way waiting cannot resolve here): worth trying again later.
    pub fn is_locked(&self) -> bool {
        match self {
            Error::Store(e) => matches!(
                e.sqlite_error_code(),
                Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
            ),
            _ => false,
        }
    }

    /// The disk (or the database's quota) is full.
    pub fn is_disk_full(&self) -> bool {
        match self {
            Error::Store(e) => e.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull),
            Error::Io { source, .. } => source.raw_os_error() == Some(28),
            _ => false,
        }
    }

    pub fn code(&self) -> ErrorCode {
        match self {
            Error::CorruptDatabase { .. } => ErrorCode::CorruptDatabase,
            Error::SchemaTooNew { .. } => ErrorCode::SchemaTooNew,
            Error::DataDir { .. } => ErrorCode::DataDir,
            Error::EngineRunning { .. } => ErrorCode::EngineRunning,
            Error::EngineUnavailable(_) => ErrorCode::EngineUnavailable,
            Error::Answered(payload) => payload.code,
            Error::NotFound { .. } => ErrorCode::NotFound,
            Error::InvalidInput(_) => ErrorCode::InvalidInput,
            Error::Store(_) => ErrorCode::Store,
            Error::Io { .. } => ErrorCode::Io,
            Error::Internal(_) => ErrorCode::Internal,
            Error::Llm(e) => e.code(),
        }
    }
}

/// An OS error as a person reads it: "No such file or directory", without "(os error 2)".
pub fn plain_io(e: &std::io::Error) -> String {
    without_os_error_numbers(&e.to_string())
}

/// `text` without the " (os error 111)" the standard library appends to OS errors: the words
/// before it say what happened, the number only means something to a programmer.
pub fn without_os_error_numbers(text: &str) -> String {
    const MARK: &str = " (os error ";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(MARK) {
        let after = &rest[at + MARK.len()..];
        let digits = after.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 && after[digits..].starts_with(')') {
            out.push_str(&rest[..at]);
            rest = &after[digits + 1..];
        } else {
            out.push_str(&rest[..at + MARK.len()]);
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// What kind of error happened, for code to switch on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    CorruptDatabase,
    SchemaTooNew,
    DataDir,
    EngineRunning,
    EngineUnavailable,
    NotFound,
    InvalidInput,
    Store,
    Io,
    Internal,
    /// The provider refused the key (401/403).
    ModelAuth,
    /// The provider or the model does not exist at that address (404).
    ModelNotFound,
    /// Still rate limited (429) after the retries.
    ModelRateLimited,
    /// The provider failed (5xx) after the retries.
    ModelServer,
    /// The conversation is longer than the model's context.
    ModelContextLength,
    /// The provider refused the request for another reason (4xx).
    ModelRejected,
    /// The provider could not be reached.
    ModelNetwork,
    /// The provider's answer could not be read.
    ModelBadResponse,
    /// No provider and model are configured for any tier.
    NoModelConfigured,
    /// A call would cross a budget cap; the error names which.
    BudgetExceeded,
    /// The provider needs a key and none was found (keyring or environment).
    MissingKey,
    /// The OS keyring could not be used.
    Keyring,
}

/// The shape in which an error crosses IPC and `--json` output: `{code, message}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct ErrorPayload {
    pub code: ErrorCode,
    pub message: String,
}

impl From<Error> for ErrorPayload {
    fn from(err: Error) -> Self {
        ErrorPayload {
            code: err.code(),
            message: err.to_string(),
        }
    }
}

impl std::fmt::Display for ErrorPayload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_error_numbers_are_left_out_wherever_they_are() {
        assert_eq!(
            without_os_error_numbers("no Ollama at x (Connection refused (os error 111))"),
            "no Ollama at x (Connection refused)"
        );
        assert_eq!(without_os_error_numbers("a (os error x)"), "a (os error x)");
    }

    #[test]
    fn an_io_error_reads_without_the_os_error_number() {
        let e = Error::io(
            "cannot write /data/w/main.py",
            std::io::Error::from_raw_os_error(2),
        );
        assert_eq!(
            e.to_string(),
            "cannot write /data/w/main.py: No such file or directory"
        );
    }
}
