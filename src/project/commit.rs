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
    pub(super) async fn commit(&self, merge: MergePolicy, summary: &str) -> Result<Ending> {
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
        let left = match merge {
            MergePolicy::LeaveBranch => Some(format!(
                "left on {branch} for review, as the project's settings say"
            )),
            MergePolicy::FastForward => {
                let (repo, main, b) = (
                    self.repo.clone(),
                    self.project.settings.main_branch.clone(),
                    branch.clone(),
                );
                match blocking(move || worktree::fast_forward(&repo, &main, &b, commit)).await? {
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

pub(super) async fn blocking<T: Send + 'static>(
    job: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(job)
        .await
        .map_err(|e| crate::error::Error::Internal(format!("a git step stopped: {e}")))?
}

fn commit_message(task: &Task, summary: &str) -> String {
    let mut message = task.title.trim().to_string();
    if !summary.trim().is_empty() {
        message.push_str(&format!("\n\n{}", summary.trim()));
    }
    message.push_str(&format!("\n\nHealer task: {}", task.id));
    message
}
