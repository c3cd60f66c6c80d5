//! Running an agent CLI: its own process group and control group, stdin from /dev/null (both
//! CLIs wait on an open stdin), an environment built from a safe base, stdout read line by line
//! as it comes, a time limit, a stop that first asks (a signal the agent handles, so it ends its
//! tools) and kills after a grace. Both CLIs start each tool in a session of its own, so killing
//! the agent's process group never reaches them: the control group does (however a tool
//! detached, an emptied environment included), and where the machine gives none, a sweep for
//! the processes carrying the session's mark.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};
use tokio::sync::mpsc;
use tokio::time::{sleep_until, Instant};
use tokio_util::sync::CancellationToken;

use super::AgentUpdate;
use crate::contain::{Group, GroupSpec};

/// How long an agent asked to stop gets to end its tools and itself before it is killed.
pub const STOP_GRACE: Duration = Duration::from_secs(3);

/// How long to keep reading stdout after the agent exited (a process that escaped may hold it).
const PIPE_DRAIN: Duration = Duration::from_secs(2);

/// Longest stdout line handed on whole (Claude Code writes a file's content in one line).
const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// How much of the end of stderr is kept for the summary of a failure.
const STDERR_TAIL_BYTES: usize = 4 * 1024;

/// The environment variable every process of one agent session carries (tools inherit it), with
/// a value unique to the session's process.
pub const MARK_VAR: &str = "HEALER_AGENT_MARK";

/// The variable carrying Healer's id of the session, so that the runner can find what a
/// session left after Healer itself was killed.
pub const SESSION_VAR: &str = "HEALER_AGENT_SESSION";

/// The PATH given when Healer's own has none.
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// What to start, and how to end it.
pub(crate) struct Launch {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    pub cwd: PathBuf,
    pub env: Vec<(String, String)>,
    pub time_limit: Duration,
    /// The signal that asks the agent to stop (it then ends its own tools).
    pub stop_signal: Signal,
    /// The control group the session runs in, recorded so that a crash's leftovers are ended
    /// at the next start; `None`: its process group and marks only.
    pub group: Option<GroupSpec>,
}

/// Why the session's process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// On its own.
    Exited,
    Stopped,
    TimedOut,
    /// Its stream was not the agent's stream; Healer ended it.
    Unreadable,
}

pub(crate) struct Finished {
    pub ending: Ending,
    pub status: Option<ExitStatus>,
    pub stderr_tail: String,
}

/// What the line handler wants next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    Continue,
    /// The stream is unusable: end the agent.
    Abandon,
}

/// The base every agent's environment starts from: what a shell needs, nothing that could be
/// a secret of Healer's (provider keys reach an agent only when its spec names them).
pub(crate) fn base_env(parent: impl Fn(&str) -> Option<String>) -> Vec<(String, String)> {
    let mut vars = vec![(
        "PATH".to_string(),
        parent("PATH")
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| DEFAULT_PATH.to_string()),
    )];
    for name in ["HOME", "USER", "LOGNAME", "SHELL", "TZ", "TMPDIR", "LC_ALL"] {
        if let Some(value) = parent(name).filter(|v| !v.is_empty()) {
            vars.push((name.to_string(), value));
        }
    }
    let lang = parent("LANG")
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "C.UTF-8".to_string());
    vars.push(("LANG".to_string(), lang));
    vars.push(("TERM".to_string(), "dumb".to_string()));
    vars
}

/// `vars` with `name` set to `value` (replacing an earlier entry).
pub(crate) fn set(vars: &mut Vec<(String, String)>, name: &str, value: impl Into<String>) {
    vars.retain(|(n, _)| n != name);
    vars.push((name.to_string(), value.into()));
}

pub(crate) fn get<'a>(vars: &'a [(String, String)], name: &str) -> Option<&'a str> {
    vars.iter()
        .rev()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// The control group of the session `spec` starts with `mark`, when it is to have one.
pub(crate) fn group_for(spec: &super::SessionSpec, mark: &str) -> Option<GroupSpec> {
    spec.groups.as_ref().map(|registry| GroupSpec {
        registry: registry.clone(),
        name: format!(
            "agent{}-{}",
            spec.session_id,
            mark.get(..12).unwrap_or(mark)
        ),
    })
}

/// A value for [`MARK_VAR`] no other process carries.
pub(crate) fn new_mark() -> String {
    format!(
        "{:016x}{:016x}",
        rand::random::<u64>(),
        rand::random::<u64>()
    )
}

/// Start the agent and drive it to its end: every stdout line goes to `on_line` as it comes;
/// `cancel` or the time limit stop it. The group is killed and `marks` swept at the end, however
/// it ended. An error is the program not starting.
pub(crate) async fn supervise(
    launch: Launch,
    updates: &mpsc::UnboundedSender<AgentUpdate>,
    cancel: &CancellationToken,
    marks: &[Vec<String>],
    on_line: &mut (dyn FnMut(&str) -> Flow + Send),
) -> std::io::Result<Finished> {
    supervise_fed(launch, None, updates, cancel, marks, on_line).await
}

/// [`supervise`] with `input` written to the agent's stdin, which is then closed (opencode
/// reads its prompt there); `None`: stdin is /dev/null.
pub(crate) async fn supervise_fed(
    launch: Launch,
    input: Option<Vec<u8>>,
    updates: &mpsc::UnboundedSender<AgentUpdate>,
    cancel: &CancellationToken,
    marks: &[Vec<String>],
    on_line: &mut (dyn FnMut(&str) -> Flow + Send),
) -> std::io::Result<Finished> {
    let mut cmd = tokio::process::Command::new(&launch.program);
    cmd.args(&launch.args)
        .current_dir(&launch.cwd)
        .env_clear()
        .envs(launch.env.iter().map(|(n, v)| (n, v)))
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let group = launch.group.as_ref().map(GroupSpec::create);
    if let Some(group) = &group {
        group.install(&mut cmd);
    }
    let mut child = cmd.spawn()?;
    if let (Some(bytes), Some(mut stdin)) = (input, child.stdin.take()) {
        // Written on its own, so a prompt larger than the pipe never blocks the reading; the
        // pipe closes when done (or when the agent is gone).
        tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            let _ = stdin.write_all(&bytes).await;
        });
    }
    let pgid = child.id().and_then(|id| i32::try_from(id).ok());
    // Whatever happens to this future (dropped mid-run included), the groups go with it.
    let mut held = Cleanup {
        pgid,
        marks: marks.to_vec(),
        group,
    };
    if let Some(pgid) = pgid {
        let _ = updates.send(AgentUpdate::Process { pgid });
    }
    let stderr = child
        .stderr
        .take()
        .map(|s| tokio::spawn(read_tail(s, STDERR_TAIL_BYTES)));
    let Some(stdout) = child.stdout.take() else {
        return Err(std::io::Error::other("the agent's stdout was not captured"));
    };
    let mut reader = BufReader::new(stdout);
    let mut line: Vec<u8> = Vec::new();

    let far = Instant::now() + Duration::from_secs(365 * 24 * 3600);
    let deadline = Instant::now() + launch.time_limit;
    let mut ending = Ending::Exited;
    let mut status: Option<ExitStatus> = None;
    let mut eof = false;
    let mut kill_at: Option<Instant> = None;
    let mut drain_until: Option<Instant> = None;
    while !(eof && status.is_some()) {
        let stopping = ending != Ending::Exited;
        // At most up to the cap, so an agent printing endlessly without a newline cannot fill
        // the memory.
        let mut limited = (&mut reader).take(MAX_LINE_BYTES.saturating_sub(line.len()) as u64);
        tokio::select! {
            waited = child.wait(), if status.is_none() => {
                status = waited.ok();
                if status.is_none() {
                    // The status could not be read; the process is gone either way.
                    break;
                }
                drain_until = Some(Instant::now() + PIPE_DRAIN);
            }
            read = limited.read_until(b'\n', &mut line), if !eof => {
                let complete = line.last() == Some(&b'\n');
                match read {
                    Ok(0) | Err(_) => eof = true,
                    // A line longer than the cap is cut: its head is still handed on (and is
                    // then unreadable JSON), so memory stays bounded.
                    Ok(_) if !complete && line.len() < MAX_LINE_BYTES => continue,
                    Ok(_) => {}
                }
                if !line.is_empty() {
                    let text = String::from_utf8_lossy(&line);
                    let text = text.trim_end_matches(['\n', '\r']);
                    if !text.trim().is_empty() && on_line(text) == Flow::Abandon && !stopping {
                        ending = Ending::Unreadable;
                        kill_at = Some(begin_stop(pgid, launch.stop_signal));
                    }
                    line.clear();
                }
            },
            () = cancel.cancelled(), if !stopping => {
                ending = Ending::Stopped;
                kill_at = Some(begin_stop(pgid, launch.stop_signal));
            }
            () = sleep_until(deadline), if !stopping => {
                ending = Ending::TimedOut;
                kill_at = Some(begin_stop(pgid, launch.stop_signal));
            }
            () = sleep_until(kill_at.unwrap_or(far)), if kill_at.is_some() && status.is_none() => {
                signal_group(pgid, Signal::SIGKILL);
                kill_at = None;
            }
            () = sleep_until(drain_until.unwrap_or(far)), if drain_until.is_some() && !eof => {
                eof = true;
            }
        }
    }
    // Children the agent left in its group, and tools that left it, end with the session.
    signal_group(pgid, Signal::SIGKILL);
    if let Some(group) = held.group.as_mut() {
        group.end();
    }
    sweep(marks).await;
    let stderr_tail = match stderr {
        Some(handle) => tokio::select! {
            tail = handle => tail.unwrap_or_default(),
            () = tokio::time::sleep(PIPE_DRAIN) => String::new(),
        },
        None => String::new(),
    };
    Ok(Finished {
        ending,
        status,
        stderr_tail,
    })
}

/// Send the stop signal to the group; returns when to kill it.
fn begin_stop(pgid: Option<i32>, signal: Signal) -> Instant {
    signal_group(pgid, signal);
    Instant::now() + STOP_GRACE
}

fn signal_group(pgid: Option<i32>, signal: Signal) {
    if let Some(pgid) = pgid {
        // ESRCH (the group is already gone) is the good case.
        let _ = killpg(Pid::from_raw(pgid), signal);
    }
}

/// Read a stream to its end, keeping its last `cap` bytes (where an error message is).
async fn read_tail(mut stream: impl AsyncRead + Unpin, cap: usize) -> String {
    let mut tail: Vec<u8> = Vec::new();
    let mut buf = vec![0_u8; 8 * 1024];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                tail.extend_from_slice(buf.get(..n).unwrap_or_default());
                if tail.len() > 2 * cap {
                    tail.drain(..tail.len() - cap);
                }
            }
        }
    }
    if tail.len() > cap {
        tail.drain(..tail.len() - cap);
    }
    String::from_utf8_lossy(&tail).trim().to_string()
}

/// Kills the groups and the marked processes when dropped (the session's future was dropped).
struct Cleanup {
    pgid: Option<i32>,
    marks: Vec<Vec<String>>,
    group: Option<Group>,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        signal_group(self.pgid, Signal::SIGKILL);
        // The control group ends when the field is dropped, right after.
        for pid in marked_processes(&self.marks) {
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
    }
}

mod sweep;
#[cfg(test)]
mod tests;

pub use sweep::{marked_processes, sweep};
