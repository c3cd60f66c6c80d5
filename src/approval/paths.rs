//! Where a path a command names lies: in the task's working copy, in its scratch folders, in
//! the system's program folders, or somewhere else of the person's. A link in the working copy
//! is followed to where it really goes (a repository may hold links to anywhere).

use std::path::{Component, Path, PathBuf};

use super::shell::Word;

/// Where a session's commands run, and what is theirs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Place {
    /// The task's working copy (the worktree), as it really is (no link in it).
    pub worktree: PathBuf,
    /// The session's own temp folder.
    pub tmp: PathBuf,
    /// The person's home folder, for `~`.
    pub home: Option<PathBuf>,
    /// The project's check commands and its init script: they run without asking under the
    /// default preset.
    pub checks: Vec<String>,
}

/// Where a path lies, as far as asking first goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Where {
    /// In the working copy.
    Inside,
    /// In the working copy, but git's or Healer's own (`.git`, `.healer`).
    Protected,
    /// A scratch place: the session's temp folder, /dev/null and the like.
    Scratch,
    /// The system's program and settings folders (reading them is harmless).
    System,
    /// Anywhere else: the person's own files.
    Outside,
    /// Only known when the command runs (`$HOME/x`, `*.txt` outside, a folder after `cd $X`).
    Unknown,
}

/// Places anyone may write to without harm. Not /tmp: the session has a temp folder of its
/// own, and what is left in /tmp is other programs' to find.
const SCRATCH: &[&str] = &["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/fd"];
const SYSTEM: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/opt",
    "/etc",
    "/proc/cpuinfo",
    "/proc/meminfo",
];

impl Place {
    /// Where `word` lies when a command runs in `cwd` (`None`: a folder Healer cannot tell).
    pub fn locate(&self, cwd: Option<&Path>, word: &Word) -> Where {
        let text = word.text.as_str();
        if word.unknown {
            return Where::Unknown;
        }
        let path = if word.tilde {
            // `~` and `~/…` are the home folder; `~name` is someone else's.
            match (
                text.strip_prefix("~/").or((text == "~").then_some("")),
                &self.home,
            ) {
                (Some(rest), Some(home)) => home.join(rest),
                (Some(_), None) => return Where::Unknown,
                (None, _) => return Where::Outside,
            }
        } else if word.glob {
            // A glob inside a known folder stays there (`src/*.py`), unless it climbs out.
            let before: String = text
                .chars()
                .take_while(|c| !matches!(c, '*' | '?' | '['))
                .collect();
            if text[before.len()..].contains("..") || before.is_empty() && cwd.is_none() {
                return Where::Unknown;
            }
            let dir = match before.rfind('/') {
                Some(at) => &before[..at.max(1)],
                None => ".",
            };
            return self.locate(cwd, &Word::plain(dir));
        } else if Path::new(text).is_absolute() {
            PathBuf::from(text)
        } else {
            match cwd {
                Some(cwd) => cwd.join(text),
                None => return Where::Unknown,
            }
        };
        self.classify(&really(&lexical(&path)))
    }

    fn classify(&self, path: &Path) -> Where {
        if let Ok(rest) = path.strip_prefix(&self.worktree) {
            let top = rest.components().next().and_then(|c| match c {
                Component::Normal(name) => name.to_str(),
                _ => None,
            });
            return match top {
                Some(".git") | Some(".healer") => Where::Protected,
                _ => Where::Inside,
            };
        }
        if !self.tmp.as_os_str().is_empty() && path.starts_with(really(&lexical(&self.tmp))) {
            return Where::Scratch;
        }
        if SCRATCH.iter().any(|s| path.starts_with(s)) {
            return Where::Scratch;
        }
        if SYSTEM.iter().any(|s| path.starts_with(s)) {
            return Where::System;
        }
        Where::Outside
    }
}

/// `a/./b/../c` → `a/c`, without looking at the disk.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Where a path really goes: its longest part that exists, with its links followed, and the
/// rest as written.
fn really(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(&existing) {
            let mut out = real;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (
            existing.file_name().map(|n| n.to_os_string()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(text: &str) -> Word {
        super::super::shell::read(&format!("ls {text}")).commands[0].words[1].clone()
    }

    #[test]
    fn paths_are_placed_by_where_they_really_go() {
        let dir = tempfile::tempdir().expect("dir");
        let worktree = std::fs::canonicalize(dir.path()).expect("real");
        std::fs::create_dir(worktree.join("src")).expect("src");
        let outside = tempfile::tempdir_in(std::env::current_dir().expect("cwd")).expect("out");
        std::os::unix::fs::symlink(outside.path(), worktree.join("link")).expect("link");
        let place = Place {
            worktree: worktree.clone(),
            tmp: worktree.join("../session-tmp"),
            home: Some(PathBuf::from("/home/ada")),
            checks: vec![],
        };
        let here = Some(worktree.as_path());
        assert_eq!(place.locate(here, &word("src/a.py")), Where::Inside);
        assert_eq!(place.locate(here, &word("new/file.txt")), Where::Inside);
        assert_eq!(place.locate(here, &word("src/*.py")), Where::Inside);
        assert_eq!(place.locate(here, &word("../elsewhere")), Where::Outside);
        assert_eq!(place.locate(here, &word("link/secret")), Where::Outside);
        assert_eq!(place.locate(here, &word(".git/config")), Where::Protected);
        assert_eq!(
            place.locate(here, &word(".healer/tasks.jsonl")),
            Where::Protected
        );
        assert_eq!(place.locate(here, &word("~/.ssh/id_rsa")), Where::Outside);
        assert_eq!(place.locate(here, &word("~ada/.ssh")), Where::Outside);
        assert_eq!(place.locate(here, &word("src*/../..")), Where::Unknown);
        assert_eq!(place.locate(here, &word("{/home/ada,}")), Where::Unknown);
        assert_eq!(place.locate(here, &word("$HOME/x")), Where::Unknown);
        assert_eq!(place.locate(here, &word("/dev/null")), Where::Scratch);
        assert_eq!(place.locate(here, &word("/tmp/x")), Where::Outside);
        assert_eq!(
            place.locate(here, &word("../session-tmp/x")),
            Where::Scratch
        );
        assert_eq!(
            place.locate(here, &word("/usr/lib/os-release")),
            Where::System
        );
        assert_eq!(place.locate(None, &word("relative")), Where::Unknown);
    }
}
