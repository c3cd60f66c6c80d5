//! Runs one attempt of a script as a real child process: in the workflow's folder, in its own
//! process group, with the time limit enforced on the whole group, output captured with a cap
//! (head and tail kept), and the JSON result read from the file named in HEALER_RESULT.

mod capture;
mod environment;
mod full_log;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};
use tokio::io::AsyncRead;
use tokio::sync::broadcast;

use super::{EnvVar, Runtime};
use crate::contain::Group;
use crate::failure::ExitInfo;

pub use capture::{Captured, CAPTURE_HEAD, CAPTURE_TAIL};
pub use full_log::{full_log_path, prune_full_logs, FULL_LOG_MAX_BYTES, FULL_LOG_RUNS_KEPT};

/// After the time limit, how long the group gets between SIGTERM and SIGKILL.
pub const KILL_GRACE: Duration = Duration::from_secs(2);

/// The largest result file that is read.
const RESULT_CAP: u64 = 1024 * 1024;

/// How much output of one attempt is streamed live to the UI; the stored capture is separate.
const LIVE_CAP: usize = 512 * 1024;

/// How long to wait for the output pipes to close once the process group is gone.
const PIPE_DRAIN: Duration = Duration::from_secs(3);

/// A piece of a running attempt's output, for the live view. Not persisted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct OutputChunk {
    pub run_id: i64,
    pub attempt: u32,
    pub stream: OutputStream,
    pub text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum OutputStream {
    Stdout,
    Stderr,
}

pub use crate::contain::GroupSpec;

/// What to run.
#[derive(Debug, Clone)]
pub struct RunSpec {
    pub folder: PathBuf,
    pub runtime: Runtime,
    pub entry: String,
    pub env: Vec<EnvVar>,
    pub timeout: Duration,
    pub run_id: i64,
    pub attempt: u32,
    /// Where the whole output is kept (see [`full_log_path`]); `None`: only the capped copy.
    pub full_log_dir: Option<PathBuf>,
    /// Hold the attempt's processes in a control group (where the machine allows), so that
    /// its end ends every one of them.
    pub group: Option<GroupSpec>,
    /// Run it in namespaces of its own (a cluster worker's scripts: see
    /// [`crate::contain::namespaces::Prepared::for_script`]); `None`: as the person runs it.
    pub namespaces: Option<crate::contain::namespaces::Prepared>,
}

/// How an attempt went.
#[derive(Debug, Clone)]
pub struct Execution {
    pub exit: ExitInfo,
    pub stdout: Captured,
    pub stderr: Captured,
    pub result: Option<String>,
    pub duration: Duration,
    /// Healer's own words about the attempt (could not start, result file unreadable, …).
    pub note: Option<String>,
    /// Processes it started outside its process group (setsid, a double fork) that were still
    /// running when it ended, and were ended with it.
    pub escaped: usize,
}

impl Execution {
    pub fn succeeded(&self) -> bool {
        self.exit.code == Some(0) && !self.exit.timed_out && self.exit.signal.is_none()
    }
}

/// Run one attempt. `on_spawn` gets the process group id as soon as it exists (to be stored,
/// so a crash's leftovers can be found); `live` receives output as it comes.
pub async fn execute(
    spec: &RunSpec,
    on_spawn: impl FnOnce(i32),
    live: Option<&broadcast::Sender<OutputChunk>>,
) -> Execution {
    let started = Instant::now();
    let result_file = spec.folder.join(".healer").join("result.json");
    if let Some(dir) = result_file.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let _ = std::fs::remove_file(&result_file);

    let (program, args) = command_line(&spec.runtime, &spec.entry);
    let mut group = spec.group.as_ref().map(GroupSpec::create);
    let mut cmd = tokio::process::Command::new(&program);
    cmd.args(&args)
        .current_dir(&spec.folder)
        .env_clear()
        .envs(environment::base(&environment::engine_environment()))
        .envs(spec.env.iter().map(|v| (&v.name, &v.value)))
        .env("HEALER_RESULT", &result_file)
        .env("HEALER_RUN_ID", spec.run_id.to_string())
        .env("HEALER_ATTEMPT", spec.attempt.to_string())
        .env("PYTHONUNBUFFERED", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    // The group is joined first, so the namespaces' keeper and everything after are in it.
    if let Some(group) = &group {
        group.install(&mut cmd);
    }
    let namespaces = spec.namespaces.clone();
    // SAFETY: the hooks make async-signal-safe system calls only (unshare, fork, mount, prctl,
    // capget, capset) on memory prepared before the fork.
    unsafe {
        use crate::contain::caps::{drop_in_child, Dropped};
        cmd.pre_exec(move || {
            let dropped = match &namespaces {
                Some(p) => {
                    crate::contain::namespaces::enter_in_child(p)?;
                    Dropped::PtraceAndMounts
                }
                None => Dropped::Ptrace,
            };
            // Root's CAP_SYS_PTRACE would read the engine's memory past its undumpable flag; a
            // script keeps every other power it runs with (in namespaces, but mounting).
            drop_in_child(dropped)
        });
    }

    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            let message = if e.kind() == std::io::ErrorKind::NotFound {
                format!("{program} not found on PATH — install it or set the interpreter in the workflow's settings")
            } else {
                format!("cannot start {program}: {e}")
            };
            return Execution {
                exit: ExitInfo {
                    spawn_failed: true,
                    ..ExitInfo::default()
                },
                stdout: Captured::default(),
                stderr: Captured::from_text(&message),
                result: None,
                duration: started.elapsed(),
                note: Some(message),
                escaped: 0,
            };
        }
    };
    let pgid = child.id().and_then(|id| i32::try_from(id).ok());
    // Whatever happens to this task (time limit, shutdown, abort), the group goes with it.
    let _group = pgid.map(GroupGuard);
    if let Some(pgid) = pgid {
        on_spawn(pgid);
    }

    let file = |stream| {
        spec.full_log_dir
            .as_deref()
            .map(|dir| full_log_path(dir, spec.run_id, spec.attempt, stream))
    };
    let stdout = child.stdout.take().map(|s| {
        tokio::spawn(read_stream(
            s,
            spec.run_id,
            spec.attempt,
            OutputStream::Stdout,
            live.cloned(),
            file(OutputStream::Stdout),
        ))
    });
    let stderr = child.stderr.take().map(|s| {
        tokio::spawn(read_stream(
            s,
            spec.run_id,
            spec.attempt,
            OutputStream::Stderr,
            live.cloned(),
            file(OutputStream::Stderr),
        ))
    });

    let mut timed_out = false;
    let status = match tokio::time::timeout(spec.timeout, child.wait()).await {
        Ok(status) => status.ok(),
        Err(_) => {
            timed_out = true;
            signal_group(pgid, Signal::SIGTERM);
            match tokio::time::timeout(KILL_GRACE, child.wait()).await {
                Ok(status) => status.ok(),
                Err(_) => {
                    signal_group(pgid, Signal::SIGKILL);
                    child.wait().await.ok()
                }
            }
        }
    };
    // Children the script left behind (even ones ignoring SIGTERM) end with it, and so do
    // the ones it started in another session: they are still in its control group.
    signal_group(pgid, Signal::SIGKILL);
    let escaped = group.as_mut().map_or(0, |g| end_group(g, pgid));

    let mut note = None;
    let stdout = join_capture(stdout, &mut note).await;
    let stderr = join_capture(stderr, &mut note).await;

    use std::os::unix::process::ExitStatusExt;
    let exit = ExitInfo {
        code: status.and_then(|s| s.code()),
        signal: if timed_out {
            None
        } else {
            status.and_then(|s| s.signal())
        },
        timed_out,
        spawn_failed: false,
    };
    if timed_out {
        note = Some(format!(
            "Stopped after the time limit of {} s; the whole process group was ended",
            spec.timeout.as_secs()
        ));
    }
    if escaped > 0 {
        let ended = format!(
            "{escaped} process(es) it started in another session were still running; Healer ended them with it"
        );
        note = Some(match note {
            Some(n) => format!("{n}. {ended}"),
            None => ended,
        });
    }
    let result = read_result(&result_file, &mut note);
    // Whatever the script printed, a known secret is not kept (nor shown, nor sent on).
    use crate::secrets::{redact_option, redact_owned};
    Execution {
        exit,
        stdout: Captured {
            text: redact_owned(stdout.text),
            cut: stdout.cut,
        },
        stderr: Captured {
            text: redact_owned(stderr.text),
            cut: stderr.cut,
        },
        result: redact_option(result),
        duration: started.elapsed(),
        note: redact_option(note),
        escaped,
    }
}

/// End the attempt's control group; returns how many of its processes had left the script's
/// process group (those a process-group kill does not reach).
fn end_group(group: &mut Group, pgid: Option<i32>) -> usize {
    let escaped = group
        .pids()
        .into_iter()
        .filter(|pid| {
            let own = nix::unistd::getpgid(Some(Pid::from_raw(*pid))).ok();
            own.map(|p| p.as_raw()) != pgid && own.is_some()
        })
        .count();
    group.end();
    escaped
}

/// The program and arguments for a runtime.
fn command_line(runtime: &Runtime, entry: &str) -> (String, Vec<String>) {
    match runtime {
        Runtime::Python3 => (
            "python3".to_string(),
            vec!["-u".to_string(), entry.to_string()],
        ),
        Runtime::Node => ("node".to_string(), vec![entry.to_string()]),
        Runtime::Bash => ("bash".to_string(), vec![entry.to_string()]),
        Runtime::Custom { command } => {
            let mut words = command
                .split_whitespace()
                .map(|w| w.replace("{file}", entry));
            let program = words.next().unwrap_or_default();
            (program, words.collect())
        }
    }
}

async fn read_stream(
    mut stream: impl AsyncRead + Unpin,
    run_id: i64,
    attempt: u32,
    which: OutputStream,
    live: Option<broadcast::Sender<OutputChunk>>,
    full_log: Option<PathBuf>,
) -> Captured {
    use tokio::io::AsyncReadExt;
    let mut capture = capture::Capture::default();
    let mut full = full_log::FullLog::open(full_log).await;
    let mut buf = vec![0_u8; 16 * 1024];
    let mut streamed = 0_usize;
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let chunk = buf.get(..n).unwrap_or_default();
                capture.push(chunk);
                full.write(chunk).await;
                if let Some(live) = &live {
                    if streamed < LIVE_CAP {
                        streamed += n;
                        let mut text =
                            crate::secrets::redact(&String::from_utf8_lossy(chunk)).into_owned();
                        if streamed >= LIVE_CAP {
                            text.push_str("\n… live view paused here; the stored log keeps the head and the tail …\n");
                        }
                        let _ = live.send(OutputChunk {
                            run_id,
                            attempt,
                            stream: which,
                            text,
                        });
                    }
                }
            }
        }
    }
    full.close().await;
    capture.finish()
}

async fn join_capture(
    handle: Option<tokio::task::JoinHandle<Captured>>,
    note: &mut Option<String>,
) -> Captured {
    let Some(mut handle) = handle else {
        return Captured::default();
    };
    match tokio::time::timeout(PIPE_DRAIN, &mut handle).await {
        Ok(Ok(captured)) => captured,
        _ => {
            // A process that left the group (setsid) still holds the pipe: stop reading.
            handle.abort();
            *note = Some(
                "A process started by the script left its process group and kept the output open; Healer stopped reading it".to_string(),
            );
            Captured::default()
        }
    }
}

fn read_result(path: &Path, note: &mut Option<String>) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if meta.len() > RESULT_CAP {
        *note = Some(format!(
            "The result file was {} bytes; results over {RESULT_CAP} bytes are not kept",
            meta.len()
        ));
        return None;
    }
    let text = std::fs::read_to_string(path).ok()?;
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(value) => Some(value.to_string()),
        Err(e) => {
            *note = Some(format!(
                "The result file is not valid JSON ({e}); it was not kept"
            ));
            None
        }
    }
}

fn signal_group(pgid: Option<i32>, signal: Signal) {
    if let Some(pgid) = pgid {
        // ESRCH (the group is already gone) is the good case.
        let _ = killpg(Pid::from_raw(pgid), signal);
    }
}

/// Kills a process group when dropped.
struct GroupGuard(i32);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        signal_group(Some(self.0), Signal::SIGKILL);
    }
}

/// End what a crashed engine's run left behind, where no control group held it: its process
/// group — only if it still is one of ours (its leader's environment carries our run id) — and
/// any process whose environment carries this Healer's instance marker and the run's id (one
/// whose leader already exited, or that moved to another session). Returns how many it found.
pub fn end_leftovers(instance: &str, run_id: i64, pgid: Option<i32>) -> usize {
    let run = format!("HEALER_RUN_ID={run_id}");
    let ours = format!("HEALER_INSTANCE={instance}");
    let marked = |pid: i32, all: &[&str]| {
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        let vars: Vec<&[u8]> = environ.split(|b| *b == 0).collect();
        all.iter().all(|m| vars.contains(&m.as_bytes()))
    };
    let mut found = 0;
    if let Some(pgid) = pgid {
        if marked(pgid, &[&run]) {
            signal_group(Some(pgid), Signal::SIGKILL);
            found += 1;
        }
    }
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for pid in entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
        .filter(|pid| u32::try_from(*pid).ok() != Some(me))
    {
        if marked(pid, &[&run, &ours]) {
            let _ = nix::sys::signal::kill(Pid::from_raw(pid), Signal::SIGKILL);
            found += 1;
        }
    }
    found
}
