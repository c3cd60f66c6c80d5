//! Pushing a task's branch (`healer/<task>`) to the repository's remote, so that the person (or
//! a pull request on their forge) can take the work from there.
//!
//! It runs the git binary rather than git2: only git itself uses the person's credential
//! helpers, SSH keys and agent, `insteadOf` rules and pre-push hook, which is what lets Healer
//! push with the person's own sign-in and hold no secret of its own. Nothing may ask: Healer
//! runs in the background where a prompt would wait unseen, so a missing sign-in is an error
//! that says how to sign in once, not a prompt.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use git2::Repository;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

mod pin;

pub use pin::{pin_name, pin_then_move};

use super::repo::git_error;
use crate::error::{Error, Result};

/// How long one push may take. A push of a task's branch is small; one that takes longer is
/// stuck (a server that stopped answering, a dead connection) and would otherwise hold the task.
pub const PUSH_TIME_LIMIT: Duration = Duration::from_secs(5 * 60);

/// Only Healer's own branches are pushed: a push (forced ones above all) can never touch the
/// person's branches.
const OWN_PREFIX: &str = "healer/";

/// The ssh a push uses unless the person chose their own: one that fails instead of asking for
/// a passphrase or a password.
const BATCH_SSH: &str = "ssh -o BatchMode=yes";

/// How many of git's last lines an unexplained failure quotes.
const QUOTED_LINES: usize = 3;

/// A remote of the repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remote {
    pub name: String,
    /// Where pushes go (its push URL when it has one), without a password or token: for showing
    /// and for finding the forge. git pushes to the URL as configured.
    pub url: String,
}

/// A push that went through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pushed {
    /// The commit the remote branch now stands at.
    pub commit: String,
    /// The remote branch was replaced by one that does not contain it (a rebased branch).
    pub forced: bool,
    /// The remote branch stood at the commit already.
    pub up_to_date: bool,
}

/// Why a push did not go through, for code to act on (the branch moved: fetch and rebase; the
/// sign-in was refused: ask the person) without reading the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PushFailure {
    /// Healer refused to push it (not its own branch, a malformed name or commit).
    Refused,
    NoRemote,
    NoBranch,
    /// The remote refused the sign-in, or git had none to offer.
    Auth,
    /// The remote branch is not where the push expected it.
    Moved,
    /// The remote declined the update (a hook, a protected branch).
    Declined,
    /// No repository at the remote's address.
    NotFound,
    Unreachable,
    TimedOut,
    Failed,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct PushError {
    pub failure: PushFailure,
    pub message: String,
}

impl PushError {
    fn new(failure: PushFailure, message: String) -> Self {
        PushError { failure, message }
    }
}

impl From<PushError> for Error {
    fn from(e: PushError) -> Self {
        match e.failure {
            PushFailure::Refused | PushFailure::NoRemote | PushFailure::NoBranch => {
                Error::InvalidInput(e.message)
            }
            _ => Error::Internal(e.message),
        }
    }
}

/// The remote a task's branch goes to: where the person pushes the main branch (its
/// `pushRemote`, else `remote.pushDefault`, else its upstream's remote), else `origin`, else the
/// only remote. A fork's workflow fetches from upstream and pushes to the fork; the branch
/// belongs where the person's own pushes go. None when the repository has no remote.
pub fn remote_for(repo: &Path, main_branch: &str) -> Result<Option<Remote>> {
    let repo = Repository::open(repo).map_err(|e| git_error("cannot open the repository", e))?;
    let names = repo
        .remotes()
        .map_err(|e| git_error("cannot read the repository's remotes", e))?;
    let names: Vec<String> = names
        .iter()
        .flatten()
        .flatten()
        .map(str::to_string)
        .collect();
    let config = repo
        .config()
        .map_err(|e| git_error("cannot read the repository's settings", e))?;
    let configured = |key: &str| {
        config
            .get_string(key)
            .ok()
            .filter(|name| names.contains(name))
    };
    let chosen = configured(&format!("branch.{main_branch}.pushRemote"))
        .or_else(|| configured("remote.pushDefault"))
        .or_else(|| configured(&format!("branch.{main_branch}.remote")))
        .or_else(|| names.iter().find(|n| *n == "origin").cloned())
        .or_else(|| match names.as_slice() {
            [only] => Some(only.clone()),
            _ => None,
        });
    let Some(name) = chosen else {
        return Ok(None);
    };
    let remote = repo
        .find_remote(&name)
        .map_err(|e| git_error(&format!("cannot read the remote \"{name}\""), e))?;
    let url = remote
        .pushurl()
        .ok()
        .flatten()
        .or(remote.url().ok())
        .unwrap_or_default();
    Ok(Some(Remote {
        url: without_credentials(url),
        name,
    }))
}

/// Pushes `branch` (one of Healer's `healer/` branches) to the same branch on `remote`.
///
/// `expect_remote_at` is the commit Healer last pushed there. Given, the push replaces the
/// remote branch (a rebased task) but only while it still stands at that commit
/// (`--force-with-lease`): whatever someone else pushed to it meanwhile is never overwritten.
/// Without it, the push only adds to the branch.
pub async fn push_branch(
    repo: &Path,
    remote: &Remote,
    branch: &str,
    expect_remote_at: Option<&str>,
) -> Result<Pushed, PushError> {
    push_branch_within(repo, remote, branch, expect_remote_at, PUSH_TIME_LIMIT).await
}

/// [`push_branch`] with its own time limit.
pub async fn push_branch_within(
    repo: &Path,
    remote: &Remote,
    branch: &str,
    expect_remote_at: Option<&str>,
    limit: Duration,
) -> Result<Pushed, PushError> {
    let full = checked_branch(branch)?;
    if let Some(expected) = expect_remote_at {
        if !is_full_hash(expected) {
            return Err(PushError::new(
                PushFailure::Refused,
                format!(
                    "\"{expected}\" is not a full commit id, so Healer cannot tell where it \
                     expects {branch} to be on the remote; it was not pushed"
                ),
            ));
        }
    }
    let local = prepare(repo, remote, &full)?;
    let how = How::Person {
        lease: expect_remote_at,
    };
    send(repo, remote, branch, &local, &full, how, limit).await
}

/// How a push updates its ref.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum How<'a> {
    /// The person's branch, pushed as they push (their pre-push hook runs); with `lease`, only
    /// while the remote's branch stands there.
    Person { lease: Option<&'a str> },
    /// A name of Healer's own, replaced whatever it holds (an agent may have planted it).
    Pin,
    /// Healer puts a branch back by itself, only while it stands at `lease`.
    Rewind { lease: &'a str },
}

/// `git push <remote> <commit>:<dst>` with the person's own sign-in and nothing that asks, as
/// `how` says; Healer's own pushes run no hook and take no tag or submodule along. `branch`
/// names what is pushed in what is said.
pub(super) async fn send(
    repo: &Path,
    remote: &Remote,
    branch: &str,
    commit: &str,
    dst: &str,
    how: How<'_>,
    limit: Duration,
) -> Result<Pushed, PushError> {
    let (own, force, lease) = match how {
        How::Person { lease } => (false, "", lease),
        How::Pin => (true, "+", None),
        How::Rewind { lease } => (true, "", Some(lease)),
    };
    let shown = without_credentials(&remote.url);
    let mut cmd = tokio::process::Command::new("git");
    cmd.arg("-c").arg("credential.interactive=never");
    if own {
        cmd.args([
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "core.fsmonitor=false",
        ]);
    }
    cmd.arg("push").arg("--porcelain");
    if own {
        cmd.args(["--no-verify", "--no-follow-tags", "--recurse-submodules=no"]);
    }
    if let Some(expected) = lease {
        cmd.arg(format!("--force-with-lease={dst}:{expected}"));
    }
    cmd.arg(&remote.name)
        .arg(format!("{force}{commit}:{dst}"))
        .current_dir(repo)
        // The repository is named by the folder, never by a variable left over from a caller.
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        // Messages in English, to be read below.
        .env("LC_ALL", "C")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GCM_INTERACTIVE", "never")
        // Empty rather than unset: git then skips every askpass program, `core.askPass` and
        // SSH_ASKPASS included, and no window asks for a password nobody is there to type.
        .env("GIT_ASKPASS", "")
        .env_remove("SSH_ASKPASS")
        .env("SSH_ASKPASS_REQUIRE", "never")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own group, so that a time limit also ends the ssh or helper it started.
        .process_group(0)
        .kill_on_drop(true);
    if !chooses_own_ssh(repo) {
        cmd.env("GIT_SSH_COMMAND", BATCH_SSH);
    }

    let child = cmd.spawn().map_err(|e| {
        let why = if e.kind() == std::io::ErrorKind::NotFound {
            "git is not installed or not on PATH — install git and try again".to_string()
        } else {
            format!("git could not be started: {}", crate::error::plain_io(&e))
        };
        PushError::new(PushFailure::Failed, format!("Cannot push {branch}: {why}"))
    })?;
    let group = child.id();
    let output = match tokio::time::timeout(limit, child.wait_with_output()).await {
        Ok(Ok(output)) => output,
        Ok(Err(e)) => {
            return Err(PushError::new(
                PushFailure::Failed,
                format!(
                    "Cannot push {branch}: git's output could not be read ({})",
                    crate::error::plain_io(&e)
                ),
            ))
        }
        Err(_) => {
            if let Some(pid) = group.and_then(|p| i32::try_from(p).ok()) {
                // ESRCH (all gone already) is fine.
                let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
            }
            return Err(PushError::new(
                PushFailure::TimedOut,
                format!(
                    "Pushing {branch} to {shown} did not finish within {} and was stopped: the \
                     remote may be slow or unreachable. Try again later",
                    duration_words(limit)
                ),
            ));
        }
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = scrubbed(&String::from_utf8_lossy(&output.stderr), &remote.url);
    let Some((flag, summary)) = ref_status(&stdout, dst) else {
        return Err(failure(&stderr, branch, &shown));
    };
    match flag {
        ' ' | '*' | '+' | '=' => Ok(Pushed {
            commit: commit.to_string(),
            forced: flag == '+',
            up_to_date: flag == '=',
        }),
        _ => Err(rejection(
            &scrubbed(summary, &remote.url),
            &stderr,
            branch,
            &shown,
        )),
    }
}

/// `refs/heads/<branch>` for one of Healer's own branches with a name git accepts.
fn checked_branch(branch: &str) -> Result<String, PushError> {
    let full = format!("refs/heads/{branch}");
    let own = branch.len() > OWN_PREFIX.len() && branch.starts_with(OWN_PREFIX);
    if !own {
        return Err(PushError::new(
            PushFailure::Refused,
            format!(
                "Healer pushes only its own task branches (healer/<task>); \"{branch}\" is not \
                 one, so it was not pushed"
            ),
        ));
    }
    if !git2::Reference::is_valid_name(&full) {
        return Err(PushError::new(
            PushFailure::Refused,
            format!("\"{branch}\" is not a branch name git accepts, so it was not pushed"),
        ));
    }
    Ok(full)
}

/// The commit `full` stands at, after checking that the remote exists.
fn prepare(repo: &Path, remote: &Remote, full: &str) -> Result<String, PushError> {
    let branch = full.trim_start_matches("refs/heads/");
    let opened = Repository::open(repo).map_err(|e| {
        PushError::new(
            PushFailure::Failed,
            format!(
                "Cannot push {branch}: the repository at {} cannot be opened ({})",
                repo.display(),
                e.message()
            ),
        )
    })?;
    // A name with a leading dash would read as an option of git push.
    if remote.name.starts_with('-') || opened.find_remote(&remote.name).is_err() {
        return Err(PushError::new(
            PushFailure::NoRemote,
            format!(
                "The repository has no remote named \"{}\", so {branch} was not pushed: add it \
                 (git remote add) or choose another remote in the project's settings",
                remote.name
            ),
        ));
    }
    opened
        .refname_to_id(full)
        .map(|oid| oid.to_string())
        .map_err(|_| {
            PushError::new(
                PushFailure::NoBranch,
                format!("The repository has no branch {branch}, so there is nothing to push"),
            )
        })
}

/// The person chose how git runs ssh (GIT_SSH_COMMAND, GIT_SSH or `core.sshCommand`): theirs
/// is used as it is.
pub(super) fn chooses_own_ssh(repo: &Path) -> bool {
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    if set("GIT_SSH_COMMAND") || set("GIT_SSH") {
        return true;
    }
    Repository::open(repo)
        .and_then(|r| r.config())
        .and_then(|c| c.get_string("core.sshCommand"))
        .is_ok_and(|v| !v.is_empty())
}

pub(super) fn is_full_hash(text: &str) -> bool {
    matches!(text.len(), 40 | 64) && text.chars().all(|c| c.is_ascii_hexdigit())
}

/// The flag and summary of `full` in `git push --porcelain` output
/// (`<flag>\t<from>:<to>\t<summary>`).
fn ref_status<'a>(stdout: &'a str, full: &str) -> Option<(char, &'a str)> {
    stdout.lines().find_map(|line| {
        let mut fields = line.splitn(3, '\t');
        let flag = fields.next()?.chars().next()?;
        let refs = fields.next()?;
        let summary = fields.next().unwrap_or("");
        (refs.rsplit(':').next() == Some(full)).then_some((flag, summary))
    })
}

/// A refused update, said from git's summary ("[rejected] (stale info)", "[remote rejected]
/// (pre-receive hook declined)") and what the remote said about it (a forge names the rule).
fn rejection(summary: &str, stderr: &str, branch: &str, shown: &str) -> PushError {
    let moved = ["stale info", "fetch first", "non-fast-forward"];
    if moved.iter().any(|m| summary.contains(m)) {
        return PushError::new(
            PushFailure::Moved,
            format!(
                "{shown} refused {branch}: the branch there is not where Healer left it \
                 (someone pushed to it or removed it meanwhile), and Healer does not overwrite \
                 other people's work. Fetch it and bring the task up to date, or delete the \
                 remote branch if nobody needs it"
            ),
        );
    }
    let reason = summary
        .split_once('(')
        .map(|(_, r)| r.trim_end_matches(')').trim())
        .filter(|r| !r.is_empty())
        .unwrap_or(summary.trim());
    let remote_said: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.strip_prefix("remote:"))
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let remote_said = match remote_said.len() {
        0 => String::new(),
        n => format!(
            " It said: {}.",
            remote_said[n.saturating_sub(QUOTED_LINES)..].join(" / ")
        ),
    };
    PushError::new(
        PushFailure::Declined,
        format!(
            "{shown} declined {branch} ({reason}).{remote_said} The remote's rules (a \
             protected branch, a hook) decide this; check them with the repository's owner"
        ),
    )
}

/// A push that ended before any branch was updated, said from what git wrote.
fn failure(stderr: &str, branch: &str, shown: &str) -> PushError {
    let said = stderr.to_lowercase();
    let any = |words: &[&str]| words.iter().any(|w| said.contains(w));
    if any(&[
        "authentication failed",
        "could not read username",
        "could not read password",
        "unable to get password",
        "terminal prompts disabled",
        "permission denied (publickey",
        "permission denied, please try again",
        "returned error: 401",
        "returned error: 403",
        "invalid username or password",
    ]) {
        return PushError::new(
            PushFailure::Auth,
            format!(
                "The remote refused your credentials for {shown}, so {branch} was not pushed. \
                 git uses your own sign-in for it (a credential helper or an SSH key): push once \
                 from a terminal in this repository so that git remembers you, then try again"
            ),
        );
    }
    if said.contains("host key verification failed") {
        return PushError::new(
            PushFailure::Auth,
            format!(
                "ssh does not know the host key of {shown} yet, so {branch} was not pushed: \
                 connect to it once from a terminal (git fetch) to accept the key, then try again"
            ),
        );
    }
    if any(&[
        "repository not found",
        "does not appear to be a git repository",
        "returned error: 404",
        "' not found",
    ]) {
        return PushError::new(
            PushFailure::NotFound,
            format!(
                "There is no repository at {shown} (or your sign-in may not see it), so {branch} \
                 was not pushed: check the remote's address"
            ),
        );
    }
    if any(&[
        "could not resolve host",
        "failed to connect",
        "connection refused",
        "connection timed out",
        "network is unreachable",
        "no route to host",
        "couldn't connect",
        "could not connect",
        "connection reset",
        "operation timed out",
    ]) {
        return PushError::new(
            PushFailure::Unreachable,
            format!(
                "{shown} could not be reached, so {branch} was not pushed: check the network \
                 connection (and a VPN the remote needs), then try again"
            ),
        );
    }
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let quoted = lines[lines.len().saturating_sub(QUOTED_LINES)..].join(" / ");
    let quoted = if quoted.is_empty() {
        "git gave no reason".to_string()
    } else {
        quoted
    };
    PushError::new(
        PushFailure::Failed,
        format!("Pushing {branch} to {shown} failed: {quoted}"),
    )
}

/// `url` without the password or token in it: `https://user:token@host/x` is
/// `https://host/x`; an ssh URL keeps its user (`ssh://git@host/x`), which is no secret. A path
/// or an scp-like address (`git@host:x`) is kept as it is.
pub fn without_credentials(url: &str) -> String {
    let Some(at) = url.find("://") else {
        return url.to_string();
    };
    let scheme = &url[..at];
    let rest = &url[at + 3..];
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let Some(sign) = rest[..end].rfind('@') else {
        return url.to_string();
    };
    let user = if scheme.contains("ssh") {
        let user = rest[..sign].split(':').next().unwrap_or("");
        format!("{user}@")
    } else {
        String::new()
    };
    format!("{scheme}://{user}{}", &rest[sign + 1..])
}

/// `text` (git's output) without any `://user:password@` in it, nor the password of the
/// remote's configured `url`.
fn scrubbed(text: &str, url: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        out.push_str(&rest[..at + 3]);
        rest = &rest[at + 3..];
        let end = rest
            .find(|c: char| c == '/' || c.is_whitespace() || "'\"<>()".contains(c))
            .unwrap_or(rest.len());
        if let Some(sign) = rest[..end].rfind('@') {
            rest = &rest[sign + 1..];
        }
    }
    out.push_str(rest);
    match password(url) {
        Some(secret) => out.replace(secret, "***"),
        None => out,
    }
}

/// The password in a URL's `user:password@`.
fn password(url: &str) -> Option<&str> {
    let rest = &url[url.find("://")? + 3..];
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let userinfo = &rest[..rest[..end].rfind('@')?];
    userinfo
        .split_once(':')
        .map(|(_, p)| p)
        .filter(|p| !p.is_empty())
}

fn duration_words(limit: Duration) -> String {
    let secs = limit.as_secs();
    if secs >= 60 && secs.is_multiple_of(60) {
        let minutes = secs / 60;
        format!("{minutes} minute{}", if minutes == 1 { "" } else { "s" })
    } else {
        format!("{secs} second{}", if secs == 1 { "" } else { "s" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_or_token_never_shows_in_a_remote_address() {
        assert_eq!(
            without_credentials("https://ada:s3cret@example.com/team/app.git"),
            "https://example.com/team/app.git"
        );
        assert_eq!(
            without_credentials("https://ghp_token@github.com/o/r"),
            "https://github.com/o/r"
        );
        assert_eq!(
            without_credentials("ssh://git:pw@host:2222/o/r"),
            "ssh://git@host:2222/o/r"
        );
        assert_eq!(
            without_credentials("git@github.com:o/r.git"),
            "git@github.com:o/r.git"
        );
        assert_eq!(without_credentials("/srv/git/app.git"), "/srv/git/app.git");
        assert_eq!(
            without_credentials("https://example.com/a@b"),
            "https://example.com/a@b"
        );
    }

    #[test]
    fn git_output_is_scrubbed_of_credentials() {
        let said = "fatal: unable to access 'http://ada:s3cret@127.0.0.1:9/r.git/': s3cret";
        let clean = scrubbed(said, "http://ada:s3cret@127.0.0.1:9/r.git");
        assert_eq!(
            clean,
            "fatal: unable to access 'http://127.0.0.1:9/r.git/': ***"
        );
    }

    #[test]
    fn porcelain_lines_are_read_for_the_pushed_branch() {
        let out = "To /srv/r.git\n+\trefs/heads/healer/t1:refs/heads/healer/t1\tabc...def (forced update)\nDone\n";
        assert_eq!(
            ref_status(out, "refs/heads/healer/t1").map(|(f, _)| f),
            Some('+')
        );
        assert_eq!(ref_status(out, "refs/heads/healer/t2"), None);
    }
}
