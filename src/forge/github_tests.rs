//! GitHub's wire format against a scripted GitHub (Enterprise-shaped: the API under /api/v3)
//! on 127.0.0.1: a pull request opened and found again, read until merged, its checks from
//! pending to a failure with the job's log to green, rate limits, and a refused token.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::json;

use super::test_server::{Answer, Host};
use super::*;

const TOKEN: &str = "ghp_scriptedGoodToken0001";
const PULLS: &str = "/api/v3/repos/octo/app/pulls";
const SHA: &str = "6dcb09b5b57875f334f61aebed695e2e4193db5e";

fn bad_credentials() -> Answer {
    Answer::json(
        401,
        json!({"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest", "status": "401"}),
    )
}

async fn github() -> (Host, Forge) {
    let host = Host::start(
        "authorization",
        &format!("Bearer {TOKEN}"),
        bad_credentials(),
    )
    .await;
    let forge = read_remote(
        &format!("{}/octo/app.git", host.url),
        Some(&format!("{}/api/v3", host.url)),
    )
    .expect("remote");
    assert_eq!(forge.kind, ForgeKind::GitHub);
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

/// A pull request as GitHub's REST API shows it (the fields Healer reads, and some around).
fn pull(number: u64, state: &str, merged_at: Option<&str>) -> serde_json::Value {
    json!({
        "url": format!("https://api.github.com/repos/octo/app/pulls/{number}"),
        "id": 1_296_269,
        "number": number,
        "state": state,
        "locked": false,
        "title": "Fix the flaky importer",
        "html_url": format!("https://github.com/octo/app/pull/{number}"),
        "merged_at": merged_at,
        "merged": merged_at.is_some(),
        "head": {"label": "octo:healer/task-12", "ref": "healer/task-12", "sha": SHA},
        "base": {"label": "octo:main", "ref": "main", "sha": "e5bd3914e2e596debea16f433f57875b5b90bcd6"},
    })
}

#[tokio::test]
async fn a_pull_request_is_opened_and_its_page_given_back() {
    let (host, forge) = github().await;
    host.route(
        "POST",
        PULLS,
        vec![Answer::json(201, pull(7, "open", None))],
    );

    let pr = forge
        .open_pull_request(TOKEN, &draft())
        .await
        .expect("opened");

    assert_eq!(
        pr,
        PullRequest {
            number: 7,
            url: "https://github.com/octo/app/pull/7".to_string(),
            state: PrState::Open,
            head_sha: Some(SHA.to_string()),
        }
    );
    let sent = host.seen_at("POST", PULLS);
    assert_eq!(sent.len(), 1);
    let sent = &sent[0];
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    assert_eq!(sent.header("accept"), Some("application/vnd.github+json"));
    assert_eq!(sent.header("x-github-api-version"), Some("2022-11-28"));
    assert!(sent
        .header("user-agent")
        .is_some_and(|ua| ua.starts_with("healer")));
    assert_eq!(
        sent.body,
        json!({"title": "Fix the flaky importer", "body": "Healer's task 12.", "head": "healer/task-12", "base": "main"})
    );
}

#[tokio::test]
async fn opening_again_gives_the_pull_request_already_open_for_the_branch() {
    let (host, forge) = github().await;
    let exists = json!({
        "message": "Validation Failed",
        "errors": [{"resource": "PullRequest", "code": "custom",
                    "message": "A pull request already exists for octo:healer/task-12."}],
        "documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request",
        "status": "422",
    });
    host.route("POST", PULLS, vec![Answer::json(422, exists)]);
    host.route(
        "GET",
        &format!("{PULLS}?head=octo%3Ahealer%2Ftask-12&state=open"),
        vec![Answer::json(200, json!([pull(7, "open", None)]))],
    );

    let pr = forge
        .open_pull_request(TOKEN, &draft())
        .await
        .expect("found");

    assert_eq!(pr.number, 7);
    assert_eq!(pr.url, "https://github.com/octo/app/pull/7");
    let looked = host.seen_at("GET", PULLS);
    assert_eq!(looked.len(), 1);
    assert_eq!(
        looked[0].query.as_deref(),
        Some("head=octo%3Ahealer%2Ftask-12&state=open")
    );
}

#[tokio::test]
async fn a_422_that_is_not_an_open_pull_request_is_said_as_the_host_said_it() {
    let (host, forge) = github().await;
    let nothing = json!({
        "message": "Validation Failed",
        "errors": [{"resource": "PullRequest", "code": "custom",
                    "message": "No commits between main and healer/task-12"}],
        "status": "422",
    });
    host.route("POST", PULLS, vec![Answer::json(422, nothing)]);
    host.route("GET", PULLS, vec![Answer::json(200, json!([]))]);

    let said = forge
        .open_pull_request(TOKEN, &draft())
        .await
        .expect_err("refused")
        .to_string();

    assert_eq!(
        said,
        "GitHub refused the request for octo/app (422): Validation Failed; No commits between main and healer/task-12"
    );
}

#[tokio::test]
async fn a_pull_request_is_read_open_then_merged_or_closed() {
    let (host, forge) = github().await;
    host.route(
        "GET",
        &format!("{PULLS}/7"),
        vec![
            Answer::json(200, pull(7, "open", None)).header("x-ratelimit-remaining", "4999"),
            Answer::json(200, pull(7, "closed", Some("2011-01-26T19:01:12Z"))),
        ],
    );
    host.route(
        "GET",
        &format!("{PULLS}/8"),
        vec![Answer::json(200, pull(8, "closed", None))],
    );

    let first = forge.pull_request(TOKEN, 7).await.expect("open");
    let then = forge.pull_request(TOKEN, 7).await.expect("merged");
    let closed = forge.pull_request(TOKEN, 8).await.expect("closed");

    assert_eq!(first.value.state, PrState::Open);
    assert_eq!(first.wait_at_least, POLL_EVERY);
    assert_eq!(then.value.state, PrState::Merged);
    assert_eq!(closed.value.state, PrState::Closed);
    let missing = forge
        .pull_request(TOKEN, 9)
        .await
        .expect_err("no such pull");
    assert_eq!(
        missing.to_string(),
        "GitHub has no pull request #9 in octo/app, or the token cannot see it"
    );
}

fn run(
    id: u64,
    name: &str,
    status: &str,
    conclusion: Option<&str>,
    summary: Option<&str>,
) -> serde_json::Value {
    json!({
        "id": id,
        "head_sha": SHA,
        "name": name,
        "status": status,
        "conclusion": conclusion,
        "html_url": format!("https://github.com/octo/app/runs/{id}"),
        "details_url": format!("https://github.com/octo/app/actions/runs/1/job/{id}"),
        "output": {"title": conclusion.map(|_| "Tests"), "summary": summary, "text": null,
                   "annotations_count": 0, "annotations_url": ""},
        "app": {"slug": "github-actions", "name": "GitHub Actions"},
    })
}

fn runs(list: Vec<serde_json::Value>) -> Answer {
    Answer::json(200, json!({"total_count": list.len(), "check_runs": list}))
}

fn statuses(state: &str, list: serde_json::Value) -> Answer {
    Answer::json(
        200,
        json!({"state": state, "sha": SHA, "total_count": 1, "statuses": list}),
    )
}

#[tokio::test]
async fn checks_go_from_pending_to_a_failure_with_its_log_then_to_green() {
    let (host, forge) = github().await;
    let commit = format!("/api/v3/repos/octo/app/commits/{SHA}");
    host.route(
        "GET",
        &format!("{commit}/check-runs?per_page=100"),
        vec![
            runs(vec![run(101, "test", "in_progress", None, None)]),
            runs(vec![
                run(
                    101,
                    "test",
                    "completed",
                    Some("failure"),
                    Some("2 of 40 tests failed"),
                ),
                run(102, "lint", "completed", Some("success"), None),
            ]),
            runs(vec![
                run(103, "test", "completed", Some("success"), None),
                run(102, "lint", "completed", Some("skipped"), None),
            ]),
        ],
    );
    host.route(
        "GET",
        &format!("{commit}/status?per_page=100"),
        vec![
            // The combined state is "pending" while there are no statuses at all.
            statuses("pending", json!([])),
            statuses(
                "failure",
                json!([{"context": "ci/jenkins", "state": "error", "description": "Build #12 errored",
                        "target_url": "https://ci.example.com/12"}]),
            ),
            statuses("pending", json!([])),
        ],
    );
    // The job's log: a redirect to a signed address elsewhere, fetched without the token.
    let signed = format!("http://localhost:{}/blob/job-101.txt?sig=abc", host.port);
    host.route(
        "GET",
        "/api/v3/repos/octo/app/actions/jobs/101/logs",
        vec![Answer::text(302, "").header("location", &signed)],
    );
    let log = "2024-05-01T10:00:00.0Z \u{1b}[36;1mcargo test\u{1b}[0m\n\
               2024-05-01T10:00:09.0Z test importer::reads_dates ... FAILED\n\
               2024-05-01T10:00:09.1Z ##[error]Process completed with exit code 101.\n";
    host.open_route("GET", "/blob/job-101.txt", vec![Answer::text(200, log)]);
    let pr = PullRequest {
        number: 7,
        url: "https://github.com/octo/app/pull/7".to_string(),
        state: PrState::Open,
        head_sha: Some(SHA.to_string()),
    };

    let pending = forge.checks(TOKEN, &pr).await.expect("pending");
    let failed = forge.checks(TOKEN, &pr).await.expect("failed");
    let green = forge.checks(TOKEN, &pr).await.expect("green");

    assert_eq!(pending.value.overall, CheckState::Pending);
    assert_eq!(pending.wait_at_least, POLL_EVERY);
    assert_eq!(failed.value.overall, CheckState::Failure);
    let test = &failed.value.checks[0];
    assert_eq!(
        (test.name.as_str(), test.state),
        ("test", CheckState::Failure)
    );
    assert_eq!(
        test.url.as_deref(),
        Some("https://github.com/octo/app/runs/101")
    );
    let said = test.log.as_deref().expect("a log");
    assert!(
        said.starts_with("Tests\n\n2 of 40 tests failed\n\n"),
        "{said}"
    );
    assert!(
        said.contains("test importer::reads_dates ... FAILED"),
        "{said}"
    );
    assert!(
        said.contains("cargo test") && !said.contains('\u{1b}'),
        "{said}"
    );
    assert_eq!(failed.value.checks[1].state, CheckState::Success);
    assert_eq!(failed.value.checks[1].log, None);
    let jenkins = &failed.value.checks[2];
    assert_eq!(
        (jenkins.name.as_str(), jenkins.state),
        ("ci/jenkins", CheckState::Failure)
    );
    assert_eq!(jenkins.log.as_deref(), Some("Build #12 errored"));
    assert_eq!(green.value.overall, CheckState::Success);

    let blob = host.seen_at("GET", "/blob/job-101.txt");
    assert_eq!(
        blob.len(),
        1,
        "the log is fetched once, on the failing poll"
    );
    assert_eq!(
        blob[0].header("authorization"),
        None,
        "the token stays with the API"
    );
    assert_eq!(
        blob[0].header("host"),
        Some(format!("localhost:{}", host.port).as_str())
    );
}

#[tokio::test]
async fn a_spent_rate_limit_makes_the_next_poll_wait_until_its_reset() {
    let (host, forge) = github().await;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("now")
        .as_secs();
    let reset = (now + 900).to_string();
    host.route(
        "GET",
        &format!("{PULLS}/7"),
        vec![
            Answer::json(200, pull(7, "open", None))
                .header("x-ratelimit-remaining", "0")
                .header("x-ratelimit-reset", &reset),
            Answer::json(403, json!({"message": "API rate limit exceeded for user ID 1.", "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"}))
                .header("x-ratelimit-remaining", "0")
                .header("x-ratelimit-reset", &reset),
            Answer::json(429, json!({"message": "You have exceeded a secondary rate limit."}))
                .header("retry-after", "120"),
        ],
    );

    let last = forge.pull_request(TOKEN, 7).await.expect("answered");
    let spent = forge.pull_request(TOKEN, 7).await.expect_err("limited");
    let secondary = forge.pull_request(TOKEN, 7).await.expect_err("limited");

    assert!(
        last.wait_at_least > Duration::from_secs(800),
        "{:?}",
        last.wait_at_least
    );
    assert!(last.wait_at_least <= Duration::from_secs(900));
    assert!(
        spent.wait().is_some_and(|w| w > Duration::from_secs(800)),
        "{spent:?}"
    );
    assert!(
        spent
            .to_string()
            .starts_with("GitHub asks Healer to wait 1"),
        "{spent}"
    );
    assert!(spent
        .to_string()
        .ends_with("minutes before asking about octo/app again (its rate limit)"));
    assert_eq!(secondary.wait(), Some(Duration::from_secs(120)));
    assert_eq!(
        secondary.to_string(),
        "GitHub asks Healer to wait 2 minutes before asking about octo/app again (its rate limit)"
    );
}

#[tokio::test]
async fn a_refused_token_is_a_sentence_without_the_token() {
    let wrong = "ghp_wrongTokenNeverShown42";
    let echoing = Answer::json(401, json!({"message": format!("Bad credentials: {wrong}")}));
    let host = Host::start("authorization", &format!("Bearer {TOKEN}"), echoing).await;
    let forge = read_remote(
        &format!("{}/octo/app.git", host.url),
        Some(&format!("{}/api/v3", host.url)),
    )
    .expect("remote");

    let error = forge.pull_request(wrong, 7).await.expect_err("refused");

    let said = error.to_string();
    assert_eq!(
        said,
        "GitHub refused the token for octo/app (401): Bad credentials: [redacted]"
    );
    assert!(!format!("{error:?}").contains(wrong));
    assert_eq!(error.wait(), None);
    let engine: crate::error::Error = error.into();
    assert_eq!(engine.code(), crate::error::ErrorCode::InvalidInput);
}

#[tokio::test]
async fn a_web_page_a_missing_repository_and_a_silent_host_are_each_a_sentence() {
    let page = Answer::text(
        401,
        "<!DOCTYPE html><html><head><title>Sign in</title></head></html>",
    )
    .header("content-type", "text/html");
    let host = Host::start("authorization", &format!("Bearer {TOKEN}"), page).await;
    let forge = read_remote(
        &format!("{}/octo/app.git", host.url),
        Some(&format!("{}/api/v3", host.url)),
    )
    .expect("remote");
    let said = forge
        .pull_request("ghp_other", 7)
        .await
        .expect_err("page")
        .to_string();
    assert_eq!(said, "GitHub refused the token for octo/app (401)");

    let missing = forge
        .open_pull_request(TOKEN, &draft())
        .await
        .expect_err("404");
    assert_eq!(
        missing.to_string(),
        "GitHub has no repository octo/app, or the token cannot see it"
    );

    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("address").port()
    };
    let gone = read_remote(
        &format!("http://127.0.0.1:{port}/octo/app.git"),
        Some(&format!("http://127.0.0.1:{port}/api/v3")),
    )
    .expect("remote");
    let error = gone.pull_request(TOKEN, 7).await.expect_err("nobody");
    assert_eq!(
        error.to_string(),
        format!("GitHub at 127.0.0.1:{port} did not answer: the connection was refused")
    );
    assert_eq!(error.wait(), Some(POLL_EVERY));
}
