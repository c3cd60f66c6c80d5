//! What can go wrong talking to a host, each as a sentence a person can act on. The kinds stay
//! apart so that the engine can tell a passing fault (wait and ask again: [`ForgeError::wait`])
//! from one the person must fix (a refused token, a wrong address).

use std::time::Duration;

/// A host's failure. Never holds the token: every detail taken from an answer is scrubbed of
/// it before it is kept.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ForgeError {
    /// The remote, the API address or the token cannot be used as given.
    #[error("{0}")]
    Setup(String),

    /// 401 or 403 that is not a rate limit.
    #[error("{host} refused the token for {repo} ({status}){}", said(.detail))]
    Refused {
        host: &'static str,
        repo: String,
        status: u16,
        detail: Option<String>,
    },

    /// 404: `what` is "repository owner/repo", "pull request 7 in owner/repo" …
    #[error("{host} has no {what}, or the token cannot see it")]
    NotFound { host: &'static str, what: String },

    /// 429, or a 403 that says it is a rate limit.
    #[error("{host} asks Healer to wait {} before asking about {repo} again (its rate limit)", in_words(*.wait))]
    RateLimited {
        host: &'static str,
        repo: String,
        wait: Duration,
    },

    /// No answer: refused connection, unknown name, time out, a connection that broke off.
    #[error("{host} at {api_host} did not answer: {detail}")]
    Unreachable {
        host: &'static str,
        api_host: String,
        detail: String,
    },

    /// Another 4xx: the host understood and said no (a branch that does not exist …).
    #[error("{host} refused the request for {repo} ({status}){}", said(.detail))]
    Rejected {
        host: &'static str,
        repo: String,
        status: u16,
        detail: Option<String>,
    },

    /// 5xx: the host failed.
    #[error("{host} failed while answering about {repo} ({status}){}. It is usually passing: Healer asks again later", said(.detail))]
    HostFailed {
        host: &'static str,
        repo: String,
        status: u16,
        detail: Option<String>,
    },

    /// A success Healer cannot read: not JSON, too large, without a field it needs.
    #[error("{host}'s answer about {repo} could not be read: {detail}")]
    BadAnswer {
        host: &'static str,
        repo: String,
        detail: String,
    },
}

impl ForgeError {
    /// How long to wait before asking again, when waiting may help: the rate limit's own
    /// wait, or one poll for a host that did not answer or failed.
    pub fn wait(&self) -> Option<Duration> {
        match self {
            ForgeError::RateLimited { wait, .. } => Some((*wait).max(super::POLL_EVERY)),
            ForgeError::Unreachable { .. } | ForgeError::HostFailed { .. } => {
                Some(super::POLL_EVERY)
            }
            _ => None,
        }
    }

    /// Whether asking again later may work without the person doing anything.
    pub fn is_passing(&self) -> bool {
        self.wait().is_some()
    }
}

/// Into the engine's error: what the person must fix is invalid input; what the host or the
/// network did is not the person's, and keeps its sentence.
impl From<ForgeError> for crate::error::Error {
    fn from(e: ForgeError) -> Self {
        match e {
            ForgeError::Setup(_)
            | ForgeError::Refused { .. }
            | ForgeError::NotFound { .. }
            | ForgeError::Rejected { .. } => crate::error::Error::InvalidInput(e.to_string()),
            ForgeError::RateLimited { .. }
            | ForgeError::Unreachable { .. }
            | ForgeError::HostFailed { .. }
            | ForgeError::BadAnswer { .. } => crate::error::Error::Internal(e.to_string()),
        }
    }
}

/// ": the host's message", or nothing when it gave none worth reading (a web page).
fn said(detail: &Option<String>) -> String {
    match detail {
        Some(d) if !d.is_empty() => format!(": {d}"),
        _ => String::new(),
    }
}

/// "45 seconds", "10 minutes", "2 hours".
pub(super) fn in_words(wait: Duration) -> String {
    let secs = wait.as_secs().max(1);
    let plural = |n: u64, unit: &str| format!("{n} {unit}{}", if n == 1 { "" } else { "s" });
    if secs < 120 {
        plural(secs, "second")
    } else if secs < 2 * 3600 {
        plural(secs.div_ceil(60), "minute")
    } else {
        plural(secs.div_ceil(3600), "hour")
    }
}
