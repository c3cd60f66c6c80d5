//! Finishing a task's work from the window or the CLI: accept it into the main branch (the main
//! branch brought in first and the checks run again when it moved), ask the agent to resolve a
//! conflict, or discard the work (pinned first, restorable). The git steps are
//! [`crate::project::finish`]; this is the order they go in and what the person is told.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::secrets::blocking;
use super::Handle;
use crate::error::{Error, Result};
use crate::project::finish::{self, AcceptHow, Brought};
use crate::project::own_copy::{open_own_work, review_folder};
use crate::project::{run_project_command, CommandPlace, Project, Task, TaskStatus};
use crate::store::now;
use crate::store::SessionRecord;

/// What accepting a task's work came to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Acceptance {
    /// The work is in the main branch.
    Accepted {
        how: AcceptHow,
        commit: String,
        said: String,
    },
    /// The main branch and the agent changed the same lines of these files; nothing was written.
    Conflict { files: Vec<String>, said: String },
    /// The main branch was brought in, and then a check failed: the work stays on its branch.
    ChecksFailed {
        check: String,
        output: String,
        said: String,
    },
    /// Left as it is, and why (the person's checkout has changes in the same files …).
    Left { said: String },
}

/// What discarding a task's work kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct Discarded {
    /// The snapshot that holds the work (restore it from the task's snapshots).
    pub snapshot_id: i64,
    pub said: String,
}

/// The lines of a failed check's output kept for the person.
const CHECK_TAIL_LINES: usize = 40;

impl Handle {
    /// The task as its list has it, or a sentence.
    pub(super) fn finishing_task(&self, project: &Project, task_id: &str) -> Result<Task> {
        let file = crate::tasklist::read_file(
            &Path::new(&project.path).join(crate::tasklist::TASKS_FILE),
        )?;
        let task = file.task(task_id).cloned().ok_or_else(|| Error::NotFound {
            what: format!("task {task_id:?} in \u{201c}{}\u{201d}", project.name),
        })?;
        if task.status == TaskStatus::InProgress {
            return Err(Error::InvalidInput(format!(
                "an agent is working on \u{201c}{}\u{201d}; wait for it to finish (or stop it) first",
                task.title
            )));
        }
        if self
            .services
            .store
            .open_invocation_for_task(project.id, task_id)?
            .is_some()
        {
            return Err(Error::InvalidInput(format!(
                "Healer is handling a failure of \u{201c}{}\u{201d}; its work can be finished once Healer is done or you answered its question",
                task.title
            )));
        }
        Ok(task)
    }

    /// The folder standing on the task's branch (made for the person when its slot went to a
    /// later task), and the task's newest session.
    async fn own_folder(
        &self,
        project: &Project,
        task_id: &str,
    ) -> Result<(PathBuf, Option<SessionRecord>)> {
        let sessions = self
            .services
            .store
            .list_sessions(project.id, Some(task_id), 50)?;
        let newest = sessions.first().cloned();
        let with_commit = sessions.iter().find(|s| s.commit_id.is_some()).cloned();
        let recorded = newest
            .as_ref()
            .map(|s| PathBuf::from(&s.worktree))
            .unwrap_or_default();
        let commit = with_commit.as_ref().and_then(|s| s.commit_id.clone());
        let review = review_folder(&self.projects().slots_dir(project.id), task_id);
        let (repo, branch) = (
            PathBuf::from(&project.path),
            crate::project::branch_name(task_id),
        );
        let found =
            blocking(move || open_own_work(&repo, &recorded, &branch, commit.as_deref(), &review))
                .await?;
        let folder = found.ok_or_else(|| {
            Error::InvalidInput(
                "nothing of this task's work is left: its branch was removed and it left no commit"
                    .to_string(),
            )
        })?;
        Ok((folder, with_commit.or(newest)))
    }

    /// Accept the task's work into the main branch, `how` or the project's way. When the main
    /// branch moved, it is brought into the task's branch first (the project's choice: rebase
    /// or merge) and the project's checks run again; a conflict writes nothing and says which
    /// files. The person's checkout is moved only when that is safe.
    pub async fn accept_task(
        &self,
        project_id: i64,
        task_id: &str,
        how: Option<AcceptHow>,
    ) -> Result<Acceptance> {
        let store = &self.services.store;
        let project = store.project(project_id)?;
        let task = self.finishing_task(&project, task_id)?;
        let settings = project.settings.clone();
        let how = how.unwrap_or(settings.finishing.accept);
        let main = settings.main_branch.clone();
        let branch = crate::project::branch_name(task_id);
        let repo = PathBuf::from(&project.path);
        {
            let (repo, main2, branch) = (repo.clone(), main.clone(), branch.clone());
            if !blocking(move || finish::has_work(&repo, &main2, &branch)).await? {
                return Err(Error::InvalidInput(format!(
                    "there is nothing of \u{201c}{}\u{201d} to accept: {main} already holds all of its work",
                    task.title
                )));
            }
        }
        let (folder, session) = self.own_folder(&project, task_id).await?;
        let left = {
            let folder = folder.clone();
            blocking(move || finish::uncommitted(&folder)).await?
        };
        if !left.is_empty() {
            return Ok(Acceptance::Left {
                said: format!(
                    "The task's folder ({}) has changes nobody committed ({}): commit them there or undo them, then accept again.",
                    folder.display(),
                    names(&left)
                ),
            });
        }
        let brought = {
            let (repo, main, branch) = (repo.clone(), main.clone(), branch.clone());
            let way = settings.finishing.bring_main_in;
            blocking(move || finish::bring_main_in(&repo, &main, &branch, way)).await?
        };
        let mut moved_note = None;
        match brought {
            Brought::Conflict { files } => {
                return Ok(Acceptance::Conflict {
                    said: format!(
                        "{main} changed the same lines as the agent's work in {}. Nothing was changed: ask the agent to resolve it, or leave the work on its branch.",
                        names(&files)
                    ),
                    files,
                });
            }
            Brought::Moved { tip, before } => {
                let (store2, folder2, id) = (store.clone(), folder.clone(), task_id.to_string());
                blocking(move || {
                    crate::project::snapshot::take(
                        &store2,
                        project_id,
                        &folder2,
                        &id,
                        "the task's work before the main branch was brought in",
                    )
                })
                .await?;
                let (repo2, branch2, folder2) = (repo.clone(), branch.clone(), folder.clone());
                blocking(move || finish::move_branch(&repo2, &branch2, tip, &folder2)).await?;
                tracing::info!(task_id, from = %before, to = %tip, "the main branch brought in");
                moved_note = Some(format!(
                    "{main} had moved on, so its changes were brought into the work first"
                ));
            }
            Brought::UpToDate => {}
        }
        // What is accepted is what is checked: the tip read now, before the checks.
        let checked_tip = {
            let (repo, branch) = (repo.clone(), branch.clone());
            blocking(move || finish::branch_tip(&repo, &branch)).await?
        };
        // Checks run again when the work changed under them, or when what is on the branch is not
        // what its session committed green.
        let as_committed = task.commit.as_deref() == Some(checked_tip.to_string().as_str());
        if moved_note.is_some() || task.status != TaskStatus::Closed || !as_committed {
            if let Some(failed) = self.run_checks(&project, task_id, &folder).await? {
                let (check, output) = failed;
                return Ok(Acceptance::ChecksFailed {
                    said: format!(
                        "{}; then the check \u{201c}{check}\u{201d} failed, so nothing was accepted. The work waits on its own branch.",
                        moved_note.unwrap_or_else(|| "The work was checked again".to_string())
                    ),
                    check,
                    output,
                });
            }
        }
        let message = accept_message(&task);
        let commit = {
            let (repo, main, branch) = (repo.clone(), main.clone(), branch.clone());
            blocking(move || {
                let tip = finish::branch_tip(&repo, &branch)?;
                if tip != checked_tip {
                    return Err(Error::InvalidInput("the task's branch changed while the work was being checked; accept it again".to_string()));
                }
                let commit = finish::commit_to_accept(&repo, &main, &branch, tip, how, &message)?;
                Ok((
                    commit,
                    finish::accept_into_main(&repo, &main, &branch, commit)?,
                ))
            })
            .await?
        };
        let (commit, merged) = commit;
        if let crate::project::WorktreeMerge::Left(why) = merged {
            return Ok(Acceptance::Left {
                said: format!("Nothing was accepted: {why}."),
            });
        }
        let short = finish::short_of(&commit);
        let said = match &moved_note {
            Some(note) => format!(
                "{note}; the checks passed again, and the work is in {main} now ({}).",
                how.done_words()
            ),
            None => format!("The work is in {main} now ({}).", how.done_words()),
        };
        let day: String = now().chars().take(10).collect();
        let reason = format!(
            "Accepted into {main} on {day} ({}, {short})",
            how.done_words()
        );
        let commit_text = commit.to_string();
        self.projects()
            .modify_tasks(&project, "a task's work was accepted", |file| {
                file.update(task_id, &now(), |t| {
                    t.status = TaskStatus::Closed;
                    t.closed_reason = Some(reason.clone());
                    t.commit = Some(commit_text.clone());
                    t.note = None;
                })
            })?;
        if let Some(session) = &session {
            store.set_session_merged(session.id)?;
        }
        Ok(Acceptance::Accepted {
            how,
            commit: commit.to_string(),
            said,
        })
    }

    /// The project's checks in `folder`; the first that failed, with the end of its output.
    async fn run_checks(
        &self,
        project: &Project,
        task_id: &str,
        folder: &Path,
    ) -> Result<Option<(String, String)>> {
        let settings = &project.settings;
        let tmp = self.services.paths.data_dir().join("tmp").join(format!(
            "finish-{}-{}",
            project.id,
            crate::project::snapshot::safe_task_id(task_id)
        ));
        std::fs::create_dir_all(&tmp)
            .map_err(|e| Error::io(format!("cannot create {}", tmp.display()), e))?;
        let groups = self.services.paths.groups_dir();
        let place = CommandPlace {
            worktree: folder,
            tmp: &tmp,
            marker: &[],
            groups: &groups,
        };
        let limit = Duration::from_secs(u64::from(settings.command_time_limit_secs));
        let mut failed = None;
        for check in &settings.verify {
            let result = run_project_command(&place, &check.name, &check.command, limit).await?;
            if !result.passed() {
                failed = Some((check.name.clone(), result.tail(CHECK_TAIL_LINES)));
                break;
            }
        }
        let _ = std::fs::remove_dir_all(&tmp);
        Ok(failed)
    }

    /// *Ask the agent to resolve it*: a session of the task on its branch in which the main
    /// branch is merged in (git's conflict markers in the agent's worktree, never the person's
    /// checkout), told which files conflict; verified like any session, then accepted `how`.
    pub fn resolve_conflict_with_agent(
        &self,
        project_id: i64,
        task_id: &str,
        how: Option<AcceptHow>,
    ) -> Result<SessionRecord> {
        let project = self.services.store.project(project_id)?;
        let task = self.finishing_task(&project, task_id)?;
        let how = how.unwrap_or(project.settings.finishing.accept);
        // The person's decision is kept until its session ends: a stop in between starts the
        // agent on it again (`carry_on_accepting`).
        self.services
            .store
            .save_accept_intent(project_id, task_id, how)?;
        let session = self.start_resolving(&project, &task, how)?;
        self.services
            .store
            .set_accept_intent_session(project_id, task_id, session.id)?;
        Ok(session)
    }

    /// The session that resolves the conflict, the task opened for it.
    fn start_resolving(
        &self,
        project: &Project,
        task: &Task,
        how: AcceptHow,
    ) -> Result<SessionRecord> {
        let task_id = task.id.as_str();
        let main = &project.settings.main_branch;
        let message = format!(
            "The main branch ({main}) moved on while you worked on the task \u{201c}{title}\u{201d}, and it changed some of the same lines as your work. Healer has merged {main} into your branch in this worktree: git wrote both sides of each conflict into the files, between the markers <<<<<<<, ======= and >>>>>>>. Resolve every conflict so that both changes do what they meant to, remove every marker, and keep the project's checks passing. Do not commit and do not run git merge or git rebase yourself: Healer commits the merge once the checks pass.\n\nThe task, for context: {title}\n{description}",
            title = task.title,
            description = task.description.trim()
        );
        if task.status == TaskStatus::Closed {
            self.projects().modify_tasks(
                project,
                "a task was opened to resolve a conflict",
                |file| {
                    file.update(task_id, &now(), |t| {
                        t.status = TaskStatus::Open;
                        t.closed_reason = None;
                        t.note = Some(format!(
                            "The agent is asked to resolve a conflict with {main}"
                        ));
                    })
                },
            )?;
        }
        let agent = project.settings.agent;
        self.projects()
            .run_with_message(project, task_id, agent, &message, true, Some(how))
    }

    /// After a start: each decision to accept whose resolving session did not end (the engine
    /// stopped, or was killed, while it ran or before it started) is carried on — the agent is
    /// started on the conflict again (the merge under way in its worktree is kept), and the
    /// work is accepted as the person chose once it passes its checks.
    pub async fn carry_on_accepting(&self) -> Result<Vec<SessionRecord>> {
        let store = &self.services.store;
        let mut started = Vec::new();
        for intent in store.accept_intents()? {
            let unfinished = match intent.session_id {
                None => true,
                Some(id) => match store.session(id) {
                    Ok(s) => s.status == crate::session::SessionStatus::Interrupted,
                    Err(_) => true,
                },
            };
            if !unfinished {
                store.clear_accept_intent(intent.project_id, &intent.task_id)?;
                continue;
            }
            let project = store.project(intent.project_id)?;
            let file = crate::tasklist::read_file(
                &Path::new(&project.path).join(crate::tasklist::TASKS_FILE),
            )?;
            let Some(task) = file.task(&intent.task_id).cloned() else {
                store.clear_accept_intent(intent.project_id, &intent.task_id)?;
                continue;
            };
            match self.start_resolving(&project, &task, intent.how) {
                Ok(session) => {
                    store.set_accept_intent_session(project.id, &task.id, session.id)?;
                    started.push(session);
                }
                Err(e) => tracing::warn!(
                    project = project.id,
                    task = %task.id,
                    "the conflict's resolution was not started again: {e}"
                ),
            }
        }
        Ok(started)
    }

    /// Discard the task's work: pinned as a snapshot first (restore it from the task's
    /// snapshots), then its folder and branch removed; the task is open again.
    pub async fn discard_task_work(&self, project_id: i64, task_id: &str) -> Result<Discarded> {
        self.services
            .store
            .clear_accept_intent(project_id, task_id)?;
        let store = &self.services.store;
        let project = store.project(project_id)?;
        let task = self.finishing_task(&project, task_id)?;
        let branch = crate::project::branch_name(task_id);
        let repo = PathBuf::from(&project.path);
        let (folder, _) = self.own_folder(&project, task_id).await?;
        if folder == repo {
            return Err(Error::InvalidInput(format!(
                "your own checkout ({}) stands on {branch}: switch it to another branch first, then discard",
                repo.display()
            )));
        }
        let snapshot = {
            let (store, folder, id) = (store.clone(), folder.clone(), task_id.to_string());
            blocking(move || {
                crate::project::snapshot::take(
                    &store,
                    project_id,
                    &folder,
                    &id,
                    "the task's work, before it was discarded",
                )
            })
            .await?
        };
        {
            let (repo, folder, branch) = (repo.clone(), folder.clone(), branch.clone());
            blocking(move || {
                crate::project::remove_worktree(&repo, &folder)?;
                finish::delete_branch(&repo, &branch)
            })
            .await?;
        }
        let day: String = now().chars().take(10).collect();
        self.projects()
            .modify_tasks(&project, "a task's work was discarded", |file| {
                file.update(task_id, &now(), |t| {
                    t.status = TaskStatus::Open;
                    t.closed_reason = None;
                    t.commit = None;
                    t.worktree = None;
                    t.branch = None;
                    t.note = Some(format!(
                        "Its earlier work was discarded on {day}; a snapshot keeps it, to restore from the task's snapshots"
                    ));
                })
            })?;
        Ok(Discarded {
            snapshot_id: snapshot.id,
            said: format!(
                "The work of \u{201c}{}\u{201d} was discarded: its branch and folder are gone, and a snapshot keeps it if you want it back. The task is open again.",
                task.title
            ),
        })
    }
}

/// Up to five file names, then how many more.
fn names(files: &[String]) -> String {
    let shown: Vec<&str> = files.iter().take(5).map(String::as_str).collect();
    match files.len() {
        n if n > 5 => format!("{} and {} more", shown.join(", "), n - 5),
        _ => shown.join(", "),
    }
}

fn accept_message(task: &Task) -> String {
    let mut message = task.title.trim().to_string();
    if !task.description.trim().is_empty() {
        message.push_str(&format!("\n\n{}", task.description.trim()));
    }
    message.push_str(&format!("\n\nHealer task: {}", task.id));
    message
}
