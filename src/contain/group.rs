//! A group of processes that ends together: one control group per hierarchy this process may
//! use, joined by the child between fork and exec (so everything it starts is inside from the
//! first instruction), ended with `cgroup.kill`, and recorded in a folder so that a crash's
//! leftovers are ended at the next start.

use std::fs;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::cgroup::{self, Cgroup, Hierarchy, Kind};
use super::Limits;

/// Every group's name starts with this, so a sweep never touches another program's cgroup.
const PREFIX: &str = "healer-";

/// Where this process makes groups: decided once (it may move the process into a leaf).
struct Place {
    hierarchies: Vec<Hierarchy>,
    /// v2 controllers enabled for groups (memory, pids), or why none.
    v2_controllers: Result<Vec<String>, String>,
    problem: Option<String>,
}

fn place() -> &'static Place {
    static PLACE: OnceLock<Place> = OnceLock::new();
    PLACE.get_or_init(|| match cgroup::hierarchies() {
        Ok(hierarchies) => {
            let v2_controllers = hierarchies
                .iter()
                .find(|h| h.kind == Kind::V2)
                .map_or(Ok(Vec::new()), |h| {
                    cgroup::enable_v2_controllers(&h.own, &["memory", "pids"])
                });
            Place {
                hierarchies,
                v2_controllers,
                problem: None,
            }
        }
        Err(problem) => Place {
            hierarchies: Vec::new(),
            v2_controllers: Ok(Vec::new()),
            problem: Some(problem),
        },
    })
}

/// What a group holds, in words a report can carry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Holding {
    /// Ending the group ends every process in it (a cgroup holds them).
    pub ends_all: bool,
    /// The total memory of the group is bounded.
    pub memory_bounded: bool,
    /// The number of processes is bounded.
    pub processes_bounded: bool,
    /// Why something above is not so, in plain words.
    pub problems: Vec<String>,
}

/// A group of processes that ends together. Dropping it ends it.
#[derive(Debug)]
pub struct Group {
    name: String,
    cgroups: Vec<Cgroup>,
    /// `cgroup.procs` of each, opened here: the child only writes "0" to them.
    procs: Vec<OwnedFd>,
    record: Option<PathBuf>,
    pub holding: Holding,
}

impl Group {
    /// Make a group named `name` (unique, e.g. "run-12-1") with `limits`, recorded in
    /// `registry` (a folder of the data folder) until it ends. Never fails: what the machine
    /// does not allow is said in [`Group::holding`], and the group then holds less.
    pub fn create(registry: &Path, name: &str, limits: &Limits) -> Group {
        let name = format!("{PREFIX}{name}");
        let mut group = Group {
            name: name.clone(),
            cgroups: Vec::new(),
            procs: Vec::new(),
            record: None,
            holding: Holding::default(),
        };
        let place = place();
        if let Some(problem) = &place.problem {
            group.holding.problems.push(problem.clone());
            return group;
        }
        let has_v2 = place.hierarchies.iter().any(|h| h.kind == Kind::V2);
        for h in &place.hierarchies {
            let wanted = match h.kind {
                Kind::V2 => true,
                Kind::V1Memory => limits.memory_bytes.is_some(),
                // Without v2, the pids hierarchy is what holds (and ends) every process.
                Kind::V1Pids => limits.processes.is_some() || !has_v2,
            };
            if !wanted {
                continue;
            }
            match Cgroup::make(h.kind, &h.own, &name) {
                Ok(cg) => group.cgroups.push(cg),
                Err(problem) => group.holding.problems.push(problem),
            }
        }
        group.apply(limits, place);
        for cg in &group.cgroups {
            match fs::OpenOptions::new()
                .write(true)
                .open(cg.dir.join("cgroup.procs"))
            {
                Ok(file) => group.procs.push(file.into()),
                Err(e) => group
                    .holding
                    .problems
                    .push(format!("cannot join {} ({e})", cg.dir.display())),
            }
        }
        // Any cgroup holds every descendant of the child that joined it.
        group.holding.ends_all = !group.cgroups.is_empty()
            && group.procs.len() == group.cgroups.len()
            && group
                .cgroups
                .iter()
                .any(|c| matches!(c.kind, Kind::V2 | Kind::V1Pids));
        group.record = record(registry, &name, &group.cgroups);
        group
    }

    fn apply(&mut self, limits: &Limits, place: &Place) {
        let v2_has = |c: &str| {
            place
                .v2_controllers
                .as_ref()
                .is_ok_and(|list| list.iter().any(|x| x == c))
        };
        let mut problems = Vec::new();
        for cg in &self.cgroups {
            let result = match (cg.kind, limits.memory_bytes, limits.processes) {
                (Kind::V2, memory, processes) => {
                    let mut r = Ok(());
                    if let (Some(bytes), true) = (memory, v2_has("memory")) {
                        r = r.and(cg.write("memory.max", &bytes.to_string()));
                        let _ = cg.write("memory.swap.max", "0");
                        self.holding.memory_bounded = r.is_ok();
                    }
                    if let (Some(n), true) = (processes, v2_has("pids")) {
                        r = r.and(cg.write("pids.max", &n.to_string()));
                        self.holding.processes_bounded = r.is_ok();
                    }
                    r
                }
                (Kind::V1Memory, Some(bytes), _) => {
                    let r = cg.write("memory.limit_in_bytes", &bytes.to_string());
                    // With swap accounting, swap must not be a way around the limit.
                    let _ = cg.write("memory.memsw.limit_in_bytes", &bytes.to_string());
                    self.holding.memory_bounded |= r.is_ok();
                    r
                }
                (Kind::V1Pids, _, Some(n)) => {
                    let r = cg.write("pids.max", &n.to_string());
                    self.holding.processes_bounded |= r.is_ok();
                    r
                }
                _ => Ok(()),
            };
            if let Err(problem) = result {
                problems.push(problem);
            }
        }
        if limits.memory_bytes.is_some() && !self.holding.memory_bounded {
            problems.push(match &place.v2_controllers {
                Err(why) => why.clone(),
                Ok(_) => "no cgroup memory controller is available to this process".to_string(),
            });
        }
        self.holding.problems.extend(problems);
    }

    /// The descriptors a child writes "0" to, to join the group (see [`join_in_child`]).
    pub fn join_fds(&self) -> Vec<RawFd> {
        self.procs.iter().map(|f| f.as_raw_fd()).collect()
    }

    /// Have `cmd`'s child join the group before it runs anything. The descriptors stay open in
    /// this process (owned by the group, which outlives the spawn) and close at exec.
    pub fn install(&self, cmd: &mut tokio::process::Command) {
        let fds = self.join_fds();
        // SAFETY: the hook writes two bytes to descriptors it was given: async-signal-safe.
        unsafe {
            cmd.pre_exec(move || join_in_child(&fds));
        }
    }

    /// The processes in the group now.
    pub fn pids(&self) -> Vec<i32> {
        let mut pids: Vec<i32> = self.cgroups.iter().flat_map(Cgroup::pids).collect();
        pids.sort_unstable();
        pids.dedup();
        pids
    }

    /// Whether the kernel killed a process of the group because the group's memory was full.
    pub fn memory_exceeded(&self) -> bool {
        self.cgroups.iter().any(Cgroup::oom_killed)
    }

    /// End every process in the group and remove it. Returns whether everything is gone.
    pub fn end(&mut self) -> bool {
        let mut gone = true;
        for cg in self.cgroups.drain(..) {
            gone &= cg.end();
        }
        self.procs.clear();
        if let Some(record) = self.record.take() {
            let _ = fs::remove_file(record);
        }
        gone
    }

    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.end();
    }
}

/// In the child, after fork: join the groups. Async-signal-safe (one `write` per group).
pub fn join_in_child(fds: &[RawFd]) -> std::io::Result<()> {
    for fd in fds {
        // SAFETY: writes one byte from a static buffer to a descriptor the parent opened.
        let written = unsafe { nix::libc::write(*fd, b"0".as_ptr().cast(), 1) };
        if written != 1 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Write down the group's cgroups, so that a crash's leftovers can be ended at the next start.
fn record(registry: &Path, name: &str, cgroups: &[Cgroup]) -> Option<PathBuf> {
    if cgroups.is_empty() {
        return None;
    }
    fs::create_dir_all(registry).ok()?;
    let path = registry.join(name);
    let text: String = cgroups
        .iter()
        .map(|c| format!("{}\n", c.dir.display()))
        .collect();
    fs::write(&path, text).ok()?;
    Some(path)
}

/// End the groups a crashed process left (every record in `registry`). Run it holding the
/// lease, before anything starts new groups. Returns how many groups were ended.
pub fn sweep(registry: &Path) -> usize {
    let Ok(entries) = fs::read_dir(registry) else {
        return 0;
    };
    let mut ended = 0;
    for entry in entries.flatten() {
        let text = fs::read_to_string(entry.path()).unwrap_or_default();
        for line in text.lines() {
            let dir = PathBuf::from(line.trim());
            let ours = dir.starts_with("/sys/fs/cgroup")
                && dir
                    .file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(PREFIX));
            if !ours || !dir.is_dir() {
                continue;
            }
            let kind = if dir.join("cgroup.kill").exists() {
                Kind::V2
            } else {
                Kind::V1Pids
            };
            let cg = Cgroup { kind, dir };
            if !cg.pids().is_empty() {
                ended += 1;
            }
            cg.end();
        }
        let _ = fs::remove_file(entry.path());
    }
    ended
}
