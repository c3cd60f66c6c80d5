//! Where the built-in agent's tools may look and write: inside the task's worktree only. A
//! path the model gives is untrusted: absolute paths, `..` and symbolic links that lead out
//! are refused with a sentence the model can act on.

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use crate::error::{Error, Result};

/// The worktree, and what a command run there gets.
#[derive(Debug, Clone)]
pub struct Workspace {
    /// The worktree, canonical.
    pub root: PathBuf,
    /// The session's own temp folder (HOME and TMPDIR of commands).
    pub tmp: PathBuf,
    /// Set in every command's environment (crash recovery finds leftovers by it).
    pub env: Vec<(String, String)>,
    /// The longest a command may run.
    pub command_limit: Duration,
    /// Where each command's control group is recorded.
    pub groups: Option<PathBuf>,
    /// Whom a command asks first, when the project's approvals say it must.
    pub asking: Option<super::command::Asking>,
}

impl Workspace {
    /// `rel` inside the worktree, for reading: it must exist and stay inside after links.
    pub fn existing(&self, rel: &str) -> Result<PathBuf> {
        let path = self.join(rel)?;
        let real = std::fs::canonicalize(&path).map_err(|_| {
            Error::InvalidInput(format!(
                "{} does not exist; list_files shows what is there",
                shown(rel)
            ))
        })?;
        if !real.starts_with(&self.root) {
            return Err(outside(rel));
        }
        Ok(real)
    }

    /// `rel` inside the worktree, for writing: its folder is created, and neither it nor a
    /// link on the way may lead outside; `.git` is never written.
    pub fn writable(&self, rel: &str) -> Result<PathBuf> {
        let path = self.join(rel)?;
        let relative = path.strip_prefix(&self.root).unwrap_or(&path);
        if relative
            .components()
            .next()
            .is_some_and(|c| c.as_os_str() == ".git")
        {
            return Err(Error::InvalidInput(
                "the .git folder is Healer's to manage; change the project's files only"
                    .to_string(),
            ));
        }
        let parent = path.parent().unwrap_or(&self.root);
        // Before any folder is made: the deepest folder that exists must be inside, or making
        // the rest would make folders through a link, outside the worktree.
        let mut existing = parent;
        while existing.symlink_metadata().is_err() {
            existing = existing.parent().unwrap_or(&self.root);
        }
        let real_existing = std::fs::canonicalize(existing)
            .map_err(|e| Error::io(format!("cannot resolve {}", shown(rel)), e))?;
        if !real_existing.starts_with(&self.root) {
            return Err(outside(rel));
        }
        std::fs::create_dir_all(parent)
            .map_err(|e| Error::io(format!("cannot create the folder of {}", shown(rel)), e))?;
        let real_parent = std::fs::canonicalize(parent)
            .map_err(|e| Error::io(format!("cannot resolve {}", shown(rel)), e))?;
        if !real_parent.starts_with(&self.root) {
            return Err(outside(rel));
        }
        if let Ok(meta) = std::fs::symlink_metadata(&path) {
            if meta.file_type().is_symlink() {
                let target = std::fs::canonicalize(&path).map_err(|_| outside(rel))?;
                if !target.starts_with(&self.root) {
                    return Err(outside(rel));
                }
            }
        }
        Ok(path)
    }

    /// `rel` joined to the worktree, lexically: relative, no `..` above the root.
    fn join(&self, rel: &str) -> Result<PathBuf> {
        let rel = rel.trim();
        let given = Path::new(rel);
        let stripped = match given.strip_prefix(&self.root) {
            Ok(inside) => inside,
            Err(_) if given.is_absolute() => return Err(outside(rel)),
            Err(_) => given,
        };
        let mut path = self.root.clone();
        for component in stripped.components() {
            match component {
                Component::Normal(part) => path.push(part),
                Component::CurDir => {}
                Component::ParentDir => {
                    if path == self.root || !path.pop() {
                        return Err(outside(rel));
                    }
                }
                Component::RootDir | Component::Prefix(_) => return Err(outside(rel)),
            }
        }
        Ok(path)
    }

    /// A path as the model should see it: relative to the worktree.
    pub fn relative(&self, path: &Path) -> String {
        let rel = path.strip_prefix(&self.root).unwrap_or(path);
        let text = rel.display().to_string();
        if text.is_empty() {
            ".".to_string()
        } else {
            text
        }
    }
}

fn shown(rel: &str) -> String {
    if rel.trim().is_empty() {
        "the worktree".to_string()
    } else {
        rel.trim().to_string()
    }
}

fn outside(rel: &str) -> Error {
    Error::InvalidInput(format!(
        "{} is outside the task's worktree; use paths relative to it",
        shown(rel)
    ))
}
