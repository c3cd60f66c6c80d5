//! GitLab's wire format against a scripted GitLab on 127.0.0.1, for a project in a subgroup
//! (its id the URL-encoded path): a merge request opened and found again, read until merged,
//! its pipeline's jobs from running to a failure with the job's trace to green, rate limits,
//! and a refused token.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::json;

use super::test_server::{Answer, Host};
use super::*;

const TOKEN: &str = "glpat-scriptedGoodToken01";
const PROJECT: &str = "/api/v4/projects/group%2Fsub%2Fapp";
const SHA: &str = "1a0b36b3cdad1d2ee32457c102a8c0b7056fa863";

async fn gitlab() -> (Host, Forge) {
    let refusal = Answer::json(401, json!({"message": "401 Unauthorized"}));
    let host = Host::start("private-token", TOKEN, refusal).await;
    let forge = read_remote(
        &format!("{}/group/sub/app.git", host.url),
        Some(&format!("{}/api/v4", host.url)),
    )
    .expect("remote");
    assert_eq!(forge.kind, ForgeKind::GitLab);
    assert_eq!(forge.repo_path, "group/sub/app");
    (host, forge)
}

fn draft() -> Draft {
    Draft {
        title: "Fix the flaky importer".to_string(),
        body: "Healer's task 12.".to_string(),
        head: "healer/task-12".to_string(),
        base: "main".to_string(),
    }
}

/// A merge request as GitLab's API shows it (the fields Healer reads, and some around).
fn merge_request(iid: u64, state: &str) -> serde_json::Value {
    json!({
        "id": 84,
        "iid": iid,
        "project_id": 3,
        "source_project_id": 3,
        "target_project_id": 3,
        "title": "Fix the flaky importer",
        "state": state,
        "target_branch": "main",
        "source_branch": "healer/task-12",
        "sha": SHA,
        "merge_commit_sha": if state == "merged" { json!("8888888888888888888888888888888888888888") } else { json!(null) },
        "web_url": format!("https://gitlab.example.com/group/sub/app/-/merge_requests/{iid}"),
    })
}

#[tokio::test]
async fn a_merge_request_is_opened_and_its_page_given_back() {
    let (host, forge) = gitlab().await;
    let path = format!("{PROJECT}/merge_requests");
    host.route(
        "POST",
        &path,
        vec![Answer::json(201, merge_request(3, "opened"))],
    );

    let pr = forge
        .open_pull_request(TOKEN, &draft())
        .await
        .expect("opened");

    assert_eq!(
        pr,
        PullRequest {
            number: 3,
            url: "https://gitlab.example.com/group/sub/app/-/merge_requests/3".to_string(),
            state: PrState::Open,
            head_sha: Some(SHA.to_string()),
        }
    );
    let sent = host.seen_at("POST", &path);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].header("private-token"), Some(TOKEN));
    assert_eq!(sent[0].header("authorization"), None);
    assert_eq!(
        sent[0].body,
        json!({"source_branch": "healer/task-12", "target_branch": "main",
               "title": "Fix the flaky importer", "description": "Healer's task 12."})
    );
}

#[tokio::test]
async fn opening_again_gives_our_merge_request_already_open_for_the_branch() {
    let (host, forge) = gitlab().await;
    let path = format!("{PROJECT}/merge_requests");
    let exists = json!({"message": ["Another open merge request already exists for this source branch: !3"]});
    host.route("POST", &path, vec![Answer::json(409, exists)]);
    // A fork's merge request from a branch of the same name comes first.
    let mut fork = merge_request(9, "opened");
    fork["source_project_id"] = json!(77);
    host.route(
        "GET",
        &format!("{path}?source_branch=healer%2Ftask-12&state=opened"),
        vec![Answer::json(200, json!([fork, merge_request(3, "opened")]))],
    );

    let pr = forge
        .open_pull_request(TOKEN, &draft())
        .await
        .expect("found");

    assert_eq!(pr.number, 3);
    assert_eq!(pr.state, PrState::Open);
}

#[tokio::test]
async fn a_merge_request_is_read_open_then_merged() {
    let (host, forge) = gitlab().await;
    host.route(
        "GET",
        &format!("{PROJECT}/merge_requests/3"),
        vec![
            Answer::json(200, merge_request(3, "opened")),
            Answer::json(200, merge_request(3, "locked")),
            Answer::json(200, merge_request(3, "merged")),
        ],
    );

    let states = [
        forge
            .pull_request(TOKEN, 3)
            .await
            .expect("opened")
            .value
            .state,
        forge
            .pull_request(TOKEN, 3)
            .await
            .expect("locked")
            .value
            .state,
        forge
            .pull_request(TOKEN, 3)
            .await
            .expect("merged")
            .value
            .state,
    ];

    assert_eq!(states, [PrState::Open, PrState::Open, PrState::Merged]);
    let missing = forge.pull_request(TOKEN, 4).await.expect_err("none");
    assert_eq!(
        missing.to_string(),
        "GitLab has no merge request !4 in group/sub/app, or the token cannot see it"
    );
}

fn job(id: u64, name: &str, status: &str, allow_failure: bool) -> serde_json::Value {
    json!({
        "id": id,
        "name": name,
        "stage": "test",
        "status": status,
        "allow_failure": allow_failure,
        "ref": "healer/task-12",
        "web_url": format!("https://gitlab.example.com/group/sub/app/-/jobs/{id}"),
        "pipeline": {"id": 51, "sha": SHA, "status": status},
    })
}

#[tokio::test]
async fn checks_go_from_running_to_a_failure_with_its_trace_then_to_green() {
    let (host, forge) = gitlab().await;
    // Newest first: a pipeline for another commit came after the head's.
    host.route(
        "GET",
        &format!("{PROJECT}/merge_requests/3/pipelines"),
        vec![Answer::json(
            200,
            json!([
                {"id": 52, "sha": "0000000000000000000000000000000000000000", "ref": "healer/task-12", "status": "running",
                 "web_url": "https://gitlab.example.com/group/sub/app/-/pipelines/52"},
                {"id": 51, "sha": SHA, "ref": "healer/task-12", "status": "running",
                 "web_url": "https://gitlab.example.com/group/sub/app/-/pipelines/51"},
            ]),
        )],
    );
    host.route(
        "GET",
        &format!("{PROJECT}/pipelines/51/jobs?per_page=100"),
        vec![
            Answer::json(
                200,
                json!([
                    job(701, "build", "success", false),
                    job(702, "test", "running", false)
                ]),
            ),
            Answer::json(
                200,
                json!([
                    job(701, "build", "success", false),
                    job(702, "test", "failed", false),
                    job(703, "lint", "failed", true)
                ]),
            ),
            Answer::json(
                200,
                json!([
                    job(701, "build", "success", false),
                    job(704, "test", "success", false),
                    job(705, "deploy", "manual", false)
                ]),
            ),
        ],
    );
    let trace = "\u{1b}[0KRunning with gitlab-runner 17.0.0\n\
                 section_start:1700000000:step_script\r\u{1b}[0K\u{1b}[0K\u{1b}[36;1mExecuting \"step_script\" stage\u{1b}[0;m\n\
                 $ cargo test\n\
                 test importer::reads_dates ... FAILED\n\
                 section_end:1700000009:step_script\r\u{1b}[0K\u{1b}[31;1mERROR: Job failed: exit code 101\n";
    host.route(
        "GET",
        &format!("{PROJECT}/jobs/702/trace"),
        vec![Answer::text(200, trace)],
    );
    let pr = PullRequest {
        number: 3,
        url: "https://gitlab.example.com/group/sub/app/-/merge_requests/3".to_string(),
        state: PrState::Open,
        head_sha: Some(SHA.to_string()),
    };

    let running = forge.checks(TOKEN, &pr).await.expect("running");
    let failed = forge.checks(TOKEN, &pr).await.expect("failed");
    let green = forge.checks(TOKEN, &pr).await.expect("green");

    assert_eq!(running.value.overall, CheckState::Pending);
    assert_eq!(failed.value.overall, CheckState::Failure);
    let test = &failed.value.checks[1];
    assert_eq!(
        (test.name.as_str(), test.state),
        ("test", CheckState::Failure)
    );
    assert_eq!(
        test.url.as_deref(),
        Some("https://gitlab.example.com/group/sub/app/-/jobs/702")
    );
    assert_eq!(
        test.log.as_deref(),
        Some(
            "Running with gitlab-runner 17.0.0\nExecuting \"step_script\" stage\n$ cargo test\n\
             test importer::reads_dates ... FAILED\nERROR: Job failed: exit code 101\n"
        )
    );
    let lint = &failed.value.checks[2];
    assert_eq!(lint.state, CheckState::Success, "allowed to fail");
    assert_eq!(green.value.overall, CheckState::Success);
    assert!(host
        .seen_at("GET", &format!("{PROJECT}/pipelines/52/jobs"))
        .is_empty());
    assert_eq!(
        host.seen_at("GET", &format!("{PROJECT}/jobs/702/trace"))
            .len(),
        1
    );
    assert!(host
        .seen_at("GET", &format!("{PROJECT}/jobs/703/trace"))
        .is_empty());
}

#[tokio::test]
async fn a_pipeline_that_failed_before_any_job_is_a_failure_and_none_yet_is_pending() {
    let (host, forge) = gitlab().await;
    host.route(
        "GET",
        &format!("{PROJECT}/merge_requests/3/pipelines"),
        vec![
            Answer::json(200, json!([])),
            Answer::json(
                200,
                json!([{"id": 60, "sha": SHA, "status": "failed",
                        "web_url": "https://gitlab.example.com/group/sub/app/-/pipelines/60"}]),
            ),
        ],
    );
    host.route(
        "GET",
        &format!("{PROJECT}/pipelines/60/jobs"),
        vec![Answer::json(200, json!([]))],
    );
    let pr = PullRequest {
        number: 3,
        url: String::new(),
        state: PrState::Open,
        head_sha: Some(SHA.to_string()),
    };

    let none_yet = forge.checks(TOKEN, &pr).await.expect("none");
    let broken = forge.checks(TOKEN, &pr).await.expect("broken");

    assert_eq!(none_yet.value.overall, CheckState::Pending);
    assert!(none_yet.value.checks.is_empty());
    assert_eq!(broken.value.overall, CheckState::Failure);
    assert_eq!(broken.value.checks[0].name, "pipeline 60");
}

#[tokio::test]
async fn a_429_and_a_spent_limit_make_healer_wait_longer_than_a_poll() {
    let (host, forge) = gitlab().await;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("now")
        .as_secs();
    host.route(
        "GET",
        &format!("{PROJECT}/merge_requests/3"),
        vec![
            Answer::text(429, "Retry later")
                .header("retry-after", "300")
                .header("ratelimit-remaining", "0")
                .header("ratelimit-reset", &(now + 300).to_string()),
            Answer::json(200, merge_request(3, "opened"))
                .header("ratelimit-limit", "600")
                .header("ratelimit-remaining", "0")
                .header("ratelimit-reset", &(now + 240).to_string()),
        ],
    );

    let limited = forge.pull_request(TOKEN, 3).await.expect_err("429");
    let answered = forge.pull_request(TOKEN, 3).await.expect("answered");

    let wait = limited.wait().expect("a wait");
    assert!(
        wait >= Duration::from_secs(299) && wait <= Duration::from_secs(300),
        "{wait:?}"
    );
    assert_eq!(
        limited.to_string(),
        "GitLab asks Healer to wait 5 minutes before asking about group/sub/app again (its rate limit)"
    );
    assert!(
        answered.wait_at_least > POLL_EVERY,
        "{:?}",
        answered.wait_at_least
    );
}

#[tokio::test]
async fn a_refused_token_is_a_sentence_without_the_token() {
    let (host, forge) = gitlab().await;
    host.route(
        "GET",
        &format!("{PROJECT}/merge_requests/3"),
        vec![Answer::json(200, merge_request(3, "opened"))],
    );
    let wrong = "glpat-wrongTokenNeverShown";

    let error = forge.pull_request(wrong, 3).await.expect_err("refused");

    assert_eq!(
        error.to_string(),
        "GitLab refused the token for group/sub/app (401): 401 Unauthorized"
    );
    assert!(!format!("{error:?}").contains(wrong));
    let seen = host.seen();
    assert_eq!(
        seen.last().and_then(|s| s.header("private-token")),
        Some(wrong)
    );
}

#[tokio::test]
async fn a_long_trace_is_kept_only_to_its_end() {
    let (host, forge) = gitlab().await;
    host.route(
        "GET",
        &format!("{PROJECT}/merge_requests/3/pipelines"),
        vec![Answer::json(
            200,
            json!([{"id": 51, "sha": SHA, "status": "failed"}]),
        )],
    );
    host.route(
        "GET",
        &format!("{PROJECT}/pipelines/51/jobs"),
        vec![Answer::json(
            200,
            json!([job(702, "test", "failed", false)]),
        )],
    );
    let trace = format!(
        "{}ERROR: Job failed: exit code 1\n",
        "compiling a crate that takes a while …\n".repeat(20_000)
    );
    host.route(
        "GET",
        &format!("{PROJECT}/jobs/702/trace"),
        vec![Answer::text(200, &trace)],
    );
    let pr = PullRequest {
        number: 3,
        url: String::new(),
        state: PrState::Open,
        head_sha: Some(SHA.to_string()),
    };

    let checks = forge.checks(TOKEN, &pr).await.expect("checks");

    let log = checks.value.checks[0].log.as_deref().expect("a log");
    assert!(trace.len() > 10 * LOG_TAIL_BYTES);
    assert!(log.len() <= LOG_TAIL_BYTES, "{}", log.len());
    assert!(log.len() > LOG_TAIL_BYTES - 100, "{}", log.len());
    assert!(log.ends_with("ERROR: Job failed: exit code 1\n"));
}
