//! The sandbox in which model-proposed code runs: the maintainer agent's evaluations of a
//! proposed fix, and the syntax checks of its code. Model output is untrusted, so it runs only
//! here: in a fresh scratch copy of the workflow's folder (removed afterwards), with an
//! environment built from an allow-list (provider keys and secret-looking variables never
//! reach it), a time limit on the whole process group, a memory limit, capped output, and on
//! Linux Landlock, so that it can read everywhere but write only inside its scratch copy.

mod confine;
mod env;
mod hold;
mod in_place;
mod process;
mod scratch;
#[cfg(test)]
mod tests;

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::workflow::{EnvVar, Runtime};

pub use env::{looks_secret, may_pass};
pub use in_place::{run_in_place, InPlace};
pub use scratch::{remove_tree, COPY_CAP_BYTES};

/// The most of a syntax checker's complaint that is kept.
const CHECK_MESSAGE_CAP: usize = 4 * 1024;

/// Limits of one sandboxed run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SandboxLimits {
    /// After this, the whole process group is killed.
    pub timeout: Duration,
    /// The memory of the run: of all its processes together (a cgroup, where the machine
    /// allows one) and of each process (RLIMIT_DATA); 0 for no limit.
    pub memory_bytes: u64,
    /// Output kept per stream; the rest is counted.
    pub output_bytes: usize,
    /// The most its scratch folder may hold (the copy included); past it the run is ended.
    /// Also the largest file it may write (RLIMIT_FSIZE). 0 for no limit.
    pub disk_bytes: u64,
    /// The most processes and threads at once (a cgroup's pids.max); 0 for no limit.
    pub processes: u32,
    /// Whether it may use the network (off: no network namespace interface, no TCP).
    pub network: bool,
}

impl Default for SandboxLimits {
    fn default() -> Self {
        SandboxLimits {
            timeout: Duration::from_secs(30),
            memory_bytes: 1024 * 1024 * 1024,
            output_bytes: 64 * 1024,
            disk_bytes: 256 * 1024 * 1024,
            processes: 256,
            network: false,
        }
    }
}

/// The folder (under the scratch root) where the runs' control groups are recorded until they
/// end, so that the next start ends what a crash left.
pub const GROUPS_FOLDER: &str = ".groups";

/// What to run in the sandbox.
#[derive(Debug, Clone)]
pub struct SandboxSpec<'a> {
    /// A folder under Healer's data folder; each run makes (and removes) its own scratch
    /// folder inside it.
    pub scratch_root: &'a Path,
    /// The workflow's folder, copied into the scratch folder (a missing one copies nothing).
    pub source_dir: &'a Path,
    pub runtime: &'a Runtime,
    /// The entry file's name; `code` is written there, replacing the copied file.
    pub entry: &'a str,
    pub code: &'a str,
    /// Given on standard input; without it standard input is empty.
    pub stdin: Option<&'a str>,
    /// The workflow's own variables; secret-looking ones are dropped.
    pub env: &'a [EnvVar],
    /// Variables that never reach the child (the model providers' key variables).
    pub deny_env: &'a [String],
    pub limits: SandboxLimits,
}

/// How the child's writes were confined.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Confinement {
    /// The kernel enforced a Landlock ruleset: writes only beneath the scratch folder.
    Landlock,
    /// Writes were not confined; why.
    Unavailable { reason: String },
}

/// How a sandboxed run went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxRun {
    pub exit_code: Option<i32>,
    /// The signal that ended the child, if one did.
    pub signal: Option<i32>,
    /// The time limit was reached and the process group killed.
    pub timed_out: bool,
    pub stdout: String,
    pub stderr: String,
    /// Bytes of output past the cap, not kept.
    pub stdout_cut: u64,
    pub stderr_cut: u64,
    pub duration: Duration,
    pub confinement: Confinement,
    /// A memory limit was in force.
    pub memory_limited: bool,
    /// What else held the run, and what could not, in plain words (for the report).
    pub held: Vec<String>,
    pub not_held: Vec<String>,
    /// The run was ended because its processes together used more memory than allowed.
    pub memory_exceeded: bool,
    /// The run was ended because its scratch folder grew past the disk limit.
    pub disk_exceeded: bool,
}

impl SandboxRun {
    /// Exit code 0, in time, not killed.
    pub fn succeeded(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out && self.signal.is_none()
    }

    /// A plain report of the run, for the model and the maintainer's thread.
    pub fn describe(&self) -> String {
        let secs = self.duration.as_secs_f64();
        let ending = if self.memory_exceeded {
            format!("ended after {secs:.1} s: its processes together used more memory than allowed")
        } else if self.disk_exceeded {
            format!("ended after {secs:.1} s: it wrote more to its scratch folder than allowed")
        } else if self.timed_out {
            format!(
                "stopped at the time limit after {secs:.1} s (the whole process group was killed)"
            )
        } else if let Some(code) = self.exit_code {
            format!("exit code {code} after {secs:.1} s")
        } else if let Some(signal) = self.signal {
            let name = nix::sys::signal::Signal::try_from(signal).map_or("unknown", |s| s.as_str());
            format!("killed by signal {signal} ({name}) after {secs:.1} s")
        } else {
            format!("ended without an exit code after {secs:.1} s")
        };
        let mut header = vec![ending];
        if self.memory_limited {
            header.push("memory limited".to_string());
        }
        header.push(match &self.confinement {
            Confinement::Landlock => "writes confined to the scratch copy (Landlock)".to_string(),
            Confinement::Unavailable { reason } => {
                format!("Landlock unavailable: {reason}; writes were not confined")
            }
        });
        header.extend(self.held.iter().cloned());
        header.extend(self.not_held.iter().map(|n| format!("not held: {n}")));
        let mut text = header.join(" · ");
        for (label, body, cut) in [
            ("stdout", &self.stdout, self.stdout_cut),
            ("stderr", &self.stderr, self.stderr_cut),
        ] {
            text.push_str("\n\n");
            text.push_str(&fenced(label, body, cut));
        }
        text
    }
}

/// Outcome of a syntax check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SyntaxCheck {
    Passed,
    /// The runtime's checker refused the code; its message names the file by its name only.
    Refused {
        message: String,
    },
    /// The runtime has no checker Healer knows (a custom command line).
    NoChecker {
        runtime: String,
    },
}

/// Run model-proposed code in the sandbox. Errors are Healer's (bad entry name, folder too
/// big, interpreter missing); the code's own failure is an `Ok` run that did not succeed.
pub async fn run(spec: &SandboxSpec<'_>) -> Result<SandboxRun> {
    scratch::checked_entry(spec.entry)?;
    let (program, args) = command_line(spec.runtime, spec.entry)?;
    let scratch_root = spec.scratch_root.to_path_buf();
    let source = spec.source_dir.to_path_buf();
    let entry = spec.entry.to_string();
    let code = spec.code.to_string();
    let scratch = blocking(move || {
        let scratch = scratch::Scratch::create(&scratch_root)?;
        scratch::copy_tree(&source, &scratch.work)?;
        scratch.write_entry(&entry, &code)?;
        Ok(scratch)
    })
    .await?;
    let run = run_in(&scratch, &program, &args, spec).await;
    // Removing a large copy is file system work: not on the async worker.
    let _ = tokio::task::spawn_blocking(move || drop(scratch)).await;
    run
}

/// Check code with the runtime's own checker (`python3 -m py_compile`, `node --check`,
/// `bash -n`), in the same sandbox as [`run`], without the workflow's folder or variables.
pub async fn check_syntax(
    scratch_root: &Path,
    runtime: &Runtime,
    entry: &str,
    code: &str,
) -> Result<SyntaxCheck> {
    let (program, args): (&str, Vec<String>) = match runtime {
        Runtime::Python3 => (
            "python3",
            vec!["-m".into(), "py_compile".into(), entry.into()],
        ),
        Runtime::Node => ("node", vec!["--check".into(), entry.into()]),
        Runtime::Bash => ("bash", vec!["-n".into(), entry.into()]),
        Runtime::Custom { .. } => {
            return Ok(SyntaxCheck::NoChecker {
                runtime: runtime.label(),
            })
        }
    };
    scratch::checked_entry(entry)?;
    let root = scratch_root.to_path_buf();
    let (entry_owned, code_owned) = (entry.to_string(), code.to_string());
    let scratch = blocking(move || {
        let scratch = scratch::Scratch::create(&root)?;
        scratch.write_entry(&entry_owned, &code_owned)?;
        Ok(scratch)
    })
    .await?;
    let spec = SandboxSpec {
        scratch_root,
        source_dir: &scratch.work,
        runtime,
        entry,
        code,
        stdin: None,
        env: &[],
        deny_env: &[],
        limits: SandboxLimits::default(),
    };
    let run = run_in(&scratch, program, &args, &spec).await?;
    if run.timed_out {
        return Err(Error::Internal(format!(
            "the syntax check ({program}) did not finish within {} s",
            spec.limits.timeout.as_secs()
        )));
    }
    let result = match run.exit_code {
        Some(0) => SyntaxCheck::Passed,
        Some(_) => {
            let said = if run.stderr.trim().is_empty() {
                &run.stdout
            } else {
                &run.stderr
            };
            SyntaxCheck::Refused {
                message: checker_message(said, &scratch.work),
            }
        }
        None => {
            return Err(Error::Internal(format!(
                "the syntax check ({program}) was killed by signal {}",
                run.signal.unwrap_or_default()
            )))
        }
    };
    drop(scratch);
    Ok(result)
}

/// Run `program args` in a prepared scratch folder.
async fn run_in(
    scratch: &scratch::Scratch,
    program: &str,
    args: &[String],
    spec: &SandboxSpec<'_>,
) -> Result<SandboxRun> {
    let result = scratch.work.join(".healer").join("result.json");
    if let Some(dir) = result.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
    }
    let vars = env::child_env(
        |name| std::env::var(name).ok(),
        spec.env,
        spec.deny_env,
        &env::Locations {
            home: &scratch.home,
            tmp: &scratch.tmp,
            result: &result,
            marker: &scratch.name,
        },
    );
    let limits = &spec.limits;
    let confine = confine::Prepared::new(
        &[&scratch.root],
        limits.memory_bytes,
        limits.disk_bytes,
        !limits.network,
    );
    let groups = spec.scratch_root.join(GROUPS_FOLDER);
    let mut hold = hold::Hold::new(&groups, &scratch.name, &scratch.root, &scratch.work, limits);
    let launch = process::Launch {
        program,
        args,
        cwd: &scratch.work,
        env: &vars,
        stdin: spec.stdin,
        timeout: spec.limits.timeout,
        output_bytes: spec.limits.output_bytes,
        marker: &scratch.name,
    };
    let disk = || {
        (limits.disk_bytes > 0).then(|| process::DiskWatch {
            dir: scratch.root.clone(),
            bytes: limits.disk_bytes,
        })
    };
    let mut outcome = process::execute(&launch, &|cmd| hold.install(cmd), &confine, disk()).await;
    if let Err(e) = &outcome {
        if hold.uses_namespaces() {
            // Namespaces are what failed, unless the start fails the same way without them.
            let why = e.to_string();
            hold.without_namespaces(&why);
            outcome = process::execute(&launch, &|cmd| hold.install(cmd), &confine, disk()).await;
        }
    }
    let outcome = outcome?;
    let memory_exceeded = hold.memory_exceeded();
    // Whatever it left running (in other sessions, with an emptied environment) ends here.
    hold.end();
    let (held, not_held) = hold.report(confine.tcp_denied());
    use std::os::unix::process::ExitStatusExt;
    Ok(SandboxRun {
        exit_code: outcome.status.and_then(|s| s.code()),
        signal: outcome.status.and_then(|s| s.signal()),
        timed_out: outcome.timed_out,
        // Whatever the code printed, a known secret does not reach the thread or the model.
        stdout: crate::secrets::redact_owned(outcome.stdout.text),
        stderr: crate::secrets::redact_owned(outcome.stderr.text),
        stdout_cut: outcome.stdout.cut,
        stderr_cut: outcome.stderr.cut,
        duration: outcome.duration,
        confinement: confine.confinement.clone(),
        memory_limited: confine.memory_limited(),
        held,
        not_held,
        memory_exceeded,
        disk_exceeded: outcome.disk_exceeded,
    })
}

/// The program and arguments for a runtime, as the runner builds them.
fn command_line(runtime: &Runtime, entry: &str) -> Result<(String, Vec<String>)> {
    let entry = entry.to_string();
    Ok(match runtime {
        Runtime::Python3 => ("python3".to_string(), vec!["-u".to_string(), entry]),
        Runtime::Node => ("node".to_string(), vec![entry]),
        Runtime::Bash => ("bash".to_string(), vec![entry]),
        Runtime::Custom { command } => {
            let mut words = command
                .split_whitespace()
                .map(|w| w.replace("{file}", &entry));
            let program = words.next().ok_or_else(|| {
                Error::InvalidInput("the workflow's custom command line is empty".to_string())
            })?;
            (program, words.collect())
        }
    })
}

async fn blocking<T: Send + 'static>(
    job: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(job)
        .await
        .map_err(|e| Error::Internal(format!("the sandbox preparation stopped: {e}")))?
}

/// A checker's complaint: without the scratch folder's path, trimmed, at most 4 KiB.
fn checker_message(text: &str, work: &Path) -> String {
    let mut message = text.to_string();
    let mut dirs = vec![work.to_path_buf()];
    if let Ok(canonical) = std::fs::canonicalize(work) {
        dirs.push(canonical);
    }
    for dir in dirs {
        let dir = dir.to_string_lossy().into_owned();
        message = message.replace(&format!("{dir}/"), "").replace(&dir, "");
    }
    let message = message.trim();
    if message.len() <= CHECK_MESSAGE_CAP {
        return message.to_string();
    }
    let mut end = CHECK_MESSAGE_CAP;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n… (cut)", message.get(..end).unwrap_or_default())
}

/// A stream as a labelled, fenced block; the fence is longer than any backtick run inside.
fn fenced(label: &str, body: &str, cut: u64) -> String {
    if body.is_empty() && cut == 0 {
        return format!("{label}: (empty)");
    }
    let mut longest = 0;
    let mut run = 0;
    for c in body.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat((longest + 1).max(3));
    let note = if cut > 0 {
        format!(" ({cut} bytes cut)")
    } else {
        String::new()
    };
    let newline = if body.ends_with('\n') { "" } else { "\n" };
    format!("{label}{note}:\n{fence}text\n{body}{newline}{fence}")
}
