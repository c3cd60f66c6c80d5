//! Projects from the command line (the real `healer` binary), and what a kill -9 of Healer in
//! the middle of a session leaves: the task open again with a note, the worktree kept, the
//! agent's processes ended at the next start.

use std::process::{Command, Output, Stdio};
use std::time::Duration;

use healer::engine::EngineOptions;
use healer::lease::Lease;
use healer::llm::Keys;
use healer::session::{SessionStatus, StepKind};
use healer::store::Store;
use healer::tasklist::{read_file, TaskStatus, TASKS_FILE};
use healer::{Engine, Paths};
use serde_json::{json, Value};

use crate::cli::text;
use crate::data_dir;
use crate::maintainer::{configure_model, KEY, KEY_VAR};
use crate::model_server::ModelServer;
use crate::project_fixtures::*;

fn healer_cmd(paths: &Paths, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_healer"));
    cmd.env("HEALER_DATA_DIR", paths.data_dir())
        .env("HEALER_KEYRING", "off")
        .env(KEY_VAR, KEY)
        .env_remove("HEALER_LOG")
        .stdin(Stdio::null())
        .args(args);
    cmd
}

fn healer(paths: &Paths, args: &[&str]) -> Output {
    healer_cmd(paths, args).output().expect("healer runs")
}

fn json_of(out: &Output) -> Value {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(&out.stdout)))
}

/// A data folder with the scripted model configured, and no engine running.
async fn prepared(server: &ModelServer) -> (tempfile::TempDir, Paths) {
    let (tmp, paths) = data_dir();
    let engine = engine(&paths).await;
    configure_model(&engine, server);
    engine.shutdown().await;
    (tmp, paths)
}

async fn engine(paths: &Paths) -> Engine {
    let lease = Lease::acquire(paths, "test").expect("lease");
    let options = EngineOptions {
        scheduler: false,
        keys: Some(Keys::env_only()),
        ..EngineOptions::default()
    };
    Engine::start_with_lease(paths.clone(), "test", lease, options)
        .await
        .expect("engine")
}

#[tokio::test]
async fn a_person_adds_a_project_and_a_task_runs_it_and_reads_the_session() {
    let server = ModelServer::start(Some(KEY));
    let (tmp, paths) = prepared(&server).await;
    let repo = tmp.path().join("greeter");
    git_repo(&repo, GREETER);
    let check = python_check();
    let verify = format!("test={}", check.command);

    let added = json_of(&healer(
        &paths,
        &[
            "project",
            "add",
            repo.to_str().unwrap_or_default(),
            "--verify",
            &verify,
            "--json",
        ],
    ));
    assert_eq!(added["name"], "greeter");
    assert_eq!(added["settings"]["verify"][0]["name"], "test");
    assert_eq!(added["settings"]["agent"], "builtin");

    // Not a repository; an agent this build cannot run.
    let plain = tmp.path().join("plain");
    std::fs::create_dir_all(&plain).expect("dir");
    let refused = healer(
        &paths,
        &["project", "add", plain.to_str().unwrap_or_default()],
    );
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        text(&refused.stderr).contains("is not a git repository"),
        "{}",
        text(&refused.stderr)
    );
    assert!(text(&refused.stderr).contains("--git-init"));
    let other = tmp.path().join("other");
    git_repo(&other, &[("a.txt", "a\n")]);
    let claude = healer(
        &paths,
        &[
            "project",
            "add",
            other.to_str().unwrap_or_default(),
            "--agent",
            "claude-code",
        ],
    );
    assert_eq!(claude.status.code(), Some(1));
    let said = text(&claude.stderr);
    assert!(
        said.contains("Claude Code is not installed on this computer"),
        "{said}"
    );
    // Claude Code where the person says it is: on a provider that does not speak its API
    // it is refused with why; on its own login it is added, and the settings say so.
    let program = crate::agent_fixtures::claude().display().to_string();
    let cc = |extra: &[&str]| {
        let mut args = vec!["project", "add", other.to_str().unwrap_or_default()];
        args.extend(["--agent", "claude-code", "--program", &program]);
        args.extend(extra);
        healer(&paths, &args)
    };
    let wrong = cc(&["--provider", "scripted"]);
    assert_eq!(wrong.status.code(), Some(1));
    assert!(
        text(&wrong.stderr).contains("Claude Code speaks only Anthropic's API"),
        "{}",
        text(&wrong.stderr)
    );
    // The repository has no check: it is refused until the person adds one or says so.
    let unchecked = cc(&["--name", "other", "--model", "claude-sonnet-4-5"]);
    assert_eq!(unchecked.status.code(), Some(1));
    assert!(
        text(&unchecked.stderr).contains("--no-checks"),
        "{}",
        text(&unchecked.stderr)
    );
    let own = cc(&[
        "--name",
        "other",
        "--model",
        "claude-sonnet-4-5",
        "--no-checks",
    ]);
    assert_eq!(own.status.code(), Some(0), "{}", text(&own.stderr));
    assert!(
        text(&own.stdout).contains("model: claude-sonnet-4-5, on the agent's own login"),
        "{}",
        text(&own.stdout)
    );
    let shown = json_of(&healer(&paths, &["project", "show", "other", "--json"]));
    assert_eq!(
        shown["project"]["settings"]["agent_program"],
        program.as_str()
    );
    let removed = healer(&paths, &["project", "remove", "other", "--yes"]);
    assert_eq!(removed.status.code(), Some(0), "{}", text(&removed.stderr));
    let made = json_of(&healer(
        &paths,
        &[
            "project",
            "add",
            plain.to_str().unwrap_or_default(),
            "--git-init",
            "--name",
            "plain",
            "--no-checks",
            "--json",
        ],
    ));
    assert_eq!(made["name"], "plain");
    assert_eq!(made["settings"]["commit_without_checks"], true);

    let task = json_of(&healer(
        &paths,
        &[
            "project",
            "task",
            "add",
            "greeter",
            "--title",
            "Greet properly",
            "--description",
            "Hello, Ada!",
            "--json",
        ],
    ));
    assert_eq!(task["id"], "t1");
    let tasks = json_of(&healer(&paths, &["project", "tasks", "greeter", "--json"]));
    assert_eq!(tasks["next"], "t1");

    server.script([
        call("c1", "edit_file", json!({"path": "greet.py", "search": "'Hi ' + name", "replace": "'Hello, ' + name + '!'"})),
        call("c2", "finish", json!({"summary": "greets properly"})),
    ]);
    let run = json_of(&healer(
        &paths,
        &["project", "run", "greeter", "--wait", "--json"],
    ));
    assert_eq!(run["status"], "finished", "{run}");
    let commit = run["commit_id"].as_str().expect("commit").to_string();
    let id = run["id"].as_i64().expect("id").to_string();

    let shown = healer(&paths, &["session", "show", &id]);
    assert_eq!(shown.status.code(), Some(0));
    let said = text(&shown.stdout);
    assert!(
        said.contains("→ edit_file") && said.contains("test: passed"),
        "{said}"
    );
    let out = tmp.path().join("session.json");
    let export = healer(
        &paths,
        &[
            "session",
            "export-atif",
            &id,
            "--out",
            out.to_str().unwrap_or_default(),
        ],
    );
    assert_eq!(export.status.code(), Some(0), "{}", text(&export.stderr));
    let atif: Value = serde_json::from_slice(&std::fs::read(&out).expect("written")).expect("json");
    assert_eq!(atif["schema_version"], "ATIF-v1.7");
    assert_eq!(atif["agent"]["name"], "builtin");

    let list = healer(&paths, &["project", "list"]);
    assert!(
        text(&list.stdout).contains("greeter") && text(&list.stdout).contains("closed 1"),
        "{}",
        text(&list.stdout)
    );
    let tasks = healer(&paths, &["project", "tasks", "greeter"]);
    assert!(
        text(&tasks.stdout).contains(&commit[..7]),
        "{}",
        text(&tasks.stdout)
    );
    let removed = healer(&paths, &["project", "remove", "plain", "--yes"]);
    assert_eq!(removed.status.code(), Some(0), "{}", text(&removed.stderr));
    let again = json_of(&healer(&paths, &["project", "list", "--json"]));
    assert_eq!(again.as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn healer_killed_mid_run_reopens_the_task_at_the_next_start_and_keeps_the_worktree() {
    let server = ModelServer::start(Some(KEY));
    let (tmp, paths) = prepared(&server).await;
    let repo = tmp.path().join("greeter");
    git_repo(&repo, GREETER);
    let added = healer(
        &paths,
        &["project", "add", repo.to_str().unwrap_or_default()],
    );
    assert_eq!(added.status.code(), Some(0), "{}", text(&added.stderr));
    let task = healer(
        &paths,
        &[
            "project",
            "task",
            "add",
            "greeter",
            "--title",
            "Take forever",
        ],
    );
    assert_eq!(task.status.code(), Some(0));
    server.script([call(
        "c1",
        "run_command",
        json!({"command": "sleep 300", "timeout_secs": 600}),
    )]);

    let mut running = healer_cmd(&paths, &["project", "run", "greeter", "--wait"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("healer runs");
    let store = Store::open(&paths.db()).expect("store");
    let session = eventually(
        "the agent's command to start",
        Duration::from_secs(60),
        || {
            let s = store.running_sessions().ok()?.into_iter().next()?;
            let steps = store.session_steps(s.id, 0).ok()?;
            steps
                .iter()
                .any(|st| st.step.kind == StepKind::ToolCall)
                .then_some(s)
        },
    )
    .await;
    let marker = marks_in(paths.data_dir(), session.id);
    eventually("the sleep", Duration::from_secs(30), || {
        (!marked_processes(&marker).is_empty()).then_some(())
    })
    .await;

    running.kill().expect("kill -9");
    let _ = running.wait();
    assert!(
        !marked_processes(&marker).is_empty(),
        "the agent's command outlives a killed Healer"
    );
    let file = read_file(&repo.join(TASKS_FILE)).expect("tasks");
    assert_eq!(file.task("t1").expect("t1").status, TaskStatus::InProgress);

    // The next start settles it.
    let engine = engine(&paths).await;
    let settled = engine.store().session(session.id).expect("session");
    assert_eq!(settled.status, SessionStatus::Interrupted);
    assert!(
        settled.summary.contains("found at the next start"),
        "{}",
        settled.summary
    );
    eventually(
        "the leftover processes to end",
        Duration::from_secs(5),
        || marked_processes(&marker).is_empty().then_some(()),
    )
    .await;
    let file = read_file(&repo.join(TASKS_FILE)).expect("tasks");
    let t1 = file.task("t1").expect("t1");
    assert_eq!(t1.status, TaskStatus::Open);
    assert!(t1
        .note
        .as_deref()
        .unwrap_or_default()
        .contains("Healer stopped while an agent worked on it"));
    assert!(
        std::path::Path::new(&settled.worktree)
            .join("greet.py")
            .exists(),
        "the worktree is kept"
    );
    engine.shutdown().await;
}

/// A line of the task list saved in another encoding (not UTF-8) is reported with its number
/// and kept byte for byte; listing the tasks, adding one and running one all work.
#[tokio::test]
async fn a_task_list_line_that_is_not_utf8_blocks_nothing_and_is_kept_byte_for_byte() {
    let server = ModelServer::start(Some(KEY));
    let (tmp, paths) = prepared(&server).await;
    let repo = tmp.path().join("greeter");
    git_repo(&repo, GREETER);
    let check = format!("test={}", python_check().command);
    json_of(&healer(
        &paths,
        &[
            "project",
            "add",
            repo.to_str().unwrap_or_default(),
            "--verify",
            &check,
            "--json",
        ],
    ));
    let latin1: &[u8] = b"{\"id\":\"t9\",\"title\":\"Caf\xe9 menu\"}\n";
    std::fs::create_dir_all(repo.join(".healer")).expect(".healer");
    std::fs::write(repo.join(TASKS_FILE), latin1).expect("a hand-written line");

    let listed = healer(&paths, &["project", "tasks", "greeter"]);
    assert_eq!(listed.status.code(), Some(0), "{}", text(&listed.stderr));
    assert!(
        text(&listed.stdout).contains("not UTF-8"),
        "{}",
        text(&listed.stdout)
    );
    json_of(&healer(
        &paths,
        &[
            "project",
            "task",
            "add",
            "greeter",
            "--title",
            "Greet properly",
            "--json",
        ],
    ));
    server.script([
        call("c1", "edit_file", json!({"path": "greet.py", "search": "'Hi ' + name", "replace": "'Hello, ' + name + '!'"})),
        call("c2", "finish", json!({"summary": "greets properly"})),
    ]);
    let run = json_of(&healer(
        &paths,
        &["project", "run", "greeter", "--wait", "--json"],
    ));
    assert_eq!(run["status"], "finished", "{run}");
    let bytes = std::fs::read(repo.join(TASKS_FILE)).expect("tasks");
    assert!(bytes.starts_with(latin1), "the line is kept byte for byte");
}

#[tokio::test]
async fn work_left_on_its_branch_is_accepted_or_discarded_from_the_command_line() {
    let server = ModelServer::start(Some(KEY));
    let (tmp, paths) = prepared(&server).await;
    let repo_dir = tmp.path().join("greeter");
    let repo = git_repo(&repo_dir, GREETER);
    let verify = format!("test={}", python_check().command);
    let repo_arg = repo_dir.to_str().unwrap_or_default();
    json_of(&healer(
        &paths,
        &[
            "project",
            "add",
            repo_arg,
            "--verify",
            &verify,
            "--leave-branch",
            "--allow",
            "python3",
            "--json",
        ],
    ));
    for title in ["Greet properly", "Greet again"] {
        json_of(&healer(
            &paths,
            &[
                "project", "task", "add", "greeter", "--title", title, "--json",
            ],
        ));
    }
    // Both greet properly; t2 writes the same line its own way.
    for (task, n, line) in [
        ("t1", 1, "'Hello, ' + name + '!'"),
        ("t2", 2, "'Hello, ' + name + '!'  # t2"),
    ] {
        server.script([
            call(
                &format!("c{n}"),
                "edit_file",
                json!({"path": "greet.py", "search": "'Hi ' + name", "replace": line}),
            ),
            call(
                &format!("d{n}"),
                "finish",
                json!({"summary": "greets properly"}),
            ),
        ]);
        let run = json_of(&healer(
            &paths,
            &[
                "project", "run", "greeter", "--task", task, "--wait", "--json",
            ],
        ));
        assert_eq!(run["status"], "finished", "{run}");
        assert_eq!(run["merged"], false);
    }
    // The person commits on main meanwhile.
    write_files(&repo_dir, &[("NOTES.md", "a note\n")]);
    commit_all(&repo, "a note");

    let accepted = json_of(&healer(
        &paths,
        &[
            "project", "accept", "greeter", "--task", "t1", "--how", "squash", "--json",
        ],
    ));
    assert_eq!(accepted["kind"], "accepted", "{accepted}");
    assert_eq!(accepted["how"], "squash");
    assert!(file_at(&repo_dir, "main", "greet.py").contains("Hello, "));
    assert_eq!(file_at(&repo_dir, "main", "NOTES.md"), "a note\n");

    // t2 changed the same line as t1, now in main: a conflict, said with its file; exit 1.
    let conflict = healer(&paths, &["project", "accept", "greeter", "--task", "t2"]);
    assert_eq!(conflict.status.code(), Some(1));
    let said = text(&conflict.stdout);
    assert!(
        said.contains("greet.py") && said.contains("Nothing was changed"),
        "{said}"
    );

    let discarded = json_of(&healer(
        &paths,
        &["project", "discard", "greeter", "--task", "t2", "--json"],
    ));
    assert!(discarded["snapshot_id"].as_i64().is_some(), "{discarded}");
    let repo = git2::Repository::open(&repo_dir).expect("repo");
    assert!(repo
        .find_branch("healer/t2", git2::BranchType::Local)
        .is_err());
    let wrong = healer(
        &paths,
        &[
            "project", "accept", "greeter", "--task", "t1", "--how", "rebase",
        ],
    );
    assert_eq!(wrong.status.code(), Some(1));
    assert!(
        text(&wrong.stderr).contains("ff, merge or squash"),
        "{}",
        text(&wrong.stderr)
    );
}

/// Comments from the command line: `project comment --at FILE:LINE` keeps one on the task's
/// change, `project comments` lists it waiting, `--send` sends it (a session picks the task up
/// again, and the agent's request carries it), and the list then shows it answered.
#[tokio::test]
async fn a_comment_on_a_line_is_kept_sent_and_answered_from_the_command_line() {
    let server = ModelServer::start(Some(KEY));
    let (tmp, paths) = prepared(&server).await;
    let repo_dir = tmp.path().join("greeter");
    git_repo(&repo_dir, GREETER);
    let verify = format!("test={}", python_check().command);
    let repo_arg = repo_dir.to_str().unwrap_or_default();
    json_of(&healer(
        &paths,
        &[
            "project",
            "add",
            repo_arg,
            "--verify",
            &verify,
            "--leave-branch",
            "--allow",
            "python3",
            "--json",
        ],
    ));
    json_of(&healer(
        &paths,
        &[
            "project", "task", "add", "greeter", "--title", "Greet", "--json",
        ],
    ));
    server.script([
        call(
            "c1",
            "edit_file",
            json!({"path": "greet.py", "search": "'Hi ' + name", "replace": "'Hello, ' + name + '!'"}),
        ),
        call("d1", "finish", json!({"summary": "greets properly"})),
    ]);
    let run = json_of(&healer(
        &paths,
        &[
            "project", "run", "greeter", "--task", "t1", "--wait", "--json",
        ],
    ));
    assert_eq!(run["status"], "finished", "{run}");

    let wrong = healer(
        &paths,
        &[
            "project", "comment", "greeter", "--task", "t1", "--at", "greet.py", "x",
        ],
    );
    assert_eq!(wrong.status.code(), Some(1));
    assert!(
        text(&wrong.stderr).contains("greet.py:12-15"),
        "{}",
        text(&wrong.stderr)
    );
    let kept = healer(
        &paths,
        &[
            "project",
            "comment",
            "greeter",
            "--task",
            "t1",
            "--at",
            "greet.py:2",
            "Use an f-string here.",
        ],
    );
    assert!(
        text(&kept.stdout).contains("Kept your comment on greet.py line 2"),
        "{}{}",
        text(&kept.stdout),
        text(&kept.stderr)
    );
    let listed = healer(&paths, &["project", "comments", "greeter", "--task", "t1"]);
    assert!(
        text(&listed.stdout).contains("greet.py line 2 (waiting to be sent)"),
        "{}",
        text(&listed.stdout)
    );

    server.script([
        call(
            "c2",
            "edit_file",
            json!({"path": "greet.py", "search": "'Hello, ' + name + '!'", "replace": "f'Hello, {name}!'"}),
        ),
        call("d2", "finish", json!({"summary": "an f-string"})),
    ]);
    let sent = json_of(&healer(
        &paths,
        &[
            "project", "comments", "greeter", "--task", "t1", "--send", "--json",
        ],
    ));
    assert_eq!(sent["sent"]["count"], 1, "{sent}");
    let session = sent["sent"]["session_id"].as_i64().expect("a session");
    // The command's own engine ran the session to its end before answering? Not necessarily:
    // wait for the answer to show.
    let mut answered = String::new();
    for _ in 0..200 {
        answered =
            text(&healer(&paths, &["project", "comments", "greeter", "--task", "t1"]).stdout);
        if answered.contains("answered") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(
        answered.contains("greet.py line 2 (answered: the agent changed these lines)"),
        "session {session}: {answered}"
    );
    let chats = server.chats();
    assert!(
        chats
            .iter()
            .any(|c| c.body.to_string().contains("Use an f-string here.")),
        "{:?}",
        chats.last().map(|c| c.body.to_string())
    );
}
