//! The worker's git: its own sign-in, nothing that asks, no hook or setting that runs a
//! program.

use std::path::Path;
use std::time::Duration;

/// How long one git command of the worker's may take (a clone of a large repository).
const GIT_TIME_LIMIT: Duration = Duration::from_secs(10 * 60);

/// Run git in `dir` for the worker: its own sign-in, nothing that asks, no hook or
/// repository setting that runs a program.
pub(super) async fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
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
    .env_remove("GIT_DIR")
    .env_remove("GIT_WORK_TREE")
    .stdin(std::process::Stdio::null())
    .kill_on_drop(true);
    if std::env::var_os("GIT_SSH_COMMAND").is_none() {
        cmd.env("GIT_SSH_COMMAND", "ssh -o BatchMode=yes");
    }
    let out = tokio::time::timeout(GIT_TIME_LIMIT, cmd.output())
        .await
        .map_err(|_| {
            format!(
                "git {} took longer than {} minutes",
                args[0],
                GIT_TIME_LIMIT.as_secs() / 60
            )
        })?
        .map_err(|e| format!("git could not start: {e}"))?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    let said = String::from_utf8_lossy(&out.stderr);
    let last: Vec<&str> = said.lines().filter(|l| !l.trim().is_empty()).collect();
    Err(last
        .iter()
        .rev()
        .take(3)
        .rev()
        .copied()
        .collect::<Vec<_>>()
        .join(" / "))
}

pub(super) fn short(commit: &str) -> &str {
    commit.get(..7).unwrap_or(commit)
}
