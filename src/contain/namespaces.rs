//! Namespaces for untrusted code: its own PID namespace with a fresh `/proc` (it sees only its
//! own processes — not the engine, not the person's shells and their environments — and when
//! its first process ends, the kernel ends every other one in it), its own mount namespace in
//! which everything but its scratch folder is read-only (no `chmod` of the person's files), and
//! its own network namespace with no interface up (no TCP or UDP, not even to localhost).
//!
//! As root the namespaces are made directly; as a user, inside a user namespace that maps the
//! user to itself. Between fork and exec, in the child: unshare, then fork once more. The first
//! child stays outside the new PID namespace as a *keeper*: it waits for the second, which is
//! the namespace's first process, and exits the way it did. The second sets up its mounts and
//! goes on to exec. Everything there is a raw system call on memory prepared here.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::OnceLock;

use nix::libc;

const MOUNT_ATTR_RDONLY: u64 = 0x1;
const AT_RECURSIVE: libc::c_uint = 0x8000;

#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// Why namespaces cannot be used in this process, once a try found out.
static UNAVAILABLE: OnceLock<String> = OnceLock::new();

/// What the child needs, prepared in the parent (the child may not allocate).
#[derive(Debug, Clone)]
pub struct Prepared {
    as_root: bool,
    network: bool,
    readonly_root: bool,
    writable: CString,
    cwd: CString,
    /// Files that show as empty inside (`/dev/null` mounted over each).
    hidden: Vec<CString>,
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
}

/// What the namespaces hold, for the run's report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Isolation {
    /// The code sees only its own processes, and they all end with its first one.
    pub own_processes: bool,
    /// Everything outside the writable folder is read-only.
    pub readonly_root: bool,
    /// No network at all.
    pub no_network: bool,
}

impl Prepared {
    /// Namespaces for a child that may write only beneath `writable` and works in `cwd`, with
    /// the network or without. `Err` says why there are none (a try in this process already
    /// failed).
    pub fn new(writable: &Path, cwd: &Path, network: bool) -> Result<Prepared, String> {
        if let Some(why) = UNAVAILABLE.get() {
            return Err(why.clone());
        }
        let c_path = |p: &Path| {
            CString::new(p.as_os_str().as_bytes())
                .map_err(|_| format!("the path {} holds a NUL byte", p.display()))
        };
        let (writable, cwd) = (c_path(writable)?, c_path(cwd)?);
        // SAFETY: getuid/getgid cannot fail.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        Ok(Prepared {
            as_root: uid == 0,
            network,
            readonly_root: mount_setattr_exists(),
            writable,
            cwd,
            hidden: Vec::new(),
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
        })
    }

    /// For a person's script run by a cluster worker: its own processes (they all end with its
    /// first one, and that one with the worker) and a fresh `/proc`, so it sees no other
    /// process's command line or environment; each of `hidden` (the worker's key file) shows
    /// as an empty file. The network and the file system stay as the person has them.
    pub fn for_script(cwd: &Path, hidden: &[&Path]) -> Result<Prepared, String> {
        let mut prepared = Prepared::new(cwd, cwd, true)?;
        prepared.readonly_root = false;
        prepared.hidden = hidden
            .iter()
            .map(|p| {
                CString::new(p.as_os_str().as_bytes())
                    .map_err(|_| format!("the path {} holds a NUL byte", p.display()))
            })
            .collect::<Result<_, _>>()?;
        Ok(prepared)
    }

    pub fn isolation(&self) -> Isolation {
        Isolation {
            own_processes: true,
            readonly_root: self.readonly_root,
            no_network: !self.network,
        }
    }
}

/// Remember that namespaces failed here (`why`), so later runs do not try again.
pub fn mark_unavailable(why: String) {
    let _ = UNAVAILABLE.set(why);
}

/// mount_setattr(2) exists from Linux 5.12; without it the root is not made read-only.
fn mount_setattr_exists() -> bool {
    // SAFETY: with an invalid descriptor and no attributes the call only returns an error.
    let r = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            -1,
            c"".as_ptr(),
            0,
            std::ptr::null::<MountAttr>(),
            0,
        )
    };
    r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ENOSYS)
}

fn check(r: libc::c_long) -> std::io::Result<()> {
    if r < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn write_proc(path: &std::ffi::CStr, data: &[u8]) -> std::io::Result<()> {
    // SAFETY: open/write/close on a NUL-terminated path and a prepared buffer.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let n = libc::write(fd, data.as_ptr().cast(), data.len());
        let error = std::io::Error::last_os_error();
        libc::close(fd);
        if n != data.len() as isize {
            return Err(error);
        }
    }
    Ok(())
}

/// In the child, after fork: enter the namespaces. Returns only in the namespace's first
/// process, which goes on to exec; the keeper never returns.
pub fn enter_in_child(p: &Prepared) -> std::io::Result<()> {
    // SAFETY: raw system calls on integers and on memory prepared before the fork.
    unsafe {
        // The engine gone (killed), this goes too, and with it the namespace.
        check(
            libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            )
            .into(),
        )?;
        let mut flags = libc::CLONE_NEWPID | libc::CLONE_NEWNS;
        if !p.network {
            flags |= libc::CLONE_NEWNET;
        }
        if !p.as_root {
            // The engine is undumpable, and so is this copy until exec: its /proc files would
            // belong to root, and it could not write its own user namespace's maps.
            check(libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0).into())?;
            flags |= libc::CLONE_NEWUSER;
        }
        check(libc::unshare(flags).into())?;
        if !p.as_root {
            write_proc(c"/proc/self/setgroups", b"deny")?;
            write_proc(c"/proc/self/uid_map", &p.uid_map)?;
            write_proc(c"/proc/self/gid_map", &p.gid_map)?;
            // Undumpable again: the keeper holds a copy of the engine's memory until it exits.
            check(libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0).into())?;
        }
        let pid = libc::fork();
        if pid < 0 {
            return Err(std::io::Error::last_os_error());
        }
        if pid > 0 {
            keep(pid);
        }
        // The namespace's first process.
        check(
            libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            )
            .into(),
        )?;
        check(
            libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            )
            .into(),
        )?;
        if p.readonly_root {
            // The scratch folder becomes a mount of its own, so it can stay writable when
            // everything else becomes read-only.
            check(
                libc::mount(
                    p.writable.as_ptr(),
                    p.writable.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND | libc::MS_REC,
                    std::ptr::null(),
                )
                .into(),
            )?;
            set_readonly(c"/", true)?;
            set_readonly(&p.writable, false)?;
        }
        check(
            libc::mount(
                c"proc".as_ptr(),
                c"/proc".as_ptr(),
                c"proc".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC | libc::MS_RDONLY,
                std::ptr::null(),
            )
            .into(),
        )?;
        for path in &p.hidden {
            let r = libc::mount(
                c"/dev/null".as_ptr(),
                path.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND,
                std::ptr::null(),
            );
            // A file gone meanwhile has nothing left to hide.
            if r != 0 && *libc::__errno_location() != libc::ENOENT {
                return Err(std::io::Error::last_os_error());
            }
        }
        // The working folder was entered before the mounts changed: enter it again, through
        // the writable mount.
        check(libc::chdir(p.cwd.as_ptr()).into())?;
    }
    Ok(())
}

/// mount_setattr(2) on `path` and every mount beneath it.
fn set_readonly(path: &std::ffi::CStr, readonly: bool) -> std::io::Result<()> {
    let attr = MountAttr {
        attr_set: if readonly { MOUNT_ATTR_RDONLY } else { 0 },
        attr_clr: if readonly { 0 } else { MOUNT_ATTR_RDONLY },
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: the path is NUL-terminated and the attribute record lives on this frame.
    check(unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path.as_ptr(),
            AT_RECURSIVE,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    })
}

/// The keeper: outside the new PID namespace, it waits for the namespace's first process and
/// exits the way it did. It holds nothing of the engine's open files.
fn keep(pid: libc::pid_t) -> ! {
    // SAFETY: async-signal-safe calls only; this process never returns to Rust code that could
    // allocate or take a lock.
    unsafe {
        libc::signal(libc::SIGCHLD, libc::SIG_DFL);
        // Closing the spawn's error pipe tells the engine the start went well; the namespace's
        // first process keeps its own copy until it execs (or reports why it could not).
        if libc::syscall(libc::SYS_close_range, 3_u32, u32::MAX, 0_u32) != 0 {
            for fd in 3..4096 {
                libc::close(fd);
            }
        }
        let mut status = 0;
        loop {
            let r = libc::waitpid(pid, &mut status, 0);
            if r == pid {
                break;
            }
            if r < 0 && *libc::__errno_location() != libc::EINTR {
                libc::_exit(127);
            }
        }
        if libc::WIFEXITED(status) {
            libc::_exit(libc::WEXITSTATUS(status));
        }
        if libc::WIFSIGNALED(status) {
            let signal = libc::WTERMSIG(status);
            libc::signal(signal, libc::SIG_DFL);
            libc::kill(libc::getpid(), signal);
            libc::_exit(128 + signal);
        }
        libc::_exit(127)
    }
}
