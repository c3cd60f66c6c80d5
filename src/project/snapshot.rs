//! Snapshots of a task's worktree: every file the agent could have touched (tracked and
//! untracked; ignored files and Healer's own `.healer/` aside) pinned as a commit object under
//! `refs/healer/snapshots/<task>/<n>`, so gc keeps it and nothing a rewind discards is lost.
//! Pinning builds its tree from an in-memory index: the worktree's real index, HEAD and files
//! are not touched (it works while another git process holds `index.lock`). Restoring writes
//! the snapshot's files back byte for byte and pins what it replaces first.

use std::collections::BTreeMap;
use std::path::{Component, Path};

use git2::{IndexAddOption, ObjectType, Oid, Repository, Signature, StatusOptions, TreeWalkMode};

use super::repo::git_error;
use super::worktree::{AGENT_EMAIL, AGENT_NAME};
use crate::error::{Error, Result};
use crate::store::{NewSnapshot, SnapshotRecord, Store};
use crate::tasklist::HEALER_DIR;

mod write_back;
pub use write_back::{restore, rewind, Rewound};

/// Where every snapshot's ref lives (shared by all worktrees of the repository).
pub const SNAPSHOT_REFS: &str = "refs/healer/snapshots";

/// A snapshot pinned in the repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pinned {
    /// `refs/healer/snapshots/<task>/<n>`.
    pub ref_name: String,
    pub commit: String,
    /// `n`: 1 for a task's first snapshot.
    pub seq: u32,
}

/// What a restore did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    pub written: usize,
    pub removed: usize,
    /// What the worktree held before, pinned (`None` when it already matched the snapshot).
    pub previous: Option<Pinned>,
}

/// The refs folder of a task (a task id is made safe for a ref name).
pub fn task_refs(task_id: &str) -> String {
    format!("{SNAPSHOT_REFS}/{}", safe_task_id(task_id))
}

/// A task id with only letters, digits, `-` and `_` (anything else as `_`): safe as one part
/// of a ref name or a folder name.
pub(crate) fn safe_task_id(task_id: &str) -> String {
    task_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn is_healer(path: &str) -> bool {
    path == HEALER_DIR || path.starts_with(&format!("{HEALER_DIR}/"))
}

fn open(worktree: &Path) -> Result<Repository> {
    if !worktree.is_dir() {
        return Err(Error::NotFound {
            what: format!("the worktree {}", worktree.display()),
        });
    }
    super::folder::open_folder(worktree)
}

/// Pin the worktree at `worktree` as the next snapshot of `task_id`.
pub fn pin(worktree: &Path, task_id: &str, reason: &str) -> Result<Pinned> {
    let repo = open(worktree)?;
    let tree = worktree_tree(&repo)?;
    let tree = repo
        .find_tree(tree)
        .map_err(|e| git_error("cannot read the snapshot's files", e))?;
    let head = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
    let parents: Vec<&git2::Commit<'_>> = head.iter().collect();
    let who = Signature::now(AGENT_NAME, AGENT_EMAIL)
        .map_err(|e| git_error("cannot sign the snapshot", e))?;
    let message = format!("Healer snapshot of task {task_id}: {reason}");
    let commit = repo
        .commit(None, &who, &who, &message, &tree, &parents)
        .map_err(|e| git_error("cannot write the snapshot", e))?;
    let folder = task_refs(task_id);
    let seq = list_in(&repo, task_id)?
        .iter()
        .map(|p| p.seq)
        .max()
        .unwrap_or(0)
        + 1;
    let ref_name = format!("{folder}/{seq}");
    repo.reference(&ref_name, commit, false, &message)
        .map_err(|e| git_error(&format!("cannot pin the snapshot as {ref_name}"), e))?;
    Ok(Pinned {
        ref_name,
        commit: commit.to_string(),
        seq,
    })
}

/// Whether the worktree is still what the snapshot `commit` holds: the same files (tracked and
/// untracked, as a snapshot takes them) on the same HEAD.
pub fn matches(worktree: &Path, commit: &str) -> Result<bool> {
    let repo = open(worktree)?;
    let oid = git2::Oid::from_str(commit).map_err(|e| git_error("not a snapshot", e))?;
    let snap = repo
        .find_commit(oid)
        .map_err(|e| git_error("cannot read the snapshot", e))?;
    let head = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
    let same_head = snap.parent_ids().next() == head.map(|h| h.id());
    Ok(same_head && worktree_tree(&repo)? == snap.tree_id())
}

/// Pin the worktree and record the snapshot in the store (the ref first: a crash between the
/// two leaves a ref that [`record_unrecorded`] finds at the next start).
pub fn take(
    store: &Store,
    project_id: i64,
    worktree: &Path,
    task_id: &str,
    reason: &str,
) -> Result<SnapshotRecord> {
    let pinned = pin(worktree, task_id, reason)?;
    crate::failpoint::hit("snapshot_pinned");
    store.insert_snapshot(&NewSnapshot {
        project_id,
        task_id,
        seq: pinned.seq,
        ref_name: &pinned.ref_name,
        commit_id: &pinned.commit,
        worktree: &worktree.display().to_string(),
        reason,
    })
}

/// Restore a recorded snapshot into its task's worktree; what it replaces is recorded as a
/// snapshot too.
pub fn restore_recorded(store: &Store, id: i64) -> Result<Restored> {
    let snap = store.snapshot(id)?;
    if snap.worktree.is_empty() {
        return Err(Error::InvalidInput(format!(
            "snapshot {id} of task {} was found in the repository without its worktree; restore it with git: git checkout {} -- .",
            snap.task_id, snap.ref_name
        )));
    }
    let worktree = Path::new(&snap.worktree);
    if !worktree.is_dir() {
        // Its folder is gone (the work was discarded): its branch and a checkout of it are made
        // again from the snapshot, then the snapshot's files written back as for any restore.
        let project = store.project(snap.project_id)?;
        make_again(
            Path::new(&project.path),
            &snap.task_id,
            &snap.commit_id,
            worktree,
        )?;
    }
    let restored = restore(worktree, &snap.task_id, &snap.commit_id)?;
    if let Some(previous) = &restored.previous {
        store.insert_snapshot(&NewSnapshot {
            project_id: snap.project_id,
            task_id: &snap.task_id,
            seq: previous.seq,
            ref_name: &previous.ref_name,
            commit_id: &previous.commit,
            worktree: &snap.worktree,
            reason: "what the worktree held before a snapshot was restored",
        })?;
    }
    store.mark_snapshot_restored(id)?;
    Ok(restored)
}

/// The task's branch at the commit the snapshot `commit` was taken on (unless it still
/// exists), checked out at `folder`.
fn make_again(repo_path: &Path, task_id: &str, commit: &str, folder: &Path) -> Result<()> {
    let repo =
        Repository::open(repo_path).map_err(|e| git_error("cannot open the repository", e))?;
    let branch = super::worktree::branch_name(task_id);
    let reference = match repo.find_branch(&branch, git2::BranchType::Local) {
        Ok(b) => b.into_reference(),
        Err(_) => {
            let snap = git2::Oid::from_str(commit)
                .and_then(|oid| repo.find_commit(oid))
                .map_err(|e| git_error("cannot read the snapshot (was its ref deleted?)", e))?;
            let base = snap
                .parent(0)
                .map_err(|e| git_error("cannot read the commit the snapshot was taken on", e))?;
            repo.branch(&branch, &base, false)
                .map_err(|e| git_error(&format!("cannot make the branch {branch} again"), e))?
                .into_reference()
        }
    };
    super::worktree::add_worktree(&repo, folder, &reference)
}

/// Snapshot refs of a project's repository that the store does not know (Healer was ended
/// between pinning and recording): recorded now, and returned so start-up can say so.
pub fn record_unrecorded(
    store: &Store,
    project_id: i64,
    repo_path: &Path,
    worktree_of: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<SnapshotRecord>> {
    let known: std::collections::HashSet<String> = store
        .snapshots(Some(project_id), None)?
        .into_iter()
        .map(|s| s.ref_name)
        .collect();
    let mut found = Vec::new();
    for (ref_name, commit) in all_refs(repo_path)? {
        if known.contains(&ref_name) {
            continue;
        }
        let mut parts = ref_name
            .trim_start_matches(&format!("{SNAPSHOT_REFS}/"))
            .rsplitn(2, '/');
        let seq = parts.next().and_then(|n| n.parse().ok()).unwrap_or(0);
        let task_id = parts.next().unwrap_or_default().to_string();
        let worktree = worktree_of(&task_id).unwrap_or_default();
        found.push(store.insert_snapshot(&NewSnapshot {
            project_id,
            task_id: &task_id,
            seq,
            ref_name: &ref_name,
            commit_id: &commit,
            worktree: &worktree,
            reason: "found in the repository at start (Healer stopped before recording it)",
        })?);
    }
    Ok(found)
}

/// Where the task's worktree here remembers the files it held when Healer last wrote them (a
/// branch brought from a worker): in its own git folder, not among its files.
const BROUGHT: &str = "healer-brought";

/// Remember the worktree's files as they are now, as Healer left them.
pub fn remember_files(worktree: &Path) -> Result<()> {
    let repo = open(worktree)?;
    let tree = worktree_tree(&repo)?;
    // Written anew: a link someone put in its place is removed, never followed.
    let path = repo.path().join(BROUGHT);
    let _ = std::fs::remove_file(&path);
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .and_then(|mut file| std::io::Write::write_all(&mut file, tree.to_string().as_bytes()))
        .map_err(|e| Error::io("cannot note the worktree's files", e))
}

/// What [`remember_files`] noted, read only from a plain file, and bounded.
fn remembered(repo: &Repository) -> String {
    use std::io::Read;
    let path = repo.path().join(BROUGHT);
    if !std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
        return String::new();
    }
    let mut text = String::new();
    let _ = std::fs::File::open(&path).map(|f| f.take(128).read_to_string(&mut text));
    text.trim().to_string()
}

/// Whether the worktree's files are other than Healer last left them (someone changed them
/// since), when it has changes not committed at all.
pub fn changed_since_remembered(worktree: &Path) -> Result<bool> {
    let repo = open(worktree)?;
    let mut options = StatusOptions::new();
    options.include_untracked(true).include_ignored(false);
    let dirty = repo
        .statuses(Some(&mut options))
        .map_err(|e| git_error("cannot read the worktree's changes", e))?
        .iter()
        .any(|s| s.path().is_ok_and(|p| !is_healer(p)));
    if !dirty {
        return Ok(false);
    }
    Ok(worktree_tree(&repo)?.to_string() != remembered(&repo))
}

/// The tree of every tracked and untracked (not ignored) file as it is on disk, built in an
/// index that is never written back.
fn worktree_tree(repo: &Repository) -> Result<Oid> {
    let mut index = repo
        .index()
        .map_err(|e| git_error("cannot read the worktree's index", e))?;
    let mut skip_healer =
        |path: &Path, _: &[u8]| -> i32 { i32::from(is_healer(&path.to_string_lossy())) };
    index
        .add_all(["*"], IndexAddOption::DEFAULT, Some(&mut skip_healer))
        .map_err(|e| git_error("cannot read the worktree's files", e))?;
    index
        .update_all(["*"], Some(&mut skip_healer))
        .map_err(|e| git_error("cannot read the worktree's deleted files", e))?;
    index
        .write_tree()
        .map_err(|e| git_error("cannot write the snapshot's tree", e))
}

/// A task's snapshots in the repository, oldest first.
pub fn list(worktree_or_repo: &Path, task_id: &str) -> Result<Vec<Pinned>> {
    let repo = super::folder::open_folder(worktree_or_repo)?;
    list_in(&repo, task_id)
}

fn list_in(repo: &Repository, task_id: &str) -> Result<Vec<Pinned>> {
    let folder = task_refs(task_id);
    let mut out = Vec::new();
    let refs = repo
        .references_glob(&format!("{folder}/*"))
        .map_err(|e| git_error("cannot list the snapshots", e))?;
    for r in refs.flatten() {
        let (Ok(name), Some(target)) = (r.name(), r.target()) else {
            continue;
        };
        let Some(seq) = name.rsplit('/').next().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        out.push(Pinned {
            ref_name: name.to_string(),
            commit: target.to_string(),
            seq,
        });
    }
    out.sort_by_key(|p| p.seq);
    Ok(out)
}

/// Every snapshot ref in the repository (all tasks): what start-up compares with the store.
pub fn all_refs(repo_path: &Path) -> Result<Vec<(String, String)>> {
    let repo =
        Repository::open(repo_path).map_err(|e| git_error("cannot open the repository", e))?;
    let refs = repo
        .references_glob(&format!("{SNAPSHOT_REFS}/*"))
        .map_err(|e| git_error("cannot list the snapshots", e))?;
    Ok(refs
        .flatten()
        .filter_map(|r| Some((r.name().ok()?.to_string(), r.target()?.to_string())))
        .collect())
}

#[cfg(test)]
mod tests;
