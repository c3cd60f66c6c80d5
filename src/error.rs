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

    /// Built with [`Error::data_dir`], which says what to do (the disk is full, or the folder
    /// cannot be written).
    #[error("the data in {path} is from an older Healer (schema {found}; this one knows {known}). A command that only reads does not upgrade it{running}. Open Healer or run `healer daemon` once: it upgrades the data, and keeps a copy of the file first")]
    SchemaBehind {
        path: PathBuf,
        found: i64,
        known: i64,
        /// ", and the older Healer that uses it runs now (…): quit it first", or nothing.
        running: String,
    },

    #[error("cannot use the data folder {path}: {detail}. {advice}")]
    DataDir {
        path: PathBuf,
        detail: String,
        advice: String,
    },

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

    /// A secret value has nowhere to be kept: no keyring service, and the person has not
    /// chosen Healer's own secrets file.
    #[error("this computer has no keyring service, so Healer cannot keep the secret there: choose to keep secrets in Healer's own secrets file")]
    NoSecretPlace,

    #[error("{0}")]
    InvalidInput(String),

    /// The Temporal cluster could not be reached, or refused; the message says which.
    #[error("{0}")]
    Cluster(String),

    #[error("{}", store_message(.0))]
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

/// The room Healer asks for on the disk of its data folder when that disk is full: the
/// database, its write-ahead log and a run's logs grow by this much in a busy hour.
pub const NEEDED_FREE_BYTES: u64 = 64 * 1024 * 1024;

impl Error {
    /// The data folder (or a file in it at `path`) cannot be used because of `detail`.
    pub fn data_dir(path: PathBuf, detail: String) -> Self {
        let free = free_space(&path);
        Error::DataDir {
            advice: data_dir_advice(&detail, free),
            path,
            detail,
        }
    }

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
            Error::SchemaBehind { .. } => ErrorCode::SchemaBehind,
            Error::DataDir { .. } => ErrorCode::DataDir,
            Error::EngineRunning { .. } => ErrorCode::EngineRunning,
            Error::EngineUnavailable(_) => ErrorCode::EngineUnavailable,
            Error::Answered(payload) => payload.code,
            Error::NotFound { .. } => ErrorCode::NotFound,
            Error::NoSecretPlace => ErrorCode::NoKeyring,
            Error::InvalidInput(_) => ErrorCode::InvalidInput,
            Error::Cluster(_) => ErrorCode::Cluster,
            Error::Store(_) => ErrorCode::Store,
            Error::Io { .. } => ErrorCode::Io,
            Error::Internal(_) => ErrorCode::Internal,
            Error::Llm(e) => e.code(),
        }
    }
}

/// An OS error as a person reads it: "No such file or directory", without "(os error 2)".
/// What to do about a data folder that cannot be used: a full disk is said as such, with the
/// room it lacks, not as a folder to make writable.
fn data_dir_advice(detail: &str, free: Option<u64>) -> String {
    let low = free.is_some_and(|f| f < NEEDED_FREE_BYTES);
    let said_full = ["disk is full", "No space left", "os error 28"]
        .iter()
        .any(|words| detail.contains(words));
    let io = detail.contains("disk I/O error");
    if said_full || (io && low) {
        let left = free.map_or_else(String::new, |f| format!(" (only {} left)", megabytes(f)));
        return format!(
            "The disk holding it is full{left}: free at least {} on it and try again, or set \
             HEALER_DATA_DIR to a folder on another disk",
            megabytes(NEEDED_FREE_BYTES)
        );
    }
    "Make it writable, or set HEALER_DATA_DIR to a folder you can write".to_string()
}

/// A database error as a person reads it: a full disk says so, with the room Healer asks for.
fn store_message(e: &rusqlite::Error) -> String {
    if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull) {
        return format!(
            "the disk holding Healer's data is full, so nothing could be saved: free at least {} \
             on it and try again",
            megabytes(NEEDED_FREE_BYTES)
        );
    }
    format!("database error: {e}")
}

fn megabytes(bytes: u64) -> String {
    format!("{} MB", bytes.div_ceil(1024 * 1024))
}

/// The bytes an unprivileged program may still write on the disk holding `path` (or its
/// nearest existing folder).
pub fn free_space(path: &std::path::Path) -> Option<u64> {
    let existing = path.ancestors().find(|p| p.exists())?;
    let stat = nix::sys::statvfs::statvfs(existing).ok()?;
    Some(stat.blocks_available().saturating_mul(stat.fragment_size()))
}

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
    /// The data is from an older Healer and was not upgraded (a command that only reads).
    SchemaBehind,
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
    /// The provider was reached and then stopped answering.
    ModelStalled,
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
    /// No keyring service runs and the person has not chosen Healer's own secrets file.
    NoKeyring,
    /// The Temporal cluster could not be reached or refused (or none is connected).
    Cluster,
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
    fn a_full_disk_is_said_with_the_room_it_needs_not_as_a_folder_to_make_writable() {
        let full = data_dir_advice("disk I/O error", Some(200 * 1024));
        assert_eq!(
            full,
            "The disk holding it is full (only 1 MB left): free at least 64 MB on it and try \
             again, or set HEALER_DATA_DIR to a folder on another disk"
        );
        assert!(data_dir_advice("database or disk is full", None).starts_with("The disk"));
        assert!(
            data_dir_advice("No space left on device (os error 28)", Some(u64::MAX))
                .starts_with("The disk holding it is full (only")
        );
        let io = data_dir_advice("disk I/O error", Some(10 << 30));
        assert!(io.starts_with("Make it writable"), "{io}");
        assert!(data_dir_advice("Permission denied", Some(0)).starts_with("Make it writable"));
    }

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
