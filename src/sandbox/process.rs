//! Running the sandboxed child: its own process group, a time limit after which the whole group
//! is killed, output read with a cap per stream, and a sweep for processes that left the group.

use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use super::confine::Prepared;
use crate::error::{Error, Result};

/// How long to wait for the output pipes to close once the process group is gone.
const PIPE_DRAIN: Duration = Duration::from_secs(2);

/// How often the scratch folder's size is measured against its limit.
const DISK_CHECK: Duration = Duration::from_millis(100);

/// A folder whose total size may not pass `bytes`.
pub struct DiskWatch {
    pub dir: std::path::PathBuf,
    pub bytes: u64,
}

/// One stream as read: its head, up to the cap, and how many bytes were cut after it.
#[derive(Debug, Default)]
pub struct Capped {
    pub text: String,
    pub cut: u64,
}

/// What to start.
pub struct Launch<'a> {
    pub program: &'a str,
    pub args: &'a [String],
    pub cwd: &'a Path,
    pub env: &'a [(String, String)],
    pub stdin: Option<&'a str>,
    pub timeout: Duration,
    pub output_bytes: usize,
    /// A value of the child's HEALER_SANDBOX variable unique to this run.
    pub marker: &'a str,
}

/// How the child ended.
pub struct Outcome {
    pub status: Option<ExitStatus>,
    pub timed_out: bool,
    /// The scratch folder grew past its limit and the run was ended.
    pub disk_exceeded: bool,
    pub stdout: Capped,
    pub stderr: Capped,
    pub duration: Duration,
}

/// Start the child, wait for it (at most `timeout`), and clean up after it. `hold` sets the
/// hooks that must run before the confinement's (joining a group, entering namespaces).
pub async fn execute(
    launch: &Launch<'_>,
    hold: &(dyn Fn(&mut tokio::process::Command) + Sync),
    confine: &Prepared,
    disk: Option<DiskWatch>,
) -> Result<Outcome> {
    let mut cmd = tokio::process::Command::new(launch.program);
    cmd.args(launch.args)
        .current_dir(launch.cwd)
        .env_clear()
        .envs(launch.env.iter().map(|(n, v)| (n, v)))
        .stdin(if launch.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    hold(&mut cmd);
    confine.install(&mut cmd);

    let started = Instant::now();
    let mut child = cmd.spawn().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::InvalidInput(format!(
                "{} not found on PATH — install it or set the interpreter in the workflow's settings",
                launch.program
            ))
        } else {
            Error::io(format!("cannot start {} in the sandbox", launch.program), e)
        }
    })?;
    let pgid = child.id().and_then(|id| i32::try_from(id).ok());
    // Whatever happens to this future (dropped mid-run included), the group goes with it.
    let _group = Cleanup {
        pgid,
        marker: launch.marker.to_string(),
    };

    let writer = match (child.stdin.take(), launch.stdin) {
        (Some(mut pipe), Some(text)) => {
            let text = text.to_string();
            Some(tokio::spawn(async move {
                // A child that exits without reading gives a broken pipe: not an error here.
                let _ = pipe.write_all(text.as_bytes()).await;
            }))
        }
        _ => None,
    };
    let cancel = CancellationToken::new();
    let readers = [
        child
            .stdout
            .take()
            .map(|s| tokio::spawn(read_capped(s, launch.output_bytes, cancel.clone()))),
        child
            .stderr
            .take()
            .map(|s| tokio::spawn(read_capped(s, launch.output_bytes, cancel.clone()))),
    ];

    let over_disk = Arc::new(AtomicBool::new(false));
    let watcher = disk.map(|watch| tokio::spawn(watch_disk(watch, pgid, over_disk.clone())));
    let mut timed_out = false;
    let status = match tokio::time::timeout(launch.timeout, child.wait()).await {
        Ok(status) => status.ok(),
        Err(_) => {
            timed_out = true;
            signal_group(pgid, Signal::SIGKILL);
            child.wait().await.ok()
        }
    };
    let duration = started.elapsed();
    if let Some(watcher) = watcher {
        watcher.abort();
    }
    // Children the script left behind end with it.
    signal_group(pgid, Signal::SIGKILL);
    sweep(launch.marker);
    if let Some(writer) = writer {
        writer.abort();
    }

    // A process that escaped the group and the sweep may hold the pipes open: stop reading.
    let [stdout, stderr] = readers;
    let deadline = tokio::time::sleep(PIPE_DRAIN);
    tokio::pin!(deadline);
    let mut out = [Capped::default(), Capped::default()];
    for (slot, handle) in out.iter_mut().zip([stdout, stderr]) {
        let Some(mut handle) = handle else { continue };
        let joined = tokio::select! {
            joined = &mut handle => joined,
            () = &mut deadline => {
                cancel.cancel();
                handle.await
            }
        };
        if let Ok(capped) = joined {
            *slot = capped;
        }
    }
    let [stdout, stderr] = out;
    Ok(Outcome {
        status,
        timed_out,
        disk_exceeded: over_disk.load(Ordering::SeqCst),
        stdout,
        stderr,
        duration,
    })
}

/// Measure the folder now and then; past its limit, end the run's process group. Landlock
/// keeps every write inside the folder, so its size is all the run wrote (files are counted at
/// their full length, sparse or not).
async fn watch_disk(watch: DiskWatch, pgid: Option<i32>, over: Arc<AtomicBool>) {
    loop {
        tokio::time::sleep(DISK_CHECK).await;
        let dir = watch.dir.clone();
        let size = tokio::task::spawn_blocking(move || folder_size(&dir))
            .await
            .unwrap_or(0);
        if size > watch.bytes {
            over.store(true, Ordering::SeqCst);
            signal_group(pgid, Signal::SIGKILL);
            return;
        }
    }
}

/// The total length of the files beneath `dir` (links not followed).
pub fn folder_size(dir: &Path) -> u64 {
    let mut total = 0_u64;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                stack.push(entry.path());
            } else {
                total = total.saturating_add(meta.len());
            }
        }
    }
    total
}

/// Read a stream to its end (or until cancelled), keeping the first `cap` bytes and counting
/// the rest. Invalid UTF-8 is replaced.
async fn read_capped(
    mut stream: impl AsyncRead + Unpin,
    cap: usize,
    cancel: CancellationToken,
) -> Capped {
    let mut head: Vec<u8> = Vec::new();
    let mut cut = 0_u64;
    let mut buf = vec![0_u8; 16 * 1024];
    loop {
        let n = tokio::select! {
            read = stream.read(&mut buf) => match read {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            },
            () = cancel.cancelled() => break,
        };
        let chunk = buf.get(..n).unwrap_or_default();
        let room = cap.saturating_sub(head.len()).min(chunk.len());
        head.extend_from_slice(chunk.get(..room).unwrap_or_default());
        cut += (chunk.len() - room) as u64;
    }
    Capped {
        text: String::from_utf8_lossy(&head).into_owned(),
        cut,
    }
}

fn signal_group(pgid: Option<i32>, signal: Signal) {
    if let Some(pgid) = pgid {
        // ESRCH (the group is already gone) is the good case.
        let _ = killpg(Pid::from_raw(pgid), signal);
    }
}

/// Kill every process still carrying this run's marker in its environment: ones that left the
/// process group (setsid, double fork). Best effort: a process that also cleared its
/// environment is not found, and without /proc (not Linux) nothing is.
fn sweep(marker: &str) {
    let wanted = format!("HEALER_SANDBOX={marker}");
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if environ
            .split(|b| *b == 0)
            .any(|var| var == wanted.as_bytes())
        {
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
    }
}

/// Kills the group and sweeps for the run's processes when dropped.
struct Cleanup {
    pgid: Option<i32>,
    marker: String,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        signal_group(self.pgid, Signal::SIGKILL);
        sweep(&self.marker);
    }
}
