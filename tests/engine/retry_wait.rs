//! A run waiting out a retry's backoff holds no run slot — other runs start meanwhile — and is
//! a stored state: an engine killed while it waits leaves it waiting, and the next engine gives
//! it its next attempt when due, rather than marking it interrupted.

use std::process::Command;
use std::time::{Duration, Instant};

use healer::store::Store;
use healer::workflow::{RetryPolicy, RunStatus, RunTrigger, Runtime, WorkflowInput};

use crate::faults::{healer, Daemon};
use crate::workflows::input;

/// A connection refused on its first run (transient: retried), then a success: a counter file
/// beside the script tells the runs apart.
const REFUSED_ONCE: &str = "n=$(cat ../count 2>/dev/null || echo 0)\necho $((n+1)) > ../count\nif [ \"$n\" = 0 ]; then echo 'curl: (7) Failed to connect to 127.0.0.1 port 9: Connection refused' >&2; exit 7; fi\necho fine\n";

fn retried_after(title: &str, code: &str, secs: u32) -> WorkflowInput {
    let mut w = input(title, Runtime::Bash, code);
    w.retry = Some(RetryPolicy {
        initial_ms: secs * 1000,
        max_interval_ms: secs * 1000,
        jitter: false,
        ..RetryPolicy::default()
    });
    w
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_waiting_out_their_backoff_leave_their_slots_to_other_runs() {
    let (_tmp, paths) = crate::data_dir();
    let engine = crate::cluster_bed::start_engine(&paths).await;
    let store = engine.store().clone();
    store
        .set_setting(healer::scheduler::MAX_CONCURRENT_RUNS, &2usize)
        .expect("two slots");
    // Two runs fail at once and wait 30 s to retry, in a machine of two slots.
    let failing: Vec<i64> = (0..2)
        .map(|i| {
            let code = "echo 'curl: (7) Failed to connect to 127.0.0.1 port 9: Connection refused' >&2\nexit 7\n";
            engine
                .create_workflow(retried_after(&format!("Flaky {i}"), code, 30))
                .expect("workflow")
                .id
        })
        .collect();
    for w in &failing {
        engine.run_now(*w).expect("queued");
    }
    let waiting = || {
        failing
            .iter()
            .filter(|w| {
                store
                    .list_runs(**w, None, 5)
                    .expect("runs")
                    .first()
                    .is_some_and(|r| r.status == RunStatus::Queued && r.attempts == 1)
            })
            .count()
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while waiting() < 2 {
        assert!(Instant::now() < deadline, "the first attempts did not end");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // A third workflow's run starts now, not after their backoff.
    let other = engine
        .create_workflow(input("Other", Runtime::Bash, "echo other\n"))
        .expect("workflow")
        .id;
    let asked = Instant::now();
    let detail = engine.run_and_wait(other).await.expect("run");
    assert_eq!(detail.run.status, RunStatus::Succeeded);
    assert!(
        asked.elapsed() < Duration::from_secs(10),
        "it waited {:?} for a slot",
        asked.elapsed()
    );
    assert_eq!(waiting(), 2, "the two still wait for their retry");
    engine.shutdown().await;
}

#[test]
fn an_engine_killed_while_a_run_waits_to_retry_leaves_it_waiting_and_the_next_gives_it_its_attempt()
{
    let (tmp, paths) = crate::data_dir();
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let w = rt.block_on(async {
        let engine = crate::cluster_bed::start_engine(&paths).await;
        let w = engine
            .create_workflow(retried_after("Refused once", REFUSED_ONCE, 3))
            .expect("workflow")
            .id;
        engine.shutdown().await;
        w
    });
    let store = Store::open(&paths.db()).expect("store");
    store.enqueue_run(w, RunTrigger::Manual).expect("queued");
    // The engine dies the moment the run starts waiting for its retry.
    let mut cmd: Command = healer(&paths);
    cmd.env("HEALER_FAILPOINT", "run.waiting_to_retry")
        .arg("daemon");
    let mut killed = cmd
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("daemon");
    let status = killed.wait().expect("ended");
    assert!(!status.success(), "the engine ended at the failpoint");
    let run = store.list_runs(w, None, 5).expect("runs").remove(0);
    assert_eq!(run.status, RunStatus::Queued, "{run:?}");
    assert_eq!(run.attempts, 1);

    let mut cmd: Command = healer(&paths);
    cmd.arg("daemon");
    let mut daemon = Daemon::start(cmd, tmp.path().join("daemon.log"));
    let deadline = Instant::now() + Duration::from_secs(30);
    let run = loop {
        let run = store.list_runs(w, None, 5).expect("runs").remove(0);
        if !matches!(run.status, RunStatus::Queued | RunStatus::Running) {
            break run;
        }
        assert!(Instant::now() < deadline, "{run:?}");
        std::thread::sleep(Duration::from_millis(100));
    };
    daemon.stop();
    assert_eq!(run.status, RunStatus::Succeeded, "{run:?}");
    assert_eq!(run.attempts, 2, "{run:?}");
    assert_eq!(store.list_runs(w, None, 5).expect("runs").len(), 1);
}
