//! git run by Healer itself in a folder of its own making (a worker's clone, a task's worktree
//! here): nothing that asks, no hook or fsmonitor of the repository's, a time limit; the ssh the
//! person (or the worker's operator) chose, else one that fails rather than asks for a
//! passphrase.

use std::path::Path;
use std::time::Duration;

/// How long one such git command may take (a clone of a large repository).
const TIME_LIMIT: Duration = Duration::from_secs(10 * 60);

/// How many of git's last lines a failure quotes.
const QUOTED_LINES: usize = 3;

/// Run git in `dir`; what it printed (trailing space removed), or the last of what it said
/// (its hints left out).
pub(crate) async fn run(dir: &Path, args: &[&str]) -> Result<String, String> {
    let mut cmd = tokio::process::Command::new("git");
    cmd.args([
        "-c",
        "core.hooksPath=/dev/null",
        "-c",
        "core.fsmonitor=false",
        "-c",
        "credential.interactive=never",
    ])
    .args(args)
    .current_dir(dir)
    .env("GIT_TERMINAL_PROMPT", "0")
    // Empty rather than unset: git then skips every askpass program.
    .env("GIT_ASKPASS", "")
    .env_remove("GIT_DIR")
    .env_remove("GIT_WORK_TREE")
    .stdin(std::process::Stdio::null())
    .kill_on_drop(true);
    if !super::push::chooses_own_ssh(dir) {
        cmd.env("GIT_SSH_COMMAND", "ssh -o BatchMode=yes");
    }
    let what = args.first().copied().unwrap_or("");
    let out = tokio::time::timeout(TIME_LIMIT, cmd.output())
        .await
        .map_err(|_| {
            format!(
                "git {what} took longer than {} minutes",
                TIME_LIMIT.as_secs() / 60
            )
        })?
        .map_err(|e| format!("git could not start: {e}"))?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).trim_end().to_string());
    }
    let said = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = said
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("hint:"))
        .collect();
    if lines.is_empty() {
        return Err("git gave no reason".to_string());
    }
    Err(lines[lines.len().saturating_sub(QUOTED_LINES)..].join(" / "))
}

/// A commit's short form, as people see it.
pub(crate) fn short(commit: &str) -> &str {
    commit.get(..7).unwrap_or(commit)
}
