//! The two rewinds. Each first pins a snapshot of the worktree (tracked and untracked files,
//! under `refs/healer/snapshots/<task>/<n>`) and records it, so nothing is lost and the person
//! can restore it from the window; in conservative mode the person is asked first, with the
//! snapshot named.

use std::path::Path;

use async_trait::async_trait;

use super::{Spell, SpellContext, SpellReport};
use crate::checkpoint::{
    CheckpointAction, CheckpointOption, CheckpointTrigger, NewCheckpoint, Situation,
};
use crate::error::{Error, Result};
use crate::project::short_commit as short;
use crate::project::snapshot;
use crate::session::SessionStatus;
use crate::store::{HealerMode, SnapshotRecord};

pub const UNCOMMITTED: &str = "rewind_uncommitted_changes";
pub const LAST_GREEN: &str = "rewind_to_last_green_commit";

pub struct RewindUncommitted;
pub struct RewindToLastGreen;

/// The task's worktree, which must still be there (a person may have deleted it while Healer
/// asked).
fn worktree<'a>(cx: &'a SpellContext<'_>) -> Result<&'a Path> {
    let path = cx
        .context
        .worktree
        .as_deref()
        .ok_or_else(|| Error::NotFound {
            what: format!("the worktree of task {}", cx.context.task_id),
        })?;
    if !path.is_dir() {
        return Err(Error::NotFound {
            what: format!("the worktree {}", path.display()),
        });
    }
    Ok(path)
}

/// Pin and record a snapshot of the task's worktree, linked to the invocation.
async fn pin(cx: &SpellContext<'_>, reason: &str) -> Result<SnapshotRecord> {
    let (store, project_id, path, task, reason) = (
        cx.services.store.clone(),
        cx.project.id,
        worktree(cx)?.to_path_buf(),
        cx.context.task_id.clone(),
        reason.to_string(),
    );
    let snap = tokio::task::spawn_blocking(move || {
        snapshot::take(&store, project_id, &path, &task, &reason)
    })
    .await
    .map_err(|e| Error::Internal(format!("the snapshot stopped: {e}")))??;
    cx.services
        .store
        .set_invocation_snapshot(cx.invocation_id, snap.id)?;
    Ok(snap)
}

/// What the person chose, or that the question is asked.
enum Choice {
    Go,
    Skip,
    Pause,
    /// The question is asked (this checkpoint); the spell is cast again with the answer.
    Asked(i64),
}

/// In conservative mode, ask through a checkpoint (Proceed / Skip / Pause) — the invocation
/// waits, stored, and the spell is cast again with the answer; in aggressive mode, go.
fn ask_first(cx: &SpellContext<'_>, snap: &SnapshotRecord, what: &str) -> Result<Choice> {
    if cx.config.mode == HealerMode::Aggressive {
        return Ok(Choice::Go);
    }
    if let Some(answer) = cx.answer {
        return Ok(match answer {
            CheckpointAction::Proceed => Choice::Go,
            CheckpointAction::Pause => Choice::Pause,
            _ => Choice::Skip,
        });
    }
    let title = cx
        .context
        .task
        .as_ref()
        .map_or(cx.context.task_id.clone(), |t| t.title.clone());
    let checkpoint = cx.services.raise_checkpoint(NewCheckpoint {
        project_task: Some((cx.project.id, cx.context.task_id.clone(), title.clone())),
        trigger: CheckpointTrigger::Approval,
        workflow_id: None,
        run_id: None,
        task_id: None,
        signature: Some(cx.failure.signature.clone()),
        context: format!(
            "The task \u{201c}{title}\u{201d} of the project \u{201c}{}\u{201d} failed: {}. Healer wants to {what}. Nothing is lost: the work as it is now is kept as this task's snapshot {}, which you can bring back from the task's page. Until you answer, no agent works on this task.",
            cx.project.name,
            cx.failure.summary().trim_end_matches('.'),
            snap.seq
        ),
        options: vec![
            CheckpointOption::new("Proceed", &format!("Go ahead: {what}"), CheckpointAction::Proceed),
            CheckpointOption::new("Skip", "Leave the worktree as it is; Healer goes on with its next step", CheckpointAction::Skip),
            CheckpointOption::new("Pause", "Stop here; Healer does nothing more about this failure", CheckpointAction::Pause),
        ],
        affected: vec![],
        situation: Some(Situation {
            title: "Healer wants to undo an agent's changes".to_string(),
            recommend: CheckpointAction::Proceed,
            why: "the changes did not pass the checks, and they are kept in a snapshot".to_string(),
            past: None,
        }),
    })?;
    Ok(Choice::Asked(checkpoint.id))
}

/// The snapshot pinned before the question, when the spell is cast again with the answer;
/// else a new one.
async fn pinned_or_pin(cx: &SpellContext<'_>, reason: &str) -> Result<SnapshotRecord> {
    if cx.answer.is_some() {
        if let Some(id) = cx.services.store.invocation(cx.invocation_id)?.snapshot_id {
            return cx.services.store.snapshot(id);
        }
    }
    pin(cx, reason).await
}

/// The worktree as it is now, compared with the snapshot the question named: when anything
/// changed since (the person's editor, a late write), a second snapshot holds it before the
/// rewind, so no rewind writes over work that no snapshot holds. The snapshot that holds the
/// work as it is now is returned.
async fn current(cx: &SpellContext<'_>, asked: SnapshotRecord) -> Result<SnapshotRecord> {
    if cx.answer.is_none() {
        return Ok(asked);
    }
    let (path, commit) = (worktree(cx)?.to_path_buf(), asked.commit_id.clone());
    let same = tokio::task::spawn_blocking(move || snapshot::matches(&path, &commit))
        .await
        .map_err(|e| Error::Internal(format!("the comparison stopped: {e}")))??;
    if same {
        return Ok(asked);
    }
    // A snapshot pinned while an engine carried out this answer before it stopped (found and
    // recorded at the start) holds the work already: it is not pinned twice.
    let task = &cx.context.task_id;
    if let Some(newest) = cx
        .services
        .store
        .snapshots(Some(cx.project.id), Some(task))?
        .into_iter()
        .find(|s| s.id != asked.id)
    {
        let (path, commit) = (worktree(cx)?.to_path_buf(), newest.commit_id.clone());
        let same = tokio::task::spawn_blocking(move || snapshot::matches(&path, &commit))
            .await
            .map_err(|e| Error::Internal(format!("the comparison stopped: {e}")))??;
        if same {
            cx.services
                .store
                .set_invocation_snapshot(cx.invocation_id, newest.id)?;
            return Ok(newest);
        }
    }
    pin(
        cx,
        "the worktree as it was when you answered (it changed after Healer asked)",
    )
    .await
}

/// The spell asked: the invocation waits for the answer.
fn asked(checkpoint: i64, snap: &SnapshotRecord) -> SpellReport {
    let mut report = SpellReport::not_done(format!(
        "Healer asked you before undoing anything; the work is kept as snapshot {}",
        snap.seq
    ));
    report.snapshot_id = Some(snap.id);
    report.waits_for = Some(checkpoint);
    report
}

fn declined(choice: Choice, snap: &SnapshotRecord) -> SpellReport {
    let mut report = SpellReport::not_done(match choice {
        Choice::Pause => format!(
            "You paused Healer here; the worktree was left as it is (also kept as snapshot {})",
            snap.seq
        ),
        _ => format!(
            "You chose to keep the worktree as it is (also kept as snapshot {})",
            snap.seq
        ),
    });
    report.snapshot_id = Some(snap.id);
    report.stop = matches!(choice, Choice::Pause);
    report
}

/// The rewind carried to the task's branch on the repository's remote, for a project whose
/// tasks run on the cluster (its next session, on any worker, continues from there): before
/// anything is undone here, so that nothing is undone here that could not be undone there.
/// What to add to the spell's sentence, or the report of a rewind not done.
async fn on_remote(
    cx: &SpellContext<'_>,
    snap: &SnapshotRecord,
    to: &str,
) -> std::result::Result<String, SpellReport> {
    let not_done = |why: String| {
        let mut report = SpellReport::not_done(format!(
            "Nothing was undone: {why}. The work is kept as snapshot {}",
            snap.seq
        ));
        report.snapshot_id = Some(snap.id);
        report
    };
    let path = worktree(cx).map_err(|e| not_done(e.to_string()))?;
    match crate::project::rewind_pushed(cx.project, path, &cx.context.task_id, snap.seq, to).await {
        Ok(Some(tip)) => Ok(format!(
            "; on the repository's remote too, where what the branch held ({}) stays kept",
            short(&tip)
        )),
        Ok(None) => Ok(String::new()),
        Err(why) => Err(not_done(why)),
    }
}

async fn rewind_to(
    cx: &SpellContext<'_>,
    commit: String,
    move_branch: bool,
) -> Result<snapshot::Rewound> {
    let path = worktree(cx)?.to_path_buf();
    tokio::task::spawn_blocking(move || snapshot::rewind(&path, &commit, move_branch))
        .await
        .map_err(|e| Error::Internal(format!("the rewind stopped: {e}")))?
}

#[async_trait]
impl Spell for RewindUncommitted {
    fn name(&self) -> &'static str {
        UNCOMMITTED
    }

    fn discards_work(&self) -> bool {
        true
    }

    async fn cast(&self, cx: &SpellContext<'_>) -> Result<SpellReport> {
        worktree(cx)?;
        if cx.context.git_status.is_empty() {
            return Ok(SpellReport::not_done(
                "The worktree has no uncommitted change to undo",
            ));
        }
        let head = cx.context.head.clone().ok_or_else(|| {
            Error::Internal("the worktree has no commit to go back to".to_string())
        })?;
        let snap = pinned_or_pin(
            cx,
            "the agent's uncommitted changes, kept when Healer set out to undo them",
        )
        .await?;
        match ask_first(cx, &snap, "undo the agent's uncommitted changes")? {
            Choice::Go => {}
            Choice::Asked(checkpoint) => return Ok(asked(checkpoint, &snap)),
            other => return Ok(declined(other, &snap)),
        }
        let snap = current(cx, snap).await?;
        let remote = match on_remote(cx, &snap, &head).await {
            Ok(said) => said,
            Err(report) => return Ok(report),
        };
        let done = rewind_to(cx, head.clone(), false).await?;
        let mut report = SpellReport::done(format!(
            "The worktree is back at its last commit ({}){remote}; {} kept as snapshot {}{}",
            short(&head),
            match cx.context.git_status.len() {
                1 => "the changed file is".to_string(),
                n => format!("the {n} changed files are"),
            },
            snap.seq,
            done.index_left
                .map(|n| format!(" ({n})"))
                .unwrap_or_default()
        ));
        report.snapshot_id = Some(snap.id);
        Ok(report)
    }
}

#[async_trait]
impl Spell for RewindToLastGreen {
    fn name(&self) -> &'static str {
        LAST_GREEN
    }

    fn discards_work(&self) -> bool {
        true
    }

    async fn cast(&self, cx: &SpellContext<'_>) -> Result<SpellReport> {
        let path = worktree(cx)?.to_path_buf();
        let green: Vec<String> = cx
            .services
            .store
            .list_sessions(cx.project.id, None, 500)?
            .into_iter()
            .filter(|s| s.status == SessionStatus::Finished)
            .filter_map(|s| s.commit_id)
            .collect();
        let last_green = tokio::task::spawn_blocking(move || last_green_in(&path, &green))
            .await
            .map_err(|e| Error::Internal(format!("the history walk stopped: {e}")))??;
        let Some(commit) = last_green else {
            return Ok(SpellReport::not_done(
                "No commit of this branch has passed the checks under Healer yet",
            ));
        };
        if cx.context.git_status.is_empty() && cx.context.head.as_deref() == Some(commit.as_str()) {
            return Ok(SpellReport::not_done(
                "The worktree is at its last green commit already",
            ));
        }
        let snap = pinned_or_pin(
            cx,
            "the branch and worktree, kept when Healer set out to go back to the last green commit",
        )
        .await?;
        match ask_first(
            cx,
            &snap,
            &format!(
                "put the branch back to {}, its last commit that passed the checks",
                short(&commit)
            ),
        )? {
            Choice::Go => {}
            Choice::Asked(checkpoint) => return Ok(asked(checkpoint, &snap)),
            other => return Ok(declined(other, &snap)),
        }
        let snap = current(cx, snap).await?;
        let remote = match on_remote(cx, &snap, &commit).await {
            Ok(said) => said,
            Err(report) => return Ok(report),
        };
        let done = rewind_to(cx, commit.clone(), true).await?;
        let mut report = SpellReport::done(format!(
            "The branch is back at {}, its last commit that passed the checks{remote}; what came after is kept as snapshot {}{}",
            short(&commit),
            snap.seq,
            done.index_left.map(|n| format!(" ({n})")).unwrap_or_default()
        ));
        report.snapshot_id = Some(snap.id);
        Ok(report)
    }
}

/// The newest commit of the worktree's history that is one of `green`.
fn last_green_in(worktree: &Path, green: &[String]) -> Result<Option<String>> {
    let repo = crate::project::open_folder(worktree)?;
    let mut walk = repo
        .revwalk()
        .map_err(|e| Error::Internal(format!("cannot walk the history: {}", e.message())))?;
    walk.push_head()
        .map_err(|e| Error::Internal(format!("cannot walk the history: {}", e.message())))?;
    for oid in walk.flatten().take(10_000) {
        let text = oid.to_string();
        if green.contains(&text) {
            return Ok(Some(text));
        }
    }
    Ok(None)
}
