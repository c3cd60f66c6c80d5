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

    /// Whether an engine holds the lease right now. Looking takes the lock for an instant and
    /// leaves the holder's note as it was.
    pub fn is_held(paths: &Paths) -> Result<bool> {
        Ok(try_lock(paths)?.is_none())
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
        .map_err(|e| Error::DataDir {
            path: path.clone(),
            detail: e.to_string(),
        })?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => return Ok(None),
        Err(TryLockError::Error(e)) => {
            return Err(Error::io(format!("cannot lock {}", path.display()), e))
        }
    }
    Ok(Some(file))
}
