//! `mark_task_blocked_with_followup`: the task becomes blocked with the reason, and a
//! follow-up task is written with the details and pointers to the sessions, the two linked
//! (`discovered-from` on the follow-up, `followup` on the task). The change is made under the
//! task list's lock on the file as it is then (re-read), so an edit a person made by hand
//! meanwhile is kept; a task they removed stops the spell with a sentence.

use async_trait::async_trait;

use super::{Spell, SpellContext, SpellReport};
use crate::agent::agent_name;
use crate::error::{Error, Result};
use crate::failure::ProjectScenario;
use crate::project::SessionRecord;
use crate::store::now;
use crate::tasklist::{Dep, TaskEdit, TaskStatus};

pub const NAME: &str = "mark_task_blocked_with_followup";

pub struct MarkBlocked;

#[async_trait]
impl Spell for MarkBlocked {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn cast(&self, cx: &SpellContext<'_>) -> Result<SpellReport> {
        let task_id = cx.context.task_id.clone();
        let what = ProjectScenario::parse(&cx.failure.scenario)
            .map_or("it failed", |s| s.describe_for(cx.failure.class));
        let reason = format!("Blocked by Healer: {what}. A follow-up task holds the details.");
        let sessions: Vec<(String, String)> = cx
            .context
            .session
            .iter()
            .chain(cx.context.related.iter())
            .take(10)
            .map(|s| session_line(cx, s))
            .collect();
        let at = now();
        let result = cx.projects.modify_tasks(cx.project, "Healer blocked a task", |file| {
            let Some(task) = file.task(&task_id).cloned() else {
                return Err(Error::NotFound {
                    what: format!(
                        "task {task_id:?} in the task list (it was removed while Healer worked on it; nothing was changed)"
                    ),
                });
            };
            if task.status == TaskStatus::Closed {
                return Err(Error::InvalidInput(format!(
                    "the task \u{201c}{}\u{201d} was closed meanwhile; it is left as it is",
                    task.title
                )));
            }
            // The person's part (the task page shows it), then what only the agent that picks
            // the follow-up up needs — ids, paths, the command that writes a trajectory again —
            // under a line the window folds away.
            let mut description = format!(
                "Healer blocked \u{201c}{}\u{201d}: {what}.\n\nWhat failed (its last lines):\n```\n{}\n```\n",
                task.title,
                cx.context.failing_output.lines().rev().take(20).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n")
            );
            if !sessions.is_empty() {
                description.push_str(&format!(
                    "\nSessions of this task, newest first:\n{}\n",
                    sessions.iter().map(|(line, _)| line.as_str()).collect::<Vec<_>>().join("\n")
                ));
            }
            description.push_str(&format!("\n{FOR_THE_AGENT}\n- The blocked task is {}.\n", task.id));
            if let Some(w) = &cx.context.worktree {
                description.push_str(&format!("- Its worktree: {} (branch healer/{}).\n", w.display(), task.id));
            }
            if !sessions.is_empty() {
                description.push_str(&format!(
                    "- Each session's steps as an ATIF trajectory, newest first (`healer session export-atif` writes one again):\n{}\n",
                    sessions.iter().map(|(_, trajectory)| format!("  - {trajectory}")).collect::<Vec<_>>().join("\n")
                ));
            }
            let followup = file.add(
                &TaskEdit {
                    title: format!("Follow up: {}", task.title),
                    description,
                    acceptance: task.acceptance.clone(),
                    priority: Some(task.priority),
                    labels: vec!["healer-followup".to_string()],
                    deps: vec![],
                },
                &at,
            )?;
            let followup_id = followup.id.clone();
            file.update(&followup_id, &at, |t| {
                t.deps.push(Dep::Link {
                    id: task_id.clone(),
                    kind: "discovered-from".to_string(),
                });
            })?;
            file.update(&task_id, &at, |t| {
                t.status = TaskStatus::Blocked;
                t.assignee = None;
                t.note = Some(reason.clone());
                t.deps.push(Dep::Link {
                    id: followup_id.clone(),
                    kind: "followup".to_string(),
                });
                t.comment(
                    &at,
                    "healer",
                    &format!(
                        "Blocked: {what} ({}). Follow-up task: {followup_id}.",
                        cx.failure.summary().trim_end_matches('.')
                    ),
                );
            })?;
            Ok(followup_id)
        });
        let followup = result?;
        cx.services
            .store
            .set_invocation_followup(cx.invocation_id, &followup)?;
        let mut report = SpellReport::done(format!(
            "The task is blocked with the reason, and follow-up task {followup} holds the details"
        ));
        report.followup_task = Some(followup);
        Ok(report)
    }
}

/// The line after which a follow-up's description is for the agent that picks it up, not the
/// person (the task page folds it away).
pub const FOR_THE_AGENT: &str = "For the agent that picks this up:";

/// A session for the follow-up: its title, agent, when it started and how it ended (for the
/// person); and the path of its trajectory, written now (for the agent).
fn session_line(cx: &SpellContext<'_>, s: &SessionRecord) -> (String, String) {
    let when = chrono::DateTime::parse_from_rfc3339(&s.started_at)
        .map(|t| {
            t.with_timezone(&chrono::Utc)
                .format("%-d %b %Y at %H:%M UTC")
                .to_string()
        })
        .unwrap_or_else(|_| s.started_at.clone());
    let trajectory = match super::atif::write_session_trajectory(cx.services, s.id) {
        Ok(path) => format!("trajectory: {}", path.display()),
        Err(e) => format!("its trajectory could not be written ({e})"),
    };
    (
        format!(
            "- \u{201c}{}\u{201d} with {}, started {when}: {}",
            s.task_title,
            agent_name(s.agent),
            super::status_words(s.status),
        ),
        trajectory,
    )
}
