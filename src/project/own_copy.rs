//! Where a person opens a task's work ("Open in editor", "Open a terminal here"). A slot folder
//! is reused once its task is closed, so the folder a session ran in may hold another task's
//! branch now. What opens is what the task's own branch holds: the worktree standing on it, else
//! a checkout of it made for the person beside the slots (`review-<task>`), else nothing — its
//! branch is gone and it left no commit.

use std::path::{Path, PathBuf};

use git2::{BranchType, Oid, Repository, StatusOptions};

use super::repo::git_error;
use super::worktree::{add_worktree, remove};
use crate::error::{Error, Result};

/// The folder a task's work is checked out in for the person, under the project's slots.
pub fn review_folder(slots_dir: &Path, task_id: &str) -> PathBuf {
    slots_dir.join(format!("review-{}", super::snapshot::safe_task_id(task_id)))
}

/// The checkout at `path` stands on `branch`.
pub fn holds_branch(path: &Path, branch: &str) -> bool {
    super::folder::open_folder(path)
        .ok()
        .and_then(|repo| {
            let head = repo.head().ok()?;
            head.shorthand().ok().map(|name| name == branch)
        })
        .unwrap_or(false)
}

/// The folder that holds the task's own work, made when needed: the session's folder while it
/// still stands on `branch`, another worktree of the repository (or the person's own checkout)
/// on it, else a checkout of the branch at `review`; the branch is made again at `commit` when
/// it was removed. `None`: the branch is gone and there is no commit to make it from.
pub fn open_own_work(
    repo_path: &Path,
    recorded: &Path,
    branch: &str,
    commit: Option<&str>,
    review: &Path,
) -> Result<Option<PathBuf>> {
    if holds_branch(recorded, branch) {
        return Ok(Some(recorded.to_path_buf()));
    }
    let repo =
        Repository::open(repo_path).map_err(|e| git_error("cannot open the repository", e))?;
    if let Ok(names) = repo.worktrees() {
        for name in names.iter().flatten().flatten() {
            if let Ok(wt) = repo.find_worktree(name) {
                if holds_branch(wt.path(), branch) {
                    return Ok(Some(wt.path().to_path_buf()));
                }
            }
        }
    }
    if holds_branch(repo_path, branch) {
        return Ok(Some(repo_path.to_path_buf()));
    }
    let reference = match repo.find_branch(branch, BranchType::Local) {
        Ok(b) => b.into_reference(),
        Err(_) => {
            let Some(commit) = commit else {
                return Ok(None);
            };
            let Ok(commit) = Oid::from_str(commit).and_then(|oid| repo.find_commit(oid)) else {
                return Ok(None);
            };
            repo.branch(branch, &commit, false)
                .map_err(|e| git_error(&format!("cannot make the branch {branch} again"), e))?
                .into_reference()
        }
    };
    add_worktree(&repo, review, &reference)?;
    Ok(Some(review.to_path_buf()))
}

/// Before a task's work goes on in the slot at `slot`: its checkout made for the person is put
/// away, since git lets a branch stand in one worktree only. One with changes the person made
/// there and did not commit is kept, and the task waits with a sentence.
pub fn release_for_work(repo_path: &Path, review: &Path, slot: &Path) -> Result<()> {
    if review == slot || !review.exists() {
        return Ok(());
    }
    if let Ok(copy) = super::folder::open_folder(review) {
        let mut options = StatusOptions::new();
        options.include_untracked(true).include_ignored(false);
        let changed = copy
            .statuses(Some(&mut options))
            .map(|s| {
                s.iter()
                    .any(|e| e.path().is_ok_and(|p| !p.starts_with(".healer/")))
            })
            .unwrap_or(false);
        if changed {
            return Err(Error::InvalidInput(format!(
                "this task's work is open for you in {} with changes you have not committed; \
                 commit them there (or undo them), then run the task again",
                review.display()
            )));
        }
    }
    remove(repo_path, review)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_id_cannot_name_a_folder_outside_the_slots() {
        let slots = Path::new("/data/worktrees/3");
        assert_eq!(
            review_folder(slots, "../../etc"),
            slots.join("review-______etc")
        );
        assert_eq!(review_folder(slots, "t4"), slots.join("review-t4"));
    }
}
