//! The scratch directory of one sandboxed run: a fresh, uniquely named folder under the
//! scratch root holding `work/` (the copy of the workflow's folder, the working directory),
//! `home/` and `tmp/`. It is removed when dropped, whatever happened.

use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use crate::error::{Error, Result};

/// The most the copy of the workflow's folder may hold.
pub const COPY_CAP_BYTES: u64 = 50 * 1024 * 1024;
/// The most files and folders the copy may hold.
pub const COPY_CAP_ENTRIES: usize = 20_000;

/// Folders of the workflow's own environment, left out of the copy.
const ENVIRONMENT_DIRS: [&str; 2] = [crate::deps::VENV_DIR, crate::deps::NODE_MODULES_DIR];

/// A scratch directory; removed on drop.
#[derive(Debug)]
pub struct Scratch {
    /// The run's own directory: the only place the child may write.
    pub root: PathBuf,
    /// `root/work`: the copy of the workflow's folder and the child's working directory.
    pub work: PathBuf,
    pub home: PathBuf,
    pub tmp: PathBuf,
    /// The directory's unique name, also used to mark the run's processes.
    pub name: String,
}

impl Scratch {
    /// Create a fresh scratch directory inside `scratch_root` (created if missing).
    pub fn create(scratch_root: &Path) -> Result<Scratch> {
        fs::create_dir_all(scratch_root).map_err(|e| {
            Error::io(
                format!(
                    "cannot create the sandbox folder {}",
                    scratch_root.display()
                ),
                e,
            )
        })?;
        let mut last_error = None;
        for _ in 0..8 {
            let name = format!(
                "sandbox-{}-{:016x}",
                std::process::id(),
                rand::random::<u64>()
            );
            let root = scratch_root.join(&name);
            match fs::create_dir(&root) {
                Ok(()) => {
                    // From here on, dropping it removes the directory.
                    let scratch = Scratch {
                        work: root.join("work"),
                        home: root.join("home"),
                        tmp: root.join("tmp"),
                        root,
                        name,
                    };
                    let context = || format!("cannot prepare {}", scratch.root.display());
                    fs::set_permissions(&scratch.root, fs::Permissions::from_mode(0o700))
                        .map_err(|e| Error::io(context(), e))?;
                    for dir in [&scratch.work, &scratch.home, &scratch.tmp] {
                        fs::create_dir(dir).map_err(|e| Error::io(context(), e))?;
                    }
                    return Ok(scratch);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last_error = Some(e),
                Err(e) => {
                    return Err(Error::io(
                        format!(
                            "cannot create a scratch folder in {}",
                            scratch_root.display()
                        ),
                        e,
                    ))
                }
            }
        }
        Err(Error::io(
            "cannot find a free scratch folder name",
            last_error.unwrap_or_else(|| io::Error::other("name collisions")),
        ))
    }

    /// Write `code` as `work/<entry>`, creating its parent folders.
    pub fn write_entry(&self, entry: &str, code: &str) -> Result<PathBuf> {
        let path = self.work.join(checked_entry(entry)?);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)
                .map_err(|e| Error::io(format!("cannot create {}", parent.display()), e))?;
        }
        fs::write(&path, code)
            .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))?;
        Ok(path)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Err(e) = remove_tree(&self.root) {
            tracing::warn!(
                "could not remove the sandbox folder {}: {e}",
                self.root.display()
            );
        }
    }
}

/// The entry as a relative path that stays inside the scratch copy.
pub fn checked_entry(entry: &str) -> Result<&Path> {
    let path = Path::new(entry);
    let plain = !entry.is_empty()
        && path
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if plain {
        Ok(path)
    } else {
        Err(Error::InvalidInput(format!(
            "the entry file name {entry:?} must be a relative path inside the workflow's folder"
        )))
    }
}

/// Remove a directory tree, also when the child took away its own permissions on parts of it.
pub fn remove_tree(root: &Path) -> io::Result<()> {
    match fs::remove_dir_all(root) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(_) => {}
    }
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let _ = fs::set_permissions(&dir, fs::Permissions::from_mode(0o700));
        if let Ok(entries) = fs::read_dir(&dir) {
            for entry in entries.flatten() {
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    stack.push(entry.path());
                }
            }
        }
    }
    fs::remove_dir_all(root)
}

/// Copy the workflow's folder into `dst`, at most [`COPY_CAP_BYTES`]. A missing folder copies
/// nothing. The workflow's own environment (its venv, its node_modules) is not copied: the
/// sandbox reaches it where it is (see [`crate::deps::run_environment`]). Symbolic links are not followed out of the folder: a link to a file inside it is
/// copied as that file, any other link (to a folder, outside, dangling) is skipped, as are
/// sockets, pipes and devices.
pub fn copy_tree(src: &Path, dst: &Path) -> Result<()> {
    let root = match fs::canonicalize(src) {
        Ok(root) => root,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(format!("cannot read {}", src.display()), e)),
    };
    if !root.is_dir() {
        return Err(Error::InvalidInput(format!(
            "the workflow folder {} is not a folder",
            src.display()
        )));
    }
    let mut budget = Budget::default();
    let mut stack = vec![(root.clone(), dst.to_path_buf())];
    while let Some((from_dir, to_dir)) = stack.pop() {
        let entries = fs::read_dir(&from_dir)
            .map_err(|e| Error::io(format!("cannot read {}", from_dir.display()), e))?;
        for entry in entries {
            let entry =
                entry.map_err(|e| Error::io(format!("cannot read {}", from_dir.display()), e))?;
            let from = entry.path();
            let name = entry.file_name();
            if from_dir == root && ENVIRONMENT_DIRS.iter().any(|d| name == *d) {
                continue;
            }
            let to = to_dir.join(&name);
            let meta = fs::symlink_metadata(&from)
                .map_err(|e| Error::io(format!("cannot read {}", from.display()), e))?;
            let kind = meta.file_type();
            if kind.is_dir() {
                budget.take(src, 0)?;
                fs::create_dir(&to)
                    .map_err(|e| Error::io(format!("cannot create {}", to.display()), e))?;
                stack.push((from, to));
            } else if kind.is_file() {
                budget.take(src, meta.len())?;
                copy_file(&from, &to)?;
            } else if kind.is_symlink() {
                let Ok(target) = fs::canonicalize(&from) else {
                    continue;
                };
                if target.starts_with(&root) && target.is_file() {
                    let len = fs::metadata(&target).map(|m| m.len()).unwrap_or(0);
                    budget.take(src, len)?;
                    copy_file(&target, &to)?;
                }
            }
        }
    }
    Ok(())
}

fn copy_file(from: &Path, to: &Path) -> Result<()> {
    fs::copy(from, to)
        .map(|_| ())
        .map_err(|e| Error::io(format!("cannot copy {}", from.display()), e))
}

#[derive(Default)]
struct Budget {
    bytes: u64,
    entries: usize,
}

impl Budget {
    fn take(&mut self, src: &Path, bytes: u64) -> Result<()> {
        self.bytes = self.bytes.saturating_add(bytes);
        self.entries += 1;
        if self.bytes > COPY_CAP_BYTES || self.entries > COPY_CAP_ENTRIES {
            return Err(Error::InvalidInput(format!(
                "the workflow folder {} is too big to copy into the sandbox (at most {} MB in {} files and folders): move large data out of it",
                src.display(),
                COPY_CAP_BYTES / (1024 * 1024),
                COPY_CAP_ENTRIES
            )));
        }
        Ok(())
    }
}
