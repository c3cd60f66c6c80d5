//! A task's worktree and branch (`healer/<task>`), the commit of its green work, and the
//! fast-forward into the main branch — with git2, so nothing depends on a git binary.

use std::path::Path;

use git2::build::CheckoutBuilder;
use git2::{
    BranchType, IndexAddOption, Oid, Repository, Signature, WorktreeAddOptions,
    WorktreePruneOptions,
};

use super::repo::{branch_commit, git_error};
use crate::error::{Error, Result};
use crate::tasklist::HEALER_DIR;

/// Who Healer's commits are by.
pub const AGENT_NAME: &str = "Healer agent";
pub const AGENT_EMAIL: &str = "agent@healer.invalid";

/// The branch of a task.
pub fn branch_name(task_id: &str) -> String {
    format!("healer/{task_id}")
}

/// git's own name for the worktree of a slot folder (under `.git/worktrees/`).
fn worktree_name(path: &Path) -> String {
    let slot = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("healer-{slot}")
}

/// The branch a spare worktree waits on until a task takes it.
fn spare_branch(path: &Path) -> String {
    format!(
        "healer/{}",
        worktree_name(path).trim_start_matches("healer-")
    )
}

/// A worktree ready for the agent.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub branch: String,
    /// The commit the branch started from (or stands at, when it existed already).
    pub base: Oid,
    /// An earlier run's work (its worktree or its branch) was found and is continued.
    pub reused: bool,
}

/// The worktree at `path` (a slot folder), on branch `healer/<task_id>`. A slot that holds
/// this task's earlier work (a stopped or failed run) is continued as it is. A slot that held
/// finished work, or a spare, is switched over: only the files that differ are written, which
/// is what keeps a task's start cheap in a large repository. A missing slot is created (a
/// whole checkout). The branch continues where an earlier run left it, else it starts from the
/// main branch's last commit.
pub fn prepare(
    repo_path: &Path,
    main_branch: &str,
    task_id: &str,
    path: &Path,
) -> Result<Prepared> {
    if let Some(slots) = path.parent() {
        super::own_copy::release_for_work(
            repo_path,
            &super::own_copy::review_folder(slots, task_id),
            path,
        )?;
    }
    let repo =
        Repository::open(repo_path).map_err(|e| git_error("cannot open the repository", e))?;
    let branch = branch_name(task_id);
    let existing = repo.find_branch(&branch, BranchType::Local).ok();
    let reused = existing.is_some();
    let base = match &existing {
        Some(b) => b
            .get()
            .peel_to_commit()
            .map_err(|e| git_error("cannot read the task's branch", e))?
            .id(),
        None => branch_commit(&repo, main_branch)?,
    };
    if let Ok(slot) = super::folder::open_folder(path) {
        let on = slot
            .head()
            .ok()
            .and_then(|h| h.shorthand().ok().map(str::to_string));
        if on.as_deref() == Some(branch.as_str()) {
            let base = slot
                .head()
                .and_then(|h| h.peel_to_commit())
                .map(|c| c.id())
                .map_err(|e| git_error("cannot read the kept worktree", e))?;
            return Ok(Prepared {
                branch,
                base,
                reused: true,
            });
        }
        switch(&slot, &branch, base, existing.is_none())?;
        if let Some(old) = on.filter(|b| *b == spare_branch(path)) {
            if let Ok(mut spare) = repo.find_branch(&old, BranchType::Local) {
                let _ = spare.delete();
            }
        }
        return Ok(Prepared {
            branch,
            base,
            reused,
        });
    }
    let commit = repo
        .find_commit(base)
        .map_err(|e| git_error("cannot read the commit to start from", e))?;
    let reference = match existing {
        Some(b) => b.into_reference(),
        None => repo
            .branch(&branch, &commit, false)
            .map_err(|e| git_error(&format!("cannot create the branch {branch}"), e))?
            .into_reference(),
    };
    add_worktree(&repo, path, &reference)?;
    Ok(Prepared {
        branch,
        base,
        reused,
    })
}

/// What filling a worktree's submodules found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Submodules {
    /// Paths filled from the main checkout's own copy (at the commit the branch records).
    pub filled: Vec<String>,
    /// Paths left empty: the main checkout has no copy with that commit, and Healer fetches
    /// nothing from the network.
    pub empty: Vec<String>,
}

/// Fill the submodules of the worktree at `worktree` from the copies in the main checkout at
/// `main` — a local clone of each, checked out at the commit the worktree's branch records —
/// so that a check that passes in the main checkout can pass in the task's worktree. Nothing
/// is fetched from the network. A submodule already at that commit is left as it is; the
/// submodules of submodules are filled the same way.
pub fn fill_submodules(main: &Path, worktree: &Path) -> Submodules {
    let mut found = Submodules::default();
    fill_below(main, worktree, worktree, "", &mut found);
    found
}

fn fill_below(main: &Path, root: &Path, worktree: &Path, prefix: &str, found: &mut Submodules) {
    let Ok(repo) = Repository::open(worktree) else {
        return;
    };
    let Ok(submodules) = repo.submodules() else {
        return;
    };
    for sm in submodules {
        let rel = sm.path().to_path_buf();
        let shown = format!("{prefix}{}", rel.display());
        let Some(commit) = sm.head_id() else {
            continue;
        };
        let target = worktree.join(&rel);
        let source = main.join(&rel);
        let at_commit = |path: &Path| {
            Repository::open(path)
                .ok()
                .and_then(|r| r.head().ok()?.peel_to_commit().ok().map(|c| c.id()))
                == Some(commit)
        };
        // Only inside the task's worktree: not through a folder the agent linked elsewhere.
        let inside = target
            .parent()
            .and_then(|p| std::fs::canonicalize(p).ok())
            .zip(std::fs::canonicalize(root).ok())
            .is_some_and(|(parent, root)| parent.starts_with(root))
            && !std::fs::symlink_metadata(&target).is_ok_and(|m| m.file_type().is_symlink());
        if !inside {
            found.empty.push(shown);
            continue;
        }
        if at_commit(&target) || fill_one(&source, &target, commit).is_ok() {
            found.filled.push(shown.clone());
            fill_below(&source, root, &target, &format!("{shown}/"), found);
        } else {
            found.empty.push(shown);
        }
    }
}

/// A local clone of `source` at `target`, checked out (detached) at `commit`.
fn fill_one(source: &Path, target: &Path, commit: Oid) -> Result<()> {
    let from = Repository::open(source)
        .map_err(|e| git_error("the main checkout has no copy of the submodule", e))?;
    from.find_commit(commit)
        .map_err(|e| git_error("the main checkout's copy lacks the commit", e))?;
    if target.exists() {
        // Only an empty folder (what a checkout leaves for a submodule) is filled.
        let empty = std::fs::read_dir(target).is_ok_and(|mut d| d.next().is_none());
        if !empty {
            return Err(Error::InvalidInput(format!(
                "{} is not empty",
                target.display()
            )));
        }
        std::fs::remove_dir(target)
            .map_err(|e| Error::io(format!("cannot replace {}", target.display()), e))?;
    }
    let url = source.display().to_string();
    let clone = git2::build::RepoBuilder::new()
        .clone(&url, target)
        .map_err(|e| git_error("cannot copy the submodule from the main checkout", e))?;
    let object = clone
        .find_object(commit, None)
        .map_err(|e| git_error("the copy lacks the submodule's commit", e))?;
    let mut checkout = CheckoutBuilder::new();
    checkout.force();
    clone
        .checkout_tree(&object, Some(&mut checkout))
        .map_err(|e| git_error("cannot check out the submodule", e))?;
    clone
        .set_head_detached(commit)
        .map_err(|e| git_error("cannot check out the submodule", e))
}

/// Put the slot's HEAD on `branch` at `base` (creating the branch), its files matching.
fn switch(slot: &Repository, branch: &str, base: Oid, create: bool) -> Result<()> {
    let commit = slot
        .find_commit(base)
        .map_err(|e| git_error("cannot read the commit to start from", e))?;
    if create {
        slot.branch(branch, &commit, false)
            .map_err(|e| git_error(&format!("cannot create the branch {branch}"), e))?;
    }
    let mut checkout = CheckoutBuilder::new();
    // The slot held finished (committed) work or nothing: what is left in it is no one's.
    checkout.force().remove_untracked(true);
    slot.checkout_tree(commit.as_object(), Some(&mut checkout))
        .map_err(|e| git_error("cannot update the worktree's files", e))?;
    slot.set_head(&format!("refs/heads/{branch}"))
        .map_err(|e| git_error(&format!("cannot switch the worktree to {branch}"), e))
}

/// A new worktree at `path` checked out on `reference` (a leftover folder git no longer knows
/// is cleared first; its branch has the work that was committed).
pub(super) fn add_worktree(
    repo: &Repository,
    path: &Path,
    reference: &git2::Reference<'_>,
) -> Result<()> {
    let name = worktree_name(path);
    if let Ok(stale) = repo.find_worktree(&name) {
        let mut prune = WorktreePruneOptions::new();
        prune.valid(true).working_tree(true);
        stale
            .prune(Some(&mut prune))
            .map_err(|e| git_error("cannot tidy up an old worktree", e))?;
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| Error::io(format!("cannot create {}", parent.display()), e))?;
    }
    if path.exists() {
        std::fs::remove_dir_all(path)
            .map_err(|e| Error::io(format!("cannot clear {}", path.display()), e))?;
    }
    let mut options = WorktreeAddOptions::new();
    options.reference(Some(reference));
    repo.worktree(&name, path, Some(&options))
        .map_err(|e| git_error(&format!("cannot create the worktree {}", path.display()), e))?;
    Ok(())
}

/// A spare worktree at `path` on the main branch's last commit, so the next task starts
/// without a whole checkout.
pub fn make_spare(repo_path: &Path, main_branch: &str, path: &Path) -> Result<()> {
    let repo =
        Repository::open(repo_path).map_err(|e| git_error("cannot open the repository", e))?;
    let base = branch_commit(&repo, main_branch)?;
    let commit = repo
        .find_commit(base)
        .map_err(|e| git_error("cannot read the main branch", e))?;
    let reference = repo
        .branch(&spare_branch(path), &commit, true)
        .map_err(|e| git_error("cannot create a spare worktree's branch", e))?
        .into_reference();
    add_worktree(&repo, path, &reference)
}

/// Commit everything the agent changed in the worktree (Healer's own `.healer/` aside) on the
/// task's branch. `None` when nothing changed.
/// The worktree's HEAD when its branch holds commits the main branch does not (the agent
/// committed its work itself); `None` when it is the main branch's tip or behind it.
pub fn ahead_of_main(worktree: &Path, main: &str) -> Result<Option<Oid>> {
    let repo = super::folder::open_folder(worktree)?;
    let head = repo
        .head()
        .and_then(|h| h.peel_to_commit())
        .map_err(|e| git_error("cannot read the branch's last commit", e))?
        .id();
    let Ok(main_tip) = repo
        .find_branch(main, git2::BranchType::Local)
        .and_then(|b| b.get().peel_to_commit())
        .map(|c| c.id())
    else {
        return Ok(None);
    };
    let behind_or_same = head == main_tip
        || repo
            .graph_descendant_of(main_tip, head)
            .map_err(|e| git_error("cannot compare the branch with the main branch", e))?;
    Ok((!behind_or_same).then_some(head))
}

pub fn commit_all(worktree: &Path, message: &str) -> Result<Option<Oid>> {
    let repo = super::folder::open_folder(worktree)?;
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
    // A merge of the main branch under way (an agent resolving a conflict): the commit joins
    // both, even when the resolution kept the task's files as they were.
    let merging =
        super::finish::merge_under_way(worktree).and_then(|oid| repo.find_commit(oid).ok());
    if head.tree_id() == tree_id && merging.is_none() {
        return Ok(None);
    }
    let tree = repo
        .find_tree(tree_id)
        .map_err(|e| git_error("cannot read the tree", e))?;
    let who = Signature::now(AGENT_NAME, AGENT_EMAIL)
        .map_err(|e| git_error("cannot sign the commit", e))?;
    let mut parents = vec![&head];
    parents.extend(merging.as_ref());
    let commit = repo
        .commit(Some("HEAD"), &who, &who, message, &tree, &parents)
        .map_err(|e| git_error("cannot commit", e))?;
    if merging.is_some() {
        repo.cleanup_state()
            .map_err(|e| git_error("cannot end the merge", e))?;
    }
    Ok(Some(commit))
}

/// One file the agent changed in its worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub path: String,
    /// "added", "deleted", "modified", "renamed" …
    pub how: &'static str,
    pub added: usize,
    pub removed: usize,
}

/// What differs in `worktree` (committed or not, new files included, ignored ones and
/// Healer's own `.healer/` aside) from the commit `base` its task started from.
pub fn changes_since(worktree: &Path, base: &str) -> Result<Vec<FileChange>> {
    let repo = super::folder::open_folder(worktree)?;
    let base = Oid::from_str(base)
        .and_then(|oid| repo.find_commit(oid))
        .and_then(|c| c.tree())
        .map_err(|e| git_error("cannot read the commit the task started from", e))?;
    let mut options = git2::DiffOptions::new();
    options
        .include_untracked(true)
        .recurse_untracked_dirs(true)
        .show_untracked_content(true);
    let diff = repo
        .diff_tree_to_workdir_with_index(Some(&base), Some(&mut options))
        .map_err(|e| git_error("cannot compare the worktree", e))?;
    let healer = format!("{HEALER_DIR}/");
    let mut changes = Vec::new();
    for (i, delta) in diff.deltas().enumerate() {
        let Some(path) = delta
            .new_file()
            .path()
            .or_else(|| delta.old_file().path())
            .map(|p| p.to_string_lossy().into_owned())
        else {
            continue;
        };
        if path.starts_with(&healer) {
            continue;
        }
        let how = match delta.status() {
            git2::Delta::Added | git2::Delta::Untracked => "added",
            git2::Delta::Deleted => "deleted",
            git2::Delta::Renamed => "renamed",
            git2::Delta::Typechange => "changed type",
            _ => "modified",
        };
        let (added, removed) = git2::Patch::from_diff(&diff, i)
            .ok()
            .flatten()
            .and_then(|patch| patch.line_stats().ok())
            .map_or((0, 0), |(_, added, removed)| (added, removed));
        changes.push(FileChange {
            path,
            how,
            added,
            removed,
        });
    }
    Ok(changes)
}

/// Past this many changed files a fast-forward checks the whole working tree.
const MAX_NAMED_PATHS: usize = 1_000;

/// The paths that differ between two commits (both sides of a rename).
fn changed_paths(repo: &Repository, from: Oid, to: Oid) -> Result<Vec<String>> {
    let tree = |oid: Oid| {
        repo.find_commit(oid)
            .and_then(|c| c.tree())
            .map_err(|e| git_error("cannot read a commit's files", e))
    };
    let (old, new) = (tree(from)?, tree(to)?);
    let diff = repo
        .diff_tree_to_tree(Some(&old), Some(&new), None)
        .map_err(|e| git_error("cannot compare the commits", e))?;
    let mut paths = Vec::new();
    for delta in diff.deltas() {
        for file in [delta.old_file(), delta.new_file()] {
            if let Some(p) = file.path().and_then(|p| p.to_str()) {
                if !paths.iter().any(|known: &String| known == p) {
                    paths.push(p.to_string());
                }
            }
        }
    }
    Ok(paths)
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
            "{main_branch} moved on since the task started, so the work waits on its own branch for you to accept"
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
        // Only the files the task changed are looked at: in a large repository, checking the
        // whole working tree for the person's edits is most of a fast-forward's time.
        let changed = changed_paths(&repo, main, commit)?;
        if changed.len() <= MAX_NAMED_PATHS {
            checkout.disable_pathspec_match(true);
            for path in &changed {
                checkout.path(path);
            }
        }
        if let Err(e) = repo.checkout_tree(target.as_object(), Some(&mut checkout)) {
            return Ok(Merge::Left(format!(
                "your uncommitted changes in {} touch the files this task changed ({}), so the work waits on its own branch for you to accept",
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

/// Remove a slot's worktree (its branches stay, the spare's own excepted).
pub fn remove(repo_path: &Path, path: &Path) -> Result<()> {
    if path.exists() {
        std::fs::remove_dir_all(path)
            .map_err(|e| Error::io(format!("cannot remove {}", path.display()), e))?;
    }
    let repo =
        Repository::open(repo_path).map_err(|e| git_error("cannot open the repository", e))?;
    if let Ok(wt) = repo.find_worktree(&worktree_name(path)) {
        let mut prune = WorktreePruneOptions::new();
        prune.valid(true).working_tree(true);
        wt.prune(Some(&mut prune))
            .map_err(|e| git_error("cannot forget the worktree", e))?;
    }
    if let Ok(mut spare) = repo.find_branch(&spare_branch(path), BranchType::Local) {
        let _ = spare.delete();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_since_the_start_name_each_file_with_its_lines_new_ignored_and_healer_files_aside() {
        let dir = tempfile::tempdir().expect("test setup");
        let root = dir.path();
        std::fs::write(root.join("a.txt"), "one\ntwo\n").expect("test setup");
        std::fs::write(root.join("gone.txt"), "x\n").expect("test setup");
        std::fs::write(root.join(".gitignore"), "target/\n").expect("test setup");
        crate::project::init_with_first_commit(root).expect("test setup");
        let base = Repository::open(root)
            .and_then(|r| r.head()?.peel_to_commit().map(|c| c.id()))
            .expect("test setup")
            .to_string();
        assert_eq!(changes_since(root, &base).expect("read"), Vec::new());

        std::fs::write(root.join("a.txt"), "one\nTWO\nthree\n").expect("test setup");
        std::fs::remove_file(root.join("gone.txt")).expect("test setup");
        std::fs::create_dir_all(root.join("src/deep")).expect("test setup");
        std::fs::write(root.join("src/deep/new.rs"), "fn a() {}\nfn b() {}\n").expect("test setup");
        std::fs::create_dir_all(root.join("target")).expect("test setup");
        std::fs::write(root.join("target/out"), "built\n").expect("test setup");
        std::fs::create_dir_all(root.join(HEALER_DIR)).expect("test setup");
        std::fs::write(root.join(HEALER_DIR).join("tasks.jsonl"), "{}\n").expect("test setup");

        let mut changes = changes_since(root, &base).expect("read");
        changes.sort_by(|a, b| a.path.cmp(&b.path));
        let seen: Vec<(&str, &str, usize, usize)> = changes
            .iter()
            .map(|c| (c.path.as_str(), c.how, c.added, c.removed))
            .collect();
        assert_eq!(
            seen,
            vec![
                ("a.txt", "modified", 2, 1),
                ("gone.txt", "deleted", 0, 1),
                ("src/deep/new.rs", "added", 2, 0),
            ]
        );
        assert!(changes_since(root, "not-a-commit").is_err());
    }

    #[test]
    fn a_branch_the_agent_committed_to_itself_is_ahead_of_main() {
        let dir = tempfile::tempdir().expect("test setup");
        let root = dir.path();
        std::fs::write(root.join("a.txt"), "one\n").expect("test setup");
        crate::project::init_with_first_commit(root).expect("test setup");
        let repo = Repository::open(root).expect("test setup");
        let main = repo
            .head()
            .expect("test setup")
            .shorthand()
            .expect("test setup")
            .to_string();
        // At main's tip: nothing of its own.
        assert_eq!(ahead_of_main(root, &main).expect("read"), None);
        let tip = repo
            .head()
            .and_then(|h| h.peel_to_commit())
            .expect("test setup");
        repo.branch("healer/t1", &tip, false).expect("test setup");
        repo.set_head("refs/heads/healer/t1").expect("test setup");
        std::fs::write(root.join("b.txt"), "two\n").expect("test setup");
        let own = commit_all(root, "the agent's own commit")
            .expect("commit")
            .expect("a commit");
        assert_eq!(ahead_of_main(root, &main).expect("read"), Some(own));
        // Behind main (main moved on, the branch did not): nothing of its own either.
        repo.set_head(&format!("refs/heads/{main}"))
            .expect("test setup");
        assert_eq!(ahead_of_main(root, "healer/t1").expect("read"), None);
        // No such main branch: nothing to compare with.
        assert_eq!(ahead_of_main(root, "no-such-branch").expect("read"), None);
    }
}
