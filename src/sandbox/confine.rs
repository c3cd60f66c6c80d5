//! What is done to the child between fork and exec: resource limits and, on Linux, Landlock.
//!
//! Everything that allocates (opening the scratch folder, building the ruleset) happens in the
//! parent, before the fork. The `pre_exec` hook runs in the forked copy of a multithreaded
//! process, where only async-signal-safe calls are allowed, so it makes raw system calls only:
//! `setrlimit`, `prctl(PR_SET_NO_NEW_PRIVS)` and `landlock_restrict_self` on the ruleset's file
//! descriptor. (The landlock crate's `restrict_self` consumes the ruleset, builds error values
//! and takes it by value, which an `FnMut` hook can't do without more machinery than the one
//! system call it makes.)

use std::path::Path;

use nix::sys::resource::{getrlimit, setrlimit, Resource};

use super::Confinement;

/// The memory limit is RLIMIT_DATA, not RLIMIT_AS. Node's V8 reserves large stretches of
/// address space up front (its pointer cage, and WebAssembly's guard regions: with RLIMIT_AS at
/// 1 GiB, `new WebAssembly.Memory({initial: 1})` already fails). Those reservations are
/// PROT_NONE and do not count against RLIMIT_DATA, which since Linux 4.7 counts private
/// writable mappings: heap, anonymous `mmap`, so a Python `bytearray(2 GiB)` fails with
/// MemoryError. Not counted: shared mappings and tmpfs files, and the limit is per process,
/// not per process group.
const MEMORY_RESOURCE: Resource = Resource::RLIMIT_DATA;

/// Prepared in the parent; applied in the child by the hook [`Prepared::install`] sets.
pub struct Prepared {
    /// The limit to set on [`MEMORY_RESOURCE`], if any.
    memory: Option<nix::libc::rlim_t>,
    /// The largest file the child may write (RLIMIT_FSIZE), if any.
    file_size: Option<nix::libc::rlim_t>,
    #[cfg(target_os = "linux")]
    ruleset: Option<std::os::fd::OwnedFd>,
    pub confinement: Confinement,
}

impl Prepared {
    /// Prepare limits and confinement for a child that may write only beneath `writable`,
    /// files of at most `file_bytes`, and (when `deny_tcp`) may not bind or connect TCP.
    pub fn new(writable: &[&Path], memory_bytes: u64, file_bytes: u64, deny_tcp: bool) -> Prepared {
        let memory = limit(MEMORY_RESOURCE, memory_bytes);
        let file_size = limit(Resource::RLIMIT_FSIZE, file_bytes);
        #[cfg(target_os = "linux")]
        {
            let (ruleset, confinement) = match landlock::ruleset(writable, deny_tcp) {
                Ok(fd) => (Some(fd), Confinement::Landlock),
                Err(reason) => (None, Confinement::Unavailable { reason }),
            };
            Prepared {
                memory,
                file_size,
                ruleset,
                confinement,
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (writable, deny_tcp);
            Prepared {
                memory,
                file_size,
                confinement: Confinement::Unavailable {
                    reason: "Landlock is a Linux feature; writes are not confined on this system"
                        .to_string(),
                },
            }
        }
    }

    /// Whether Landlock denies TCP (its ABI 4 and later).
    #[cfg(target_os = "linux")]
    pub fn tcp_denied(&self) -> bool {
        self.ruleset.is_some() && landlock::abi_version().is_ok_and(|v| v >= 4)
    }

    /// Whether a memory limit is applied.
    pub fn memory_limited(&self) -> bool {
        self.memory.is_some()
    }

    /// Install the hook on the command. Any failure in the child makes the spawn fail: a child
    /// that was to be confined never runs unconfined.
    pub fn install(&self, cmd: &mut tokio::process::Command) {
        let memory = self.memory;
        let file_size = self.file_size;
        #[cfg(target_os = "linux")]
        let ruleset = {
            use std::os::fd::AsRawFd;
            self.ruleset.as_ref().map(|fd| fd.as_raw_fd())
        };
        // SAFETY: the closure only copies integers it captured and makes async-signal-safe
        // system calls (setrlimit, prctl, capget/capset, landlock_restrict_self); it neither allocates nor
        // takes locks. The ruleset descriptor stays open in the parent (owned by `self`, which
        // outlives the spawn) and so in the child until exec, where O_CLOEXEC closes it.
        unsafe {
            cmd.pre_exec(move || {
                setrlimit(Resource::RLIMIT_CORE, 0, 0)?;
                if let Some(limit) = memory {
                    setrlimit(MEMORY_RESOURCE, limit, limit)?;
                }
                if let Some(limit) = file_size {
                    setrlimit(Resource::RLIMIT_FSIZE, limit, limit)?;
                }
                // Root's CAP_SYS_PTRACE would read the engine's memory past its undumpable flag.
                crate::contain::caps::drop_in_child(crate::contain::caps::Dropped::All)?;
                #[cfg(target_os = "linux")]
                if let Some(fd) = ruleset {
                    landlock::restrict_self(fd)?;
                }
                Ok(())
            });
        }
    }
}

/// `bytes` as a limit on `resource`, never above the hard limit already in force (raising it
/// would fail); `None` for 0 (no limit).
fn limit(resource: Resource, bytes: u64) -> Option<nix::libc::rlim_t> {
    (bytes > 0).then(|| {
        let wanted = nix::libc::rlim_t::try_from(bytes).unwrap_or(nix::libc::rlim_t::MAX);
        match getrlimit(resource) {
            Ok((_, hard)) => wanted.min(hard),
            Err(_) => wanted,
        }
    })
}

#[cfg(target_os = "linux")]
pub mod landlock {
    //! Landlock: every write access right the kernel knows is handled (denied), then granted
    //! again beneath the scratch folder and on a few harmless device files. Reading and
    //! executing stay allowed everywhere. Also scoped (ABI 6+): no signals to processes outside
    //! the sandbox, no connecting to abstract UNIX sockets made outside it. Best effort: on an
    //! older kernel the rights it does not know are left out (e.g. before ABI 3, `truncate(2)`
    //! is not restricted), but writing, creating, removing and renaming files outside the
    //! scratch folder is denied from ABI 1 on.

    use std::os::fd::{OwnedFd, RawFd};
    use std::path::Path;

    use landlock::{
        path_beneath_rules, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset,
        RulesetAttr, RulesetCreatedAttr, Scope, ABI,
    };
    use nix::libc;

    /// The rights granted on device files that ordinary programs write to.
    const DEVICES: [&str; 5] = [
        "/dev/null",
        "/dev/zero",
        "/dev/full",
        "/dev/tty",
        "/dev/urandom",
    ];

    /// `LANDLOCK_CREATE_RULESET_VERSION`: ask for the ABI version instead of a ruleset.
    const CREATE_RULESET_VERSION: libc::c_uint = 1;

    /// The Landlock ABI version the running kernel offers, or why there is none.
    pub fn abi_version() -> Result<i64, String> {
        // SAFETY: with a null attribute, size 0 and the VERSION flag the call only returns a
        // number; it reads and writes no memory of ours.
        let version = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<libc::c_void>(),
                0_usize,
                CREATE_RULESET_VERSION,
            )
        };
        if version >= 1 {
            return Ok(version);
        }
        let err = std::io::Error::last_os_error();
        Err(match err.raw_os_error() {
            Some(libc::ENOSYS) => {
                "this kernel has no Landlock support (it needs Linux 5.13 or later built with CONFIG_SECURITY_LANDLOCK)".to_string()
            }
            Some(libc::EOPNOTSUPP) => {
                "Landlock is built into this kernel but not enabled at boot (add landlock to the lsm= boot parameter)".to_string()
            }
            _ => format!("the kernel refused to report its Landlock version ({err})"),
        })
    }

    /// Build the ruleset for a child that may write only beneath `writable` (and, with
    /// `deny_tcp`, bind or connect no TCP socket, from ABI 4 on); its descriptor.
    pub fn ruleset(writable: &[&Path], deny_tcp: bool) -> Result<OwnedFd, String> {
        abi_version()?;
        // The newest ABI whose write rights are vetted here. V9 adds ResolveUnix (connecting to
        // named UNIX sockets), left out on purpose: name resolution through systemd-resolved
        // and other local services needs it.
        let abi = ABI::V8;
        let write = AccessFs::from_write(abi);
        let device = AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev;
        let created = Ruleset::default()
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(write)
            .and_then(|r| {
                // Handled and never granted: no TCP at all (UDP is not covered by Landlock).
                if deny_tcp {
                    r.handle_access(AccessNet::from_all(abi))
                } else {
                    Ok(r)
                }
            })
            .and_then(|r| r.scope(Scope::from_all(abi)))
            .and_then(|r| r.create())
            .and_then(|r| r.add_rules(path_beneath_rules(writable.iter().copied(), write)))
            .and_then(|r| r.add_rules(path_beneath_rules(DEVICES, device)))
            .map_err(|e| format!("the Landlock ruleset could not be built ({e})"))?;
        let fd: Option<OwnedFd> = created.into();
        fd.ok_or_else(|| "the kernel did not create a Landlock ruleset".to_string())
    }

    /// In the child, after fork: no new privileges (required for an unprivileged process), then
    /// enter the ruleset's domain. Async-signal-safe: two system calls, no allocation.
    pub fn restrict_self(ruleset: RawFd) -> std::io::Result<()> {
        // SAFETY: plain system calls on integers.
        unsafe {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0_u32) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    }
}
