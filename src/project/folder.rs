//! Opening a task's folder without trusting what is written in it.
//!
//! A worktree's `.git` is a one-line file naming where git keeps the worktree's own state
//! (`<repository>/.git/worktrees/<name>`), and libgit2 follows whatever that line says. The
//! agent and the project's checks can write anywhere in the worktree, `.git` included, so a
//! check could point it at the person's own repository (Healer would then commit onto their
//! checked-out branch) or at a made-up one whose settings put the working files anywhere (a
//! checkout or a restore would then write outside the worktree). Every open of a folder the
//! agent could write goes through [`open_folder`], which accepts only what git itself would
//! have written: a regular `.git` file naming a worktree entry of a repository outside the
//! folder that names this folder back, or a repository self-contained in the folder; and in
//! both cases working files exactly in the folder.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, RwLock};

use git2::Repository;

use super::repo::git_error;
use crate::error::{Error, Result};

/// The git folders of the person's projects (canonical): the only repositories a folder Healer
/// opens may belong to. A folder whose files the agent controls cannot name another one, nor
/// make one up (with `refs` or `objects` linked to the person's).
static TRUSTED: LazyLock<RwLock<HashSet<PathBuf>>> = LazyLock::new(Default::default);

/// Healer works in the repository at `repo` (a project's checkout, or one Healer made): folders
/// of it may be opened.
pub fn trust_repository(repo: &Path) {
    let Ok(opened) = Repository::open(repo) else {
        return;
    };
    if let Ok(common) = std::fs::canonicalize(opened.commondir()) {
        if let Ok(mut trusted) = TRUSTED.write() {
            trusted.insert(common);
        }
    }
}

/// The repository of the folder at `folder` (a task's worktree, a review copy, or any
/// checkout), refused with a sentence when its `.git` points somewhere git would not have put
/// it, or to a repository that is not one of the person's projects.
pub fn open_folder(folder: &Path) -> Result<Repository> {
    let root = real(folder)?;
    let dot_git = root.join(".git");
    let meta = std::fs::symlink_metadata(&dot_git)
        .map_err(|e| Error::io(format!("cannot read {}", dot_git.display()), e))?;
    let expected_git_dir = if meta.file_type().is_symlink() {
        return Err(refused(folder, "its .git is a link"));
    } else if meta.is_dir() {
        dot_git.clone()
    } else if meta.is_file() {
        worktree_entry(folder, &root, &dot_git)?
    } else {
        return Err(refused(folder, "its .git is neither a file nor a folder"));
    };
    let repo = Repository::open(&root).map_err(|e| git_error("cannot open the worktree", e))?;
    if real(repo.path())? != expected_git_dir {
        return Err(refused(folder, "git would keep its state somewhere else"));
    }
    let workdir = repo
        .workdir()
        .ok_or_else(|| refused(folder, "it has no working files"))?;
    if real(workdir)? != root {
        return Err(refused(
            folder,
            "its settings put the working files elsewhere",
        ));
    }
    // Whose repository it is: one of the person's projects, as the project's own checkout (its
    // git folder is the repository's) or as one of its worktrees (an entry git keeps there).
    let common = real(repo.commondir())?;
    let trusted = TRUSTED.read().is_ok_and(|t| t.contains(&common));
    if !trusted {
        return Err(refused(
            folder,
            "its git data is not a project's repository",
        ));
    }
    let own = real(repo.path())?;
    let in_common = own == common || own.parent() == Some(common.join("worktrees").as_path());
    if !in_common {
        return Err(refused(
            folder,
            "its git data is kept outside the project's repository",
        ));
    }
    Ok(repo)
}

/// The folder git keeps a linked worktree's state in, checked from the outside in: the
/// `.git` file names `<common>/worktrees/<name>`, which lies outside the folder, whose
/// `commondir` leads back to `<common>` and whose `gitdir` names this folder's `.git`.
fn worktree_entry(folder: &Path, root: &Path, dot_git: &Path) -> Result<PathBuf> {
    let line = read_small(dot_git)?;
    let named = line
        .strip_prefix("gitdir:")
        .map(str::trim)
        .filter(|rest| !rest.is_empty() && !rest.contains('\n'))
        .ok_or_else(|| refused(folder, "its .git file is not one git wrote"))?;
    let named = Path::new(named);
    let entry = real(&if named.is_absolute() {
        named.to_path_buf()
    } else {
        root.join(named)
    })?;
    if entry.starts_with(root) {
        return Err(refused(folder, "its .git names a place inside the folder"));
    }
    let common = entry
        .parent()
        .filter(|p| p.file_name().is_some_and(|n| n == "worktrees"))
        .and_then(Path::parent)
        .ok_or_else(|| refused(folder, "its .git does not name a worktree of a repository"))?
        .to_path_buf();
    let commondir = read_small(&entry.join("commondir"))?;
    let commondir = Path::new(commondir.trim());
    let leads_to = real(&if commondir.is_absolute() {
        commondir.to_path_buf()
    } else {
        entry.join(commondir)
    })?;
    if leads_to != common {
        return Err(refused(
            folder,
            "its worktree entry belongs to another repository",
        ));
    }
    let back = read_small(&entry.join("gitdir"))?;
    let back = Path::new(back.trim());
    let back = real(&if back.is_absolute() {
        back.to_path_buf()
    } else {
        entry.join(back)
    })?;
    if back != root.join(".git") {
        return Err(refused(folder, "its .git names another folder's worktree"));
    }
    Ok(entry)
}

fn real(path: &Path) -> Result<PathBuf> {
    std::fs::canonicalize(path).map_err(|e| Error::io(format!("cannot find {}", path.display()), e))
}

/// A one-line git file (git writes these; anything long is not one of them).
fn read_small(path: &Path) -> Result<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(4096).read_to_string(&mut text))
        .map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
    Ok(text.trim_end().to_string())
}

fn refused(folder: &Path, why: &str) -> Error {
    Error::InvalidInput(format!(
        "Healer will not use the git data of {}: {why}. Something in the folder changed how git finds its repository",
        folder.display()
    ))
}

#[cfg(test)]
mod tests;
