//! GitLab's REST API v4: merge requests, their pipelines, a pipeline's jobs and a failed job's
//! trace. A project is named by its URL-encoded path (`group%2Fsub%2Frepo`), which the
//! endpoint builder does by encoding the path as one segment.

use reqwest::Method;
use serde_json::{json, Value};

use super::answer::{items, number, text};
use super::http::Call;
use super::{Check, CheckState, Draft, PrState, PullRequest, Result, LOGS_PER_POLL};

/// The most jobs read from one page: GitLab's own maximum.
const PER_PAGE: &str = "100";

pub(super) async fn open(call: &Call<'_>, draft: &Draft) -> Result<PullRequest> {
    let project = call.repo();
    let url = call.endpoint(&["projects", project, "merge_requests"])?;
    let body = json!({
        "source_branch": draft.head,
        "target_branch": draft.base,
        "title": crate::secrets::redact(&draft.title),
        "description": crate::secrets::redact(&draft.body),
    });
    let reply = call.send_json(Method::POST, url, &body).await?;
    // 409: "Another open merge request already exists for this source branch".
    if reply.status == 409 {
        if let Some(pr) = open_for_branch(call, &draft.head).await? {
            return Ok(pr);
        }
    }
    let value = call.json(reply, &format!("project {project}"))?;
    merge_request(call, &value)
}

/// The open merge request from `branch` of this project (not a fork's branch of that name).
async fn open_for_branch(call: &Call<'_>, branch: &str) -> Result<Option<PullRequest>> {
    let project = call.repo();
    let mut url = call.endpoint(&["projects", project, "merge_requests"])?;
    url.query_pairs_mut()
        .append_pair("source_branch", branch)
        .append_pair("state", "opened");
    let list = call.get_json(url, &format!("project {project}")).await?;
    // A fork's merge request into this project may have a branch of the same name.
    let ours = |mr: &&Value| match (
        number(mr, "/source_project_id"),
        number(mr, "/target_project_id"),
    ) {
        (Some(source), Some(target)) => source == target,
        _ => true,
    };
    items(&list, "")
        .iter()
        .find(ours)
        .map(|v| merge_request(call, v))
        .transpose()
}

pub(super) async fn read(call: &Call<'_>, iid: u64) -> Result<PullRequest> {
    let project = call.repo();
    let url = call.endpoint(&["projects", project, "merge_requests", &iid.to_string()])?;
    let value = call
        .get_json(url, &format!("merge request !{iid} in {project}"))
        .await?;
    merge_request(call, &value)
}

fn merge_request(call: &Call<'_>, value: &Value) -> Result<PullRequest> {
    let iid = number(value, "/iid")
        .ok_or_else(|| call.bad_answer("the merge request has no iid".to_string()))?;
    // "locked" is a merge request being merged right now: still open until it is done.
    let state = match text(value, "/state").as_deref() {
        Some("merged") => PrState::Merged,
        Some("closed") => PrState::Closed,
        _ => PrState::Open,
    };
    let url = text(value, "/web_url").unwrap_or_else(|| {
        format!(
            "{}{}/-/merge_requests/{iid}",
            call.forge.web_base, call.forge.repo_path
        )
    });
    Ok(PullRequest {
        number: iid,
        url,
        state,
        head_sha: text(value, "/sha"),
    })
}

pub(super) async fn checks(call: &Call<'_>, pr: &PullRequest) -> Result<Vec<Check>> {
    let project = call.repo();
    let what = format!("merge request !{} in {project}", pr.number);
    let url = call.endpoint(&[
        "projects",
        project,
        "merge_requests",
        &pr.number.to_string(),
        "pipelines",
    ])?;
    let pipelines = call.get_json(url, &what).await?;
    // Newest first; the one for the head commit when the head is known (none yet for it: its
    // checks have not started, whatever an older commit's pipeline said).
    let list = items(&pipelines, "");
    let pipeline = match pr.head_sha.as_deref() {
        Some(sha) => list
            .iter()
            .find(|p| text(p, "/sha").as_deref() == Some(sha)),
        None => list.first(),
    };
    let Some(pipeline) = pipeline else {
        return Ok(Vec::new());
    };
    let Some(id) = number(pipeline, "/id") else {
        return Err(call.bad_answer("a pipeline has no id".to_string()));
    };
    let id = id.to_string();
    let mut url = call.endpoint(&["projects", project, "pipelines", &id, "jobs"])?;
    url.query_pairs_mut().append_pair("per_page", PER_PAGE);
    let jobs = call
        .get_json(url, &format!("pipeline {id} in {project}"))
        .await?;

    let mut checks = Vec::new();
    let mut logs_left = LOGS_PER_POLL;
    for job in items(&jobs, "") {
        let state = job_state(job);
        let log = if state == CheckState::Failure && logs_left > 0 {
            logs_left -= 1;
            trace(call, job).await
        } else {
            None
        };
        checks.push(Check {
            name: text(job, "/name").unwrap_or_else(|| "job".to_string()),
            state,
            url: text(job, "/web_url"),
            log,
        });
    }
    // A pipeline that failed before any job ran (its .gitlab-ci.yml does not read) has no
    // job to show it.
    if checks.is_empty() && text(pipeline, "/status").as_deref() == Some("failed") {
        checks.push(Check {
            name: format!("pipeline {id}"),
            state: CheckState::Failure,
            url: text(pipeline, "/web_url"),
            log: None,
        });
    }
    Ok(checks)
}

/// failed (unless allowed to fail) and canceled are failures; success, skipped and manual
/// (a job waiting for a person to start it) do not hold the merge request back; created,
/// pending, running, waiting_for_resource, preparing, scheduled … are pending.
fn job_state(job: &Value) -> CheckState {
    let allowed = job.get("allow_failure").and_then(Value::as_bool) == Some(true);
    match text(job, "/status").as_deref() {
        Some("failed") if allowed => CheckState::Success,
        Some("failed" | "canceled") => CheckState::Failure,
        Some("success" | "skipped" | "manual") => CheckState::Success,
        _ => CheckState::Pending,
    }
}

/// The end of a job's log (plain text).
async fn trace(call: &Call<'_>, job: &Value) -> Option<String> {
    let id = number(job, "/id")?.to_string();
    let url = call
        .endpoint(&["projects", call.repo(), "jobs", &id, "trace"])
        .ok()?;
    call.log_tail(url).await
}
