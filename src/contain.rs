//! Holding what Healer starts, so that ending it ends everything in it — the pieces every
//! process Healer launches goes through: the runner of scripts, the sandbox, and the coding
//! agents.
//!
//! - [`Group`]: a control group per run, eval or agent session. The child joins it between
//!   fork and exec; ending the group (`cgroup.kill`) ends every process in it, however it
//!   detached (`setsid`, double fork, an emptied environment); its total memory and number of
//!   processes can be bounded; a folder of records lets the next start end what a crash left
//!   ([`sweep`]).
//! - [`namespaces`]: for untrusted code, its own PID namespace (it sees only its own processes,
//!   and when its first process ends the kernel ends the rest), a read-only view of the file
//!   system except its scratch folder, and no network.
//! - [`caps`]: capabilities a child gives up.
//!
//! Each degrades where the machine does not allow it and says why in plain words;
//! docs/containment.md lists what holds where. Linux only, like the sandbox's Landlock: these
//! are Linux kernel interfaces.

pub mod caps;
mod cgroup;
mod group;
pub mod namespaces;
#[cfg(test)]
pub mod testing;

pub use group::{join_in_child, sweep, Group, Holding};

/// Where a group is to be recorded, and its name (unique on this machine).
#[derive(Debug, Clone)]
pub struct GroupSpec {
    pub registry: std::path::PathBuf,
    pub name: String,
}

impl GroupSpec {
    /// The group itself, with no bounds but its end.
    pub fn create(&self) -> Group {
        Group::create(&self.registry, &self.name, &Limits::default())
    }
}

/// Bounds on a group as a whole (each process may have its own limits besides).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Limits {
    /// The most memory all its processes together may use.
    pub memory_bytes: Option<u64>,
    /// The most processes (and threads) it may hold at once.
    pub processes: Option<u64>,
}
