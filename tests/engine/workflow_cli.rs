//! `healer workflow …` as a person runs it, and a kill -9 in the middle of a run.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use healer::workflow::{AttemptStatus, RunStatus};
use healer::Engine;

use crate::cli::{run, text, Daemon};
use crate::data_dir;

fn json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            text(&out.stdout),
            text(&out.stderr)
        )
    })
}

#[test]
fn a_person_creates_runs_edits_and_deletes_a_workflow_from_the_cli() {
    let (tmp, paths) = data_dir();
    let v1 = tmp.path().join("v1.py");
    std::fs::write(&v1, "print('report v1')\n").expect("write");
    let out = run(
        &paths,
        &[
            "workflow",
            "create",
            "--title",
            "Daily report",
            "--runtime",
            "python3",
            "--file",
            v1.to_str().unwrap_or_default(),
            "--schedule",
            "every 15m",
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(json(&out)["name"], "daily-report");

    let list = json(&run(&paths, &["workflow", "list", "--json"]));
    assert_eq!(list[0]["schedule_text"], "Every 15 minutes");
    assert_eq!(list[0]["status"], "active");

    let ran = run(&paths, &["workflow", "run", "daily-report"]);
    assert_eq!(ran.status.code(), Some(0), "{}", text(&ran.stderr));
    assert!(
        text(&ran.stdout).contains("Succeeded"),
        "{}",
        text(&ran.stdout)
    );

    let v2 = tmp.path().join("v2.py");
    std::fs::write(&v2, "rows = {}\nprint(rows['total'])\n").expect("write");
    let saved = run(
        &paths,
        &[
            "workflow",
            "save",
            "daily-report",
            "--file",
            v2.to_str().unwrap_or_default(),
            "--comment",
            "Read totals",
        ],
    );
    assert_eq!(saved.status.code(), Some(0), "{}", text(&saved.stderr));
    assert!(text(&saved.stdout).contains("2.0"));

    // A failing run exits 1 and says why.
    let failed = run(&paths, &["workflow", "run", "daily-report"]);
    assert_eq!(failed.status.code(), Some(1));
    let said = text(&failed.stdout);
    assert!(said.contains("KeyError: 'total'"), "{said}");
    assert!(said.contains("[logic]"), "{said}");

    let history = json(&run(
        &paths,
        &["workflow", "history", "daily-report", "--json"],
    ));
    let versions: Vec<_> = history
        .as_array()
        .expect("array")
        .iter()
        .map(|v| format!("{}.{}", v["version"]["major"], v["version"]["minor"]))
        .collect();
    assert_eq!(versions, ["1.0", "2.0"]);

    let diff = text(&run(&paths, &["workflow", "diff", "daily-report"]).stdout);
    assert!(diff.contains("-print('report v1')"), "{diff}");
    assert!(diff.contains("+print(rows['total'])"), "{diff}");

    let paused = json(&run(
        &paths,
        &["workflow", "pause", "daily-report", "--json"],
    ));
    assert_eq!(paused["status"], "paused");
    let resumed = json(&run(
        &paths,
        &["workflow", "resume", "daily-report", "--json"],
    ));
    assert_eq!(
        resumed["status"], "needs_attention",
        "resuming keeps what the last run said"
    );

    // No terminal, no --yes: nothing is deleted.
    let refused = run(&paths, &["workflow", "delete", "daily-report"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(text(&refused.stderr).contains("--yes"));
    let deleted = run(&paths, &["workflow", "delete", "daily-report", "--yes"]);
    assert_eq!(deleted.status.code(), Some(0), "{}", text(&deleted.stderr));
    assert_eq!(
        json(&run(&paths, &["workflow", "list", "--json"])),
        serde_json::json!([])
    );
}

#[test]
fn a_bad_cron_or_an_unknown_workflow_is_a_clear_error() {
    let (tmp, paths) = data_dir();
    let file = tmp.path().join("x.sh");
    std::fs::write(&file, "echo x\n").expect("write");
    let out = run(
        &paths,
        &[
            "workflow",
            "create",
            "--title",
            "X",
            "--runtime",
            "bash",
            "--file",
            file.to_str().unwrap_or_default(),
            "--schedule",
            "61 * * * *",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("not a valid cron expression"),
        "{}",
        text(&out.stderr)
    );

    let missing = run(&paths, &["workflow", "run", "no-such-workflow"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        text(&missing.stderr).contains("workflow \"no-such-workflow\" not found"),
        "{}",
        text(&missing.stderr)
    );
}

#[test]
fn with_the_daemon_running_workflow_run_is_done_by_the_daemon() {
    let (tmp, paths) = data_dir();
    let daemon = Daemon::start(&paths);
    let file = tmp.path().join("pid.sh");
    std::fs::write(&file, "echo \"ran in $PPID\"\n").expect("write");
    let out = run(
        &paths,
        &[
            "workflow",
            "create",
            "--title",
            "Who runs me",
            "--runtime",
            "bash",
            "--file",
            file.to_str().unwrap_or_default(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let ran = run(&paths, &["workflow", "run", "who-runs-me", "--json"]);
    assert_eq!(ran.status.code(), Some(0), "{}", text(&ran.stderr));
    let detail = json(&ran);
    let stdout = detail["attempts"][0]["stdout"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(stdout.trim(), format!("ran in {}", daemon.pid()));
    assert_eq!(daemon.terminate().code(), Some(0));
}

/// A cron that fires once a minute, two seconds from now (its seconds field is that second).
pub fn soon() -> String {
    use chrono::Timelike;
    let second = (chrono::Local::now() + chrono::Duration::seconds(2)).second();
    format!("{second} * * * * *")
}

#[tokio::test]
async fn after_a_kill_9_the_run_is_interrupted_and_its_processes_are_gone() {
    let (tmp, paths) = data_dir();
    let script = tmp.path().join("sleeper.sh");
    std::fs::write(&script, "sleep 300 &\necho $! > child.pid\nwait\n").expect("write");
    let out = run(
        &paths,
        &[
            "workflow",
            "create",
            "--title",
            "Sleeper",
            "--runtime",
            "bash",
            "--file",
            script.to_str().unwrap_or_default(),
            "--schedule",
            &soon(),
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let id = json(&out)["id"].as_i64().expect("id");

    let daemon = Daemon::start(&paths);
    let pid_file = paths.workflow_dir(id).join("child.pid");
    let deadline = Instant::now() + Duration::from_secs(15);
    while !pid_file.exists() {
        assert!(Instant::now() < deadline, "the scheduled run never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(200));
    let child: i32 = std::fs::read_to_string(&pid_file)
        .expect("pid")
        .trim()
        .parse()
        .expect("number");
    Command::new("kill")
        .args(["-KILL", &daemon.pid().to_string()])
        .stdout(Stdio::null())
        .status()
        .expect("kill");
    drop(daemon);
    assert!(
        alive(child),
        "the script's child outlives a kill -9 of the engine (until the next start)"
    );

    let engine = Engine::start(paths.clone(), "test").await.expect("restart");
    engine.set_paused(id, true).expect("pause");
    // SIGKILL is delivered asynchronously: give the kernel a moment.
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(child) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        !alive(child),
        "the next start ends what the crash left running"
    );
    let runs = engine.runs(id, None, 10).expect("runs");
    let crashed = runs
        .iter()
        .find(|r| r.status == RunStatus::Interrupted)
        .expect("an interrupted run");
    let detail = engine.run_detail(crashed.id).expect("detail");
    assert_eq!(detail.attempts[0].status, AttemptStatus::Interrupted);
    assert!(detail.attempts[0]
        .note
        .as_deref()
        .unwrap_or("")
        .contains("stopped"));
    let open = runs
        .iter()
        .filter(|r| r.status == RunStatus::Running)
        .count();
    assert!(open <= 1, "nothing else stays running");
    engine.shutdown().await;
}

fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s.contains(") Z "))
        .unwrap_or(false)
}

#[test]
fn a_workflow_is_found_by_the_title_a_person_sees_and_two_of_one_title_are_named() {
    let (tmp, paths) = data_dir();
    let file = tmp.path().join("x.sh");
    std::fs::write(&file, "echo spread\n").expect("write");
    let create = |title: &str| {
        let out = run(
            &paths,
            &[
                "workflow",
                "create",
                "--title",
                title,
                "--runtime",
                "bash",
                "--file",
                file.to_str().unwrap_or_default(),
            ],
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
    };
    create("Spread sheet");
    let out = run(&paths, &["workflow", "run", "Spread sheet"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("Succeeded"),
        "{}",
        text(&out.stdout)
    );
    let out = run(&paths, &["workflow", "show", "spread SHEET"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    create("Spread sheet");
    let out = run(&paths, &["workflow", "run", "Spread sheet"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("2 workflows are titled"),
        "{}",
        text(&out.stderr)
    );
}
