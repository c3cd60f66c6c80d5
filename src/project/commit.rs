//! The end of a session whose work passed its checks: commit what the agent changed (or find
//! the commit it made itself), merge as the project's settings say — or, when the agent
//! changed nothing, say so: the task is not done.

use super::run::Ctx;
use super::settle::Ending;
use super::worktree;
use crate::error::Result;
use crate::store::MergePolicy;
use crate::tasklist::Task;

impl Ctx<'_> {
    /// `accept`: the person asked for the work to be accepted this way (a conflict the agent
    /// resolved), whatever the project's merge setting says.
    pub(super) async fn commit(
        &self,
        merge: MergePolicy,
        accept: Option<super::finish::AcceptHow>,
        summary: &str,
    ) -> Result<Ending> {
        let message = commit_message(&self.task, summary);
        let path = self.worktree.clone();
        let committed = blocking(move || worktree::commit_all(&path, &message)).await?;
        let commit = match committed {
            Some(commit) => commit,
            None => {
                // Nothing left uncommitted: the agent may have committed its work itself.
                let (path, main) = (
                    self.worktree.clone(),
                    self.project.settings.main_branch.clone(),
                );
                match blocking(move || worktree::ahead_of_main(&path, &main)).await? {
                    Some(head) => {
                        self.note(&format!(
                            "The agent committed its work itself ({}).",
                            super::repo::short(&head)
                        ))?;
                        head
                    }
                    None => {
                        self.note(
                            "The agent changed no file, so there is nothing to commit: the task is not done and goes back to open.",
                        )?;
                        return Ok(Ending::NoChange {
                            summary: summary.to_string(),
                        });
                    }
                }
            }
        };
        let short = super::repo::short(&commit);
        let branch = worktree::branch_name(&self.task.id);
        // Work under review on the host (an open pull request) is accepted there, not here.
        let reviewed = self
            .projects
            .services
            .store
            .pull_request(self.project.id, &self.task.id)?
            .is_some_and(|pr| pr.state == "open");
        let how = match (accept, merge) {
            (Some(how), _) => Some(how),
            (None, _) if reviewed => None,
            (None, MergePolicy::FastForward) => Some(super::finish::AcceptHow::FastForward),
            (None, MergePolicy::LeaveBranch) => None,
        };
        let left = match how {
            None if reviewed => Some(
                "it waits on its own branch for its pull request, where it is reviewed and merged"
                    .to_string(),
            ),
            None => Some(
                "it waits on its own branch for you to accept, as the project's settings say"
                    .to_string(),
            ),
            Some(how) => {
                let (repo, main, b) = (
                    self.repo.clone(),
                    self.project.settings.main_branch.clone(),
                    branch.clone(),
                );
                let message = commit_message(&self.task, summary);
                match blocking(move || {
                    let target =
                        super::finish::commit_to_accept(&repo, &main, &b, commit, how, &message)?;
                    worktree::fast_forward(&repo, &main, &b, target)
                })
                .await?
                {
                    worktree::Merge::Merged => None,
                    worktree::Merge::Left(why) => Some(why),
                }
            }
        };
        self.note(&match &left {
            None => format!(
                "Committed {short} on {branch} and fast-forwarded {} to it.",
                self.project.settings.main_branch
            ),
            Some(why) => format!("Committed {short} on {branch}; {why}."),
        })?;
        Ok(Ending::Closed {
            commit: Some(commit.to_string()),
            merged: left.is_none(),
            summary: summary.to_string(),
            left,
        })
    }
}

impl Ctx<'_> {
    /// A session that resolves a conflict (the person asked to accept): the main branch merged
    /// into its worktree as git does it, before the agent starts; the files that conflict.
    pub(super) async fn merge_main_for_agent(&self, branch: &str) -> Result<Vec<String>> {
        let resolving = self.resume.as_ref().is_some_and(|r| r.accept.is_some());
        if !resolving || super::finish::merge_under_way(&self.worktree).is_some() {
            return Ok(Vec::new());
        }
        let main = self.project.settings.main_branch.clone();
        let (path, m) = (self.worktree.clone(), main.clone());
        let conflicted = blocking(move || super::finish::merge_main_for_agent(&path, &m)).await?;
        self.note(&format!(
            "Merged {main} into {branch} for the agent to resolve: {}.",
            if conflicted.is_empty() {
                "no file conflicts any more".to_string()
            } else {
                format!("conflicts in {}", conflicted.join(", "))
            }
        ))?;
        Ok(conflicted)
    }

    /// While a merge is under way: the ending of a session that left a conflict marker in a
    /// file (nothing is committed), else `None`.
    pub(super) async fn conflict_left(&self, conflicted: Vec<String>) -> Result<Option<Ending>> {
        if super::finish::merge_under_way(&self.worktree).is_none() {
            return Ok(None);
        }
        let path = self.worktree.clone();
        let left = blocking(move || {
            let files = match conflicted.is_empty() {
                true => super::finish::uncommitted(&path)?,
                false => conflicted,
            };
            Ok(super::finish::markers_left(&path, &files))
        })
        .await?;
        Ok((!left.is_empty()).then(|| {
            Ending::failed(
                crate::failure::ProjectScenario::VerificationFailed,
                crate::failure::FailureClass::Logic,
                crate::session::SessionStatus::Failed,
                format!(
                    "The agent left conflict markers in {}: the conflict with {} is not resolved",
                    left.join(", "),
                    self.project.settings.main_branch
                ),
                None,
            )
        }))
    }
}

pub(super) async fn blocking<T: Send + 'static>(
    job: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(job)
        .await
        .map_err(|e| crate::error::Error::Internal(format!("a git step stopped: {e}")))?
}

fn commit_message(task: &Task, summary: &str) -> String {
    message_for(&task.title, &task.id, summary)
}

/// A task's commit message: its title, the agent's summary, and the task's id.
pub(super) fn message_for(title: &str, task_id: &str, summary: &str) -> String {
    let mut message = title.trim().to_string();
    if !summary.trim().is_empty() {
        message.push_str(&format!("\n\n{}", summary.trim()));
    }
    message.push_str(&format!("\n\nHealer task: {task_id}"));
    message
}
