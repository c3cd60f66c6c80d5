//! The engine killed (as abruptly as kill -9: an abort at a named point) at each step of a
//! run, of a repair and of applying a fix: the next start settles what it left — no run stays
//! "running", the workflow runs again, no process is left, and the interrupted repair is put
//! back in line (once) or explained.

use std::os::unix::process::ExitStatusExt;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use healer::engine::EngineOptions;
use healer::lease::Lease;
use healer::llm::Keys;
use healer::notification::NotificationKind;
use healer::store::Store;
use healer::workflow::{RunStatus, Runtime, Version};
use healer::{Engine, Paths};
use serde_json::json;

use super::hostile::processes_with;
use super::{healer, Daemon, Figures};
use crate::cli::text;
use crate::maintainer::{configure_model, tool, BROKEN, FIXED, KEY, KEY_VAR};
use crate::model_server::{openai, ModelServer, TOKENS};
use crate::workflows::input;

fn cli(paths: &Paths, args: &[&str], failpoint: Option<&str>) -> Output {
    let mut cmd = healer(paths);
    cmd.env(KEY_VAR, KEY).args(args).stdout(Stdio::piped());
    if let Some(point) = failpoint {
        cmd.env("HEALER_FAILPOINT", point);
    }
    cmd.output().expect("healer runs")
}

/// Runs of the data folder that are still open (lost, if nothing will finish them).
fn open_runs(paths: &Paths) -> u32 {
    let store = Store::open(&paths.db()).expect("store");
    let mut open = 0;
    for name in store.workflow_names().expect("names") {
        let w = store.workflow_by_name(&name).expect("workflow");
        for run in store.list_runs(w.id, None, 50).expect("runs") {
            if matches!(run.status, RunStatus::Running | RunStatus::Queued) {
                open += 1;
            }
        }
    }
    open
}

#[test]
fn a_crash_at_each_step_of_a_run_is_settled_at_the_next_start() {
    let mut figures = Figures::default();
    for point in [
        "run.attempt_started",
        "run.script_running",
        "run.attempt_recorded",
        "run.finished",
    ] {
        let (tmp, paths) = crate::data_dir();
        let marker = format!("{}.{}", 3301, std::process::id());
        let file = tmp.path().join("detaches.sh");
        std::fs::write(
            &file,
            format!("setsid sleep {marker} >/dev/null 2>&1 < /dev/null &\nsleep 0.3\necho done\n"),
        )
        .expect("script");
        let made = cli(
            &paths,
            &[
                "workflow",
                "create",
                "--title",
                "Crashy",
                "--runtime",
                "bash",
                "--file",
            ]
            .into_iter()
            .chain([file.to_str().expect("path")])
            .collect::<Vec<_>>(),
            None,
        );
        assert_eq!(made.status.code(), Some(0), "{}", text(&made.stderr));

        let crashed = cli(&paths, &["workflow", "run", "crashy"], Some(point));
        assert_eq!(
            crashed.status.signal(),
            Some(6),
            "{point}: {}",
            text(&crashed.stderr)
        );
        figures.faults += 1;

        // The next command starts an engine, which settles the crash, and runs it again.
        let again = cli(&paths, &["workflow", "run", "crashy"], None);
        let said = text(&again.stdout);
        assert_eq!(
            again.status.code(),
            Some(0),
            "{point}: {said}{}",
            text(&again.stderr)
        );
        assert!(said.contains("Succeeded"), "{point}: {said}");
        let left = processes_with(&marker);
        figures.processes_left += left.len() as u32;
        assert!(left.is_empty(), "{point}: left running: {left:?}");
        let open = open_runs(&paths);
        figures.runs_lost += open;
        assert_eq!(open, 0, "{point}: a run stays open");
        let store = Store::open(&paths.db()).expect("store");
        let w = store.workflow_by_name("crashy").expect("workflow");
        let runs = store.list_runs(w.id, None, 10).expect("runs");
        assert_eq!(runs.len(), 2, "{point}");
        let first = &runs[1];
        let expected = if point == "run.finished" {
            RunStatus::Succeeded
        } else {
            RunStatus::Interrupted
        };
        assert_eq!(first.status, expected, "{point}: {first:?}");
    }
    figures.print("kill -9 at each step of a run");
}

async fn prepared(server: &ModelServer) -> (tempfile::TempDir, Paths) {
    let (tmp, paths) = crate::data_dir();
    let engine = engine(&paths, false).await;
    configure_model(&engine, server);
    engine
        .create_workflow(input("Sales total", Runtime::Python3, BROKEN))
        .expect("create");
    engine.shutdown().await;
    (tmp, paths)
}

async fn engine(paths: &Paths, scheduler: bool) -> Engine {
    let lease = Lease::acquire(paths, "test").expect("lease");
    let options = EngineOptions {
        scheduler,
        keys: Some(Keys::env_only()),
        ..EngineOptions::default()
    };
    Engine::start_with_lease(paths.clone(), "test", lease, options)
        .await
        .expect("engine")
}

fn the_fix() -> [crate::model_server::Reply; 3] {
    [
        tool("eval", json!({"code": FIXED})),
        tool("fix", json!({"code": FIXED, "comment": "Read totl"})),
        openai::text("Fixed: the key is totl now.", TOKENS),
    ]
}

/// Wait until the workflow is healed: its last run green on 1.1, no repair open.
async fn healed(engine: &Engine, point: &str) {
    let deadline = Instant::now() + Duration::from_secs(40);
    loop {
        let w = engine.find_workflow("sales-total").expect("workflow");
        let last = engine.runs(w.id, None, 1).expect("runs");
        let green = last.first().is_some_and(|r| {
            r.status == RunStatus::Succeeded && r.version == Version { major: 1, minor: 1 }
        });
        if green && !w.healing {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{point}: not healed: {w:?} {last:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_while_repairing_or_applying_a_fix_is_resumed_at_the_next_start() {
    let server = ModelServer::start(Some(KEY));
    let mut figures = Figures::default();
    // (point, whether the model is asked again after the restart)
    for (point, asked_again) in [
        ("repair.eval", true),
        ("fix.applying", true),
        ("fix.applied", false),
    ] {
        let (_tmp, paths) = prepared(&server).await;
        server.script(the_fix());
        let crashed = cli(
            &paths,
            &["workflow", "run", "sales-total", "--until-healed"],
            Some(point),
        );
        assert_eq!(
            crashed.status.signal(),
            Some(6),
            "{point}: {}",
            text(&crashed.stderr)
        );
        figures.faults += 1;
        server.clear_replies();
        if asked_again {
            server.script(the_fix());
        }
        let chats_before = server.chats().len();
        let engine = engine(&paths, true).await;
        healed(&engine, point).await;
        let asked = server.chats().len() > chats_before;
        assert_eq!(asked, asked_again, "{point}");
        if asked_again {
            let events = engine.events(None, 200).expect("events");
            assert!(
                events
                    .iter()
                    .any(|e| e.event.describe().contains("put back in line")),
                "{point}: the restart said what it did"
            );
        }
        engine.shutdown().await;
        let open = open_runs(&paths);
        figures.runs_lost += open;
        assert_eq!(open, 0, "{point}");
        server.clear_replies();
    }
    figures.print("kill -9 during a repair and a fix apply");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repair_interrupted_twice_is_explained_not_dropped() {
    let server = ModelServer::start(Some(KEY));
    let (_tmp, paths) = prepared(&server).await;
    for _ in 0..2 {
        server.script(the_fix());
        let crashed = cli(
            &paths,
            &["workflow", "run", "sales-total", "--until-healed"],
            Some("repair.eval"),
        );
        assert_eq!(
            crashed.status.signal(),
            Some(6),
            "{}",
            text(&crashed.stderr)
        );
        server.clear_replies();
    }
    let engine = engine(&paths, false).await;
    let told = engine
        .notifications()
        .expect("notifications")
        .items
        .into_iter()
        .find(|n| n.kind == NotificationKind::MaintenanceFailed)
        .expect("the person is told");
    assert_eq!(told.title, "The repair of \"Sales total\" was interrupted");
    assert!(told.body.contains("stopped twice"), "{}", told.body);
    let w = engine.find_workflow("sales-total").expect("workflow");
    assert!(!w.healing);
    engine.shutdown().await;
    assert_eq!(open_runs(&paths), 0);
    Figures {
        faults: 2,
        ..Figures::default()
    }
    .print("a repair interrupted twice");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fix_whose_check_run_was_killed_is_checked_again_at_the_next_start() {
    let server = ModelServer::start(Some(KEY));
    let (tmp, paths) = prepared(&server).await;
    let marker = format!("{}.{}", 2903, std::process::id());
    // The fixed script hangs the first time it runs (until the engine is killed), then works.
    let fixed_once = format!(
        "import json, os, subprocess\nif not os.path.exists('once'):\n    open('once', 'w').write('x')\n    subprocess.run(['sleep', '{marker}'])\n{FIXED}"
    );
    server.script([
        tool("eval", json!({"code": FIXED})),
        tool("fix", json!({"code": fixed_once, "comment": "Read totl"})),
        openai::text("Fixed: the key is totl now.", TOKENS),
    ]);
    let mut daemon_cmd = healer(&paths);
    daemon_cmd
        .arg("daemon")
        .env(KEY_VAR, KEY)
        .stdout(Stdio::null());
    let daemon = Daemon::start(daemon_cmd, tmp.path().join("daemon.log"));
    let waiting = healer(&paths)
        .args(["workflow", "run", "sales-total", "--until-healed"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cli");
    let deadline = Instant::now() + Duration::from_secs(30);
    while processes_with(&marker).is_empty() {
        assert!(
            Instant::now() < deadline,
            "the fix's check run never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = nix::unistd::Pid::from_raw(daemon.child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL).expect("kill -9");
    let out = waiting.wait_with_output().expect("cli ends");
    assert!(
        text(&out.stderr).contains("stopped while it worked on this"),
        "{}",
        text(&out.stderr)
    );
    drop(daemon);
    let engine = engine(&paths, true).await;
    healed(&engine, "fix check run").await;
    let events = engine.events(None, 200).expect("events");
    assert!(events
        .iter()
        .any(|e| e.event.describe().contains("put back in line")));
    engine.shutdown().await;
    assert!(processes_with(&marker).is_empty());
    assert_eq!(open_runs(&paths), 0);
    Figures {
        faults: 1,
        ..Figures::default()
    }
    .print("kill -9 during a fix's check run");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_eval_running_when_the_engine_is_killed_ends_and_its_scratch_folder_goes() {
    let server = ModelServer::start(Some(KEY));
    let (tmp, paths) = prepared(&server).await;
    let marker = format!("{}.{}", 2711, std::process::id());
    let hang = format!(
        "import subprocess, time\nsubprocess.Popen(['setsid', 'env', '-i', 'sleep', '{marker}'])\nsubprocess.run(['sleep', '{marker}'])\n"
    );
    server.script([tool("eval", json!({"code": hang}))]);
    let mut daemon_cmd = healer(&paths);
    daemon_cmd
        .arg("daemon")
        .env(KEY_VAR, KEY)
        .stdout(Stdio::null());
    let daemon = Daemon::start(daemon_cmd, tmp.path().join("daemon.log"));
    let waiting = healer(&paths)
        .args(["workflow", "run", "sales-total", "--until-healed"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cli");
    let deadline = Instant::now() + Duration::from_secs(30);
    while processes_with(&marker).len() < 2 {
        assert!(Instant::now() < deadline, "the eval never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = nix::unistd::Pid::from_raw(daemon.child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL).expect("kill -9");
    let killed = Instant::now();
    let out = waiting.wait_with_output().expect("cli ends");
    assert!(killed.elapsed() < Duration::from_secs(3));
    assert!(text(&out.stderr).contains("stopped while it worked on this"));
    drop(daemon);
    // The waiting command settled what the engine left: every process of the eval (also the
    // one it detached with an emptied environment) and its scratch folder.
    let left = processes_with(&marker);
    assert!(left.is_empty(), "left running: {left:?}");
    let scratch: Vec<_> = std::fs::read_dir(paths.data_dir().join("sandbox"))
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("sandbox-"))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default();
    assert!(scratch.is_empty(), "scratch left: {scratch:?}");
    Figures {
        faults: 1,
        processes_left: left.len() as u32,
        ..Figures::default()
    }
    .print("kill -9 during an eval");
}
