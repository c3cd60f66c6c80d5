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
use crate::store::{PullRequestReading, PullRequestRecord};

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
        let api_url = api_url
            .map(str::to_string)
            .or_else(|| earlier.as_ref().map(|p| p.api_url.clone()));
        let (remote, host, token) = self.host_and_token(&project, api_url.as_deref()).await?;
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
            checks: "waiting".to_string(),
            checks_said: String::new(),
            next_check_at: None,
            healed_commit: None,
        })
    }

    /// One look at the open pull requests whose time has come (`now`, a test clock in tests):
    /// a fix the healer service made green is pushed; the host is asked for the pull request's
    /// state and its checks on what Healer pushed, no more often than [`forge::POLL_EVERY`] or
    /// what the host's rate limit asks; a failing check goes to the healer service once per
    /// pushed commit.
    pub async fn watch_pull_requests(
        &self,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<Vec<PullRequestRecord>> {
        let due = self.services.store.pull_requests_due(&now.to_rfc3339())?;
        let mut read = Vec::new();
        for pr in due {
            match self.watch_one(&pr, now).await {
                Ok(()) => {}
                Err(e) => {
                    tracing::warn!(
                        project = pr.project_id,
                        task = %pr.task_id,
                        "the pull request was not read: {e}"
                    );
                    // Asked again a poll later, whatever went wrong (a rate limit says its own
                    // wait inside `watch_one`).
                    self.services.store.record_pull_request_reading(
                        pr.project_id,
                        &pr.task_id,
                        &PullRequestReading {
                            state: pr.state.clone(),
                            next_check_at: later(now, forge::POLL_EVERY),
                            of_commit: pr.pushed_commit.clone(),
                            checks: pr.checks.clone(),
                            checks_said: pr.checks_said.clone(),
                        },
                    )?;
                }
            }
            if let Some(now_reads) = self
                .services
                .store
                .pull_request(pr.project_id, &pr.task_id)?
            {
                read.push(now_reads);
            }
        }
        Ok(read)
    }

    async fn watch_one(
        &self,
        pr: &PullRequestRecord,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<()> {
        let store = &self.services.store;
        let project = store.project(pr.project_id)?;
        let pr = &self.push_green_fix(&project, pr).await?;
        let (_, host, token) = self.host_and_token(&project, Some(&pr.api_url)).await?;
        let number = u64::try_from(pr.number).unwrap_or_default();
        let read = host.pull_request(&token, number).await;
        let polled = match read {
            Ok(polled) => polled,
            Err(e) => return self.wait_out(pr, now, e),
        };
        let state = state_word(polled.value.state).to_string();
        let mut wait = polled.wait_at_least;
        let mut failing = None;
        let (checks, checks_said) = if polled.value.state == PrState::Open {
            // The checks on what Healer pushed (the host's head may be someone else's push).
            let mut of_ours = polled.value.clone();
            of_ours.head_sha = Some(pr.pushed_commit.clone());
            let checks = match host.checks(&token, &of_ours).await {
                Ok(checks) => checks,
                Err(e) => return self.wait_out(pr, now, e),
            };
            wait = wait.max(checks.wait_at_least);
            let said = checks_in_words(&checks.value);
            if checks.value.overall == forge::CheckState::Failure {
                failing = Some(checks.value);
            }
            said
        } else {
            (pr.checks.clone(), pr.checks_said.clone())
        };
        store.record_pull_request_reading(
            pr.project_id,
            &pr.task_id,
            &PullRequestReading {
                state,
                next_check_at: later(now, wait),
                of_commit: pr.pushed_commit.clone(),
                checks,
                checks_said,
            },
        )?;
        if let Some(failing) = failing {
            if store.claim_pull_request_healing(pr.project_id, &pr.task_id, &pr.pushed_commit)? {
                self.heal_red_check(&project, pr, &failing).await?;
            }
        }
        Ok(())
    }

    /// A host that asked Healer to wait (a rate limit) or did not answer: asked again when it
    /// said, else a poll later; anything else is the caller's error.
    fn wait_out(
        &self,
        pr: &PullRequestRecord,
        now: chrono::DateTime<chrono::Utc>,
        e: forge::ForgeError,
    ) -> Result<()> {
        let Some(wait) = e.wait() else {
            return Err(e.into());
        };
        self.services.store.record_pull_request_reading(
            pr.project_id,
            &pr.task_id,
            &PullRequestReading {
                state: pr.state.clone(),
                next_check_at: later(now, wait),
                of_commit: pr.pushed_commit.clone(),
                checks: pr.checks.clone(),
                checks_said: pr.checks_said.clone(),
            },
        )?;
        Ok(())
    }

    /// The task goes back to work with the failing check's log: the healer service takes it
    /// (its limits and breakers), like a check that failed on this computer.
    async fn heal_red_check(
        &self,
        project: &crate::project::Project,
        pr: &PullRequestRecord,
        checks: &forge::Checks,
    ) -> Result<()> {
        let store = &self.services.store;
        let Some(last) = store
            .list_sessions(project.id, Some(&pr.task_id), 1)?
            .into_iter()
            .next()
        else {
            return Ok(());
        };
        let failed: Vec<&forge::Check> = checks
            .checks
            .iter()
            .filter(|c| c.state == forge::CheckState::Failure)
            .collect();
        let names = failed
            .iter()
            .map(|c| format!("\u{201c}{}\u{201d}", c.name))
            .collect::<Vec<_>>()
            .join(", ");
        let log = failed
            .iter()
            .map(|c| match &c.log {
                Some(log) => format!("{}:\n{}", c.name, log.trim_end()),
                None => format!("{}: the host gave no log", c.name),
            })
            .collect::<Vec<_>>()
            .join("\n\n");
        // The task goes back to work only when the healer service takes such failures; else it
        // stays as it is and the person is told (the pipeline's notification).
        let config = store.healer_config(project.id)?;
        if config.enabled && config.scenarios.on_verification_failure {
            let task_id = pr.task_id.clone();
            self.projects().modify_tasks(
                project,
                "a check failed on the task's pull request",
                |file| {
                    file.update(&task_id, &crate::store::now(), |t| {
                        t.status = crate::project::TaskStatus::Open;
                        t.closed_reason = None;
                        t.note = Some(format!(
                            "The check {names} failed on its pull request; Healer is fixing it"
                        ));
                    })
                },
            )?;
        }
        let failure = crate::failure::Failure::new(
            crate::failure::FailureSource::ProjectTask {
                project_id: project.id,
                task_id: pr.task_id.clone(),
                session_id: last.id,
            },
            crate::failure::ProjectScenario::PullRequestCheckFailed.as_str(),
            crate::failure::ProjectScenario::PullRequestCheckFailed.class(),
            crate::failure::Evidence {
                error_type: None,
                message: format!("The check {names} failed on the pull request"),
                stack: Some(log),
            },
        );
        self.services.heal(failure).await?;
        Ok(())
    }

    /// When the healer service's session made the task green again after a red check, its
    /// commit is pushed to the pull request's branch (the remote checked to be where Healer
    /// left it). Anything still under way (a session, the service) is waited for.
    async fn push_green_fix(
        &self,
        project: &crate::project::Project,
        pr: &PullRequestRecord,
    ) -> Result<PullRequestRecord> {
        let store = &self.services.store;
        if pr.healed_commit.as_deref() != Some(pr.pushed_commit.as_str()) {
            return Ok(pr.clone());
        }
        let busy = store
            .open_invocation_for_task(project.id, &pr.task_id)?
            .is_some()
            || store
                .list_sessions(project.id, Some(&pr.task_id), 1)?
                .first()
                .is_some_and(|s| s.status == crate::session::SessionStatus::Running);
        if busy {
            return Ok(pr.clone());
        }
        let repo = PathBuf::from(&project.path);
        let branch = crate::project::branch_name(&pr.task_id);
        let tip = {
            let (repo, branch) = (repo.clone(), branch.clone());
            blocking(move || crate::project::finish::branch_tip(&repo, &branch)).await?
        };
        if tip.to_string() == pr.pushed_commit {
            return Ok(pr.clone());
        }
        // Only what a session of the task ended green on (its checks passed here), never a
        // branch moved by anything else.
        let green = store
            .list_sessions(project.id, Some(&pr.task_id), 1)?
            .first()
            .is_some_and(|s| {
                s.status == crate::session::SessionStatus::Finished
                    && s.commit_id.as_deref() == Some(tip.to_string().as_str())
            });
        if !green {
            return Ok(pr.clone());
        }
        let main = project.settings.main_branch.clone();
        let remote = {
            let repo = repo.clone();
            blocking(move || push::remote_for(&repo, &main)).await?
        }
        .ok_or_else(|| Error::InvalidInput("the repository has no remote any more".to_string()))?;
        let pushed = push::push_branch(&repo, &remote, &branch, Some(&pr.pushed_commit)).await?;
        store.save_pull_request(&PullRequestRecord {
            pushed_commit: pushed.commit,
            ..pr.clone()
        })
    }

    /// The host of the project's remote and the token kept for it.
    async fn host_and_token(
        &self,
        project: &crate::project::Project,
        api_url: Option<&str>,
    ) -> Result<(push::Remote, forge::Forge, String)> {
        let repo = PathBuf::from(&project.path);
        let main = project.settings.main_branch.clone();
        let remote = blocking(move || push::remote_for(&repo, &main))
            .await?
            .ok_or_else(|| {
                Error::InvalidInput(format!(
                    "the repository of \u{201c}{}\u{201d} has no remote to push to: add the address of its copy on GitHub, GitLab or Forgejo to it first",
                    project.name
                ))
            })?;
        let host = forge::read_remote(&remote.url, api_url)?;
        let keep = self.services.llm.keep();
        let account = token_account(self.services.instance(), project.id);
        let token = blocking(move || Ok(keep.get(&account).map(|(value, _)| value)))
            .await?
            .ok_or_else(|| {
                Error::InvalidInput(format!(
                    "Healer has no token for {} yet: give it one for \u{201c}{}\u{201d} (it is kept in your secrets, never in Healer's database)",
                    host.kind.name(),
                    project.name
                ))
            })?;
        Ok((remote, host, token))
    }
}

/// `now` plus `wait`, as stored.
fn later(now: chrono::DateTime<chrono::Utc>, wait: std::time::Duration) -> String {
    let wait = chrono::Duration::from_std(wait).unwrap_or(chrono::Duration::minutes(1));
    (now + wait).to_rfc3339()
}

/// The checks as stored ("waiting", "passing", "failing") and in a sentence.
fn checks_in_words(checks: &forge::Checks) -> (String, String) {
    let names = |state| {
        checks
            .checks
            .iter()
            .filter(|c| c.state == state)
            .map(|c| format!("\u{201c}{}\u{201d}", c.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match checks.overall {
        forge::CheckState::Failure => (
            "failing".to_string(),
            format!("{} failed", names(forge::CheckState::Failure)),
        ),
        forge::CheckState::Pending if checks.checks.is_empty() => (
            "waiting".to_string(),
            "No check has started yet".to_string(),
        ),
        forge::CheckState::Pending => (
            "waiting".to_string(),
            format!("{} still running", names(forge::CheckState::Pending)),
        ),
        forge::CheckState::Success => (
            "passing".to_string(),
            format!(
                "{} passed",
                crate::workflow::count(checks.checks.len(), "check", "checks")
            ),
        ),
    }
}

/// Reads the open pull requests' checks as their time comes, wherever sessions run.
pub(super) async fn watch_loop(handle: Handle, cancel: tokio_util::sync::CancellationToken) {
    loop {
        tokio::select! {
            () = cancel.cancelled() => return,
            () = tokio::time::sleep(WATCH_TICK) => {}
        }
        if let Err(e) = handle.watch_pull_requests(chrono::Utc::now()).await {
            tracing::warn!("the pull requests were not read: {e}");
        }
    }
}

/// How often the watch looks for pull requests whose time has come (each is asked no more
/// often than its own wait).
const WATCH_TICK: std::time::Duration = std::time::Duration::from_secs(15);

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
