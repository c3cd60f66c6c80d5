//! What a folder is, as a project: a repository with a working tree (good), none at all (offer
//! to make one), a bare repository, a folder inside a repository, one with no commit yet, a
//! detached HEAD, uncommitted changes — each said plainly. git2, no git binary.

use std::path::{Path, PathBuf};

use git2::{ErrorCode, IndexAddOption, Repository, Signature, StatusOptions};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::tasklist::HEALER_DIR;

/// What the folder is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FolderState {
    /// A repository with a working tree and at least one commit: ready.
    Ready,
    Missing,
    NotAFolder,
    /// No repository: Healer can make one (`git init` and a first commit).
    NotARepository,
    /// A folder inside a repository whose root is elsewhere.
    InsideRepository {
        root: String,
    },
    /// A repository without a working tree.
    Bare,
    /// A repository without a commit: worktrees need one to start from.
    NoCommits,
    /// HEAD is detached and no `main` or `master` branch exists to build on.
    NoBranch,
}

/// The folder as Healer found it, in sentences.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct RepoCheck {
    pub path: String,
    pub state: FolderState,
    /// What the state means and what the person can do.
    pub message: String,
    /// The branch tasks start from and merge into.
    pub main_branch: Option<String>,
    /// The main branch's last commit (short).
    pub head: Option<String>,
    /// Things worth knowing that do not stop a run (detached HEAD, uncommitted changes).
    pub notes: Vec<String>,
}

/// Look at `path`.
pub fn inspect(path: &Path) -> RepoCheck {
    let shown = path.display().to_string();
    let check = |state: FolderState, message: String| RepoCheck {
        path: shown.clone(),
        state,
        message,
        main_branch: None,
        head: None,
        notes: vec![],
    };
    if !path.exists() {
        return check(
            FolderState::Missing,
            format!("There is no folder at {shown}."),
        );
    }
    if !path.is_dir() {
        return check(
            FolderState::NotAFolder,
            format!("{shown} is a file, not a folder; choose the repository's folder."),
        );
    }
    let repo = match Repository::open(path) {
        Ok(repo) => repo,
        Err(_) => {
            if let Some(root) = Repository::discover(path)
                .ok()
                .and_then(|r| r.workdir().map(Path::to_path_buf))
            {
                let root = trimmed(&root);
                return check(
                    FolderState::InsideRepository { root: root.clone() },
                    format!("{shown} is inside the repository at {root}; add that folder instead."),
                );
            }
            return check(
                FolderState::NotARepository,
                format!(
                    "{shown} is not a git repository. Healer can make it one: it runs git init there and commits the files in it (what .gitignore leaves out stays out)."
                ),
            );
        }
    };
    if repo.is_bare() {
        return check(
            FolderState::Bare,
            format!("{shown} is a bare repository (it has no working files). Add a clone of it instead."),
        );
    }
    let mut notes = Vec::new();
    let branch = match main_branch(&repo) {
        Ok(Some((branch, note))) => {
            notes.extend(note);
            branch
        }
        Ok(None) => {
            return check(
                FolderState::NoBranch,
                format!("HEAD in {shown} is detached and there is no main or master branch. Check out the branch tasks should build on, then try again."),
            )
        }
        Err(NoCommit) => {
            return check(
                FolderState::NoCommits,
                format!("The repository at {shown} has no commit yet, and tasks start from the main branch's last commit. Healer can commit the files in it now."),
            )
        }
    };
    let head = branch_commit(&repo, &branch).ok().map(|oid| short(&oid));
    if let Some(dirty) = uncommitted(&repo) {
        notes.push(format!(
            "{dirty} on the main branch are not committed. Runs still work: each task starts from the last commit{}, so agents do not see those changes.",
            head.as_ref().map(|h| format!(" ({h})")).unwrap_or_default()
        ));
    }
    if let Some(missing) = unfetched_submodules(&repo, path) {
        notes.push(format!(
            "Its submodules {missing} are not fetched in this folder, so they are empty in the \
             tasks' worktrees (Healer copies submodules from here and fetches nothing from the \
             network). Fetch them here with git to have them in every task."
        ));
    }
    RepoCheck {
        message: format!("A git repository on branch {branch}."),
        path: shown,
        state: FolderState::Ready,
        main_branch: Some(branch),
        head,
        notes,
    }
}

/// The submodules of the checkout at `path` that have no repository in their folder, listed.
fn unfetched_submodules(repo: &Repository, path: &Path) -> Option<String> {
    let missing: Vec<String> = repo
        .submodules()
        .ok()?
        .iter()
        .filter(|sm| Repository::open(path.join(sm.path())).is_err())
        .map(|sm| sm.path().display().to_string())
        .collect();
    (!missing.is_empty()).then(|| missing.join(", "))
}

struct NoCommit;

/// The branch HEAD names; when HEAD is detached, `main` or `master` (with a note saying so).
fn main_branch(
    repo: &Repository,
) -> std::result::Result<Option<(String, Option<String>)>, NoCommit> {
    match repo.head() {
        Ok(head) if head.is_branch() => Ok(head.shorthand().ok().map(|b| (b.to_string(), None))),
        Ok(_) => Ok(["main", "master"]
            .into_iter()
            .find(|b| repo.find_branch(b, git2::BranchType::Local).is_ok())
            .map(|b| {
                (
                    b.to_string(),
                    Some(format!(
                        "HEAD is detached (no branch checked out); tasks start from branch {b} and merge into it."
                    )),
                )
            })),
        Err(e) if e.code() == ErrorCode::UnbornBranch => Err(NoCommit),
        Err(_) => Ok(None),
    }
}

/// The last commit of local branch `branch`.
pub fn branch_commit(repo: &Repository, branch: &str) -> Result<git2::Oid> {
    let reference = repo
        .find_branch(branch, git2::BranchType::Local)
        .map_err(|e| git_error(&format!("cannot find the branch {branch}"), e))?;
    reference
        .get()
        .peel_to_commit()
        .map(|c| c.id())
        .map_err(|e| git_error(&format!("branch {branch} has no commit"), e))
}

/// "3 files have changes" when the working tree differs from HEAD (Healer's own folder aside).
fn uncommitted(repo: &Repository) -> Option<String> {
    let mut options = StatusOptions::new();
    options.include_untracked(true).include_ignored(false);
    let statuses = repo.statuses(Some(&mut options)).ok()?;
    let count = statuses
        .iter()
        .filter(|s| {
            !s.path()
                .is_ok_and(|p| p.starts_with(&format!("{HEALER_DIR}/")))
        })
        .count();
    match count {
        0 => None,
        1 => Some("1 file has changes that".to_string()),
        n => Some(format!("{n} files have changes that")),
    }
}

/// Make `path` a repository with a first commit of the files in it (`.gitignore` respected),
/// or give a repository without a commit its first one.
pub fn init_with_first_commit(path: &Path) -> Result<()> {
    let repo = match Repository::open(path) {
        Ok(repo) => repo,
        Err(_) => Repository::init(path).map_err(|e| git_error("git init failed", e))?,
    };
    super::folder::trust_repository(path);
    if repo.head().is_ok() {
        return Ok(());
    }
    let mut index = repo
        .index()
        .map_err(|e| git_error("cannot read the index", e))?;
    index
        .add_all(["*"], IndexAddOption::DEFAULT, None)
        .map_err(|e| git_error("cannot add the files", e))?;
    index
        .write()
        .map_err(|e| git_error("cannot write the index", e))?;
    let tree_id = index
        .write_tree()
        .map_err(|e| git_error("cannot write the tree", e))?;
    let tree = repo
        .find_tree(tree_id)
        .map_err(|e| git_error("cannot read the tree", e))?;
    let who = signature(&repo)?;
    repo.commit(
        Some("HEAD"),
        &who,
        &who,
        "First commit (made by Healer when the project was added)",
        &tree,
        &[],
    )
    .map_err(|e| git_error("cannot make the first commit", e))?;
    Ok(())
}

/// The person's own git identity when they have one, else Healer's.
fn signature(repo: &Repository) -> Result<Signature<'static>> {
    repo.signature()
        .map(|s| s.to_owned())
        .or_else(|_| Signature::now("Healer", "healer@localhost"))
        .map_err(|e| git_error("cannot make a commit signature", e))
}

pub fn short(oid: &git2::Oid) -> String {
    oid.to_string().chars().take(7).collect()
}

/// A path as the person would write it (no trailing slash).
pub fn trimmed(path: &Path) -> String {
    let text = path.display().to_string();
    match text.trim_end_matches('/') {
        "" => "/".to_string(),
        t => t.to_string(),
    }
}

/// The folder as stored: absolute, symlinks resolved, a leading `~` read as the home folder
/// (a path typed by hand, as a shell would read it).
pub fn canonical(path: &Path) -> PathBuf {
    let path = home_expanded(path);
    std::fs::canonicalize(&path).unwrap_or(path)
}

fn home_expanded(path: &Path) -> PathBuf {
    let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) else {
        return path.to_path_buf();
    };
    match path.strip_prefix("~") {
        Ok(rest) => PathBuf::from(home).join(rest),
        Err(_) => path.to_path_buf(),
    }
}

pub fn git_error(context: &str, e: git2::Error) -> Error {
    Error::Internal(format!("{context}: {}", e.message()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_leading_tilde_is_the_home_folder() {
        let home = std::path::PathBuf::from(std::env::var_os("HOME").expect("HOME"));
        assert_eq!(
            home_expanded(Path::new("~/code/site")),
            home.join("code/site")
        );
        assert_eq!(home_expanded(Path::new("~")), home);
        assert_eq!(home_expanded(Path::new("/srv/~x")), Path::new("/srv/~x"));
        assert_eq!(home_expanded(Path::new("~other/x")), Path::new("~other/x"));
    }
}
