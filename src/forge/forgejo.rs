//! Forgejo's (and Gitea's) REST API v1: pulls and a commit's combined status. Forgejo Actions
//! and outside CI both report as commit statuses; the API offers no job log, so a failure
//! carries the status's description.

use reqwest::Method;
use serde_json::{json, Value};

use super::answer::{items, text};
use super::http::Call;
use super::{Check, CheckState, Draft, PullRequest, Result};

/// The most open pulls (or statuses) read from one page: Forgejo's default maximum.
const LIMIT: &str = "50";

pub(super) async fn open(call: &Call<'_>, draft: &Draft) -> Result<PullRequest> {
    let (owner, name) = call.forge.owner_and_name()?;
    let url = call.endpoint(&["repos", owner, name, "pulls"])?;
    let body = json!({
        "title": crate::secrets::redact(&draft.title),
        "body": crate::secrets::redact(&draft.body),
        "head": draft.head,
        "base": draft.base,
    });
    let reply = call.send_json(Method::POST, url, &body).await?;
    // 409 ("pull request already exists for these targets"), 422 on older versions.
    if matches!(reply.status, 409 | 422) {
        if let Some(pr) = open_for_branch(call, owner, name, &draft.head).await? {
            return Ok(pr);
        }
    }
    let value = call.json(reply, &format!("repository {}", call.repo()))?;
    pull_request(call, &value)
}

/// The open pull whose head is `branch` of this repository (not a fork's branch of that name).
async fn open_for_branch(
    call: &Call<'_>,
    owner: &str,
    name: &str,
    branch: &str,
) -> Result<Option<PullRequest>> {
    let mut url = call.endpoint(&["repos", owner, name, "pulls"])?;
    url.query_pairs_mut()
        .append_pair("state", "open")
        .append_pair("limit", LIMIT);
    let list = call
        .get_json(url, &format!("repository {}", call.repo()))
        .await?;
    let ours = |pull: &&Value| {
        let same_repo = text(pull, "/head/repo/full_name")
            .is_none_or(|full| full.eq_ignore_ascii_case(call.repo()));
        text(pull, "/head/ref").as_deref() == Some(branch) && same_repo
    };
    items(&list, "")
        .iter()
        .find(ours)
        .map(|v| pull_request(call, v))
        .transpose()
}

/// Forgejo and Gitea read a pull request as GitHub does.
pub(super) use super::github::{pull_request, read};

pub(super) async fn checks(call: &Call<'_>, pr: &PullRequest) -> Result<Vec<Check>> {
    let (owner, name) = call.forge.owner_and_name()?;
    let sha = match &pr.head_sha {
        Some(sha) => sha.clone(),
        None => read(call, pr.number).await?.head_sha.ok_or_else(|| {
            call.bad_answer(format!(
                "pull request #{} does not say which commit it is at",
                pr.number
            ))
        })?,
    };
    let mut url = call.endpoint(&["repos", owner, name, "commits", &sha, "status"])?;
    url.query_pairs_mut().append_pair("limit", LIMIT);
    let combined = call
        .get_json(url, &format!("commit {sha} in {}", call.repo()))
        .await?;
    let checks = items(&combined, "/statuses")
        .iter()
        .map(|status| {
            let state = status_state(status);
            let log = (state == CheckState::Failure)
                .then(|| text(status, "/description").map(|d| call.scrub(&d)))
                .flatten();
            Check {
                name: text(status, "/context").unwrap_or_else(|| "status".to_string()),
                state,
                url: page(call, status),
                log,
            }
        })
        .collect();
    Ok(checks)
}

/// Forgejo names the field `status`; `state` is what statuses are created with (and what
/// GitHub-shaped proxies send). error and failure fail; success, warning and skipped do not
/// hold the pull request back; pending and anything unknown wait.
fn status_state(status: &Value) -> CheckState {
    let said = text(status, "/status").or_else(|| text(status, "/state"));
    match said.as_deref() {
        Some("failure" | "error") => CheckState::Failure,
        Some("success" | "warning" | "skipped") => CheckState::Success,
        _ => CheckState::Pending,
    }
}

/// The status's page; Forgejo Actions gives a path on the site (`/o/r/actions/runs/3/jobs/0`).
fn page(call: &Call<'_>, status: &Value) -> Option<String> {
    let target = text(status, "/target_url")?;
    match url::Url::parse(&target) {
        Ok(url) => Some(url.to_string()),
        Err(_) => call.forge.web_base.join(&target).ok().map(String::from),
    }
}
