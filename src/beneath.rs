//! Files inside a folder that a repository controls (a project's checkout, a task's worktree),
//! read and written without following a symbolic link anywhere below that folder.
//!
//! A repository is untrusted input: a committed `.healer` that links to `~/.ssh`, or a
//! `tasks.jsonl` that links to `~/.bashrc`, must not make Healer read or write there. Each
//! folder below the root is opened with `O_NOFOLLOW | O_DIRECTORY` relative to the one above
//! it (`openat`), and the file itself with `O_NOFOLLOW`, so a link at any depth is refused —
//! even one that points back inside the repository, since writing through it would change a
//! file Healer did not mean to. The root itself is the person's (the folder they added, or
//! the worktree Healer made) and is opened as given.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{openat, renameat, AtFlags, OFlag};
use nix::sys::stat::{fstatat, mkdirat, Mode, SFlag};
use nix::unistd::{unlinkat, UnlinkatFlags};

/// How long a file Healer replaced is watched for writes from a program that opened it just
/// before (see [`Dir::replace_if`]).
pub const LATE_WRITE_GRACE: std::time::Duration = std::time::Duration::from_millis(250);

/// A folder inside a repository, opened without following links.
pub struct Dir {
    fd: OwnedFd,
    /// The folder's path, for messages only (never opened again by name).
    path: PathBuf,
}

/// Open the folder `rel` below `root` (`rel` empty: `root` itself); with `create`, missing
/// folders are made (0755). A link, a `..` or an absolute path in `rel` is refused.
pub fn dir(root: &Path, rel: &Path, create: bool) -> io::Result<Dir> {
    let fd = nix::fcntl::open(
        root,
        OFlag::O_DIRECTORY | OFlag::O_RDONLY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| io_error(e, root, "cannot open"))?;
    let mut here = Dir {
        fd,
        path: root.to_path_buf(),
    };
    for name in names(rel)? {
        here = here.child(name, create)?;
    }
    Ok(here)
}

/// The folder `rel` below `root` as a commit has it, for putting files back: a link or a file
/// standing where a folder belongs is removed (the link itself, never what it points to) and
/// a real folder made in its place.
pub fn restore_dir(root: &Path, rel: &Path) -> io::Result<Dir> {
    let mut here = dir(root, Path::new(""), false)?;
    for name in names(rel)? {
        here = match here.child(name, true) {
            Ok(child) => child,
            Err(e) if is_link_refusal(&e) || e.kind() == io::ErrorKind::NotADirectory => {
                here.remove(name)?;
                here.child(name, true)?
            }
            Err(e) => return Err(e),
        };
    }
    Ok(here)
}

/// The folder holding the file `rel` below `root`, and the file's name in it.
pub fn parent<'a>(root: &Path, rel: &'a Path, create: bool) -> io::Result<(Dir, &'a OsStr)> {
    let name = rel
        .file_name()
        .ok_or_else(|| invalid(format!("{} names no file", rel.display())))?;
    let folder = rel.parent().unwrap_or_else(|| Path::new(""));
    Ok((dir(root, folder, create)?, name))
}

/// The bytes of the file `rel` below `root`; `None` when it does not exist.
pub fn read(root: &Path, rel: &Path) -> io::Result<Option<Vec<u8>>> {
    let (folder, name) = match parent(root, rel, false) {
        Ok(found) => found,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    folder.read(name)
}

impl Dir {
    /// The folder's path, as given (for messages).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The folder `name` inside this one, never through a link.
    pub fn child(&self, name: &OsStr, create: bool) -> io::Result<Dir> {
        let path = self.path.join(name);
        let flags = OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_RDONLY | OFlag::O_CLOEXEC;
        let fd = match openat(&self.fd, name, flags, Mode::empty()) {
            Err(Errno::ENOENT) if create => {
                match mkdirat(&self.fd, name, Mode::from_bits_truncate(0o755)) {
                    Ok(()) | Err(Errno::EEXIST) => {}
                    Err(e) => return Err(io_error(e, &path, "cannot create")),
                }
                openat(&self.fd, name, flags, Mode::empty())
            }
            other => other,
        }
        .map_err(|e| self.refusal(e, name, "cannot open"))?;
        Ok(Dir { fd, path })
    }

    /// Open the file `name` in this folder with `flags` (`O_NOFOLLOW` and `O_CLOEXEC` added).
    pub fn open(&self, name: &OsStr, flags: OFlag, mode: u32) -> io::Result<File> {
        let flags = flags | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let fd = openat(&self.fd, name, flags, Mode::from_bits_truncate(mode))
            .map_err(|e| self.refusal(e, name, "cannot open"))?;
        let file = File::from(fd);
        // O_NOFOLLOW refuses a link; a FIFO or a device would block or never end.
        if !file.metadata()?.is_file() {
            return Err(invalid(format!(
                "{} is not a regular file",
                self.path.join(name).display()
            )));
        }
        Ok(file)
    }

    /// The bytes of `name`; `None` when it does not exist.
    pub fn read(&self, name: &OsStr) -> io::Result<Option<Vec<u8>>> {
        let mut file = match self.open(name, OFlag::O_RDONLY | OFlag::O_NONBLOCK, 0) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        Ok(Some(bytes))
    }

    /// Replace `name` with `bytes` so that a reader sees the old file or the new one: a new
    /// temporary file (`O_EXCL`), synced, renamed over it. A link named `name` is refused,
    /// not replaced.
    pub fn replace(&self, name: &OsStr, bytes: &[u8]) -> io::Result<()> {
        if self.is_link(name)? {
            return Err(self.link_refused(name));
        }
        let temp = self.write_temp(name, bytes)?;
        let temp = OsStr::new(&temp);
        if let Err(e) = self.rename(temp, name) {
            let _ = unlinkat(&self.fd, temp, UnlinkatFlags::NoRemoveDir);
            return Err(e);
        }
        // The rename is durable once the folder is; losing it in a crash leaves the old file.
        let _ = nix::unistd::fsync(&self.fd);
        Ok(())
    }

    /// Put `bytes` at `name` only if what stands there at that instant is `expected` (`None`:
    /// nothing) — a file another program may change at any moment (a person's editor saving
    /// by rename, a shell appending lines). Ours is swapped in atomically (`renameat2` with
    /// `RENAME_EXCHANGE`) and what it displaced is looked at: the same as `expected` → it is
    /// removed and `true` returned; `expected` with lines appended → those lines are appended
    /// to ours, `true`; anything else (an edit made meanwhile) → it is swapped back, lines appended to ours in that instant are appended to it, and `false` tells the
    /// caller to read again. Where the file system cannot exchange, the file is compared just
    /// before a plain rename.
    pub fn replace_if(
        &self,
        name: &OsStr,
        bytes: &[u8],
        expected: Option<&[u8]>,
    ) -> io::Result<bool> {
        if self.is_link(name)? {
            return Err(self.link_refused(name));
        }
        let temp = self.write_temp(name, bytes)?;
        let temp = OsStr::new(&temp);
        let outcome = self.swap_in(temp, name, bytes, expected);
        let _ = unlinkat(&self.fd, temp, UnlinkatFlags::NoRemoveDir);
        if outcome.as_ref().is_ok_and(|done| *done) {
            let _ = nix::unistd::fsync(&self.fd);
        }
        outcome
    }

    fn swap_in(
        &self,
        temp: &OsStr,
        name: &OsStr,
        bytes: &[u8],
        expected: Option<&[u8]>,
    ) -> io::Result<bool> {
        let path = self.path.join(name);
        let Some(expected) = expected else {
            // Nothing was there: ours goes in only if nothing is there still.
            return match renameat_noreplace(&self.fd, temp, name) {
                Ok(()) => Ok(true),
                Err(Errno::EEXIST) => Ok(false),
                Err(Errno::EINVAL | Errno::ENOSYS) if !self.exists(name)? => {
                    self.rename(temp, name).map(|()| true)
                }
                Err(Errno::EINVAL | Errno::ENOSYS) => Ok(false),
                Err(e) => Err(io_error(e, &path, "cannot write")),
            };
        };
        match exchange(&self.fd, temp, name) {
            Ok(()) => {}
            Err(Errno::ENOENT) => return Ok(false),
            Err(Errno::EINVAL | Errno::ENOSYS) => {
                // No exchange here: compare, then rename (a change in between is lost).
                let now = self.read(name)?;
                if now.as_deref() != Some(expected) {
                    return Ok(false);
                }
                return self.rename(temp, name).map(|()| true);
            }
            Err(e) => return Err(io_error(e, &path, "cannot replace")),
        }
        // `temp` now names what stood at `name` a moment ago.
        let displaced = self.read_open(temp);
        if let Ok((old, file)) = &displaced {
            if let Some(appended) = old.strip_prefix(expected) {
                // Only lines added at the end meanwhile (a shell's `>>`): they go after ours.
                if !appended.is_empty() {
                    self.append(name, appended)?;
                }
                self.carry_late_writes(file, old.len() as u64, name);
                return Ok(true);
            }
        }
        // Changed meanwhile: put it back, with whatever was appended to ours in between.
        exchange(&self.fd, temp, name).map_err(|e| io_error(e, &path, "cannot restore"))?;
        let ours = self.read(temp)?.unwrap_or_default();
        if let Some(appended) = ours.strip_prefix(bytes).filter(|rest| !rest.is_empty()) {
            self.append(name, appended)?;
        }
        displaced.map(|_| false)
    }

    /// The bytes of `name`, and the file left open.
    fn read_open(&self, name: &OsStr) -> io::Result<(Vec<u8>, File)> {
        let mut file = self.open(name, OFlag::O_RDONLY | OFlag::O_NONBLOCK, 0)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        Ok((bytes, file))
    }

    /// A program that opened the file just before it was replaced (`>>` opens, then writes)
    /// may write into the old one a moment after it was looked at: what arrives there within
    /// [`LATE_WRITE_GRACE`] is appended to the new file (through the folder, as any append).
    fn carry_late_writes(&self, old: &File, seen: u64, name: &OsStr) {
        let (Ok(old), Ok(fd)) = (old.try_clone(), self.fd.try_clone()) else {
            return;
        };
        let folder = Dir {
            fd,
            path: self.path.clone(),
        };
        let name = name.to_os_string();
        let spawned = std::thread::Builder::new()
            .name("late writes".to_string())
            .spawn(move || {
                std::thread::sleep(LATE_WRITE_GRACE);
                let mut late = Vec::new();
                let mut reader = &old;
                let read = std::io::Seek::seek(&mut reader, std::io::SeekFrom::Start(seen))
                    .and_then(|_| reader.read_to_end(&mut late));
                if read.is_ok() && !late.is_empty() {
                    if let Err(e) = folder.append(&name, &late) {
                        tracing::warn!(
                            "lines written late to the old {} were not carried over: {e}",
                            folder.path.join(&name).display()
                        );
                    }
                }
            });
        if let Err(e) = spawned {
            tracing::warn!("no watch for late writes: {e}");
        }
    }

    fn rename(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
        renameat(&self.fd, from, &self.fd, to)
            .map_err(|e| io_error(e, &self.path.join(to), "cannot replace"))
    }

    /// A new temporary file beside `name` holding `bytes`, synced; its name.
    fn write_temp(&self, name: &OsStr, bytes: &[u8]) -> io::Result<String> {
        let temp = format!(
            ".{}.{}-{:08x}.tmp",
            name.to_string_lossy(),
            std::process::id(),
            rand::random::<u32>()
        );
        let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL;
        let written = (|| -> io::Result<()> {
            let mut file = self.open(OsStr::new(&temp), flags, 0o644)?;
            file.write_all(bytes)?;
            file.sync_all()
        })();
        if let Err(e) = written {
            let _ = unlinkat(&self.fd, temp.as_str(), UnlinkatFlags::NoRemoveDir);
            return Err(e);
        }
        Ok(temp)
    }

    /// Append `bytes` to `name` (made when missing); whether it was new.
    pub fn append(&self, name: &OsStr, bytes: &[u8]) -> io::Result<bool> {
        let new = !self.exists(name)?;
        let flags = OFlag::O_WRONLY | OFlag::O_APPEND | OFlag::O_CREAT;
        let mut file = self.open(name, flags, 0o644)?;
        file.write_all(bytes)?;
        Ok(new)
    }

    /// Whether `name` exists here (a link counts as existing; it is not followed).
    pub fn exists(&self, name: &OsStr) -> io::Result<bool> {
        match fstatat(&self.fd, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(_) => Ok(true),
            Err(Errno::ENOENT) => Ok(false),
            Err(e) => Err(io_error(e, &self.path.join(name), "cannot look at")),
        }
    }

    /// Whether `name` here is a symbolic link.
    pub fn is_link(&self, name: &OsStr) -> io::Result<bool> {
        match fstatat(&self.fd, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(stat) => {
                Ok(SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT == SFlag::S_IFLNK)
            }
            Err(Errno::ENOENT) => Ok(false),
            Err(e) => Err(io_error(e, &self.path.join(name), "cannot look at")),
        }
    }

    /// Remove the file `name` here (a link is removed itself, never what it points to).
    pub fn remove(&self, name: &OsStr) -> io::Result<()> {
        match unlinkat(&self.fd, name, UnlinkatFlags::NoRemoveDir) {
            Ok(()) | Err(Errno::ENOENT) => Ok(()),
            Err(e) => Err(io_error(e, &self.path.join(name), "cannot remove")),
        }
    }

    /// The error for a failed open of `name`: a link found where a file or folder was
    /// expected is said as such.
    fn refusal(&self, errno: Errno, name: &OsStr, what: &str) -> io::Error {
        let link = matches!(errno, Errno::ELOOP | Errno::ENOTDIR | Errno::EMLINK)
            && self.is_link(name).unwrap_or(false);
        if link {
            self.link_refused(name)
        } else {
            io_error(errno, &self.path.join(name), what)
        }
    }

    fn link_refused(&self, name: &OsStr) -> io::Error {
        io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} is a symbolic link, and Healer does not read or write through links in \
                 a repository: replace it with a real file or folder.",
                self.path.join(name).display()
            ),
        )
    }
}

/// Swap two names in one folder atomically (Linux's `renameat2`); `EINVAL` where the file
/// system or the C library cannot.
fn exchange(dir: &OwnedFd, a: &OsStr, b: &OsStr) -> nix::Result<()> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        nix::fcntl::renameat2(dir, a, dir, b, nix::fcntl::RenameFlags::RENAME_EXCHANGE)
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        let _ = (dir, a, b);
        Err(Errno::EINVAL)
    }
}

/// Rename `from` to `to` unless `to` exists (`EEXIST`); `EINVAL` where this cannot be asked.
fn renameat_noreplace(dir: &OwnedFd, from: &OsStr, to: &OsStr) -> nix::Result<()> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        nix::fcntl::renameat2(
            dir,
            from,
            dir,
            to,
            nix::fcntl::RenameFlags::RENAME_NOREPLACE,
        )
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        let _ = (dir, from, to);
        Err(Errno::EINVAL)
    }
}

/// The plain names of `rel`, in order; `..`, `/` and prefixes refused.
fn names(rel: &Path) -> io::Result<Vec<&OsStr>> {
    rel.components()
        .filter(|c| !matches!(c, Component::CurDir))
        .map(|c| match c {
            Component::Normal(name) => Ok(name),
            _ => Err(invalid(format!(
                "{} is not a path inside the repository",
                rel.display()
            ))),
        })
        .collect()
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

fn io_error(errno: Errno, path: &Path, what: &str) -> io::Error {
    let e = io::Error::from(errno);
    io::Error::new(e.kind(), format!("{what} {}: {e}", path.display()))
}

/// Whether `error` is the refusal of a link (for callers that tell a person).
pub fn is_link_refusal(error: &io::Error) -> bool {
    error.kind() == io::ErrorKind::PermissionDenied
        && error.to_string().contains("is a symbolic link")
}

/// The engine's error for `error`, met while doing `context` ("cannot write …"): a refused
/// link is the person's to mend and says so on its own; anything else keeps its context.
pub fn engine_error(context: String, error: io::Error) -> crate::error::Error {
    if is_link_refusal(&error) {
        crate::error::Error::InvalidInput(error.to_string())
    } else {
        crate::error::Error::io(context, error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    struct Bed {
        _tmp: tempfile::TempDir,
        root: PathBuf,
        outside: PathBuf,
    }

    fn bed() -> Bed {
        let tmp = tempfile::tempdir().expect("test setup");
        let root = tmp.path().join("repo");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(&root).expect("test setup");
        std::fs::create_dir_all(&outside).expect("test setup");
        std::fs::write(outside.join("secret"), "outside\n").expect("test setup");
        Bed {
            _tmp: tmp,
            root,
            outside,
        }
    }

    fn outside_untouched(bed: &Bed) {
        let names: Vec<_> = std::fs::read_dir(&bed.outside)
            .expect("outside")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, vec![OsStr::new("secret")], "nothing new outside");
        assert_eq!(
            std::fs::read_to_string(bed.outside.join("secret")).expect("secret"),
            "outside\n"
        );
    }

    /// The file `rel` below `root` replaced with `bytes` (folders made as needed).
    fn write(root: &Path, rel: &Path, bytes: &[u8]) -> io::Result<()> {
        let (folder, name) = parent(root, rel, true)?;
        folder.replace(name, bytes)
    }

    /// `bytes` appended to the file `rel` below `root`; whether it was new.
    fn append(root: &Path, rel: &Path, bytes: &[u8]) -> io::Result<bool> {
        let (folder, name) = parent(root, rel, true)?;
        folder.append(name, bytes)
    }

    #[test]
    fn files_and_folders_are_written_and_read_inside() {
        let bed = bed();
        write(&bed.root, Path::new(".healer/tasks.jsonl"), b"one\n").expect("write");
        assert!(!append(&bed.root, Path::new(".healer/tasks.jsonl"), b"two\n").expect("append"));
        assert_eq!(
            read(&bed.root, Path::new(".healer/tasks.jsonl")).expect("read"),
            Some(b"one\ntwo\n".to_vec())
        );
        assert_eq!(read(&bed.root, Path::new("none/here")).expect("read"), None);
        assert!(append(&bed.root, Path::new("a/b/new.md"), b"x").expect("append"));
    }

    #[test]
    fn a_linked_folder_is_refused_at_any_depth() {
        let bed = bed();
        symlink(&bed.outside, bed.root.join(".healer")).expect("test setup");
        std::fs::create_dir_all(bed.root.join("a")).expect("test setup");
        symlink(&bed.outside, bed.root.join("a/b")).expect("test setup");
        for rel in [".healer/tasks.jsonl", "a/b/c.txt", "a/b/c/d.txt"] {
            let e = write(&bed.root, Path::new(rel), b"x").expect_err(rel);
            assert!(is_link_refusal(&e), "{rel}: {e}");
            let e = append(&bed.root, Path::new(rel), b"x").expect_err(rel);
            assert!(is_link_refusal(&e), "{rel}: {e}");
        }
        let e = read(&bed.root, Path::new(".healer/secret")).expect_err("read");
        assert!(is_link_refusal(&e), "{e}");
        outside_untouched(&bed);
    }

    #[test]
    fn a_linked_file_is_refused_not_replaced_and_not_followed() {
        let bed = bed();
        std::fs::create_dir_all(bed.root.join(".claude")).expect("test setup");
        let link = bed.root.join(".claude/settings.local.json");
        symlink(bed.outside.join("secret"), &link).expect("test setup");
        // A link to a file that does not exist yet: O_CREAT would make it outside.
        let dangling = bed.root.join(".claude/new.json");
        symlink(bed.outside.join("made"), &dangling).expect("test setup");
        // A link that stays inside the repository still changes a file Healer did not name.
        std::fs::write(bed.root.join("main.py"), "print(1)\n").expect("test setup");
        symlink("../main.py", bed.root.join(".claude/inside.json")).expect("test setup");
        for rel in [
            ".claude/settings.local.json",
            ".claude/new.json",
            ".claude/inside.json",
        ] {
            let rel = Path::new(rel);
            assert!(is_link_refusal(
                &write(&bed.root, rel, b"{}").expect_err("write")
            ));
            assert!(is_link_refusal(
                &append(&bed.root, rel, b"{}").expect_err("append")
            ));
            assert!(is_link_refusal(&read(&bed.root, rel).expect_err("read")));
        }
        assert!(std::fs::symlink_metadata(&link)
            .expect("still there")
            .file_type()
            .is_symlink());
        assert_eq!(
            std::fs::read_to_string(bed.root.join("main.py")).expect("main"),
            "print(1)\n"
        );
        outside_untouched(&bed);
    }

    #[test]
    fn a_restore_replaces_a_link_or_a_file_where_a_folder_belongs() {
        let bed = bed();
        symlink(&bed.outside, bed.root.join("src")).expect("test setup");
        std::fs::write(bed.root.join("lib"), "a file").expect("test setup");
        let src = restore_dir(&bed.root, Path::new("src/deep")).expect("restored");
        src.replace(OsStr::new("a.py"), b"print(1)\n")
            .expect("write");
        restore_dir(&bed.root, Path::new("lib")).expect("restored");
        assert!(bed.root.join("src/deep/a.py").is_file());
        assert!(!std::fs::symlink_metadata(bed.root.join("src"))
            .expect("src")
            .file_type()
            .is_symlink());
        assert!(bed.root.join("lib").is_dir());
        outside_untouched(&bed);
    }

    #[test]
    fn a_conditional_replace_writes_only_over_what_was_read() {
        let bed = bed();
        let dir = dir(&bed.root, Path::new(".healer"), true).expect("dir");
        let name = OsStr::new("tasks.jsonl");
        assert!(dir.replace_if(name, b"a\n", None).expect("new"));
        assert!(!dir
            .replace_if(name, b"b\n", None)
            .expect("not new any more"));
        assert!(!dir
            .replace_if(name, b"b\n", Some(b"something else\n"))
            .expect("changed"));
        assert_eq!(dir.read(name).expect("read"), Some(b"a\n".to_vec()));
        assert!(dir.replace_if(name, b"b\n", Some(b"a\n")).expect("same"));
        assert_eq!(dir.read(name).expect("read"), Some(b"b\n".to_vec()));
        // Read "b", a line appended since: the line goes after the new content.
        std::fs::OpenOptions::new()
            .append(true)
            .open(bed.root.join(".healer/tasks.jsonl"))
            .and_then(|mut f| std::io::Write::write_all(&mut f, b"appended\n"))
            .expect("test setup");
        assert!(dir
            .replace_if(name, b"c\n", Some(b"b\n"))
            .expect("appended"));
        assert_eq!(
            dir.read(name).expect("read"),
            Some(b"c\nappended\n".to_vec())
        );
        let left: Vec<_> = std::fs::read_dir(bed.root.join(".healer"))
            .expect("dir")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(left, vec![OsStr::new("tasks.jsonl")], "no temp file left");
    }

    #[test]
    fn a_path_that_climbs_out_is_refused() {
        let bed = bed();
        for rel in ["../outside/secret", "/etc/passwd", "a/../../outside/x"] {
            let e = write(&bed.root, Path::new(rel), b"x").expect_err(rel);
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{rel}: {e}");
        }
        outside_untouched(&bed);
    }

    #[test]
    fn a_fifo_is_not_read() {
        let bed = bed();
        nix::unistd::mkfifo(&bed.root.join("pipe"), Mode::from_bits_truncate(0o644))
            .expect("test setup");
        let e = read(&bed.root, Path::new("pipe")).expect_err("a fifo");
        assert!(e.to_string().contains("not a regular file"), "{e}");
    }
}
