//! What an agent changed, for a person to review file by file: while it works, its worktree
//! (committed or not, new files included) against the commit its task started from; after, the
//! commit it ended with against that start. Each file with its lines added and removed and both
//! texts, for the same side-by-side view as a workflow's versions.

use std::path::Path;

use git2::{Delta, DiffOptions, Oid, Repository};
use serde::{Deserialize, Serialize};

use super::own_copy::holds_branch;
use super::repo::git_error;
use crate::error::Result;
use crate::store::SessionRecord;
use crate::tasklist::HEALER_DIR;

/// A file's text is shown up to this size; past it, only its counts.
const MAX_SHOWN_BYTES: usize = 256 * 1024;
/// Past this many files only the first are listed (with their counts), and the review says so.
const MAX_FILES: usize = 300;

/// Which change is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ReviewOf {
    /// The worktree as it is now (the agent is working, or its work was not committed).
    Worktree,
    /// The commit the session ended with.
    Commit,
    /// Nothing to show: no commit, and the worktree is gone.
    Nothing,
}

/// One changed file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct ReviewFile {
    pub path: String,
    /// Its path before, when it was renamed.
    pub old_path: Option<String>,
    /// "added", "deleted", "modified", "renamed", "changed type".
    pub how: String,
    pub added: u32,
    pub removed: u32,
    /// The text before and after (`None`: the file did not exist on that side, or is not shown).
    pub before: Option<String>,
    pub after: Option<String>,
    /// Not text (or too large to show): only its counts.
    pub shown: bool,
}

/// A session's (or a task's) change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct ChangeReview {
    pub of: ReviewOf,
    /// The commit shown (`ReviewOf::Commit`), short.
    pub commit: Option<String>,
    pub files: Vec<ReviewFile>,
    /// More files changed than are listed.
    pub more_files: u32,
    /// The folder "Open in editor" / "Open a terminal here" open: the worktree standing on the
    /// task's branch, else where its branch is checked out for the person; `None`: nothing of
    /// it is left to open.
    pub worktree: Option<String>,
    /// The session whose change this is.
    pub session_id: Option<i64>,
}

impl ChangeReview {
    /// Nothing to show and nothing to open.
    pub fn nothing() -> ChangeReview {
        ChangeReview {
            of: ReviewOf::Nothing,
            commit: None,
            files: Vec::new(),
            more_files: 0,
            worktree: None,
            session_id: None,
        }
    }
}

/// The change of `session` in the repository at `repo_path`. Blocking. Its working folder
/// counts only while it stands on the session's branch: a slot is reused once its task is
/// closed, and then holds another task's work. `review` is where the task's own branch is
/// checked out for the person when no worktree stands on it.
pub fn review_session(
    repo_path: &Path,
    session: &SessionRecord,
    review: &Path,
) -> Result<ChangeReview> {
    let worktree = Path::new(&session.worktree);
    let worktree_there = holds_branch(worktree, &session.branch);
    let repo = Repository::open(repo_path)
        .map_err(|e| git_error("cannot open the project's repository", e))?;
    let branch_tip = repo
        .find_branch(&session.branch, git2::BranchType::Local)
        .ok()
        .and_then(|b| b.get().peel_to_commit().ok())
        .map(|c| c.id().to_string());
    // Where "Open in editor" opens: the worktree on the branch, else a checkout of the branch
    // (or of the session's commit) made when asked.
    let opens = if worktree_there {
        Some(session.worktree.clone())
    } else if branch_tip.is_some() || session.commit_id.is_some() {
        Some(review.display().to_string())
    } else {
        None
    };
    let shown = match (&session.commit_id, worktree_there, &session.base_commit) {
        (Some(commit), _, base) => Some(between_commits(&repo, base.as_deref(), commit)?),
        (None, true, Some(base)) => Some(worktree_since(worktree, base)?),
        // Its folder went to another task: what its branch holds, when it holds anything.
        (None, false, Some(base)) => match &branch_tip {
            Some(tip) if tip != base => Some(between_commits(&repo, Some(base), tip)?),
            _ => None,
        },
        (None, _, None) => None,
    };
    let mut review = shown.unwrap_or_else(ChangeReview::nothing);
    review.worktree = opens;
    review.session_id = Some(session.id);
    Ok(review)
}

fn between_commits(repo: &Repository, base: Option<&str>, commit: &str) -> Result<ChangeReview> {
    let read = |what: &str, id: &str| {
        Oid::from_str(id)
            .and_then(|oid| repo.find_commit(oid))
            .map_err(|e| git_error(what, e))
    };
    let end = read("cannot read the session's commit", commit)?;
    let start = match base {
        Some(base) => Some(read("cannot read the commit the task started from", base)?),
        None => end.parent(0).ok(),
    };
    let old_tree = match &start {
        Some(c) => Some(c.tree().map_err(|e| git_error("cannot read a commit", e))?),
        None => None,
    };
    let new_tree = end
        .tree()
        .map_err(|e| git_error("cannot read the session's commit", e))?;
    let diff = repo
        .diff_tree_to_tree(old_tree.as_ref(), Some(&new_tree), None)
        .map_err(|e| git_error("cannot compare the commits", e))?;
    let (files, more_files) = files_of(repo, &diff, None)?;
    Ok(ChangeReview {
        of: ReviewOf::Commit,
        commit: Some(super::repo::short(&end.id())),
        files,
        more_files,
        worktree: None,
        session_id: None,
    })
}

fn worktree_since(worktree: &Path, base: &str) -> Result<ChangeReview> {
    let repo = super::folder::open_folder(worktree)?;
    let tree = Oid::from_str(base)
        .and_then(|oid| repo.find_commit(oid))
        .and_then(|c| c.tree())
        .map_err(|e| git_error("cannot read the commit the task started from", e))?;
    let mut options = DiffOptions::new();
    options
        .include_untracked(true)
        .recurse_untracked_dirs(true)
        .show_untracked_content(true);
    let diff = repo
        .diff_tree_to_workdir_with_index(Some(&tree), Some(&mut options))
        .map_err(|e| git_error("cannot compare the worktree", e))?;
    let (files, more_files) = files_of(&repo, &diff, Some(worktree))?;
    Ok(ChangeReview {
        of: ReviewOf::Worktree,
        commit: None,
        files,
        more_files,
        worktree: None,
        session_id: None,
    })
}

/// The diff's files (Healer's own `.healer/` aside). The new side is read from `workdir` when
/// the diff is against the working files.
fn files_of(
    repo: &Repository,
    diff: &git2::Diff<'_>,
    workdir: Option<&Path>,
) -> Result<(Vec<ReviewFile>, u32)> {
    let healer = format!("{HEALER_DIR}/");
    let mut files = Vec::new();
    let mut more = 0u32;
    for (i, delta) in diff.deltas().enumerate() {
        let new_path = delta
            .new_file()
            .path()
            .map(|p| p.to_string_lossy().into_owned());
        let old_path = delta
            .old_file()
            .path()
            .map(|p| p.to_string_lossy().into_owned());
        let Some(path) = new_path.clone().or_else(|| old_path.clone()) else {
            continue;
        };
        if path.starts_with(&healer) {
            continue;
        }
        if files.len() >= MAX_FILES {
            more += 1;
            continue;
        }
        let how = match delta.status() {
            Delta::Added | Delta::Untracked => "added",
            Delta::Deleted => "deleted",
            Delta::Renamed => "renamed",
            Delta::Typechange => "changed type",
            _ => "modified",
        };
        let (added, removed) = git2::Patch::from_diff(diff, i)
            .ok()
            .flatten()
            .and_then(|patch| patch.line_stats().ok())
            .map_or((0, 0), |(_, added, removed)| (added, removed));
        let before = match delta.status() {
            Delta::Added | Delta::Untracked => Some(Vec::new()),
            _ => repo
                .find_blob(delta.old_file().id())
                .ok()
                .map(|b| b.content().to_vec()),
        };
        let after = match (delta.status(), workdir) {
            (Delta::Deleted, _) => Some(Vec::new()),
            (_, Some(dir)) => read_below(dir, Path::new(&path)),
            (_, None) => repo
                .find_blob(delta.new_file().id())
                .ok()
                .map(|b| b.content().to_vec()),
        };
        let before = before.and_then(shown_text);
        let after = after.and_then(shown_text);
        let shown = before.is_some() && after.is_some();
        files.push(ReviewFile {
            old_path: (how == "renamed").then_some(old_path).flatten(),
            path,
            how: how.to_string(),
            added: u32::try_from(added).unwrap_or(u32::MAX),
            removed: u32::try_from(removed).unwrap_or(u32::MAX),
            before: if shown { before } else { None },
            after: if shown { after } else { None },
            shown,
        });
    }
    Ok((files, more))
}

/// A working file's bytes, read as the repository cannot trick: never through a symbolic link
/// anywhere on its path, never a FIFO or device (which would block), never more than can be
/// shown. `None`: not shown (its counts still are).
fn read_below(root: &Path, rel: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let (folder, name) = crate::beneath::parent(root, rel, false).ok()?;
    let file = folder
        .open(
            name,
            nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_NONBLOCK,
            0,
        )
        .ok()?;
    if file.metadata().ok()?.len() > MAX_SHOWN_BYTES as u64 {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(MAX_SHOWN_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(bytes)
}

/// Text a person can read in the side-by-side view, or `None` (binary, or too large). Known
/// secrets are redacted like everything else Healer shows.
fn shown_text(bytes: Vec<u8>) -> Option<String> {
    if bytes.len() > MAX_SHOWN_BYTES || bytes.iter().take(8000).any(|b| *b == 0) {
        return None;
    }
    String::from_utf8(bytes)
        .ok()
        .map(crate::secrets::redact_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commit_all(repo: &Repository, message: &str) -> Oid {
        let mut index = repo.index().expect("index");
        index
            .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
            .expect("add");
        index.write().expect("write index");
        let tree = repo
            .find_tree(index.write_tree().expect("tree"))
            .expect("tree");
        let who = git2::Signature::now("t", "t@example.invalid").expect("signature");
        let parents: Vec<git2::Commit<'_>> = repo
            .head()
            .ok()
            .and_then(|h| h.peel_to_commit().ok())
            .into_iter()
            .collect();
        let parents: Vec<&git2::Commit<'_>> = parents.iter().collect();
        repo.commit(Some("HEAD"), &who, &who, message, &tree, &parents)
            .expect("commit")
    }

    #[test]
    fn a_worktree_that_links_outside_or_holds_a_fifo_shows_neither_and_never_blocks() {
        let dir = tempfile::tempdir().expect("tempdir");
        let work = dir.path().join("work");
        std::fs::create_dir_all(&work).expect("work");
        let repo = Repository::init(&work).expect("init");
        crate::project::trust_repository(&work);
        std::fs::write(work.join("greet.py"), "print('Hi')\n").expect("write");
        let base = commit_all(&repo, "start");

        let outside = dir.path().join("outside.txt");
        std::fs::write(&outside, "canary-outside-the-repo-77\n").expect("write");
        std::os::unix::fs::symlink(&outside, work.join("link.txt")).expect("symlink");
        nix::unistd::mkfifo(&work.join("pipe"), nix::sys::stat::Mode::S_IRWXU).expect("fifo");
        std::fs::write(work.join("greet.py"), "print('Hello')\n").expect("write");

        let review = worktree_since(&work, &base.to_string()).expect("review");
        let text = serde_json::to_string(&review).expect("json");
        assert!(!text.contains("canary-outside-the-repo-77"), "{text}");
        let greet = review
            .files
            .iter()
            .find(|f| f.path == "greet.py")
            .expect("greet.py");
        assert_eq!(greet.after.as_deref(), Some("print('Hello')\n"));
        if let Some(link) = review.files.iter().find(|f| f.path == "link.txt") {
            assert!(!link.shown || !link.after.as_deref().unwrap_or("").contains("canary"));
        }
    }
}
