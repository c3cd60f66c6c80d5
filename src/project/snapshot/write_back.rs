//! Writing a snapshot or a commit back into a worktree: restore (byte for byte, what it
//! replaces pinned first) and rewind (the files back to a commit, the branch too when asked),
//! through the same careful writer — no write through a link, no path outside the worktree.

use super::*;

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
