//! Push a task's branch and open a pull request for it (GitHub), a merge request (GitLab) or a
//! pull request (Forgejo / Gitea): the host read from the remote's address, the push made by git
//! with the person's own sign-in, the host's token taken from the secrets keep (given once per
//! project), the description written from the task and its session.

use std::path::PathBuf;

use super::secrets::blocking;
use super::Handle;
use crate::error::{Error, Result};
use crate::forge::{self, Draft, ForgeKind, PrState};
use crate::project::push;
use crate::store::PullRequestRecord;

/// Where a project's host token is kept: bound to this data folder (`mark`).
pub fn token_account(mark: &str, project_id: i64) -> String {
    format!("project:{mark}:{project_id}:host-token")
}

fn host_word(kind: ForgeKind) -> &'static str {
    match kind {
        ForgeKind::GitHub => "github",
        ForgeKind::GitLab => "gitlab",
        ForgeKind::Forgejo => "forgejo",
    }
}

fn state_word(state: PrState) -> &'static str {
    match state {
        PrState::Open => "open",
        PrState::Merged => "merged",
        PrState::Closed => "closed",
    }
}

impl Handle {
    /// Keep the token Healer opens this project's pull requests with (in the secrets keep:
    /// the system's keyring, or Healer's own sealed file; never the database).
    pub async fn set_project_token(&self, project_id: i64, token: String) -> Result<()> {
        self.services.store.project(project_id)?;
        let token = token.trim().to_string();
        if token.is_empty() {
            return Err(Error::InvalidInput(
                "the token is empty: paste the token the host gave you".to_string(),
            ));
        }
        if token.len() > crate::capped::SECRET_BYTES {
            return Err(Error::InvalidInput(
                "that is too long to be a token".to_string(),
            ));
        }
        let keep = self.services.llm.keep();
        let account = token_account(self.services.instance(), project_id);
        blocking(move || {
            keep.set(&account, &token).map(|_| ()).map_err(|e| match e {
                crate::secrets::KeepError::NoPlace => Error::NoSecretPlace,
                other => Error::Internal(other.to_string()),
            })
        })
        .await
    }

    /// Push the task's branch and open its pull request (or find the one already open for it);
    /// `api_url` names a self-hosted host's API when its address does not say which it is.
    pub async fn open_pull_request(
        &self,
        project_id: i64,
        task_id: &str,
        api_url: Option<&str>,
    ) -> Result<PullRequestRecord> {
        let store = &self.services.store;
        let project = store.project(project_id)?;
        let task = self.finishing_task(&project, task_id)?;
        let repo = PathBuf::from(&project.path);
        let branch = crate::project::branch_name(task_id);
        let main = project.settings.main_branch.clone();
        let earlier = store.pull_request(project_id, task_id)?;
        let remote = {
            let (repo, main) = (repo.clone(), main.clone());
            blocking(move || push::remote_for(&repo, &main)).await?
        }
        .ok_or_else(|| {
            Error::InvalidInput(format!(
                "the repository of \u{201c}{}\u{201d} has no remote to push to: add the address of its copy on GitHub, GitLab or Forgejo to it first",
                project.name
            ))
        })?;
        let api_url = api_url
            .map(str::to_string)
            .or_else(|| earlier.as_ref().map(|p| p.api_url.clone()));
        let host = forge::read_remote(&remote.url, api_url.as_deref())?;
        let keep = self.services.llm.keep();
        let account = token_account(self.services.instance(), project_id);
        let token = blocking(move || Ok(keep.get(&account).map(|(value, _)| value)))
            .await?
            .ok_or_else(|| {
                Error::InvalidInput(format!(
                    "Healer has no token for {} yet: give it one for \u{201c}{}\u{201d} (it is kept in your secrets, never in Healer's database)",
                    host.kind.name(),
                    project.name
                ))
            })?;
        let pushed = push::push_branch(
            &repo,
            &remote,
            &branch,
            earlier.as_ref().map(|p| p.pushed_commit.as_str()),
        )
        .await?;
        let sessions = store.list_sessions(project_id, Some(task_id), 10)?;
        let draft = Draft {
            title: task.title.trim().to_string(),
            body: description(&task, sessions.first().map(|s| s.summary.as_str())),
            head: branch.clone(),
            base: main,
        };
        let opened = host.open_pull_request(&token, &draft).await?;
        let number = i64::try_from(opened.number).unwrap_or(i64::MAX);
        store.save_pull_request(&PullRequestRecord {
            project_id,
            task_id: task_id.to_string(),
            host: host_word(host.kind).to_string(),
            api_url: host.api_base.to_string(),
            number,
            url: opened.url,
            state: state_word(opened.state).to_string(),
            pushed_commit: pushed.commit,
            created_at: String::new(),
            updated_at: String::new(),
        })
    }
}

/// What the pull request says: the task, what "done" means for it, and how the session ended.
fn description(task: &crate::project::Task, session_summary: Option<&str>) -> String {
    let mut body = String::new();
    if !task.description.trim().is_empty() {
        body.push_str(task.description.trim());
        body.push_str("\n\n");
    }
    if !task.acceptance.is_empty() {
        body.push_str("Done when:\n");
        for criterion in &task.acceptance {
            body.push_str(&format!("- {}\n", criterion.trim()));
        }
        body.push('\n');
    }
    if let Some(summary) = session_summary.map(str::trim).filter(|s| !s.is_empty()) {
        body.push_str(&format!("The agent's session: {summary}\n\n"));
    }
    body.push_str("Opened by Healer for its task ");
    body.push_str(&task.id);
    body.push('.');
    body
}
