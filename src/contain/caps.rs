//! Capabilities a child gives up between fork and exec. Everything here is a raw system call on
//! integers and stack memory: it runs in a `pre_exec` hook of a multithreaded parent, where only
//! async-signal-safe calls are allowed.
//!
//! Why: the engine is undumpable (see `secrets`), which stops a process of the same user from
//! reading its memory — unless that process holds CAP_SYS_PTRACE, as every process of root
//! does. A child that drops CAP_SYS_PTRACE from its bounding set keeps it dropped across exec
//! (root's "all capabilities on exec" is limited by the bounding set), so a script running as
//! root cannot read `/proc/<engine>/mem` or `/proc/<engine>/environ`.

use nix::libc;

/// CAP_SYS_PTRACE: reading other processes' memory.
pub const CAP_SYS_PTRACE: u32 = 19;
/// CAP_SYS_ADMIN: among much else, mounting (undoing a mount that hides a file).
pub const CAP_SYS_ADMIN: u32 = 21;

/// The highest capability number asked about (the kernel ignores numbers it does not know).
const CAP_LAST: u32 = 63;

const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;

#[repr(C)]
struct Header {
    version: u32,
    pid: i32,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Data {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// Which capabilities a child gives up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dropped {
    /// All of them, for good: model-proposed code in the sandbox.
    All,
    /// Only CAP_SYS_PTRACE: a person's own script keeps what it runs with otherwise.
    Ptrace,
    /// CAP_SYS_PTRACE and CAP_SYS_ADMIN: a script on a cluster worker, which must not undo
    /// the mount that hides the worker's key file.
    PtraceAndMounts,
}

/// In the child, after fork: give up capabilities. Errors only when the kernel refuses to
/// lower what this process holds; a bounding set this process may not change (it lacks
/// CAP_SETPCAP, as every unprivileged process does) holds nothing to drop.
pub fn drop_in_child(which: Dropped) -> std::io::Result<()> {
    let wanted = |cap: u32| match which {
        Dropped::All => true,
        Dropped::Ptrace => cap == CAP_SYS_PTRACE,
        Dropped::PtraceAndMounts => cap == CAP_SYS_PTRACE || cap == CAP_SYS_ADMIN,
    };
    for cap in 0..=CAP_LAST {
        if wanted(cap) {
            // SAFETY: a plain system call on integers. EINVAL (a number past the kernel's last
            // capability) and EPERM (no CAP_SETPCAP: nothing to drop) are expected.
            unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) };
        }
    }
    if which == Dropped::All {
        // SAFETY: as above.
        unsafe {
            libc::prctl(
                libc::PR_CAP_AMBIENT,
                libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
                0,
                0,
                0,
            )
        };
    }
    let mut header = Header {
        version: LINUX_CAPABILITY_VERSION_3,
        pid: 0,
    };
    let mut data = [Data::default(); 2];
    // SAFETY: capget writes two `Data` records for version 3, both on this stack frame.
    if unsafe { libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    for (index, record) in data.iter_mut().enumerate() {
        let mut keep = u32::MAX;
        for bit in 0..32 {
            let cap = index as u32 * 32 + bit;
            if wanted(cap) {
                keep &= !(1 << bit);
            }
        }
        record.effective &= keep;
        record.permitted &= keep;
        record.inheritable &= keep;
    }
    // SAFETY: capset reads the header and two records from this stack frame.
    if unsafe { libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
