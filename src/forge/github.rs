//! GitHub's REST API (and GitHub Enterprise's, under /api/v3): pulls, check runs and commit
//! statuses. A commit's checks are both: GitHub Actions and apps report check runs, older CI
//! services commit statuses. A failed Actions job's log is fetched, since its check run's
//! summary is usually empty.

use reqwest::Method;
use serde_json::{json, Value};

use super::answer::{failure_log, items, number, text};
use super::http::Call;
use super::{Check, CheckState, Draft, PrState, PullRequest, Result, LOGS_PER_POLL};

/// The conclusions of a completed check run that mean it failed.
const FAILED: [&str; 5] = [
    "failure",
    "timed_out",
    "cancelled",
    "action_required",
    "startup_failure",
];

/// The most check runs or statuses read from one page: GitHub's own maximum.
const PER_PAGE: &str = "100";

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
    // 422 is GitHub's "A pull request already exists for owner:branch", and also "No commits
    // between …": only an open one found for the branch makes it the first.
    if reply.status == 422 {
        if let Some(pr) = open_for_branch(call, owner, name, &draft.head).await? {
            return Ok(pr);
        }
    }
    let value = call.json(reply, &format!("repository {}", call.repo()))?;
    pull_request(call, &value)
}

async fn open_for_branch(
    call: &Call<'_>,
    owner: &str,
    name: &str,
    branch: &str,
) -> Result<Option<PullRequest>> {
    let mut url = call.endpoint(&["repos", owner, name, "pulls"])?;
    url.query_pairs_mut()
        .append_pair("head", &format!("{owner}:{branch}"))
        .append_pair("state", "open");
    let list = call
        .get_json(url, &format!("repository {}", call.repo()))
        .await?;
    items(&list, "")
        .first()
        .map(|v| pull_request(call, v))
        .transpose()
}

pub(super) async fn read(call: &Call<'_>, number: u64) -> Result<PullRequest> {
    let (owner, name) = call.forge.owner_and_name()?;
    let url = call.endpoint(&["repos", owner, name, "pulls", &number.to_string()])?;
    let what = format!("pull request #{number} in {}", call.repo());
    let value = call.get_json(url, &what).await?;
    pull_request(call, &value)
}

/// A pull request as GitHub writes it — and Forgejo / Gitea, which answer in the same shape.
pub(super) fn pull_request(call: &Call<'_>, value: &Value) -> Result<PullRequest> {
    let number = number(value, "/number")
        .ok_or_else(|| call.bad_answer("the pull request has no number".to_string()))?;
    let merged = value.get("merged").and_then(Value::as_bool) == Some(true)
        || text(value, "/merged_at").is_some();
    let state = match text(value, "/state").as_deref() {
        _ if merged => PrState::Merged,
        Some("closed") => PrState::Closed,
        _ => PrState::Open,
    };
    let pages = match call.forge.kind {
        super::ForgeKind::Forgejo => "pulls",
        _ => "pull",
    };
    let url = text(value, "/html_url").unwrap_or_else(|| {
        format!(
            "{}{}/{pages}/{number}",
            call.forge.web_base, call.forge.repo_path
        )
    });
    Ok(PullRequest {
        number,
        url,
        state,
        head_sha: text(value, "/head/sha"),
    })
}

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
    let what = format!("commit {sha} in {}", call.repo());
    let mut url = call.endpoint(&["repos", owner, name, "commits", &sha, "check-runs"])?;
    url.query_pairs_mut().append_pair("per_page", PER_PAGE);
    let runs = call.get_json(url, &what).await?;
    let mut url = call.endpoint(&["repos", owner, name, "commits", &sha, "status"])?;
    url.query_pairs_mut().append_pair("per_page", PER_PAGE);
    let status = call.get_json(url, &what).await?;

    let mut checks = Vec::new();
    let mut logs_left = LOGS_PER_POLL;
    for run in items(&runs, "/check_runs") {
        let state = run_state(run);
        let log = if state == CheckState::Failure {
            let job_log = if logs_left > 0 && is_actions_job(run) {
                logs_left -= 1;
                actions_log(call, owner, name, run).await
            } else {
                None
            };
            failure_log(output_text(call, run), job_log)
        } else {
            None
        };
        checks.push(Check {
            name: text(run, "/name").unwrap_or_else(|| "check run".to_string()),
            state,
            url: text(run, "/html_url").or_else(|| text(run, "/details_url")),
            log,
        });
    }
    // Only the statuses themselves: the combined `state` is "pending" while there are none,
    // which would hold back a repository whose checks are all check runs.
    for status in items(&status, "/statuses") {
        let state = match text(status, "/state").as_deref() {
            Some("success") => CheckState::Success,
            Some("failure" | "error") => CheckState::Failure,
            _ => CheckState::Pending,
        };
        let log = (state == CheckState::Failure)
            .then(|| text(status, "/description").map(|d| call.scrub(&d)))
            .flatten();
        checks.push(Check {
            name: text(status, "/context").unwrap_or_else(|| "status".to_string()),
            state,
            url: text(status, "/target_url"),
            log,
        });
    }
    Ok(checks)
}

/// Queued, in progress, waiting … are pending; a completed run failed by [`FAILED`], else it
/// passed (success, neutral, skipped, stale).
fn run_state(run: &Value) -> CheckState {
    if text(run, "/status").as_deref() != Some("completed") {
        return CheckState::Pending;
    }
    match text(run, "/conclusion") {
        Some(c) if FAILED.contains(&c.as_str()) => CheckState::Failure,
        Some(_) => CheckState::Success,
        None => CheckState::Pending,
    }
}

/// The run's own words: its output's title, summary and text.
fn output_text(call: &Call<'_>, run: &Value) -> Option<String> {
    let parts: Vec<String> = ["/output/title", "/output/summary", "/output/text"]
        .iter()
        .filter_map(|p| text(run, p))
        .collect();
    (!parts.is_empty()).then(|| call.scrub(&parts.join("\n\n")))
}

/// A GitHub Actions job reports as a check run with the job's id.
fn is_actions_job(run: &Value) -> bool {
    text(run, "/app/slug").as_deref() == Some("github-actions") && number(run, "/id").is_some()
}

/// The end of an Actions job's log: the API answers with a redirect to a signed address
/// in GitHub's storage, fetched without the token.
async fn actions_log(call: &Call<'_>, owner: &str, name: &str, run: &Value) -> Option<String> {
    let id = number(run, "/id")?.to_string();
    let url = call
        .endpoint(&["repos", owner, name, "actions", "jobs", &id, "logs"])
        .ok()?;
    call.log_tail(url).await
}
