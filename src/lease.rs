//! One engine at a time: the process that runs schedules and healing holds an OS file lock on
//! `engine.lock` in the data folder for as long as it runs. The lock goes with the process, so
//! a crash never leaves a stale lease behind.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Seek, Write};

use crate::error::{Error, Result};
use crate::paths::Paths;
use crate::store::now;

/// How long [`Lease::acquire`] keeps asking for a lease that looks held.
pub const RELEASE_SETTLE: std::time::Duration = std::time::Duration::from_secs(1);

#[derive(Debug)]
pub struct Lease {
    _file: File,
}

impl Lease {
    /// Take the lease, or `None` when another engine holds it.
    pub fn try_acquire(paths: &Paths, role: &str) -> Result<Option<Lease>> {
        let Some(mut file) = try_lock(paths)? else {
            return Ok(None);
        };
        let path = paths.lock_file();
        // Say who holds it, for the message a second engine shows.
        let holder = format!("{role}, pid {}, since {}", std::process::id(), now());
        file.set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| file.write_all(holder.as_bytes()))
            .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))?;
        Ok(Some(Lease { _file: file }))
    }

    /// Take the lease, or fail with a message naming the engine that holds it. A lease just
    /// let go can look held for a moment: a child being started (between fork and exec) holds
    /// a copy of every open file of its parent, the lock file's too. So a held lease is asked
    /// again for up to [`RELEASE_SETTLE`] before the answer is no.
    pub fn acquire(paths: &Paths, role: &str) -> Result<Lease> {
        let deadline = std::time::Instant::now() + RELEASE_SETTLE;
        loop {
            if let Some(lease) = Lease::try_acquire(paths, role)? {
                return Ok(lease);
            }
            if std::time::Instant::now() >= deadline {
                return Err(Error::EngineRunning {
                    data_dir: paths.data_dir().to_path_buf(),
                    holder: Lease::holder(paths),
                });
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Who holds (or last held) the lease, as they wrote it.
    pub fn holder(paths: &Paths) -> String {
        std::fs::read_to_string(paths.lock_file())
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "another process".to_string())
    }

    /// Whether an engine holds the lease right now. Read without taking it: a probe that took
    /// the lock, even for a moment, could make an engine starting at that instant refuse, and
    /// would overwrite who holds it.
    pub fn is_held(paths: &Paths) -> Result<bool> {
        let path = paths.lock_file();
        let meta = match std::fs::metadata(&path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(Error::io(format!("cannot read {}", path.display()), e)),
        };
        match std::fs::read_to_string("/proc/locks") {
            Ok(locks) => {
                use std::os::unix::fs::MetadataExt;
                Ok(locked_in(&locks, meta.dev(), meta.ino()))
            }
            // Without /proc (not Linux): a shared lock on a read-only handle, given back at
            // once, never the engine's exclusive one and never a write.
            Err(_) => probe_shared(&path),
        }
    }
}

/// Whether `/proc/locks` lists a granted lock on the file (`dev`, `ino`). A line reads
/// `1: FLOCK  ADVISORY  WRITE 4242 fe:00:1234567 0 EOF` (device in hex); waiting requests
/// carry `->` and hold nothing.
fn locked_in(locks: &str, dev: u64, ino: u64) -> bool {
    // The kernel's encoding of a device number (glibc's gnu_dev_major/minor).
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    let wanted = format!("{major:02x}:{minor:02x}:{ino}");
    locks
        .lines()
        .filter(|line| !line.contains("->"))
        .any(|line| line.split_whitespace().nth(5) == Some(wanted.as_str()))
}

fn probe_shared(path: &std::path::Path) -> Result<bool> {
    let file =
        File::open(path).map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
    match file.try_lock_shared() {
        Ok(()) => {
            let _ = file.unlock();
            Ok(false)
        }
        Err(TryLockError::WouldBlock) => Ok(true),
        Err(TryLockError::Error(e)) => {
            Err(Error::io(format!("cannot look at {}", path.display()), e))
        }
    }
}

/// The lock file, locked, or `None` when another process holds it.
fn try_lock(paths: &Paths) -> Result<Option<File>> {
    let path = paths.lock_file();
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| Error::data_dir(path.clone(), e.to_string()))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => return Ok(None),
        Err(TryLockError::Error(e)) => {
            return Err(Error::io(format!("cannot lock {}", path.display()), e))
        }
    }
    Ok(Some(file))
}

#[cfg(test)]
mod tests {
    use super::locked_in;

    const LOCKS: &str = "1: FLOCK  ADVISORY  WRITE 12975 fe:00:10305662 0 EOF\n\
                         7: FLOCK  ADVISORY  WRITE 30781 fe:00:10215436 0 EOF\n\
                         7: -> FLOCK  ADVISORY  WRITE 10577 fe:00:777 0 EOF\n";

    #[test]
    fn a_granted_lock_counts_and_a_waiting_one_does_not() {
        let dev = 0xfe00;
        assert!(locked_in(LOCKS, dev, 10305662));
        assert!(!locked_in(LOCKS, dev, 777), "only waiting");
        assert!(!locked_in(LOCKS, dev, 10305), "a prefix of another inode");
        assert!(
            !locked_in(LOCKS, 0x801, 10305662),
            "same inode, other device"
        );
    }
}
