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
    let safe: String = task_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{SNAPSHOT_REFS}/{safe}")
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
    Repository::open(worktree).map_err(|e| git_error("cannot open the worktree", e))
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
    let repo = Repository::open(worktree_or_repo)
        .map_err(|e| git_error("cannot open the repository", e))?;
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

/// A file of a snapshot: its blob and git mode.
struct Entry {
    blob: Oid,
    mode: i32,
}

/// Write the snapshot `commit` back into the worktree of `task_id`, byte for byte: files it
/// holds are written (mode kept), files it does not hold are removed (ignored files and
/// `.healer/` are left alone). What the worktree held before is pinned first when it differs.
pub fn restore(worktree: &Path, task_id: &str, commit: &str) -> Result<Restored> {
    let repo = open(worktree)?;
    let oid =
        Oid::from_str(commit).map_err(|e| git_error("the snapshot's commit is not valid", e))?;
    let target = repo
        .find_commit(oid)
        .and_then(|c| c.tree())
        .map_err(|e| git_error("cannot read the snapshot (was its ref deleted?)", e))?;
    let now = worktree_tree(&repo)?;
    let previous = if now == target.id() {
        return Ok(Restored {
            written: 0,
            removed: 0,
            previous: None,
        });
    } else {
        Some(pin(
            worktree,
            task_id,
            "what the worktree held before a restore",
        )?)
    };
    let (written, removed) = write_back(&repo, &target)?;
    Ok(Restored {
        written,
        removed,
        previous,
    })
}

/// What a rewind did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewound {
    pub written: usize,
    pub removed: usize,
    /// Said when the index could not follow (another git process holds `index.lock`): the
    /// files are rewound, the staged state was left as it was.
    pub index_left: Option<String>,
}

/// Put the worktree's files back to `commit` (pin a snapshot first: this discards changes).
/// `move_branch`: the branch checked out moves to `commit` too (its later commits stay
/// reachable from the snapshot pinned before, whose parent is the old HEAD).
pub fn rewind(worktree: &Path, commit: &str, move_branch: bool) -> Result<Rewound> {
    let repo = open(worktree)?;
    let oid =
        Oid::from_str(commit).map_err(|e| git_error("the commit to rewind to is not valid", e))?;
    let target = repo
        .find_commit(oid)
        .map_err(|e| git_error("cannot read the commit to rewind to", e))?;
    if move_branch {
        let head = repo
            .head()
            .map_err(|e| git_error("cannot read the worktree's branch", e))?;
        let name = head
            .name()
            .map_err(|e| git_error("the worktree's branch has no name", e))?
            .to_string();
        repo.reference(&name, oid, true, "healer: rewind to the last green commit")
            .map_err(|e| git_error(&format!("cannot move {name}"), e))?;
    }
    let tree = target
        .tree()
        .map_err(|e| git_error("cannot read the commit's files", e))?;
    let (written, removed) = write_back(&repo, &tree)?;
    let index_left = match repo.reset(target.as_object(), git2::ResetType::Mixed, None) {
        Ok(()) => None,
        Err(e) if e.code() == git2::ErrorCode::Locked => Some(
            "another git program holds the worktree's index, so what was staged was left as it was"
                .to_string(),
        ),
        Err(e) => return Err(git_error("cannot update the worktree's index", e)),
    };
    Ok(Rewound {
        written,
        removed,
        index_left,
    })
}

/// Make the worktree's files (ignored ones and `.healer/` aside) exactly `target`'s.
fn write_back(repo: &Repository, target: &git2::Tree<'_>) -> Result<(usize, usize)> {
    let mut wanted: BTreeMap<String, Entry> = BTreeMap::new();
    target
        .walk(TreeWalkMode::PreOrder, |dir, entry| {
            if entry.kind() == Some(ObjectType::Blob) {
                if let Ok(name) = entry.name() {
                    wanted.insert(
                        format!("{dir}{name}"),
                        Entry {
                            blob: entry.id(),
                            mode: entry.filemode(),
                        },
                    );
                }
            }
            git2::TreeWalkResult::Ok
        })
        .map_err(|e| git_error("cannot read the snapshot's files", e))?;
    let root = repo
        .workdir()
        .ok_or_else(|| Error::Internal("the worktree has no working folder".to_string()))?
        .to_path_buf();
    let mut removed = 0;
    for path in present_files(repo)? {
        if is_healer(&path) || wanted.contains_key(&path) {
            continue;
        }
        let full = safe_join(&root, &path)?;
        // A file git remembers below a folder that is now a link is not in the worktree:
        // removing it by path would remove a file elsewhere. The link itself is a file of its
        // own here, removed or replaced on its own turn.
        if !below_real_folders(&root, &path) {
            continue;
        }
        if full.symlink_metadata().is_ok() {
            std::fs::remove_file(&full)
                .map_err(|e| Error::io(format!("cannot remove {}", full.display()), e))?;
            removed += 1;
            remove_empty_parents(&root, &full);
        }
    }
    let mut written = 0;
    for (path, entry) in &wanted {
        if is_healer(path) {
            continue;
        }
        let full = safe_join(&root, path)?;
        // Its folders as the snapshot has them: a link standing where a folder belongs is
        // replaced, never followed, so nothing is written outside the worktree.
        let folder = Path::new(path).parent().unwrap_or_else(|| Path::new(""));
        crate::beneath::restore_dir(&root, folder)
            .map_err(|e| Error::io(format!("cannot put back the folder of {path}"), e))?;
        let blob = repo
            .find_blob(entry.blob)
            .map_err(|e| git_error(&format!("cannot read {path} from the snapshot"), e))?;
        if write_file(&full, blob.content(), entry.mode)? {
            written += 1;
        }
    }
    Ok((written, removed))
}

/// Files on disk git would see: tracked (index) and untracked, not ignored.
fn present_files(repo: &Repository) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let index = repo
        .index()
        .map_err(|e| git_error("cannot read the worktree's index", e))?;
    for entry in index.iter() {
        // A submodule (a gitlink) is a repository of its own, not a file to put back.
        if entry.mode == 0o160000 {
            continue;
        }
        out.push(String::from_utf8_lossy(&entry.path).into_owned());
    }
    let mut options = StatusOptions::new();
    options
        .include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false);
    let statuses = repo
        .statuses(Some(&mut options))
        .map_err(|e| git_error("cannot read the worktree's status", e))?;
    for s in statuses.iter() {
        if s.status().is_wt_new() {
            if let Ok(p) = s.path() {
                out.push(p.to_string());
            }
        }
    }
    Ok(out)
}

/// Whether every folder of `path` below `root` is a real folder (no link among them).
fn below_real_folders(root: &Path, path: &str) -> bool {
    let folder = Path::new(path).parent().unwrap_or_else(|| Path::new(""));
    crate::beneath::dir(root, folder, false).is_ok()
}

/// `root/path`, refusing a path that climbs out of the worktree.
fn safe_join(root: &Path, path: &str) -> Result<std::path::PathBuf> {
    let rel = Path::new(path);
    if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
        return Err(Error::InvalidInput(format!(
            "the snapshot names a path outside the worktree: {path}"
        )));
    }
    Ok(root.join(rel))
}

/// Write one file as git keeps it; `false` when it already held exactly this.
fn write_file(full: &Path, content: &[u8], mode: i32) -> Result<bool> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::PermissionsExt;
    let link = mode == i32::from(git2::FileMode::Link);
    let exec = mode == i32::from(git2::FileMode::BlobExecutable);
    if let Ok(meta) = full.symlink_metadata() {
        let same = if link {
            meta.file_type().is_symlink()
                && std::fs::read_link(full).is_ok_and(|t| t.as_os_str().as_bytes() == content)
        } else {
            meta.is_file()
                && (meta.permissions().mode() & 0o111 != 0) == exec
                && std::fs::read(full).is_ok_and(|b| b == content)
        };
        if same {
            return Ok(false);
        }
        let gone = if meta.is_dir() {
            std::fs::remove_dir_all(full)
        } else {
            std::fs::remove_file(full)
        };
        gone.map_err(|e| Error::io(format!("cannot replace {}", full.display()), e))?;
    }
    if let Some(parent) = full.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| Error::io(format!("cannot create {}", parent.display()), e))?;
    }
    if link {
        let target = std::ffi::OsStr::from_bytes(content);
        std::os::unix::fs::symlink(target, full)
            .map_err(|e| Error::io(format!("cannot write the link {}", full.display()), e))?;
        return Ok(true);
    }
    std::fs::write(full, content)
        .map_err(|e| Error::io(format!("cannot write {}", full.display()), e))?;
    let bits = if exec { 0o755 } else { 0o644 };
    std::fs::set_permissions(full, std::fs::Permissions::from_mode(bits))
        .map_err(|e| Error::io(format!("cannot set the mode of {}", full.display()), e))?;
    Ok(true)
}

/// Folders left empty by a removal go too (git does not keep empty folders).
fn remove_empty_parents(root: &Path, file: &Path) {
    let mut dir = file.parent();
    while let Some(d) = dir {
        if d == root || std::fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::os::unix::fs::PermissionsExt;
    use std::path::PathBuf;

    fn repo_with_files(dir: &Path) -> Repository {
        let repo = Repository::init(dir).expect("test setup");
        std::fs::write(dir.join("a.txt"), "one\n").expect("test setup");
        std::fs::create_dir_all(dir.join("src")).expect("test setup");
        std::fs::write(dir.join("src/lib.rs"), "fn main() {}\n").expect("test setup");
        std::fs::write(dir.join(".gitignore"), "target/\n").expect("test setup");
        crate::project::init_with_first_commit(dir).expect("test setup");
        repo
    }

    /// Every file under `dir` (not `.git`, not ignored `target/`, not `.healer/`) with its
    /// bytes and executable bit.
    fn files(dir: &Path) -> BTreeMap<PathBuf, (Vec<u8>, bool)> {
        let mut out = BTreeMap::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).expect("test setup") {
                let p = e.expect("test setup").path();
                let rel = p.strip_prefix(dir).expect("test setup").to_path_buf();
                let first = rel
                    .components()
                    .next()
                    .expect("test setup")
                    .as_os_str()
                    .to_owned();
                if first == ".git" || first == "target" || first == ".healer" {
                    continue;
                }
                if p.is_dir() {
                    stack.push(p);
                } else {
                    let exec = p.metadata().expect("test setup").permissions().mode() & 0o111 != 0;
                    out.insert(rel, (std::fs::read(&p).expect("test setup"), exec));
                }
            }
        }
        out
    }

    fn dirty(dir: &Path) {
        std::fs::write(dir.join("a.txt"), "one\nchanged by the agent\n").expect("test setup");
        std::fs::remove_file(dir.join("src/lib.rs")).expect("test setup");
        std::fs::create_dir_all(dir.join("new/deep")).expect("test setup");
        std::fs::write(
            dir.join("new/deep/untracked.bin"),
            [0u8, 159, 146, 150, 255],
        )
        .expect("test setup");
        std::fs::write(dir.join("run.sh"), "#!/bin/sh\necho hi\n").expect("test setup");
        std::fs::set_permissions(dir.join("run.sh"), std::fs::Permissions::from_mode(0o755))
            .expect("test setup");
        std::fs::create_dir_all(dir.join("target")).expect("test setup");
        std::fs::write(dir.join("target/build.o"), "ignored").expect("test setup");
    }

    #[test]
    fn a_restored_snapshot_matches_every_file_byte_for_byte_untracked_included() {
        let tmp = tempfile::tempdir().expect("test setup");
        let dir = tmp.path();
        let repo = repo_with_files(dir);
        let index_before = std::fs::read(dir.join(".git/index")).expect("test setup");
        let head_before = repo
            .head()
            .expect("test setup")
            .target()
            .expect("test setup");
        dirty(dir);
        let pinned_files = files(dir);

        let pinned = pin(dir, "t-1", "before a rewind").expect("test setup");
        assert_eq!(pinned.ref_name, "refs/healer/snapshots/t-1/1");
        assert_eq!(pinned.seq, 1);
        // Pinning left the real index and HEAD alone.
        assert_eq!(
            std::fs::read(dir.join(".git/index")).expect("test setup"),
            index_before
        );
        assert_eq!(
            repo.head()
                .expect("test setup")
                .target()
                .expect("test setup"),
            head_before
        );
        assert_eq!(files(dir), pinned_files);

        // Something else happens to the worktree: back to its commit, then more changes.
        std::fs::write(dir.join("a.txt"), "one\n").expect("test setup");
        std::fs::write(dir.join("src/lib.rs"), "fn main() {}\n").expect("test setup");
        std::fs::remove_dir_all(dir.join("new")).expect("test setup");
        std::fs::remove_file(dir.join("run.sh")).expect("test setup");
        std::fs::write(dir.join("later.txt"), "written after the snapshot").expect("test setup");

        let restored = restore(dir, "t-1", &pinned.commit).expect("test setup");
        assert_eq!(files(dir), pinned_files, "every file back, byte for byte");
        assert!(restored.written >= 3, "{restored:?}");
        assert_eq!(restored.removed, 2, "later.txt and the tracked src/lib.rs");
        // The ignored build output was left alone.
        assert_eq!(
            std::fs::read(dir.join("target/build.o")).expect("test setup"),
            b"ignored"
        );
        // What the restore replaced is itself pinned, so it can be had back.
        let previous = restored.previous.expect("test setup");
        assert_eq!(previous.seq, 2);
        restore(dir, "t-1", &previous.commit).expect("test setup");
        assert_eq!(
            std::fs::read(dir.join("later.txt")).expect("test setup"),
            b"written after the snapshot"
        );
        assert_eq!(
            list(dir, "t-1")
                .expect("test setup")
                .iter()
                .map(|p| p.seq)
                .collect::<Vec<_>>(),
            vec![1, 2, 3]
        );
    }

    #[test]
    fn a_snapshot_is_taken_while_another_git_process_holds_the_index_lock() {
        let tmp = tempfile::tempdir().expect("test setup");
        let dir = tmp.path();
        repo_with_files(dir);
        dirty(dir);
        let expected = files(dir);
        std::fs::write(dir.join(".git/index.lock"), "").expect("test setup");
        let pinned = pin(dir, "t-2", "locked").expect("test setup");
        std::fs::remove_file(dir.join("a.txt")).expect("test setup");
        restore(dir, "t-2", &pinned.commit).expect("test setup");
        assert_eq!(files(dir), expected);
        assert!(
            dir.join(".git/index.lock").exists(),
            "the other process's lock is kept"
        );
    }

    #[test]
    fn healers_own_folder_is_neither_pinned_nor_rewritten() {
        let tmp = tempfile::tempdir().expect("test setup");
        let dir = tmp.path();
        repo_with_files(dir);
        std::fs::create_dir_all(dir.join(".healer")).expect("test setup");
        std::fs::write(dir.join(".healer/tasks.jsonl"), "before\n").expect("test setup");
        let pinned = pin(dir, "t-3", "x").expect("test setup");
        std::fs::write(dir.join(".healer/tasks.jsonl"), "after\n").expect("test setup");
        std::fs::write(dir.join("a.txt"), "changed").expect("test setup");
        restore(dir, "t-3", &pinned.commit).expect("test setup");
        assert_eq!(
            std::fs::read(dir.join(".healer/tasks.jsonl")).expect("test setup"),
            b"after\n"
        );
        assert_eq!(
            std::fs::read(dir.join("a.txt")).expect("test setup"),
            b"one\n"
        );
    }

    #[test]
    fn a_deleted_worktree_is_said_plainly() {
        let tmp = tempfile::tempdir().expect("test setup");
        let gone = tmp.path().join("gone");
        let err = pin(&gone, "t-4", "x").expect_err("an error");
        assert!(err.to_string().contains("gone"), "{err}");
        assert!(matches!(err, Error::NotFound { .. }));
    }

    #[test]
    fn a_snapshot_of_a_worktree_is_kept_in_the_main_repository() {
        let tmp = tempfile::tempdir().expect("test setup");
        let main = tmp.path().join("main");
        std::fs::create_dir_all(&main).expect("test setup");
        repo_with_files(&main);
        let slot = tmp.path().join("slot");
        super::super::worktree::prepare(&main, "master", "t-5", &slot)
            .or_else(|_| super::super::worktree::prepare(&main, "main", "t-5", &slot))
            .expect("test setup");
        std::fs::write(slot.join("wip.txt"), "work in progress").expect("test setup");
        let pinned = pin(&slot, "t-5", "x").expect("test setup");
        let seen = all_refs(&main).expect("test setup");
        assert_eq!(seen, vec![(pinned.ref_name.clone(), pinned.commit.clone())]);
    }

    #[test]
    fn a_recorded_snapshot_is_restored_by_its_id_and_a_ref_left_unrecorded_is_found() {
        let tmp = tempfile::tempdir().expect("test setup");
        let dir = tmp.path().join("repo");
        std::fs::create_dir_all(&dir).expect("test setup");
        repo_with_files(&dir);
        let store = Store::open(&tmp.path().join("h.db")).expect("test setup");
        let p = store
            .insert_project("p", &dir.display().to_string(), &Default::default())
            .expect("test setup");
        dirty(&dir);
        let expected = files(&dir);
        let snap = take(&store, p.id, &dir, "t-6", "before a rewind").expect("test setup");
        assert_eq!(snap.ref_name, "refs/healer/snapshots/t-6/1");
        std::fs::write(dir.join("a.txt"), "rewound").expect("test setup");
        let restored = restore_recorded(&store, snap.id).expect("test setup");
        assert_eq!(files(&dir), expected);
        assert!(store
            .snapshot(snap.id)
            .expect("test setup")
            .restored_at
            .is_some());
        // The state the restore replaced is recorded as a snapshot too.
        let all = store
            .snapshots(Some(p.id), Some("t-6"))
            .expect("test setup");
        assert_eq!(all.len(), 2);
        assert_eq!(
            all[0].ref_name,
            restored.previous.expect("test setup").ref_name
        );

        // A pin whose recording never happened (Healer killed between the two).
        let orphan = pin(&dir, "t-7", "x").expect("test setup");
        let wt = dir.display().to_string();
        let found = record_unrecorded(&store, p.id, &dir, &|task| {
            (task == "t-7").then(|| wt.clone())
        })
        .expect("test setup");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].ref_name, orphan.ref_name);
        assert_eq!(found[0].task_id, "t-7");
        assert_eq!(found[0].seq, 1);
        assert!(record_unrecorded(&store, p.id, &dir, &|_| None)
            .expect("test setup")
            .is_empty());
    }

    /// A branch with a green commit, red work committed after it, and more changes not
    /// committed; pinned, rewound to the green commit (another git program holding the index
    /// when `locked`), and the pinned snapshot restored.
    fn rewind_story(locked: bool) {
        let tmp = tempfile::tempdir().expect("tmp");
        let dir = tmp.path();
        let repo = repo_with_files(dir);
        let green = repo.head().expect("head").target().expect("oid");
        let at_green = files(dir);
        // The agent committed red work itself, then changed more.
        std::fs::write(dir.join("a.txt"), "red\n").expect("write");
        let mut index = repo.index().expect("index");
        index
            .add_all(["*"], IndexAddOption::DEFAULT, None)
            .expect("add");
        index.write().expect("index");
        let tree = repo
            .find_tree(index.write_tree().expect("tree"))
            .expect("tree");
        let who = Signature::now("a", "a@a").expect("sig");
        let parent = repo.find_commit(green).expect("commit");
        let red = repo
            .commit(Some("HEAD"), &who, &who, "red", &tree, &[&parent])
            .expect("commit");
        dirty(dir);
        let before = files(dir);
        let lock = dir.join(".git/index.lock");
        if locked {
            std::fs::write(&lock, "").expect("test setup");
        }

        let pinned = pin(dir, "t-8", "before going back").expect("pin");
        let done = rewind(dir, &green.to_string(), true).expect("rewind");
        assert_eq!(done.index_left.is_some(), locked, "{:?}", done.index_left);
        assert_eq!(
            lock.exists(),
            locked,
            "the other program's lock is left alone"
        );
        assert_eq!(files(dir), at_green, "the files of the green commit");
        assert_eq!(
            repo.head().expect("head").target(),
            Some(green),
            "the branch moved back"
        );
        // The red commit is still reachable: the snapshot's parent.
        let snap = repo
            .find_commit(Oid::from_str(&pinned.commit).expect("oid"))
            .expect("snapshot");
        assert_eq!(snap.parent_id(0).expect("parent"), red);
        restore(dir, "t-8", &pinned.commit).expect("restore");
        assert_eq!(files(dir), before);
    }

    #[test]
    fn a_rewind_to_an_older_commit_moves_the_branch_and_the_snapshot_keeps_what_came_after() {
        rewind_story(false);
    }

    #[test]
    fn a_rewind_to_an_older_commit_works_while_another_git_program_holds_the_index() {
        rewind_story(true);
    }
}
