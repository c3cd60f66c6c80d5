//! Processes of a session that left its process group (both CLIs start every tool in a session
//! of its own), found by the mark in their environment and ended.

use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use tokio::time::Instant;

/// How long killed stray processes get to be gone before the sweep returns.
const SWEEP_WAIT: Duration = Duration::from_millis(500);

/// Live processes (not zombies, not this one) whose environment holds every entry of one of
/// `marks` (each entry `NAME=value`). Without /proc (not Linux) nothing is found.
pub fn marked_processes(marks: &[Vec<String>]) -> Vec<i32> {
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
        .filter(|pid| u32::try_from(*pid).ok() != Some(me))
        .filter(|pid| {
            let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
                return false;
            };
            let vars: Vec<&[u8]> = environ.split(|b| *b == 0).collect();
            marks
                .iter()
                .any(|all| !all.is_empty() && all.iter().all(|m| vars.contains(&m.as_bytes())))
        })
        .filter(|pid| !zombie(*pid))
        .collect()
}

/// Kill every process carrying one of `marks` and wait (briefly) until they are gone. Returns
/// how many there were. The runner calls it after a crash with the session's marks.
pub async fn sweep(marks: &[Vec<String>]) -> usize {
    let found = marked_processes(marks);
    for pid in &found {
        let _ = kill(Pid::from_raw(*pid), Signal::SIGKILL);
    }
    let until = Instant::now() + SWEEP_WAIT;
    while !found.is_empty() && Instant::now() < until {
        if found.iter().all(|pid| gone(*pid)) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    found.len()
}

fn gone(pid: i32) -> bool {
    !std::path::Path::new(&format!("/proc/{pid}")).exists() || zombie(pid)
}

fn zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next().map(|s| s == "Z"))
        })
        .unwrap_or(true)
}
