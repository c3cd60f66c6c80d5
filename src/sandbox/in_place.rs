//! A command an agent asks for, run where the agent works (a task's worktree) instead of a
//! scratch copy: the same scrubbed environment, process group, control group, time limit,
//! output caps and Landlock as every sandboxed run, with writes allowed in the worktree and in
//! the session's own temp folder only.

use std::path::Path;

use super::{confine, env, process, SandboxLimits, SandboxRun};
use crate::contain::GroupSpec;
use crate::error::{Error, Result};

/// What to run, and where.
#[derive(Debug, Clone)]
pub struct InPlace<'a> {
    /// The working directory, writable.
    pub cwd: &'a Path,
    /// A folder of the run's own (HOME and TMPDIR go inside it), writable.
    pub tmp: &'a Path,
    /// Run with `bash -c`.
    pub command: &'a str,
    /// Set on top of the scrubbed environment (secret-looking names are dropped).
    pub env: &'a [(String, String)],
    pub limits: SandboxLimits,
    /// Where the command's control group is recorded (the data folder's groups, ended at the
    /// next start after a crash); `None`: its process group and marker only.
    pub groups: Option<&'a Path>,
}

/// Run `spec.command` confined to its worktree and temp folder.
pub async fn run_in_place(spec: &InPlace<'_>) -> Result<SandboxRun> {
    let home = spec.tmp.join("home");
    let tmp = spec.tmp.join("tmp");
    for dir in [&home, &tmp] {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
    }
    let marker = format!(
        "inplace-{}-{:016x}",
        std::process::id(),
        rand::random::<u64>()
    );
    let result = spec.tmp.join("result.json");
    let extra: Vec<crate::workflow::EnvVar> = spec
        .env
        .iter()
        .map(|(name, value)| crate::workflow::EnvVar {
            name: name.clone(),
            value: value.clone(),
        })
        .collect();
    let vars = env::child_env(
        |name| std::env::var(name).ok(),
        &extra,
        &[],
        &env::Locations {
            home: &home,
            tmp: &tmp,
            result: &result,
            marker: &marker,
        },
    );
    let limits = &spec.limits;
    let confine = confine::Prepared::new(
        &[spec.cwd, spec.tmp],
        limits.memory_bytes,
        limits.disk_bytes,
        !limits.network,
    );
    let args = ["-c".to_string(), spec.command.to_string()];
    let launch = process::Launch {
        program: "bash",
        args: &args,
        cwd: spec.cwd,
        env: &vars,
        stdin: None,
        timeout: spec.limits.timeout,
        output_bytes: spec.limits.output_bytes,
        marker: &marker,
    };
    // No namespaces here: the command works in the person's worktree and may use the network.
    // Its control group ends whatever it left running when it ends, however that detached
    // (another session, an emptied environment); without one, its process group and marker do.
    let group = spec.groups.map(|registry| {
        GroupSpec {
            registry: registry.to_path_buf(),
            name: marker.clone(),
        }
        .create()
    });
    let outcome = process::execute(
        &launch,
        &|cmd| {
            if let Some(group) = &group {
                group.install(cmd);
            }
        },
        &confine,
        None,
    )
    .await;
    drop(group);
    let outcome = outcome?;
    use std::os::unix::process::ExitStatusExt;
    Ok(SandboxRun {
        exit_code: outcome.status.and_then(|s| s.code()),
        signal: outcome.status.and_then(|s| s.signal()),
        timed_out: outcome.timed_out,
        stdout: crate::secrets::redact_owned(outcome.stdout.text),
        stderr: crate::secrets::redact_owned(outcome.stderr.text),
        stdout_cut: outcome.stdout.cut,
        stderr_cut: outcome.stderr.cut,
        duration: outcome.duration,
        confinement: confine.confinement.clone(),
        memory_limited: confine.memory_limited(),
        held: Vec::new(),
        not_held: Vec::new(),
        memory_exceeded: false,
        disk_exceeded: outcome.disk_exceeded,
    })
}
