//! A task's worktree and branch (`healer/<task>`), the commit of its green work, and the
//! fast-forward into the main branch — with git2, so nothing depends on a git binary.

use std::path::Path;

use git2::build::CheckoutBuilder;
use git2::{
    BranchType, IndexAddOption, Oid, Repository, Signature, WorktreeAddOptions,
    WorktreePruneOptions,
};

use super::repo::{branch_commit, git_error, short};
use crate::error::{Error, Result};
use crate::tasklist::HEALER_DIR;

/// Who Healer's commits are by.
pub const AGENT_NAME: &str = "Healer agent";
pub const AGENT_EMAIL: &str = "agent@healer.invalid";

/// The branch of a task.
pub fn branch_name(task_id: &str) -> String {
    format!("healer/{task_id}")
}

/// git's own name for the worktree (under `.git/worktrees/`).
fn worktree_name(task_id: &str) -> String {
    format!("healer-{task_id}")
}

/// A worktree ready for the agent.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub branch: String,
    /// The commit the branch started from (or stands at, when it existed already).
    pub base: Oid,
    /// An earlier run's worktree or branch was found and is continued.
    pub reused: bool,
}

/// The worktree of `task_id` at `path` on branch `healer/<task_id>`: an earlier one is
/// continued (a stopped or failed run leaves it); otherwise the branch starts from the main
/// branch's last commit.
pub fn prepare(
    repo_path: &Path,
    main_branch: &str,
    task_id: &str,
    path: &Path,
) -> Result<Prepared> {
    let repo =
        Repository::open(repo_path).map_err(|e| git_error("cannot open the repository", e))?;
    let branch = branch_name(task_id);
    let name = worktree_name(task_id);
    if let Ok(existing) = repo.find_worktree(&name) {
        if existing.validate().is_ok() && existing.path() == path && path.exists() {
            let base = Repository::open(path)
                .and_then(|wt| wt.head().and_then(|h| h.peel_to_commit()).map(|c| c.id()))
                .map_err(|e| git_error("cannot read the kept worktree", e))?;
            return Ok(Prepared {
                branch,
                base,
                reused: true,
            });
        }
        // Its folder is gone or moved: forget it, keep the branch.
        let mut prune = WorktreePruneOptions::new();
        prune.valid(true).working_tree(true);
        existing
            .prune(Some(&mut prune))
            .map_err(|e| git_error("cannot tidy up an old worktree", e))?;
    }
    let (reference, base, reused) = match repo.find_branch(&branch, BranchType::Local) {
        Ok(b) => {
            let base = b
                .get()
                .peel_to_commit()
                .map_err(|e| git_error("cannot read the task's branch", e))?
                .id();
            (b.into_reference(), base, true)
        }
        Err(_) => {
            let base = branch_commit(&repo, main_branch)?;
            let commit = repo
                .find_commit(base)
                .map_err(|e| git_error("cannot read the main branch", e))?;
            let b = repo
                .branch(&branch, &commit, false)
                .map_err(|e| git_error(&format!("cannot create the branch {branch}"), e))?;
            (b.into_reference(), base, false)
        }
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| Error::io(format!("cannot create {}", parent.display()), e))?;
    }
    if path.exists() {
        // A leftover folder git no longer knows: the branch has the work that was committed.
        std::fs::remove_dir_all(path)
            .map_err(|e| Error::io(format!("cannot clear {}", path.display()), e))?;
    }
    let mut options = WorktreeAddOptions::new();
    options.reference(Some(&reference));
    repo.worktree(&name, path, Some(&options))
        .map_err(|e| git_error(&format!("cannot create the worktree for {branch}"), e))?;
    Ok(Prepared {
        branch,
        base,
        reused,
    })
}

/// Commit everything the agent changed in the worktree (Healer's own `.healer/` aside) on the
/// task's branch. `None` when nothing changed.
pub fn commit_all(worktree: &Path, message: &str) -> Result<Option<Oid>> {
    let repo = Repository::open(worktree).map_err(|e| git_error("cannot open the worktree", e))?;
    let mut index = repo
        .index()
        .map_err(|e| git_error("cannot read the worktree's index", e))?;
    let healer = format!("{HEALER_DIR}/");
    let mut skip_healer =
        |path: &Path, _: &[u8]| -> i32 { i32::from(path.to_string_lossy().starts_with(&healer)) };
    index
        .add_all(["*"], IndexAddOption::DEFAULT, Some(&mut skip_healer))
        .map_err(|e| git_error("cannot add the changes", e))?;
    // add_all does not see deletions.
    index
        .update_all(["*"], Some(&mut skip_healer))
        .map_err(|e| git_error("cannot record deleted files", e))?;
    index
        .write()
        .map_err(|e| git_error("cannot write the index", e))?;
    let tree_id = index
        .write_tree()
        .map_err(|e| git_error("cannot write the tree", e))?;
    let head = repo
        .head()
        .and_then(|h| h.peel_to_commit())
        .map_err(|e| git_error("cannot read the branch's last commit", e))?;
    if head.tree_id() == tree_id {
        return Ok(None);
    }
    let tree = repo
        .find_tree(tree_id)
        .map_err(|e| git_error("cannot read the tree", e))?;
    let who = Signature::now(AGENT_NAME, AGENT_EMAIL)
        .map_err(|e| git_error("cannot sign the commit", e))?;
    repo.commit(Some("HEAD"), &who, &who, message, &tree, &[&head])
        .map(Some)
        .map_err(|e| git_error("cannot commit", e))
}

/// What became of a fast-forward.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Merge {
    Merged,
    /// Left on the branch, and why.
    Left(String),
}

/// Move the main branch to `commit` when that is a fast-forward. When the main branch is
/// checked out, its working files follow, but only where the person has no uncommitted change
/// in the files the commit touches (a safe checkout); otherwise the work stays on the branch.
pub fn fast_forward(
    repo_path: &Path,
    main_branch: &str,
    branch: &str,
    commit: Oid,
) -> Result<Merge> {
    let repo =
        Repository::open(repo_path).map_err(|e| git_error("cannot open the repository", e))?;
    let main = branch_commit(&repo, main_branch)?;
    if main == commit {
        return Ok(Merge::Merged);
    }
    let descends = repo
        .graph_descendant_of(commit, main)
        .map_err(|e| git_error("cannot compare the branches", e))?;
    if !descends {
        return Ok(Merge::Left(format!(
            "{main_branch} moved on since the task started (it is at {}), so the work stays on {branch} for you to merge",
            short(&main)
        )));
    }
    let checked_out = repo
        .head()
        .ok()
        .filter(|h| h.is_branch())
        .and_then(|h| h.shorthand().ok().map(str::to_string))
        .is_some_and(|b| b == main_branch);
    if checked_out {
        let target = repo
            .find_commit(commit)
            .map_err(|e| git_error("cannot read the task's commit", e))?;
        let mut checkout = CheckoutBuilder::new();
        checkout.safe();
        if let Err(e) = repo.checkout_tree(target.as_object(), Some(&mut checkout)) {
            return Ok(Merge::Left(format!(
                "your uncommitted changes in {} touch the files this task changed ({}), so the work stays on {branch} for you to merge",
                repo_path.display(),
                e.message()
            )));
        }
    }
    let refname = format!("refs/heads/{main_branch}");
    repo.find_reference(&refname)
        .and_then(|mut r| {
            r.set_target(commit, &format!("healer: fast-forward to {branch}"))
                .map(|_| ())
        })
        .map_err(|e| git_error(&format!("cannot move {main_branch}"), e))?;
    Ok(Merge::Merged)
}

/// Remove a task's worktree (its branch stays).
pub fn remove(repo_path: &Path, task_id: &str, path: &Path) -> Result<()> {
    if path.exists() {
        std::fs::remove_dir_all(path)
            .map_err(|e| Error::io(format!("cannot remove {}", path.display()), e))?;
    }
    let repo =
        Repository::open(repo_path).map_err(|e| git_error("cannot open the repository", e))?;
    if let Ok(wt) = repo.find_worktree(&worktree_name(task_id)) {
        let mut prune = WorktreePruneOptions::new();
        prune.valid(true).working_tree(true);
        wt.prune(Some(&mut prune))
            .map_err(|e| git_error("cannot forget the worktree", e))?;
    }
    Ok(())
}
