//! The control room's git for sessions on the cluster: bringing a pushed branch into the
//! task's worktree here, and putting it back on the remote when a rewind moved it here. Only
//! the person's own sign-in is used, nothing asks, and no hook or setting of the repository
//! runs a program.

use std::path::Path;

use crate::error::Result;
use crate::project::push::{self, Remote};
use crate::project::quiet_git::run;
use crate::store::{Project, RunsOn};

/// A full commit id git printed, or why not.
fn commit_of(text: std::result::Result<String, String>) -> Option<String> {
    text.ok()
        .map(|t| t.trim().to_string())
        .filter(|t| push::is_full_hash(t))
}

/// Whether `older` is an ancestor of (or the same commit as) `newer` in `dir`.
pub(super) async fn is_ancestor(dir: &Path, older: &str, newer: &str) -> bool {
    run(dir, &["merge-base", "--is-ancestor", older, newer])
        .await
        .is_ok()
}

/// The main branch's last commit in the person's repository.
pub(super) fn main_commit(repo: &Path, main: &str) -> Result<String> {
    let repository = git2::Repository::open(repo)
        .map_err(|e| crate::project::repo::git_error("cannot open the repository", e))?;
    let commit = repository
        .revparse_single(&format!("refs/heads/{main}"))
        .and_then(|o| o.peel_to_commit())
        .map_err(|e| {
            crate::project::repo::git_error(&format!("cannot read {main}'s last commit"), e)
        })?;
    Ok(commit.id().to_string())
}

/// Fetch `branch` from `remote` into the worktree; the commit fetched.
pub(super) async fn fetch_into(worktree: &Path, remote: &str, branch: &str) -> Option<String> {
    if remote.starts_with('-') {
        return None;
    }
    let refspec = format!("refs/heads/{branch}");
    let args = [
        "fetch",
        "--no-tags",
        "--quiet",
        "--recurse-submodules=no",
        "--",
        remote,
        &refspec,
    ];
    run(worktree, &args).await.ok()?;
    commit_of(
        run(
            worktree,
            &["rev-parse", "--verify", "--quiet", "FETCH_HEAD^{commit}"],
        )
        .await,
    )
}

/// The parent of `commit`, when it has exactly one (a merge is not the worker's commit of
/// what an agent left).
pub(super) async fn only_parent_of(worktree: &Path, commit: &str) -> Option<String> {
    let listed = run(worktree, &["rev-list", "--parents", "-n", "1", commit])
        .await
        .ok()?;
    match listed.split_whitespace().collect::<Vec<_>>().as_slice() {
        [this, parent] if *this == commit && push::is_full_hash(parent) => {
            Some((*parent).to_string())
        }
        _ => None,
    }
}

/// The worktree's branch, index and files at `commit`.
pub(super) async fn reset_to(worktree: &Path, commit: &str) -> std::result::Result<(), String> {
    run(worktree, &["reset", "--quiet", "--hard", commit])
        .await
        .map(drop)
        .map_err(|e| format!("the worktree could not be moved to the pushed branch: {e}"))
}

/// The worktree's branch and index at `commit`, its files left as they are: what a later
/// commit added shows as changes not committed yet.
pub(super) async fn unpack_to(worktree: &Path, commit: &str) -> std::result::Result<(), String> {
    run(worktree, &["reset", "--quiet", "--mixed", commit])
        .await
        .map(drop)
        .map_err(|e| format!("the worker's last commit could not be opened here: {e}"))
}

/// Where `branch` stands on `remote`: `Ok(None)` when the remote has no such branch.
async fn remote_tip(
    dir: &Path,
    remote: &str,
    branch: &str,
) -> std::result::Result<Option<String>, String> {
    if remote.starts_with('-') {
        return Err(format!("“{remote}” is not a repository's address"));
    }
    let refname = format!("refs/heads/{branch}");
    let listed = run(dir, &["ls-remote", "--", remote, &refname]).await?;
    Ok(listed
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .find(|(_, name)| *name == refname)
        .map(|(commit, _)| commit.to_string())
        .filter(|c| push::is_full_hash(c)))
}

/// A rewind of a task of a project on the cluster, carried to the remote: the next session
/// (on any worker) continues from the branch there, so the branch there must be where the
/// rewind put it here. Its tip is first kept on the remote under [`push::pin_name`] (`seq`:
/// the snapshot that holds the work here), then the branch is put at `to`, only while it still
/// stands at that tip. `Ok(Some(tip))`: the remote's branch moved from `tip`; `Ok(None)`:
/// nothing to do there (a local project, no remote branch, already at `to`); `Err`: why it
/// could not be done, in a sentence.
pub(crate) async fn rewind_pushed(
    project: &Project,
    worktree: &Path,
    task_id: &str,
    seq: u32,
    to: &str,
) -> std::result::Result<Option<String>, String> {
    if project.settings.runs_on == RunsOn::Local {
        return Ok(None);
    }
    let repo = Path::new(&project.path);
    let Some(remote): Option<Remote> = push::remote_for(repo, &project.settings.main_branch)
        .map_err(|e| format!("the repository's remote could not be read: {e}"))?
    else {
        return Ok(None);
    };
    let branch = crate::project::worktree::branch_name(task_id);
    let shown = push::without_credentials(&remote.url);
    let reach =
        |e: String| format!("{shown} could not be reached to put {branch} back there ({e})");
    let Some(tip) = remote_tip(worktree, &remote.url, &branch)
        .await
        .map_err(reach)?
    else {
        return Ok(None);
    };
    if tip == to {
        return Ok(None);
    }
    // The tip's commits here, so that it can be pinned.
    if fetch_into(worktree, &remote.url, &branch).await.as_deref() != Some(tip.as_str()) {
        return Err(format!(
            "{branch} moved on {shown} while Healer read it, so it was left as it is there"
        ));
    }
    // Back along the branch only: never a commit the branch there does not hold.
    if !is_ancestor(worktree, to, &tip).await {
        return Err(format!(
            "{branch} on {shown} does not hold the commit it would go back to, so it was left as it is there"
        ));
    }
    push::pin_then_move(
        repo,
        &remote,
        &branch,
        &tip,
        &push::pin_name(task_id, seq),
        to,
    )
    .await
    .map_err(|e| e.message)?;
    Ok(Some(tip))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ProjectSettings;

    fn sh(dir: &Path, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(dir)
            .output()
            .expect("git");
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    fn commit(dir: &Path, text: &str) -> String {
        std::fs::write(dir.join("notes.txt"), text).expect("write");
        sh(dir, &["add", "notes.txt"]);
        sh(dir, &["commit", "--quiet", "-m", text]);
        sh(dir, &["rev-parse", "HEAD"])
    }

    /// A repository whose `healer/t1` is pushed one commit past main, and its project on the
    /// cluster: (folder, the bare remote, main's commit, the pushed tip, the project).
    fn pushed() -> (
        tempfile::TempDir,
        std::path::PathBuf,
        String,
        String,
        Project,
    ) {
        let tmp = tempfile::tempdir().expect("tmp");
        let repo = tmp.path().join("repo");
        let remote = tmp.path().join("remote.git");
        std::fs::create_dir(&repo).expect("repo");
        sh(&repo, &["init", "--quiet", "-b", "main"]);
        let base = commit(&repo, "base");
        sh(tmp.path(), &["init", "--quiet", "--bare", "remote.git"]);
        sh(
            &repo,
            &["remote", "add", "origin", remote.to_str().expect("path")],
        );
        sh(&repo, &["checkout", "--quiet", "-b", "healer/t1"]);
        let tip = commit(&repo, "red work");
        sh(&repo, &["push", "--quiet", "origin", "main", "healer/t1"]);
        sh(&repo, &["checkout", "--quiet", "main"]);
        let project = Project {
            id: 1,
            name: "p".to_string(),
            path: repo.display().to_string(),
            settings: ProjectSettings {
                runs_on: RunsOn::Cluster {
                    queue: String::new(),
                },
                ..ProjectSettings::default()
            },
            created_at: String::new(),
            updated_at: String::new(),
        };
        (tmp, repo, base, tip, project)
    }

    #[tokio::test]
    async fn a_rewind_pins_the_remote_tip_then_puts_the_branch_back_once() {
        let (tmp, repo, base, tip, project) = pushed();
        let remote = tmp.path().join("remote.git");
        let moved = rewind_pushed(&project, &repo, "t1", 3, &base).await;
        assert_eq!(moved, Ok(Some(tip.clone())));
        assert_eq!(sh(&remote, &["rev-parse", "refs/heads/healer/t1"]), base);
        assert_eq!(sh(&remote, &["rev-parse", "refs/healer/pinned/t1/3"]), tip);
        // Carried out again (an engine that stopped mid-way): nothing more to do.
        assert_eq!(
            rewind_pushed(&project, &repo, "t1", 3, &base).await,
            Ok(None)
        );
        // A project whose tasks run here: its pushed branches are the person's business.
        let local = Project {
            settings: ProjectSettings::default(),
            ..project
        };
        assert_eq!(rewind_pushed(&local, &repo, "t1", 4, &tip).await, Ok(None));
        assert_eq!(sh(&remote, &["rev-parse", "refs/heads/healer/t1"]), base);
    }

    #[tokio::test]
    async fn a_remote_that_cannot_be_reached_is_said_and_nothing_is_moved() {
        let (tmp, repo, base, _tip, project) = pushed();
        let remote = tmp.path().join("remote.git");
        std::fs::rename(&remote, tmp.path().join("elsewhere.git")).expect("moved away");
        let said = rewind_pushed(&project, &repo, "t1", 1, &base)
            .await
            .expect_err("unreachable");
        assert!(said.contains("could not be reached"), "{said}");
    }

    #[tokio::test]
    async fn a_branch_that_moved_on_the_remote_is_never_overwritten() {
        let (_tmp, repo, base, tip, project) = pushed();
        let remote = Remote {
            name: "origin".to_string(),
            url: project.path.clone(),
        };
        // Someone pushed after Healer read the tip: the lease refuses the move.
        sh(&repo, &["checkout", "--quiet", "healer/t1"]);
        let later = commit(&repo, "someone's later work");
        sh(&repo, &["push", "--quiet", "origin", "healer/t1"]);
        let refused = push::pin_then_move(
            &repo,
            &remote,
            "healer/t1",
            &tip,
            &push::pin_name("t1", 1),
            &base,
        )
        .await
        .expect_err("moved");
        assert_eq!(
            refused.failure,
            push::PushFailure::Moved,
            "{}",
            refused.message
        );
        let remote_dir = repo.parent().expect("tmp").join("remote.git");
        assert_eq!(
            sh(&remote_dir, &["rev-parse", "refs/heads/healer/t1"]),
            later
        );
        // Only Healer's own names are pushed to.
        let refused = push::pin_then_move(&repo, &remote, "main", &tip, "refs/heads/x", &base)
            .await
            .expect_err("not its own");
        assert_eq!(refused.failure, push::PushFailure::Refused);
    }

    #[tokio::test]
    async fn a_merge_is_never_opened_as_one_commit_of_unchecked_work() {
        let (_tmp, repo, base, tip, _project) = pushed();
        assert_eq!(only_parent_of(&repo, &tip).await, Some(base.clone()));
        sh(&repo, &["checkout", "--quiet", "-b", "side", &base]);
        std::fs::write(repo.join("side.txt"), "side").expect("write");
        sh(&repo, &["add", "side.txt"]);
        sh(&repo, &["commit", "--quiet", "-m", "side"]);
        let side = sh(&repo, &["rev-parse", "HEAD"]);
        sh(
            &repo,
            &["merge", "--quiet", "--no-edit", "-m", "merged", "healer/t1"],
        );
        let merge = sh(&repo, &["rev-parse", "HEAD"]);
        assert_ne!(merge, side);
        assert_eq!(only_parent_of(&repo, &merge).await, None);
    }

    #[test]
    fn changes_someone_made_after_healer_left_the_files_are_told_apart() {
        let (tmp, repo, _base, _tip, _project) = pushed();
        // The task's own worktree, as Healer makes it, of a project's repository.
        crate::project::folder::trust_repository(&repo);
        let repo = {
            let wt = tmp.path().join("wt");
            sh(
                &repo,
                &[
                    "worktree",
                    "add",
                    "--quiet",
                    wt.to_str().expect("path"),
                    "healer/t1",
                ],
            );
            wt
        };
        // Clean: nothing to keep.
        assert!(!crate::project::snapshot::changed_since_remembered(&repo).expect("read"));
        // Healer leaves changes not committed, and remembers them.
        std::fs::write(repo.join("left.txt"), "the agent's\n").expect("write");
        crate::project::snapshot::remember_files(&repo).expect("remembered");
        assert!(!crate::project::snapshot::changed_since_remembered(&repo).expect("read"));
        // Someone edits them afterwards.
        std::fs::write(repo.join("left.txt"), "the agent's\nand mine\n").expect("write");
        assert!(crate::project::snapshot::changed_since_remembered(&repo).expect("read"));
    }
}
