//! Commands at once, with and without a running engine, and an engine that dies under a
//! waiting command: every command is answered, with what happened.

use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use healer::store::Store;
use healer::workflow::RunStatus;
use healer::Paths;

use super::hostile::processes_with;
use super::{healer, Daemon, Figures};
use crate::cli::text;

fn fresh() -> (tempfile::TempDir, Paths) {
    let tmp = tempfile::tempdir().expect("temp dir");
    // Not created: the first commands race to make the data folder and its schema.
    let paths = Paths::new(tmp.path().join("data"));
    (tmp, paths)
}

fn script(tmp: &tempfile::TempDir, name: &str, body: &str) -> String {
    let path = tmp.path().join(name);
    std::fs::write(&path, body).expect("script");
    path.display().to_string()
}

fn spawn(paths: &Paths, args: &[&str]) -> Child {
    healer(paths)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("healer starts")
}

fn finish(children: Vec<Child>) -> Vec<Output> {
    children
        .into_iter()
        .map(|c| c.wait_with_output().expect("healer ends"))
        .collect()
}

/// Ten creates, then five runs, all at once; every one answered and right.
fn parallel_commands(paths: &Paths, tmp: &tempfile::TempDir) -> Figures {
    let file = script(tmp, "hello.sh", "echo hello from $HEALER_RUN_ID\n");
    let creates: Vec<Child> = (0..10)
        .map(|i| {
            spawn(
                paths,
                &[
                    "workflow",
                    "create",
                    "--title",
                    &format!("Parallel {i}"),
                    "--runtime",
                    "bash",
                    "--file",
                    &file,
                ],
            )
        })
        .collect();
    let mut said = Vec::new();
    for (i, out) in finish(creates).into_iter().enumerate() {
        said.push(text(&out.stderr));
        assert_eq!(
            out.status.code(),
            Some(0),
            "create {i}: {}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
    }
    let runs: Vec<Child> = (0..5)
        .map(|i| spawn(paths, &["workflow", "run", &format!("parallel-{i}")]))
        .collect();
    for (i, out) in finish(runs).into_iter().enumerate() {
        said.push(text(&out.stderr));
        assert_eq!(
            out.status.code(),
            Some(0),
            "run {i}: {}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        assert!(
            text(&out.stdout).contains("Succeeded"),
            "{}",
            text(&out.stdout)
        );
    }
    let store = Store::open(&paths.db()).expect("store");
    let names = store.workflow_names().expect("names");
    assert_eq!(names.len(), 10, "{names:?}");
    let mut lost = 0;
    for i in 0..5 {
        let w = store
            .workflow_by_name(&format!("parallel-{i}"))
            .expect("workflow");
        let runs = store.list_runs(w.id, None, 10).expect("runs");
        if runs.len() != 1 || runs[0].status != RunStatus::Succeeded {
            lost += 1;
        }
    }
    assert_eq!(lost, 0, "every run is recorded once, green");
    let events = healer(paths)
        .args(["events", "--limit", "1000"])
        .output()
        .expect("events");
    let events = text(&events.stdout);
    assert!(
        !events.contains("Settled after an unclean stop"),
        "no false recovery: {events}"
    );
    let all = said.join("\n");
    assert!(!all.contains("database is locked"), "{all}");
    assert!(!all.contains("already exists"), "{all}");
    Figures {
        faults: 15,
        runs_lost: lost,
        ..Figures::default()
    }
}

#[test]
fn ten_creates_and_five_runs_at_once_without_an_engine_are_all_answered() {
    let (tmp, paths) = fresh();
    parallel_commands(&paths, &tmp).print("parallel commands, no engine running");
}

#[test]
fn ten_creates_and_five_runs_at_once_with_a_daemon_are_all_answered() {
    let (tmp, paths) = fresh();
    paths.ensure().expect("data dir");
    let mut daemon = Daemon::start(
        {
            let mut cmd = healer(&paths);
            cmd.arg("daemon").stdout(Stdio::null());
            cmd
        },
        tmp.path().join("daemon.log"),
    );
    let figures = parallel_commands(&paths, &tmp);
    daemon.stop();
    figures.print("parallel commands, daemon running");
}

#[test]
fn a_refusal_by_the_running_engine_reads_as_the_engine_said_it() {
    let (tmp, paths) = fresh();
    paths.ensure().expect("data dir");
    let marker = format!("{}.{}", 4111, std::process::id());
    let file = script(&tmp, "slow.sh", &format!("sleep {marker}\n"));
    let out = healer(&paths)
        .args(["workflow", "create", "--title", "Slow", "--runtime", "bash"])
        .args(["--file", &file])
        .output()
        .expect("create");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let mut daemon = Daemon::start(
        {
            let mut cmd = healer(&paths);
            cmd.arg("daemon").stdout(Stdio::null());
            cmd
        },
        tmp.path().join("daemon.log"),
    );
    let mut first = spawn(&paths, &["workflow", "run", "slow"]);
    wait_for(
        || !processes_with(&marker).is_empty(),
        "the slow script runs",
    );
    let second = healer(&paths)
        .args(["workflow", "run", "slow"])
        .output()
        .expect("second run");
    let said = text(&second.stderr);
    assert_eq!(second.status.code(), Some(1));
    assert_eq!(
        said.trim(),
        "healer: \"Slow\" is already running; wait for that run to finish"
    );
    let _ = first.kill();
    let _ = first.wait();
    daemon.stop();
    assert!(
        processes_with(&marker).is_empty(),
        "the daemon's stop ended the run"
    );
}

#[test]
fn a_command_waiting_on_an_engine_that_died_says_so_within_two_seconds() {
    let (tmp, paths) = fresh();
    paths.ensure().expect("data dir");
    let marker = format!("{}.{}", 5003, std::process::id());
    let file = script(
        &tmp,
        "stuck.sh",
        &format!("setsid env -i sleep {marker} &\nsleep {marker}\n"),
    );
    let out = healer(&paths)
        .args([
            "workflow",
            "create",
            "--title",
            "Stuck",
            "--runtime",
            "bash",
        ])
        .args(["--file", &file])
        .output()
        .expect("create");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let daemon = Daemon::start(
        {
            let mut cmd = healer(&paths);
            cmd.arg("daemon").stdout(Stdio::null());
            cmd
        },
        tmp.path().join("daemon.log"),
    );
    let waiting = spawn(&paths, &["workflow", "run", "stuck"]);
    wait_for(
        || processes_with(&marker).len() >= 2,
        "the script and its detached child run",
    );
    let pid = nix::unistd::Pid::from_raw(daemon.child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL).expect("kill -9");
    let killed = Instant::now();
    let out = waiting.wait_with_output().expect("the command ends");
    let took = killed.elapsed();
    let said = text(&out.stderr);
    assert!(took < Duration::from_secs(3), "took {took:?}: {said}");
    assert_eq!(out.status.code(), Some(1));
    assert!(said.contains("stopped while it worked on this"), "{said}");
    assert!(said.contains("killed or crashed"), "{said}");
    // Settling what it left ended the script and the child it detached, and freed the slot.
    let left = processes_with(&marker);
    assert!(left.is_empty(), "left running: {left:?}");
    let store = Store::open(&paths.db()).expect("store");
    let w = store.workflow_by_name("stuck").expect("workflow");
    let runs = store.list_runs(w.id, None, 5).expect("runs");
    assert_eq!(runs[0].status, RunStatus::Interrupted);
    drop(daemon);
    Figures {
        faults: 1,
        processes_left: left.len() as u32,
        ..Figures::default()
    }
    .print("engine killed under a waiting command");
}

fn wait_for(mut f: impl FnMut() -> bool, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !f() {
        assert!(Instant::now() < deadline, "{what}: did not happen in time");
        std::thread::sleep(Duration::from_millis(20));
    }
}
