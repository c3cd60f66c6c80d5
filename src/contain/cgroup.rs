//! Control groups: where this process may make them, making one with limits, and ending
//! everything in one. cgroup v2 gives "kill everything" (`cgroup.kill`, Linux 5.14+) and, where
//! its controllers are enabled, `memory.max` and `pids.max`; on a machine that still mounts the
//! v1 memory and pids hierarchies (hybrid layouts, containers) those give the limits instead.
//! Groups are made beneath this process's own cgroup, which is what a desktop session
//! delegates to its user (and root may use anywhere).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long ending a group waits for its processes to be gone.
const EMPTY_WAIT: Duration = Duration::from_secs(3);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    V2,
    V1Memory,
    V1Pids,
}

/// A hierarchy in which groups are made: this process's own cgroup in it.
#[derive(Debug, Clone)]
pub struct Hierarchy {
    pub kind: Kind,
    pub own: PathBuf,
}

/// The hierarchies this process is in, from /proc/self/mountinfo and /proc/self/cgroup.
pub fn hierarchies() -> Result<Vec<Hierarchy>, String> {
    let mountinfo = fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| format!("cannot read /proc/self/mountinfo ({e})"))?;
    let membership = fs::read_to_string("/proc/self/cgroup")
        .map_err(|e| format!("cannot read /proc/self/cgroup ({e})"))?;
    let mut found = Vec::new();
    for line in mountinfo.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let Some(mount) = left.split_whitespace().nth(4) else {
            continue;
        };
        let mut right = right.split_whitespace();
        let (fstype, options) = (right.next(), right.nth(1).unwrap_or_default());
        let options: Vec<&str> = options.split(',').collect();
        let (kind, controller) = match fstype {
            Some("cgroup2") => (Kind::V2, None),
            Some("cgroup") if options.contains(&"memory") => (Kind::V1Memory, Some("memory")),
            Some("cgroup") if options.contains(&"pids") => (Kind::V1Pids, Some("pids")),
            _ => continue,
        };
        if found.iter().any(|h: &Hierarchy| h.kind == kind) {
            continue;
        }
        let path = membership.lines().find_map(|entry| {
            let mut parts = entry.splitn(3, ':');
            let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            let matches = match controller {
                None => controllers.is_empty(),
                Some(c) => controllers.split(',').any(|x| x == c),
            };
            matches.then(|| path.to_string())
        });
        if let Some(path) = path {
            found.push(Hierarchy {
                kind,
                own: Path::new(mount).join(path.trim_start_matches('/')),
            });
        }
    }
    if found.is_empty() {
        return Err("no cgroup hierarchy is mounted".to_string());
    }
    Ok(found)
}

/// One control group Healer made.
#[derive(Debug, Clone)]
pub struct Cgroup {
    pub kind: Kind,
    pub dir: PathBuf,
}

impl Cgroup {
    /// Make `name` beneath `parent`.
    pub fn make(kind: Kind, parent: &Path, name: &str) -> Result<Cgroup, String> {
        let dir = parent.join(name);
        match fs::create_dir(&dir) {
            Ok(()) => Ok(Cgroup { kind, dir }),
            Err(e) => Err(format!(
                "cannot make a cgroup in {} ({e})",
                parent.display()
            )),
        }
    }

    pub fn write(&self, file: &str, value: &str) -> Result<(), String> {
        write_file(&self.dir.join(file), value)
    }

    pub fn read(&self, file: &str) -> String {
        fs::read_to_string(self.dir.join(file)).unwrap_or_default()
    }

    /// The processes in it now.
    pub fn pids(&self) -> Vec<i32> {
        self.read("cgroup.procs")
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    /// Whether the kernel killed a process in it for memory.
    pub fn oom_killed(&self) -> bool {
        let (file, key) = match self.kind {
            Kind::V2 => ("memory.events", "oom_kill"),
            Kind::V1Memory => ("memory.oom_control", "oom_kill"),
            Kind::V1Pids => return false,
        };
        self.read(file).lines().any(|line| {
            let mut words = line.split_whitespace();
            words.next() == Some(key) && words.next().is_some_and(|n| n != "0")
        })
    }

    /// Kill every process in it, wait for them to be gone, remove it. `true` when it is gone.
    pub fn end(&self) -> bool {
        if !self.dir.exists() {
            return true;
        }
        let killed_at_once = self.kind == Kind::V2 && self.write("cgroup.kill", "1").is_ok();
        let deadline = Instant::now() + EMPTY_WAIT;
        loop {
            let pids = self.pids();
            if pids.is_empty() {
                break;
            }
            if !killed_at_once {
                // No cgroup.kill: kill what is there, again until nothing is (a process may
                // fork between the read and the kill; the pids limit bounds how often).
                for pid in pids {
                    let _ = nix::sys::signal::kill(
                        nix::unistd::Pid::from_raw(pid),
                        nix::sys::signal::Signal::SIGKILL,
                    );
                }
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        // A dying process may still be counted for a moment after it left cgroup.procs.
        while fs::remove_dir(&self.dir).is_err() && self.dir.exists() {
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        true
    }
}

pub fn write_file(path: &Path, value: &str) -> Result<(), String> {
    fs::OpenOptions::new()
        .write(true)
        .open(path)
        .and_then(|mut f| f.write_all(value.as_bytes()))
        .map_err(|e| format!("cannot write {} ({e})", path.display()))
}

/// Make sure the v2 controllers `wanted` are enabled for the groups made beneath `own`.
/// A cgroup that holds processes cannot give its children controllers ("no internal
/// processes"), so when `own` holds this process and nothing else, this process moves into a
/// leaf of its own first (`own/healer-engine`). Returns the names enabled.
pub fn enable_v2_controllers(own: &Path, wanted: &[&str]) -> Result<Vec<String>, String> {
    let available = fs::read_to_string(own.join("cgroup.controllers")).unwrap_or_default();
    let wanted: Vec<&str> = wanted
        .iter()
        .copied()
        .filter(|c| available.split_whitespace().any(|a| a == *c))
        .collect();
    let enabled = |own: &Path| -> Vec<String> {
        let now = fs::read_to_string(own.join("cgroup.subtree_control")).unwrap_or_default();
        wanted
            .iter()
            .filter(|c| now.split_whitespace().any(|a| a == **c))
            .map(|c| c.to_string())
            .collect()
    };
    if wanted.is_empty() || enabled(own).len() == wanted.len() {
        return Ok(enabled(own));
    }
    let request: String = wanted.iter().map(|c| format!("+{c} ")).collect();
    let control = own.join("cgroup.subtree_control");
    if write_file(&control, request.trim()).is_ok() {
        return Ok(enabled(own));
    }
    let others = fs::read_to_string(own.join("cgroup.procs"))
        .unwrap_or_default()
        .lines()
        .filter(|l| l.trim() != std::process::id().to_string())
        .count();
    if others > 0 {
        return Err(format!(
            "{} also holds {others} other program(s), so it cannot hand out memory limits; start Healer on its own (from the desktop, or with systemd-run --user --scope)",
            own.display()
        ));
    }
    let leaf = own.join("healer-engine");
    if let Err(e) = fs::create_dir(&leaf) {
        if e.kind() != std::io::ErrorKind::AlreadyExists {
            return Err(format!("cannot make {} ({e})", leaf.display()));
        }
    }
    write_file(&leaf.join("cgroup.procs"), "0")?;
    write_file(&control, request.trim())?;
    Ok(enabled(own))
}
