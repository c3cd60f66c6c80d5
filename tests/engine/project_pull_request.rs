//! Push a task's branch and open its pull request: the branch goes to a real remote served by
//! `git http-backend`, the pull request to a scripted server on 127.0.0.1 that answers as
//! GitHub's REST API documents (POST /repos/{owner}/{repo}/pulls → 201); the token comes from
//! the secrets keep and is in no file of the data folder.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use healer::store::MergePolicy;
use serde_json::{json, Value};

use crate::git_http::GitHttp;
use crate::project_fixtures::*;

const TOKEN: &str = "ghp_e2eNotARealTokenButSecret0123456789";

/// A request as the scripted GitHub saw it.
#[derive(Debug, Clone)]
struct Asked {
    line: String,
    authorization: Option<String>,
    body: Value,
}

/// GitHub's API for one repository, answering the create call as documented.
fn scripted_github(owner_repo: &'static str) -> (String, Arc<Mutex<Vec<Asked>>>) {
    let (api, seen, _) = scripted_github_with_checks(owner_repo);
    (api, seen)
}

/// [`scripted_github`] that also answers for pull request 7 and the checks of any commit: the
/// commit in the returned cell fails its "build" check (an Actions-like check run with its
/// output), any other passes.
#[allow(clippy::type_complexity)]
fn scripted_github_with_checks(
    owner_repo: &'static str,
) -> (String, Arc<Mutex<Vec<Asked>>>, Arc<Mutex<String>>) {
    let red = Arc::new(Mutex::new(String::new()));
    let red_commit = red.clone();
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut line = String::new();
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            let (mut length, mut authorization) = (0usize, None);
            loop {
                let mut header = String::new();
                if reader.read_line(&mut header).unwrap_or(0) == 0 || header.trim().is_empty() {
                    break;
                }
                let (name, value) = header.split_once(':').unwrap_or_default();
                match name.trim().to_ascii_lowercase().as_str() {
                    "content-length" => length = value.trim().parse().unwrap_or(0),
                    "authorization" => authorization = Some(value.trim().to_string()),
                    _ => {}
                }
            }
            let mut body = vec![0u8; length];
            let _ = reader.read_exact(&mut body);
            let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            log.lock().expect("log").push(Asked {
                line: line.trim().to_string(),
                authorization,
                body: body.clone(),
            });
            let created = line.starts_with(&format!("POST /api/v3/repos/{owner_repo}/pulls "));
            let target = line
                .split_whitespace()
                .nth(1)
                .unwrap_or_default()
                .to_string();
            let path = target.split('?').next().unwrap_or_default().to_string();
            let commits = format!("/api/v3/repos/{owner_repo}/commits/");
            let red_now = red_commit.lock().expect("red").clone();
            let (status, answer) = if path == format!("/api/v3/repos/{owner_repo}/pulls/7") {
                (
                    "200 OK",
                    json!({
                        "number": 7,
                        "html_url": format!("https://github.example/{owner_repo}/pull/7"),
                        "state": "open",
                        "merged_at": null,
                        "head": {"ref": "healer/t", "sha": red_now},
                    }),
                )
            } else if let Some(rest) = path.strip_prefix(&commits) {
                let (sha, what) = rest.split_once('/').unwrap_or_default();
                if what == "status" {
                    ("200 OK", json!({"state": "pending", "statuses": []}))
                } else if sha == red_now {
                    (
                        "200 OK",
                        json!({"total_count": 1, "check_runs": [{
                            "id": 11, "name": "build", "status": "completed", "conclusion": "failure",
                            "html_url": format!("https://github.example/{owner_repo}/runs/11"),
                            "output": {"title": "1 test failed", "summary": "test_stranger failed",
                                       "text": "AssertionError: greet('') returned 'Hello, !' and not 'Hello, stranger!'"},
                        }]}),
                    )
                } else {
                    (
                        "200 OK",
                        json!({"total_count": 1, "check_runs": [{
                            "id": 12, "name": "build", "status": "completed", "conclusion": "success",
                            "output": {"title": "all passed"},
                        }]}),
                    )
                }
            } else if created {
                (
                    "201 Created",
                    json!({
                        "number": 7,
                        "html_url": format!("https://github.example/{owner_repo}/pull/7"),
                        "state": "open",
                        "merged_at": null,
                        "head": {"ref": body["head"], "sha": "0123456789abcdef0123456789abcdef01234567"},
                    }),
                )
            } else {
                ("404 Not Found", json!({"message": "Not Found"}))
            };
            let answer = answer.to_string();
            let mut out = stream;
            let _ = write!(
                out,
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                answer.len()
            );
        }
    });
    (format!("http://127.0.0.1:{port}/api/v3"), seen, red)
}

/// The commit a local branch stands at.
fn tip(repo_dir: &std::path::Path, branch: &str) -> String {
    let repo = git2::Repository::open(repo_dir).expect("repo");
    let tip = repo
        .find_branch(branch, git2::BranchType::Local)
        .and_then(|b| b.get().peel_to_commit())
        .map(|c| c.id().to_string())
        .expect("branch");
    tip
}

/// A project bed on a computer with no keyring (Healer keeps secrets in its own sealed file),
/// work left on its branch, whose remote `origin` is a bare repository served over HTTP by
/// `git http-backend`. Returns the bed, the served folder (kept alive), the server and the bare
/// repository's path.
async fn bed_with_remote() -> (ProjectBed, tempfile::TempDir, GitHttp, std::path::PathBuf) {
    let bed = crate::maintainer::bed_keeping(false, true, |dir| {
        healer::llm::Keys::with(healer::secrets::Keep::file_only(dir))
    })
    .await;
    let pb = project_bed_on(bed, |s| s.merge = MergePolicy::LeaveBranch);
    let served = tempfile::tempdir().expect("served");
    let bare = served.path().join("ada/greeter.git");
    git2::Repository::init_bare(&bare).expect("bare");
    let http = GitHttp::serve(served.path());
    git2::Repository::open(&pb.repo_dir)
        .and_then(|r| r.remote("origin", &http.url("ada/greeter.git")).map(|_| ()))
        .expect("remote");
    (pb, served, http, bare)
}

/// A task whose agent makes greet() say Hello and finishes green; its id and session.
async fn greeted(
    pb: &ProjectBed,
    edit: healer::project::TaskEdit,
) -> (String, healer::store::SessionRecord) {
    let t = pb.engine().add_task(pb.project.id, edit).expect("task");
    pb.bed.server.script([
        call(
            "c1",
            "write_file",
            json!({"path": "greet.py", "content": "def greet(name):\n    return 'Hello, ' + name + '!'\n"}),
        ),
        call("c2", "finish", json!({"summary": "greet() says Hello"})),
    ]);
    let session = pb
        .engine()
        .run_project_and_wait(pb.project.id, Some(&t.id))
        .await
        .expect("run");
    (t.id, session)
}

fn all_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            all_files(&path, out);
        } else {
            out.push(path);
        }
    }
}

#[tokio::test]
async fn a_tasks_branch_is_pushed_and_its_pull_request_opened_with_the_kept_token() {
    let (pb, _served, _http, bare) = bed_with_remote().await;
    let engine = pb.engine();
    let (api, seen) = scripted_github("ada/greeter");
    let (id, session) = greeted(
        &pb,
        healer::project::TaskEdit {
            title: "Greet properly".to_string(),
            description: "greet() must say Hello.".to_string(),
            acceptance: vec!["greet('Ada') returns 'Hello, Ada!'".to_string()],
            ..Default::default()
        },
    )
    .await;
    let commit = session.commit_id.clone().expect("a commit");

    // Without a token: a sentence, nothing pushed.
    let refused = engine
        .open_pull_request(pb.project.id, &id, Some(&api))
        .await
        .expect_err("no token yet");
    assert!(
        refused.to_string().contains("no token for GitHub"),
        "{refused}"
    );
    assert!(seen.lock().expect("seen").is_empty());

    // The person chooses Healer's own secrets file, as the window asks where there is no keyring.
    engine.choose_secrets_file().await.expect("secrets file");
    engine
        .set_project_token(pb.project.id, TOKEN.to_string())
        .await
        .expect("token kept");
    let pr = engine
        .open_pull_request(pb.project.id, &id, Some(&api))
        .await
        .expect("opened");
    assert_eq!(pr.url, "https://github.example/ada/greeter/pull/7");
    assert_eq!(pr.state, "open");
    assert_eq!(pr.pushed_commit, commit);
    // The branch is on the remote at the task's commit.
    let remote = git2::Repository::open_bare(&bare).expect("bare");
    let there = remote
        .find_reference(&format!("refs/heads/healer/{}", id))
        .expect("pushed branch")
        .target()
        .expect("target");
    assert_eq!(there.to_string(), commit);
    // The request as GitHub documents it, signed with the kept token.
    let asked = seen.lock().expect("seen").clone();
    let create = asked
        .iter()
        .find(|a| a.line.starts_with("POST /api/v3/repos/ada/greeter/pulls "))
        .expect("a create call");
    assert_eq!(
        create.authorization.as_deref(),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    assert_eq!(create.body["title"], "Greet properly");
    assert_eq!(create.body["head"], format!("healer/{}", id));
    assert_eq!(create.body["base"], "main");
    let body = create.body["body"].as_str().unwrap_or_default();
    assert!(
        body.contains("greet() must say Hello.")
            && body.contains("- greet('Ada') returns 'Hello, Ada!'"),
        "{body}"
    );
    // The task shows it.
    let detail = engine.task_detail(pb.project.id, &id).expect("detail");
    assert_eq!(detail.pull_request.map(|p| p.number), Some(7));
    // The token is in no file of the data folder (the keep seals it).
    let mut files = Vec::new();
    all_files(engine.paths().data_dir(), &mut files);
    for file in files {
        let bytes = std::fs::read(&file).unwrap_or_default();
        assert!(
            !bytes.windows(TOKEN.len()).any(|w| w == TOKEN.as_bytes()),
            "the token is in {}",
            file.display()
        );
    }
}

/// A check that fails on the host is a failure like any other: the healer service sends the
/// agent back with the check's log, and its green fix is pushed to the pull request, whose
/// check then passes. The host is asked no more often than once a minute (the shipped rate).
#[tokio::test]
async fn a_red_check_on_the_pull_request_is_healed_and_the_fix_pushed() {
    let (pb, _served, _http, bare) = bed_with_remote().await;
    let engine = pb.engine();
    crate::healer_service::healer_on(engine, pb.project.id);
    let (api, seen, red) = scripted_github_with_checks("ada/greeter");
    let (id, first) = greeted(
        &pb,
        healer::project::TaskEdit {
            title: "Greet properly".to_string(),
            description: "greet() must say Hello, and greet a stranger when it has no name."
                .to_string(),
            ..Default::default()
        },
    )
    .await;
    let commit = first.commit_id.clone().expect("a commit");
    *red.lock().expect("red") = commit.clone();
    engine.choose_secrets_file().await.expect("secrets file");
    engine
        .set_project_token(pb.project.id, TOKEN.to_string())
        .await
        .expect("token kept");
    let pr = engine
        .open_pull_request(pb.project.id, &id, Some(&api))
        .await
        .expect("opened");
    assert_eq!(pr.checks, "waiting");

    // The host's check fails: the healer service takes it, the agent fixes it from the log.
    pb.bed.server.script([
        call(
            "c3",
            "write_file",
            json!({"path": "greet.py", "content": "def greet(name):\n    return 'Hello, ' + (name or 'stranger') + '!'\n"}),
        ),
        call("c4", "finish", json!({"summary": "a stranger is greeted"})),
    ]);
    let t0 = chrono::Utc::now();
    let read = engine.watch_pull_requests(t0).await.expect("watched");
    assert_eq!(read.len(), 1);
    assert_eq!(read[0].checks, "failing");
    assert_eq!(read[0].checks_said, "\u{201c}build\u{201d} failed");
    let healed = eventually(
        "the healer service's repair",
        Duration::from_secs(120),
        || {
            engine
                .healer_invocations(Some(pb.project.id), Some(&id), 5)
                .ok()?
                .into_iter()
                .find(|i| {
                    i.scenario == "PullRequestCheckFailed"
                        && i.status != healer::store::InvocationStatus::Running
                })
        },
    )
    .await;
    assert_eq!(
        healed.status,
        healer::store::InvocationStatus::Resolved,
        "{healed:?}"
    );
    // The agent was told what the host's check said.
    let told = pb
        .bed
        .server
        .chats()
        .iter()
        .any(|c| c.body.to_string().contains("and not 'Hello, stranger!'"));
    assert!(told, "the check's log reached the agent");
    let fixed = tip(&pb.repo_dir, &format!("healer/{}", id));
    assert_ne!(fixed, commit);

    // Asked again only once a minute has passed.
    let asked_before = seen.lock().expect("seen").len();
    let early = engine
        .watch_pull_requests(t0 + chrono::Duration::seconds(59))
        .await
        .expect("watched");
    assert!(early.is_empty(), "not due yet");
    assert_eq!(seen.lock().expect("seen").len(), asked_before);

    // Then the fix is pushed, and its check passes.
    let later = engine
        .watch_pull_requests(t0 + chrono::Duration::seconds(61))
        .await
        .expect("watched");
    assert_eq!(later.len(), 1);
    assert_eq!(later[0].pushed_commit, fixed);
    assert_eq!(later[0].checks, "passing", "{:?}", later[0]);
    let remote = git2::Repository::open_bare(&bare).expect("bare");
    let there = remote
        .find_reference(&format!("refs/heads/healer/{}", id))
        .ok()
        .and_then(|r| r.target())
        .expect("pushed");
    assert_eq!(there.to_string(), fixed);
    // The main branch was not touched: the work is reviewed on the host.
    assert_ne!(tip(&pb.repo_dir, "main"), fixed);
}
