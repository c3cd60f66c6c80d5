//! How a session ends, written down everywhere it shows: the session's row, the task in the
//! task list (closed with its commit, or open again with a note and its worktree kept), the
//! progress log, an event — and for a failure, one `Failure` into the pipeline.

use super::prompt::append_progress;
use super::run::Ctx;
use crate::agent::{agent_name, SessionEnd};
use crate::error::Result;
use crate::events::Event;
use crate::failure::{Evidence, Failure, FailureClass, FailureSource, ProjectScenario};
use crate::session::SessionStatus;
use crate::store::{now, SessionOutcome};
use crate::tasklist::TaskStatus;

pub(super) enum Ending {
    /// Verification passed (or there was none).
    Closed {
        commit: Option<String>,
        merged: bool,
        summary: String,
        /// Why the commit stayed on its branch, when it did.
        left: Option<String>,
    },
    /// An emergency subtask of the healer service (no verification, no commit) finished: the
    /// task goes back to open for the service to check and continue.
    HandedBack { summary: String },
    /// The agent said it was done but changed no file: nothing to commit, so nothing is done.
    /// The task goes back to open with a note for the person; it is not a failure to heal.
    NoChange { summary: String },
    /// The project has no check and may not commit unchecked work: nothing is committed, the
    /// task goes back to open with a note for the person.
    Unchecked,
    /// The person stopped it.
    Stopped,
    /// The engine stopped while it ran.
    Interrupted,
    /// The worker running it on the cluster was lost (Temporal heard nothing from it): the
    /// task is open again with what was pushed kept.
    Lost { reason: String },
    /// Steering ended it: no activity for too long.
    Stuck { reason: String },
    /// The steering judge replaced the agent.
    Replaced { reason: String },
    /// The session passed the project's spending cap: the task waits for the person (it
    /// would spend again if it started by itself), its worktree kept.
    OverCap { reason: String },
    Failed {
        scenario: ProjectScenario,
        class: FailureClass,
        status: SessionStatus,
        exit_code: Option<i32>,
        summary: String,
        evidence: Option<Evidence>,
    },
}

impl Ending {
    pub fn failed(
        scenario: ProjectScenario,
        class: FailureClass,
        status: SessionStatus,
        summary: String,
        evidence: Option<Evidence>,
    ) -> Ending {
        Ending::Failed {
            scenario,
            class,
            status,
            exit_code: None,
            summary,
            evidence,
        }
    }

    pub fn failed_with_code(
        scenario: ProjectScenario,
        class: FailureClass,
        end: SessionEnd,
    ) -> Ending {
        Ending::Failed {
            scenario,
            class,
            status: end.status,
            exit_code: end.exit_code,
            summary: end.summary,
            evidence: None,
        }
    }
}

pub(super) async fn settle(ctx: &Ctx<'_>, ending: Ending) -> Result<()> {
    let ending = match ending {
        Ending::Stuck { reason } => return super::steered::stuck(ctx, &reason).await,
        Ending::Replaced { reason } => return super::replaced::replaced(ctx, &reason).await,
        other => other,
    };
    let services = &ctx.projects.services;
    let task = &ctx.task;
    let branch = super::worktree::branch_name(&task.id);
    let agent = agent_name(ctx.project.settings.agent);
    let day = now().chars().take(10).collect::<String>();
    let (status, outcome, task_change, progress, failure) = match ending {
        Ending::Closed {
            commit,
            merged,
            summary,
            left,
        } => {
            let short: Option<String> = commit.as_ref().map(|c| c.chars().take(7).collect());
            let reason = match (&short, &left) {
                (Some(c), None) => format!(
                    "Done: commit {c}, merged into {}",
                    ctx.project.settings.main_branch
                ),
                (Some(c), Some(why)) => format!("Done: commit {c}; {why}"),
                (None, _) => "Done: verification passed with no change to commit".to_string(),
            };
            let entry = format!(
                "## {day} — {} ({})\n{reason}. Worked on by {agent}.\n{}",
                task.title,
                task.id,
                summary.trim()
            );
            let closed = reason.clone();
            let commit_field = commit.clone();
            let tidy = commit.is_some() || left.is_none();
            (
                SessionStatus::Finished,
                SessionOutcome {
                    exit_code: None,
                    summary: reason,
                    commit_id: commit,
                    merged,
                },
                Box::new(move |t: &mut crate::tasklist::Task| {
                    t.status = TaskStatus::Closed;
                    t.closed_reason = Some(closed.clone());
                    t.commit = commit_field.clone();
                    t.assignee = None;
                    t.worktree = None;
                    t.note = None;
                }) as Box<dyn Fn(&mut crate::tasklist::Task) + Send>,
                Some((entry, tidy)),
                None,
            )
        }
        Ending::NoChange { summary } => {
            let said = summary.trim().trim_end_matches('.');
            let entry = format!(
                "## {day} — {} ({})\nNo change made: {agent} said it was done but changed no file{}.",
                task.title,
                task.id,
                if said.is_empty() {
                    String::new()
                } else {
                    format!(" (it said: {said})")
                }
            );
            (
                SessionStatus::Finished,
                SessionOutcome {
                    summary: "No change made: the agent said it was done but changed no file; the task is open again".to_string(),
                    ..SessionOutcome::default()
                },
                reopen(format!(
                    "No change made on {day}: {agent} said it was done without changing any file. Look at the task's description, then run it again"
                )),
                Some((entry, false)),
                None,
            )
        }
        Ending::Unchecked => (
            SessionStatus::Finished,
            SessionOutcome {
                summary: "Not committed: the project has no check, and its settings do not allow committing without one".to_string(),
                ..SessionOutcome::default()
            },
            reopen(format!(
                "Not committed on {day}: the project has no check. Add one in the project's settings (or allow committing without checks), then run it again; the work is kept in its worktree (branch {branch})"
            )),
            None,
            None,
        ),
        Ending::OverCap { reason } => (
            SessionStatus::Stopped,
            SessionOutcome {
                summary: reason.clone(),
                ..SessionOutcome::default()
            },
            Box::new(move |t: &mut crate::tasklist::Task| {
                t.status = TaskStatus::Blocked;
                t.assignee = None;
                t.note = Some(format!(
                    "{} The work so far is kept in its worktree (branch {branch}); set the task \
                     back to open to go on.",
                    reason.trim()
                ));
            }) as Box<dyn Fn(&mut crate::tasklist::Task) + Send>,
            None,
            None,
        ),
        Ending::HandedBack { summary } => (
            SessionStatus::Finished,
            SessionOutcome {
                summary: format!("Emergency fix done: {}", summary.trim()),
                ..SessionOutcome::default()
            },
            reopen(format!(
                "Healer's emergency fix ended on {day}; the worktree is kept (branch {branch})"
            )),
            None,
            None,
        ),
        Ending::Stopped | Ending::Interrupted | Ending::Stuck { .. } | Ending::Replaced { .. } => {
            let stopped = matches!(ending, Ending::Stopped);
            let why = if stopped {
                "Stopped by you"
            } else {
                "Healer stopped while it ran"
            };
            let note = format!(
                "{why} on {day}; the work so far is kept in its worktree (branch {branch})"
            );
            (
                if stopped {
                    SessionStatus::Stopped
                } else {
                    SessionStatus::Interrupted
                },
                SessionOutcome {
                    summary: format!("{why}; the worktree is kept"),
                    ..SessionOutcome::default()
                },
                reopen(note),
                None,
                None,
            )
        }
        Ending::Lost { reason } => (
            SessionStatus::Interrupted,
            SessionOutcome {
                summary: format!("{reason}; whatever it pushed is kept"),
                ..SessionOutcome::default()
            },
            reopen(format!(
                "{reason} on {day}; whatever it pushed stays on the branch {branch}, and the next session continues from there"
            )),
            None,
            None,
        ),
        Ending::Failed {
            scenario,
            class,
            status,
            exit_code,
            summary,
            evidence,
        } => {
            let note = format!(
                "{} on {day}: {}. The worktree is kept (branch {branch})",
                crate::workflow::capitalise(scenario.describe_for(class)),
                summary.trim_end_matches('.')
            );
            let entry = format!(
                "## {day} — {} ({})\nNot done: {}. {}.",
                task.title,
                task.id,
                scenario.describe_for(class),
                summary.trim_end_matches('.')
            );
            let evidence = evidence.unwrap_or_else(|| Evidence {
                error_type: None,
                message: summary.clone(),
                stack: None,
            });
            (
                status,
                SessionOutcome {
                    exit_code,
                    summary,
                    ..SessionOutcome::default()
                },
                reopen(note),
                Some((entry, false)),
                Some((scenario, class, evidence)),
            )
        }
    };

    services
        .store
        .finish_session(ctx.session_id, status, &outcome)?;
    // The decision to accept this session carried out ends with it (unless the engine is
    // stopping under it: the next start carries it on).
    if status != SessionStatus::Interrupted
        && services.store.accept_intents()?.iter().any(|i| {
            i.project_id == ctx.project.id
                && i.task_id == task.id
                && i.session_id == Some(ctx.session_id)
        })
    {
        services
            .store
            .clear_accept_intent(ctx.project.id, &task.id)?;
    }
    let changed = ctx
        .projects
        .modify_tasks(&ctx.project, "a session ended", |file| {
            file.update(&task.id, &now(), &task_change)
        });
    if let Err(e) = &changed {
        tracing::warn!(
            session_id = ctx.session_id,
            "the task list was not updated: {e}"
        );
    }
    if let Some((entry, remove)) = progress {
        if let Err(e) = append_progress(&ctx.repo, &entry) {
            tracing::warn!("the progress log was not written: {e}");
        }
        if remove && status == SessionStatus::Finished {
            // The slot stays: the next task switches it over instead of a whole checkout.
            let _ = std::fs::remove_dir_all(&ctx.tmp);
        }
    }
    services.bus.emit(Event::SessionFinished {
        session_id: ctx.session_id,
        project_id: ctx.project.id,
        task_id: task.id.clone(),
        task_title: task.title.clone(),
        status,
        summary: outcome.summary.clone(),
        commit: outcome.commit_id.clone(),
    })?;
    ctx.projects.ensure_spare(&ctx.project);
    if let Some((scenario, class, evidence)) = failure {
        let failure = Failure::new(
            FailureSource::ProjectTask {
                project_id: ctx.project.id,
                task_id: task.id.clone(),
                session_id: ctx.session_id,
            },
            scenario.as_str(),
            class,
            evidence,
        );
        services.heal(failure).await?;
    }
    Ok(())
}

/// Back to open with a note; the worktree and branch fields stay, so the board shows where
/// the work is.
fn reopen(note: String) -> Box<dyn Fn(&mut crate::tasklist::Task) + Send> {
    Box::new(move |t| {
        t.status = TaskStatus::Open;
        t.assignee = None;
        t.note = Some(note.clone());
    })
}
