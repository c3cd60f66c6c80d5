//! Finishing a task's work in git terms, for the buttons of the task's review: bring the main
//! branch into the task's branch (rebase or merge, computed in memory so that a conflict touches
//! no file), accept the branch into the main branch (fast-forward, a merge commit, or one squashed
//! commit), and discard it (pinned first). git2, no git binary; the person's own checkout is only
//! ever moved by [`super::worktree::fast_forward`], which leaves it alone when it has changes.

use std::path::Path;

use git2::build::CheckoutBuilder;
use git2::{BranchType, ErrorCode, Oid, RebaseOptions, Repository, Signature, StatusOptions};

use super::repo::{branch_commit, git_error, short};
use super::worktree::{self, AGENT_EMAIL, AGENT_NAME};
use crate::error::{Error, Result};
use crate::tasklist::HEALER_DIR;

pub use crate::store::{AcceptHow, BringMainIn, FinishSettings};

/// What bringing the main branch into a task's branch came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Brought {
    /// The main branch had not moved: the branch is as it was.
    UpToDate,
    /// The branch now holds the main branch (its new tip).
    Moved { tip: Oid, before: Oid },
    /// The main branch and the task changed the same lines of these files: nothing was written.
    Conflict { files: Vec<String> },
}

use super::folder::open_folder;

fn open(path: &Path) -> Result<Repository> {
    Repository::open(path).map_err(|e| git_error("cannot open the repository", e))
}

fn signature() -> Result<Signature<'static>> {
    Signature::now(AGENT_NAME, AGENT_EMAIL).map_err(|e| git_error("cannot sign the commit", e))
}

/// The task's branch's last commit, or a sentence when it has none.
pub fn branch_tip(repo_path: &Path, branch: &str) -> Result<Oid> {
    let repo = open(repo_path)?;
    repo.find_branch(branch, BranchType::Local)
        .and_then(|b| b.get().peel_to_commit())
        .map(|c| c.id())
        .map_err(|_| {
            Error::InvalidInput(format!(
                "the branch {branch} is gone: there is no work of this task to finish"
            ))
        })
}

/// Whether `branch` holds commits the main branch does not.
pub fn has_work(repo_path: &Path, main: &str, branch: &str) -> Result<bool> {
    let repo = open(repo_path)?;
    let main_tip = branch_commit(&repo, main)?;
    let tip = branch_tip(repo_path, branch)?;
    Ok(tip != main_tip
        && !repo
            .graph_descendant_of(main_tip, tip)
            .map_err(|e| git_error("cannot compare the branches", e))?)
}

/// Whether the main branch holds commits `branch` does not.
pub fn main_moved(repo_path: &Path, main: &str, branch: &str) -> Result<bool> {
    let repo = open(repo_path)?;
    let main_tip = branch_commit(&repo, main)?;
    let tip = branch_tip(repo_path, branch)?;
    Ok(tip != main_tip
        && !repo
            .graph_descendant_of(tip, main_tip)
            .map_err(|e| git_error("cannot compare the branches", e))?)
}

fn conflicted_paths(index: &git2::Index) -> Result<Vec<String>> {
    let mut files = Vec::new();
    for conflict in index
        .conflicts()
        .map_err(|e| git_error("cannot read the conflicts", e))?
    {
        let conflict = conflict.map_err(|e| git_error("cannot read a conflict", e))?;
        let entry = conflict.our.or(conflict.their).or(conflict.ancestor);
        if let Some(entry) = entry {
            let path = String::from_utf8_lossy(&entry.path).into_owned();
            if !files.contains(&path) {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// Bring the main branch into `branch` as `how` says, in memory: on a conflict nothing is
/// written anywhere; otherwise only the branch's ref moves (the caller updates the folder that
/// stands on it). The old tip stays reachable through the reflog and the caller's pin.
pub fn bring_main_in(
    repo_path: &Path,
    main: &str,
    branch: &str,
    how: BringMainIn,
) -> Result<Brought> {
    let repo = open(repo_path)?;
    let main_tip = branch_commit(&repo, main)?;
    let tip = branch_tip(repo_path, branch)?;
    let contains = tip == main_tip
        || repo
            .graph_descendant_of(tip, main_tip)
            .map_err(|e| git_error("cannot compare the branches", e))?;
    if contains {
        return Ok(Brought::UpToDate);
    }
    let who = signature()?;
    let new_tip = match how {
        BringMainIn::Merge => {
            let (ours, theirs) = (
                repo.find_commit(tip)
                    .map_err(|e| git_error("cannot read the task's commit", e))?,
                repo.find_commit(main_tip)
                    .map_err(|e| git_error("cannot read the main branch", e))?,
            );
            let mut index = repo
                .merge_commits(&ours, &theirs, None)
                .map_err(|e| git_error("cannot merge the main branch in", e))?;
            if index.has_conflicts() {
                return Ok(Brought::Conflict {
                    files: conflicted_paths(&index)?,
                });
            }
            let tree = index
                .write_tree_to(&repo)
                .and_then(|t| repo.find_tree(t))
                .map_err(|e| git_error("cannot write the merged files", e))?;
            repo.commit(
                None,
                &who,
                &who,
                &format!("Merge {main} into {branch}"),
                &tree,
                &[&ours, &theirs],
            )
            .map_err(|e| git_error("cannot write the merge commit", e))?
        }
        BringMainIn::Rebase => {
            let branch_ac = repo
                .find_annotated_commit(tip)
                .map_err(|e| git_error("cannot read the task's commit", e))?;
            let upstream = repo
                .find_annotated_commit(main_tip)
                .map_err(|e| git_error("cannot read the main branch", e))?;
            let mut options = RebaseOptions::new();
            options.inmemory(true);
            let mut rebase = repo
                .rebase(Some(&branch_ac), Some(&upstream), None, Some(&mut options))
                .map_err(|e| git_error("cannot start the rebase", e))?;
            let mut last = main_tip;
            while let Some(op) = rebase.next() {
                op.map_err(|e| git_error("cannot replay a commit", e))?;
                let index = rebase
                    .inmemory_index()
                    .map_err(|e| git_error("cannot read the replayed files", e))?;
                if index.has_conflicts() {
                    let files = conflicted_paths(&index)?;
                    let _ = rebase.abort();
                    return Ok(Brought::Conflict { files });
                }
                match rebase.commit(None, &who, None) {
                    Ok(oid) => last = oid,
                    // The main branch already holds this commit's change.
                    Err(e) if e.code() == ErrorCode::Applied => {}
                    Err(e) => {
                        let _ = rebase.abort();
                        return Err(git_error("cannot write a replayed commit", e));
                    }
                }
            }
            rebase
                .finish(Some(&who))
                .map_err(|e| git_error("cannot finish the rebase", e))?;
            last
        }
    };
    Ok(Brought::Moved {
        tip: new_tip,
        before: tip,
    })
}

/// The folder's uncommitted changes (Healer's own `.healer/` aside), as paths.
pub fn uncommitted(folder: &Path) -> Result<Vec<String>> {
    let repo = open_folder(folder)?;
    let mut options = StatusOptions::new();
    options.include_untracked(true).include_ignored(false);
    let statuses = repo
        .statuses(Some(&mut options))
        .map_err(|e| git_error("cannot read the folder's changes", e))?;
    Ok(statuses
        .iter()
        .filter_map(|e| e.path().ok().map(str::to_string))
        .filter(|p| !p.starts_with(&format!("{HEALER_DIR}/")))
        .collect())
}

/// Move `branch` to `tip` and bring `folder` (a checkout standing on it, with no uncommitted
/// change) along.
pub fn move_branch(repo_path: &Path, branch: &str, tip: Oid, folder: &Path) -> Result<()> {
    let repo = open(repo_path)?;
    repo.reference(
        &format!("refs/heads/{branch}"),
        tip,
        true,
        "healer: the main branch brought in",
    )
    .map_err(|e| git_error(&format!("cannot move {branch}"), e))?;
    let copy = open_folder(folder)?;
    let mut checkout = CheckoutBuilder::new();
    checkout.force();
    copy.checkout_head(Some(&mut checkout))
        .map_err(|e| git_error("cannot update the task's folder", e))
}

/// The commit the main branch moves to for `how`: the tip itself, a merge commit of the main
/// branch and the tip, or one commit on the main branch with the tip's files. The tip must hold
/// the main branch already ([`bring_main_in`]).
pub fn commit_to_accept(
    repo_path: &Path,
    main: &str,
    branch: &str,
    tip: Oid,
    how: AcceptHow,
    message: &str,
) -> Result<Oid> {
    let repo = open(repo_path)?;
    let main_tip = branch_commit(&repo, main)?;
    // Built on the main branch as it is now: the tip must hold it, or what was added to the main
    // branch meanwhile (while the checks ran) would be undone by a squash or a merge.
    let holds_main = tip == main_tip
        || repo
            .graph_descendant_of(tip, main_tip)
            .map_err(|e| git_error("cannot compare the branches", e))?;
    if !holds_main {
        return Err(Error::InvalidInput(format!(
            "{main} moved on while the work was being checked; accept it again to bring that in too"
        )));
    }
    let (main_commit, tip_commit) = (
        repo.find_commit(main_tip)
            .map_err(|e| git_error("cannot read the main branch", e))?,
        repo.find_commit(tip)
            .map_err(|e| git_error("cannot read the task's commit", e))?,
    );
    let tree = tip_commit
        .tree()
        .map_err(|e| git_error("cannot read the task's files", e))?;
    let who = signature()?;
    match how {
        AcceptHow::FastForward => Ok(tip),
        AcceptHow::Merge => repo
            .commit(
                None,
                &who,
                &who,
                &format!("Merge {branch}: {message}"),
                &tree,
                &[&main_commit, &tip_commit],
            )
            .map_err(|e| git_error("cannot write the merge commit", e)),
        AcceptHow::Squash => repo
            .commit(None, &who, &who, message, &tree, &[&main_commit])
            .map_err(|e| git_error("cannot write the squashed commit", e)),
    }
}

/// Accept: move the main branch to `commit` (a descendant of it), the person's checkout along
/// where it is safe. `Err` sentence-free: a [`worktree::Merge::Left`] says why it was left.
pub fn accept_into_main(
    repo_path: &Path,
    main: &str,
    branch: &str,
    commit: Oid,
) -> Result<worktree::Merge> {
    worktree::fast_forward(repo_path, main, branch, commit)
}

/// Delete the task's branch (its tip was pinned by the caller).
pub fn delete_branch(repo_path: &Path, branch: &str) -> Result<()> {
    let repo = open(repo_path)?;
    let found = repo.find_branch(branch, BranchType::Local);
    match found {
        Ok(mut b) => b
            .delete()
            .map_err(|e| git_error(&format!("cannot delete {branch}"), e)),
        Err(_) => Ok(()),
    }
}

/// Merge the main branch into the worktree standing on the task's branch, conflicts written as
/// git writes them (markers in the files, the merge under way), for an agent asked to resolve
/// them. The worktree is the agent's, never the person's checkout.
pub fn merge_main_for_agent(worktree: &Path, main: &str) -> Result<Vec<String>> {
    let repo = open_folder(worktree)?;
    let main_tip = branch_commit(&repo, main)?;
    let theirs = repo
        .find_annotated_commit(main_tip)
        .map_err(|e| git_error("cannot read the main branch", e))?;
    let mut checkout = CheckoutBuilder::new();
    checkout.allow_conflicts(true).conflict_style_merge(true);
    repo.merge(&[&theirs], None, Some(&mut checkout))
        .map_err(|e| git_error("cannot merge the main branch in", e))?;
    let index = repo
        .index()
        .map_err(|e| git_error("cannot read the merge", e))?;
    conflicted_paths(&index)
}

/// The largest file looked through for conflict markers.
const MARKER_SCAN_BYTES: u64 = 16 * 1024 * 1024;

/// Files of the worktree that still hold a conflict marker line.
pub fn markers_left(worktree: &Path, files: &[String]) -> Vec<String> {
    files
        .iter()
        .filter(|file| {
            // Only a regular file of a sensible size is read (not a link, a pipe or a device the
            // agent put in its place).
            let path = worktree.join(file);
            let regular = std::fs::symlink_metadata(&path)
                .is_ok_and(|m| m.file_type().is_file() && m.len() <= MARKER_SCAN_BYTES);
            regular
                && std::fs::read(&path).is_ok_and(|bytes| {
                    String::from_utf8_lossy(&bytes).lines().any(|line| {
                        line.starts_with("<<<<<<< ")
                            || line.starts_with(">>>>>>> ")
                            || line == "<<<<<<<"
                            || line == ">>>>>>>"
                    })
                })
        })
        .cloned()
        .collect()
}

/// The commit a merge under way in the worktree joins (its `MERGE_HEAD`), if one is.
pub fn merge_under_way(worktree: &Path) -> Option<Oid> {
    let mut repo = open_folder(worktree).ok()?;
    let mut head = None;
    let _ = repo.mergehead_foreach(|oid| {
        head = Some(*oid);
        false
    });
    head
}

/// A short name of a commit, for sentences.
pub fn short_of(oid: &Oid) -> String {
    short(oid)
}
