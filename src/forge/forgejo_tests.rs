//! Forgejo's wire format against a scripted Forgejo on 127.0.0.1: a pull request opened and
//! found again (not a fork's of the same branch name), read until merged, its commit statuses
//! from pending to a failure to green, a rate limit, and a refused token.

use std::time::Duration;

use serde_json::json;

use super::test_server::{Answer, Host};
use super::*;

const TOKEN: &str = "scriptedGoodForgejoToken0001";
const PULLS: &str = "/api/v1/repos/octo/app/pulls";
const SHA: &str = "f1e2d3c4b5a6978877665544332211ffeeddccbb";

async fn forgejo() -> (Host, Forge) {
    let refusal = Answer::json(
        401,
        json!({"message": "user does not exist [uid: 0, name: ]", "url": "https://codeberg.org/api/swagger"}),
    );
    let host = Host::start("authorization", &format!("token {TOKEN}"), refusal).await;
    let forge = read_remote(
        &format!("{}/octo/app.git", host.url),
        Some(&format!("{}/api/v1", host.url)),
    )
    .expect("remote");
    assert_eq!(forge.kind, ForgeKind::Forgejo);
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

/// A pull request as Forgejo's API shows it; `owner` is the head repository's.
fn pull(number: u64, state: &str, merged: bool, owner: &str) -> serde_json::Value {
    json!({
        "id": 90 + number,
        "number": number,
        "state": state,
        "title": "Fix the flaky importer",
        "html_url": format!("https://codeberg.org/octo/app/pulls/{number}"),
        "merged": merged,
        "merged_at": if merged { json!("2024-05-01T10:00:00Z") } else { json!(null) },
        "head": {"label": "healer/task-12", "ref": "healer/task-12", "sha": SHA,
                 "repo": {"full_name": format!("{owner}/app")}},
        "base": {"label": "main", "ref": "main", "repo": {"full_name": "octo/app"}},
    })
}

#[tokio::test]
async fn a_pull_request_is_opened_and_its_page_given_back() {
    let (host, forge) = forgejo().await;
    host.route(
        "POST",
        PULLS,
        vec![Answer::json(201, pull(5, "open", false, "octo"))],
    );

    let pr = forge
        .open_pull_request(TOKEN, &draft())
        .await
        .expect("opened");

    assert_eq!(
        pr,
        PullRequest {
            number: 5,
            url: "https://codeberg.org/octo/app/pulls/5".to_string(),
            state: PrState::Open,
            head_sha: Some(SHA.to_string()),
        }
    );
    let sent = host.seen_at("POST", PULLS);
    assert_eq!(
        sent[0].header("authorization"),
        Some(format!("token {TOKEN}").as_str())
    );
    assert_eq!(
        sent[0].body,
        json!({"title": "Fix the flaky importer", "body": "Healer's task 12.", "head": "healer/task-12", "base": "main"})
    );
}

#[tokio::test]
async fn opening_again_gives_our_open_pull_request_not_a_forks() {
    let (host, forge) = forgejo().await;
    let exists = json!({
        "message": "pull request already exists for these targets [id: 95, issue_id: 12, head_repo_id: 1, base_repo_id: 1, head_branch: healer/task-12, base_branch: main]",
        "url": "https://codeberg.org/api/swagger",
    });
    host.route("POST", PULLS, vec![Answer::json(409, exists)]);
    host.route(
        "GET",
        &format!("{PULLS}?state=open&limit=50"),
        vec![Answer::json(
            200,
            json!([
                pull(6, "open", false, "someone"),
                pull(5, "open", false, "octo")
            ]),
        )],
    );

    let pr = forge
        .open_pull_request(TOKEN, &draft())
        .await
        .expect("found");

    assert_eq!(pr.number, 5);
}

#[tokio::test]
async fn a_pull_request_is_read_open_then_merged() {
    let (host, forge) = forgejo().await;
    host.route(
        "GET",
        &format!("{PULLS}/5"),
        vec![
            Answer::json(200, pull(5, "open", false, "octo")),
            Answer::json(200, pull(5, "closed", true, "octo")),
        ],
    );

    let open = forge.pull_request(TOKEN, 5).await.expect("open");
    let merged = forge.pull_request(TOKEN, 5).await.expect("merged");

    assert_eq!(open.value.state, PrState::Open);
    assert_eq!(merged.value.state, PrState::Merged);
    assert_eq!(merged.wait_at_least, POLL_EVERY);
}

fn combined(state: &str, statuses: serde_json::Value) -> Answer {
    Answer::json(
        200,
        json!({"state": state, "sha": SHA, "total_count": 2, "statuses": statuses,
               "repository": {"full_name": "octo/app"}}),
    )
}

#[tokio::test]
async fn checks_go_from_pending_to_a_failure_then_to_green() {
    let (host, forge) = forgejo().await;
    let status = |context: &str, state: &str, description: &str| {
        json!({"id": 1, "status": state, "context": context, "description": description,
               "target_url": "/octo/app/actions/runs/3/jobs/0", "created_at": "2024-05-01T10:00:00Z"})
    };
    host.route(
        "GET",
        &format!("/api/v1/repos/octo/app/commits/{SHA}/status?limit=50"),
        vec![
            combined(
                "pending",
                json!([status("ci / test (pull_request)", "pending", "Waiting to run"),
                       status("ci / lint (pull_request)", "success", "Successful in 8s")]),
            ),
            combined(
                "failure",
                json!([status("ci / test (pull_request)", "failure", "Failing after 12s"),
                       // A GitHub-shaped proxy writes `state`.
                       {"state": "warning", "context": "woodpecker", "target_url": "https://ci.example.org/7"}]),
            ),
            combined(
                "success",
                json!([status("ci / test (pull_request)", "success", "Successful in 40s")]),
            ),
        ],
    );
    let pr = PullRequest {
        number: 5,
        url: "https://codeberg.org/octo/app/pulls/5".to_string(),
        state: PrState::Open,
        head_sha: Some(SHA.to_string()),
    };

    let pending = forge.checks(TOKEN, &pr).await.expect("pending");
    let failed = forge.checks(TOKEN, &pr).await.expect("failed");
    let green = forge.checks(TOKEN, &pr).await.expect("green");

    assert_eq!(pending.value.overall, CheckState::Pending);
    assert_eq!(failed.value.overall, CheckState::Failure);
    let test = &failed.value.checks[0];
    assert_eq!(test.state, CheckState::Failure);
    assert_eq!(test.log.as_deref(), Some("Failing after 12s"));
    assert_eq!(
        test.url.as_deref(),
        Some(format!("{}/octo/app/actions/runs/3/jobs/0", host.url).as_str())
    );
    let proxy = &failed.value.checks[1];
    assert_eq!(
        (proxy.name.as_str(), proxy.state),
        ("woodpecker", CheckState::Success)
    );
    assert_eq!(proxy.url.as_deref(), Some("https://ci.example.org/7"));
    assert_eq!(green.value.overall, CheckState::Success);
}

#[tokio::test]
async fn a_429_makes_healer_wait_what_the_host_asks() {
    let (host, forge) = forgejo().await;
    host.route(
        "GET",
        &format!("{PULLS}/5"),
        vec![Answer::text(429, "Too Many Requests").header("retry-after", "600")],
    );

    let limited = forge.pull_request(TOKEN, 5).await.expect_err("limited");

    assert_eq!(limited.wait(), Some(Duration::from_secs(600)));
    assert!(limited.to_string().contains("wait 10 minutes"), "{limited}");
}

#[tokio::test]
async fn a_refused_token_is_a_sentence_without_the_token() {
    let (_host, forge) = forgejo().await;
    let wrong = "wrongForgejoTokenNeverShown";

    let error = forge.pull_request(wrong, 5).await.expect_err("refused");

    assert_eq!(
        error.to_string(),
        "Forgejo refused the token for octo/app (401): user does not exist [uid: 0, name: ]"
    );
    assert!(!format!("{error:?}").contains(wrong));
    let no_token = forge.pull_request("  ", 5).await.expect_err("no token");
    assert_eq!(
        no_token.to_string(),
        "Healer has no token for Forgejo: add one for octo/app in the project's settings"
    );
}
