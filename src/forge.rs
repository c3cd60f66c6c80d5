//! The hosts that keep a project's repository and its pull requests: GitHub, GitLab and
//! Forgejo (Gitea's API, which Codeberg runs). Healer pushes a task's branch, opens a pull
//! request with this client, then polls the host's checks; a red check becomes a failure that
//! Healer heals like any other.
//!
//! Everything a host sends is untrusted: each answer is read to a cap ([`ANSWER_BYTES`]), a
//! failed job's log only to its last [`LOG_TAIL_BYTES`], a missing field is tolerated, and
//! the token is never in an error, a log line, or anything returned. The host's own rate
//! limits are honoured: every answer says how long to wait before asking again ([`Polled`]).

mod answer;
mod error;
mod forgejo;
mod github;
mod gitlab;
mod http;
mod limits;
mod remote;

use std::time::Duration;

pub use error::ForgeError;
pub use remote::read_remote;

/// How often a pull request's checks are asked about when the host asks for nothing longer:
/// CI takes minutes, and a minute keeps well inside every host's rate limit (GitHub's 5,000
/// requests an hour holds dozens of open pull requests).
pub const POLL_EVERY: Duration = Duration::from_secs(60);

/// The most of one answer Healer reads: a page of 100 check runs or jobs is well under it.
pub const ANSWER_BYTES: usize = 4 * 1024 * 1024;

/// How much of a failed check's log is kept: its end, where a build or test says what broke.
pub const LOG_TAIL_BYTES: usize = 64 * 1024;

/// The most failed checks whose logs one poll fetches: a matrix of fifty red jobs usually
/// fails for one reason, and each log is a request against the rate limit.
pub const LOGS_PER_POLL: usize = 5;

/// The result of [`Forge`]'s calls; the error says, in a sentence, what the host refused.
pub type Result<T, E = ForgeError> = std::result::Result<T, E>;

/// Which API a host speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ForgeKind {
    GitHub,
    GitLab,
    /// Forgejo and Gitea: one API (Codeberg runs Forgejo).
    Forgejo,
}

impl ForgeKind {
    /// The name a person knows the host by, for sentences.
    pub fn name(self) -> &'static str {
        match self {
            ForgeKind::GitHub => "GitHub",
            ForgeKind::GitLab => "GitLab",
            ForgeKind::Forgejo => "Forgejo",
        }
    }
}

/// Where a project's repository lives and how to reach its API. Never holds a credential:
/// one written into the remote URL is dropped by [`read_remote`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forge {
    pub kind: ForgeKind,
    /// The API's root: `https://api.github.com/`, `https://gitlab.example.com/api/v4`.
    pub api_base: url::Url,
    /// The web site's root, for pages a person opens.
    pub web_base: url::Url,
    /// `owner/repo` (GitHub, Forgejo) or `group/sub/repo` (GitLab).
    pub repo_path: String,
}

/// A pull request to open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Draft {
    pub title: String,
    pub body: String,
    /// The branch with the task's work.
    pub head: String,
    /// The branch it is to be merged into.
    pub base: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrState {
    Open,
    Merged,
    Closed,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullRequest {
    /// GitHub's and Forgejo's number, GitLab's iid: the number people see (`#12`, `!12`).
    pub number: u64,
    /// The pull request's web page.
    pub url: String,
    pub state: PrState,
    /// The commit its checks run on; `None` when the host did not say.
    pub head_sha: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckState {
    Pending,
    Success,
    Failure,
}

/// One check on a pull request's head commit: a GitHub check run or commit status, a GitLab
/// job, a Forgejo commit status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    pub name: String,
    pub state: CheckState,
    /// Its page on the host.
    pub url: Option<String>,
    /// For a failure, what the host says failed (a job's log, a check's summary): at most the
    /// last [`LOG_TAIL_BYTES`], with known secrets redacted.
    pub log: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checks {
    pub checks: Vec<Check>,
    /// Failure if any check failed; Pending if any is still running, or none has started yet;
    /// else Success.
    pub overall: CheckState,
}

impl Checks {
    pub fn new(checks: Vec<Check>) -> Checks {
        let any = |state| checks.iter().any(|c| c.state == state);
        let overall = if any(CheckState::Failure) {
            CheckState::Failure
        } else if checks.is_empty() || any(CheckState::Pending) {
            CheckState::Pending
        } else {
            CheckState::Success
        };
        Checks { checks, overall }
    }
}

/// An answer, and how long the host asks Healer to wait before asking again: never less than
/// [`POLL_EVERY`], longer when a rate limit says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Polled<T> {
    pub value: T,
    pub wait_at_least: Duration,
}

impl Forge {
    /// Opens a pull request from `draft.head` into `draft.base`. When one is already open for
    /// that branch (Healer opened it before a restart, or the person did), that one is returned:
    /// pushing again and calling this again is safe.
    pub async fn open_pull_request(&self, token: &str, draft: &Draft) -> Result<PullRequest> {
        let call = http::Call::new(self, token)?;
        match self.kind {
            ForgeKind::GitHub => github::open(&call, draft).await,
            ForgeKind::GitLab => gitlab::open(&call, draft).await,
            ForgeKind::Forgejo => forgejo::open(&call, draft).await,
        }
    }

    /// The pull request `number` as the host has it now (still open, merged, closed; its head).
    pub async fn pull_request(&self, token: &str, number: u64) -> Result<Polled<PullRequest>> {
        let call = http::Call::new(self, token)?;
        let pr = match self.kind {
            ForgeKind::GitHub => github::read(&call, number).await?,
            ForgeKind::GitLab => gitlab::read(&call, number).await?,
            ForgeKind::Forgejo => forgejo::read(&call, number).await?,
        };
        Ok(call.polled(pr))
    }

    /// The checks on `pr`'s head commit, each failure with what the host says failed.
    pub async fn checks(&self, token: &str, pr: &PullRequest) -> Result<Polled<Checks>> {
        let call = http::Call::new(self, token)?;
        let checks = match self.kind {
            ForgeKind::GitHub => github::checks(&call, pr).await?,
            ForgeKind::GitLab => gitlab::checks(&call, pr).await?,
            ForgeKind::Forgejo => forgejo::checks(&call, pr).await?,
        };
        Ok(call.polled(Checks::new(checks)))
    }

    /// `owner` and `repo` of a two-part path (GitHub, Forgejo); [`read_remote`] made sure
    /// there are two, a hand-made `Forge` is told so.
    fn owner_and_name(&self) -> Result<(&str, &str)> {
        match self.repo_path.split_once('/') {
            Some((owner, name)) if !owner.is_empty() && !name.is_empty() && !name.contains('/') => {
                Ok((owner, name))
            }
            _ => Err(ForgeError::Setup(format!(
                "{} repositories are named owner/repo, but Healer was given \u{201c}{}\u{201d}",
                self.kind.name(),
                self.repo_path
            ))),
        }
    }
}

#[cfg(test)]
mod test_server;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod github_tests;

#[cfg(test)]
mod gitlab_tests;

#[cfg(test)]
mod forgejo_tests;
