//! What holds a sandboxed run besides Landlock and the per-process limits: a control group
//! (ending it ends every process, however it detached; the total memory and the number of
//! processes bounded) and namespaces (its own processes only, a read-only system, no network).
//! Each is used where the machine allows it; the run's report says what held and what did not.

use std::path::Path;

use super::SandboxLimits;
use crate::contain::{self, namespaces, Group, Limits};

const MIB: u64 = 1024 * 1024;

pub struct Hold {
    group: Group,
    namespaces: Option<namespaces::Prepared>,
    namespaces_missing: Option<String>,
    limits: SandboxLimits,
}

impl Hold {
    /// Prepare the holding of a run named `name` that may write only beneath `writable` and
    /// works in `cwd`.
    pub fn new(
        groups: &Path,
        name: &str,
        writable: &Path,
        cwd: &Path,
        limits: &SandboxLimits,
    ) -> Hold {
        let group = Group::create(
            groups,
            name,
            &Limits {
                memory_bytes: (limits.memory_bytes > 0).then_some(limits.memory_bytes),
                processes: (limits.processes > 0).then_some(u64::from(limits.processes)),
            },
        );
        let (namespaces, namespaces_missing) =
            match namespaces::Prepared::new(writable, cwd, limits.network) {
                Ok(p) => (Some(p), None),
                Err(why) => (None, Some(why)),
            };
        Hold {
            group,
            namespaces,
            namespaces_missing,
            limits: *limits,
        }
    }

    /// Set the child's hooks: join the group, then enter the namespaces (before Landlock, which
    /// forbids mounting).
    pub fn install(&self, cmd: &mut tokio::process::Command) {
        let fds = self.group.join_fds();
        let namespaces = self.namespaces.clone();
        // SAFETY: both hooks make async-signal-safe system calls only, on memory prepared here.
        unsafe {
            cmd.pre_exec(move || {
                contain::join_in_child(&fds)?;
                if let Some(p) = &namespaces {
                    namespaces::enter_in_child(p)?;
                }
                Ok(())
            });
        }
    }

    pub fn uses_namespaces(&self) -> bool {
        self.namespaces.is_some()
    }

    /// The start failed inside the namespaces: go without them, here and from now on.
    pub fn without_namespaces(&mut self, why: &str) {
        let why = format!("the kernel refused private namespaces ({why})");
        namespaces::mark_unavailable(why.clone());
        self.namespaces = None;
        self.namespaces_missing = Some(why);
    }

    pub fn memory_exceeded(&self) -> bool {
        self.group.memory_exceeded()
    }

    /// End every process of the run and remove its group.
    pub fn end(&mut self) -> bool {
        self.group.end()
    }

    /// What held the run, and what did not, in plain words. `tcp_denied`: Landlock denied TCP.
    pub fn report(&self, tcp_denied: bool) -> (Vec<String>, Vec<String>) {
        let (mut held, mut not_held) = (Vec::new(), Vec::new());
        let holding = &self.group.holding;
        if holding.ends_all {
            held.push("ending it ended every process it started (cgroup)".to_string());
        }
        if holding.memory_bounded {
            held.push(format!(
                "at most {} MiB of memory in all (cgroup)",
                self.limits.memory_bytes / MIB
            ));
        }
        if holding.processes_bounded {
            held.push(format!("at most {} processes", self.limits.processes));
        }
        not_held.extend(holding.problems.iter().cloned());
        match (&self.namespaces, &self.namespaces_missing) {
            (Some(p), _) => {
                let isolation = p.isolation();
                held.push("it saw only its own processes".to_string());
                if isolation.readonly_root {
                    held.push("everything outside its scratch copy was read-only".to_string());
                } else {
                    not_held.push(
                        "the system outside the scratch copy was not read-only (Linux 5.12+ is needed)"
                            .to_string(),
                    );
                }
                if isolation.no_network {
                    held.push("no network".to_string());
                }
            }
            (None, why) => {
                not_held.push(format!(
                    "it could see other processes: {}",
                    why.as_deref().unwrap_or("no namespaces")
                ));
                if !self.limits.network {
                    if tcp_denied {
                        held.push("no TCP connections (Landlock)".to_string());
                        not_held.push("UDP was not blocked".to_string());
                    } else {
                        not_held.push("the network was open".to_string());
                    }
                }
            }
        }
        if self.limits.disk_bytes > 0 {
            held.push(format!(
                "at most {} MiB in its scratch folder",
                self.limits.disk_bytes / MIB
            ));
        }
        (held, not_held)
    }
}
