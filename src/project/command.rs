//! The project's own commands (the init script, the verification commands) run in the task's
//! worktree. They run the agent's change, which is model output, so they run in the sandbox in
//! place: a scrubbed environment, their own process group, a time limit, capped output, and
//! writes confined to the worktree and the session's temp folder where the kernel has
//! Landlock. Toolchains are found where the person keeps them (their locations are passed on).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::Result;
use crate::sandbox::{run_in_place, InPlace, SandboxLimits, SandboxRun};

/// Lines of a command's output kept in its step and as a failure's evidence.
pub const EVIDENCE_LINES: usize = 60;
/// Output kept of each stream of one command.
const OUTPUT_BYTES: usize = 64 * 1024;
/// The data memory of each process: builds and test runners need room.
const MEMORY_BYTES: u64 = 8 * 1024 * 1024 * 1024;

/// Variables that say where toolchains live; passed on when set, so a verification command
/// finds the person's Rust, Go, Java or Python environment although HOME is the session's.
const TOOLCHAIN_VARS: [&str; 8] = [
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "GOPATH",
    "GOROOT",
    "JAVA_HOME",
    "VIRTUAL_ENV",
    "NODE_PATH",
];

/// One command as it ran.
#[derive(Debug, Clone)]
pub struct CommandResult {
    pub name: String,
    pub command: String,
    pub run: SandboxRun,
}

impl CommandResult {
    pub fn passed(&self) -> bool {
        self.run.succeeded()
    }

    /// "passed in 1.2 s" / "failed with exit code 1 after 3.0 s".
    pub fn verdict(&self) -> String {
        let secs = self.run.duration.as_secs_f64();
        if self.passed() {
            format!("passed in {secs:.1} s")
        } else if self.run.timed_out {
            format!("stopped at its time limit after {secs:.1} s")
        } else if let Some(code) = self.run.exit_code {
            format!("failed with exit code {code} after {secs:.1} s")
        } else {
            format!("was killed after {secs:.1} s")
        }
    }

    /// The command as a step of the session: its verdict and the last lines it printed.
    pub fn step(&self) -> crate::session::SessionStep {
        let mut step = crate::agent::text_step(
            crate::session::StepSource::System,
            format!("{}: {}", self.name, self.verdict()),
        );
        step.kind = crate::session::StepKind::ToolResult;
        step.tool = Some(self.name.clone());
        step.is_error = !self.passed();
        let tail = self.tail(EVIDENCE_LINES);
        if !tail.is_empty() {
            step.text.push_str(&format!("\n{tail}"));
        }
        step
    }

    /// What a failed command says of itself: its verdict and last line, and its last lines.
    pub fn evidence(&self) -> crate::failure::Evidence {
        let tail = self.tail(EVIDENCE_LINES);
        let last = tail
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or_default();
        crate::failure::Evidence {
            error_type: None,
            message: format!(
                "{} ({}) {}: {}",
                self.name,
                self.command,
                self.verdict(),
                last.trim()
            ),
            stack: Some(tail),
        }
    }

    /// The last lines of what it printed (stderr, then stdout), for a failure's evidence.
    pub fn tail(&self, lines: usize) -> String {
        let both = format!(
            "{}\n{}",
            self.run.stdout.trim_end(),
            self.run.stderr.trim_end()
        );
        let kept: Vec<&str> = both.trim().lines().collect();
        let from = kept.len().saturating_sub(lines);
        kept.get(from..).unwrap_or_default().join("\n")
    }
}

/// Where the session's commands keep HOME and TMPDIR.
pub fn session_tmp(data_dir: &Path, session_id: i64) -> PathBuf {
    data_dir.join("sessions").join(session_id.to_string())
}

/// Where a project command runs, and what holds it.
pub struct CommandPlace<'a> {
    pub worktree: &'a Path,
    /// Its HOME and TMPDIR go inside.
    pub tmp: &'a Path,
    /// Set in its environment (crash recovery finds leftovers by it).
    pub marker: &'a [(String, String)],
    /// Where its control group is recorded (the data folder's groups).
    pub groups: &'a Path,
}

/// Run `command` with `bash -c` in the place's worktree.
pub async fn run_project_command(
    place: &CommandPlace<'_>,
    name: &str,
    command: &str,
    timeout: Duration,
) -> Result<CommandResult> {
    let CommandPlace {
        worktree,
        tmp,
        marker,
        groups,
    } = *place;
    let env = toolchain_env(marker);
    let run = run_in_place(&InPlace {
        cwd: worktree,
        tmp,
        command,
        env: &env,
        limits: SandboxLimits {
            timeout,
            memory_bytes: MEMORY_BYTES,
            output_bytes: OUTPUT_BYTES,
            // Builds write large files and may fetch their dependencies: only memory and time
            // are bounded here (the worktree is the project's, not a scratch copy).
            disk_bytes: 0,
            processes: 0,
            network: true,
        },
        groups: Some(groups),
    })
    .await?;
    Ok(CommandResult {
        name: name.to_string(),
        command: command.to_string(),
        run,
    })
}

/// The toolchain locations of this process, defaulting Rust's to the person's home (rustup
/// finds its toolchains through HOME, which commands get their own of), plus `extra`.
pub fn toolchain_env(extra: &[(String, String)]) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = TOOLCHAIN_VARS
        .iter()
        .filter_map(|name| std::env::var(name).ok().map(|v| (name.to_string(), v)))
        .collect();
    if let Some(home) = std::env::var_os("HOME").map(PathBuf::from) {
        for (name, dir) in [("CARGO_HOME", ".cargo"), ("RUSTUP_HOME", ".rustup")] {
            let path = home.join(dir);
            if !env.iter().any(|(n, _)| n == name) && path.is_dir() {
                env.push((name.to_string(), path.display().to_string()));
            }
        }
    }
    env.extend(extra.iter().cloned());
    env
}
