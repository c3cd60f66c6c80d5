//! Processes that outlive their runs, at the default limit (3 attempts): Healer ends each such
//! process as its run ends (every process of a run ends with it), counts the attempts that left
//! one, and at the third pauses scheduled runs — not even a due run is queued — until Resume.

use std::time::Duration;

use healer::workflow::{RunStatus, Runtime, Schedule};
use nix::sys::signal::kill;
use nix::unistd::Pid;

use crate::maintainer::bed;
use crate::model_server::eventually;
use crate::workflows::input;

/// Leaves one `sleep` running in a session of its own, and says its pid.
const LEAK: &str = "rm -f detached.pid\nsetsid bash -c 'echo $$ > detached.pid; exec sleep 300' >/dev/null 2>&1 < /dev/null &\nwhile [ ! -s detached.pid ]; do sleep 0.05; done\necho started\n";

fn alive(pid: i32) -> bool {
    kill(Pid::from_raw(pid), None).is_ok()
        && std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| !s.contains(") Z "))
            .unwrap_or(false)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escaping_processes_are_ended_and_at_the_third_scheduled_runs_wait_for_resume() {
    let bed = bed(true, false).await;
    let engine = &bed.engine;
    let leaky = engine
        .create_workflow(input("Leaky", Runtime::Bash, LEAK))
        .expect("w");
    let folder = bed.paths.workflow_dir(leaky.id);
    let mut pids = Vec::new();
    for _ in 0..3 {
        let run = engine.run_and_wait(leaky.id).await.expect("run");
        assert_eq!(run.run.status, RunStatus::Succeeded);
        let pid: i32 = std::fs::read_to_string(folder.join("detached.pid"))
            .expect("pid")
            .trim()
            .parse()
            .expect("a pid");
        pids.push(pid);
    }
    let paused = || engine.scheduler_pause().expect("state");
    eventually("the scheduler pauses", Duration::from_secs(10), || {
        paused().is_some()
    });
    let reason = paused().expect("paused");
    assert!(reason.contains("3 runs left processes"), "{reason}");
    eventually(
        "the escaped processes are ended",
        Duration::from_secs(5),
        || pids.iter().all(|p| !alive(*p)),
    );

    // A scheduled workflow falls due while paused: it is not queued.
    let mut scheduled = input("Hourly", Runtime::Bash, "echo hourly\n");
    scheduled.schedule = Schedule::Interval { seconds: 3600 };
    let due = engine.create_workflow(scheduled.clone()).expect("due");
    engine
        .store()
        .mark_due_handled(due.id, "2000-01-01T00:00:00.000Z", None)
        .expect("due long ago");
    engine
        .update_workflow(due.id, scheduled)
        .expect("the scheduler looks");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        engine.runs(due.id, None, 5).expect("runs").is_empty(),
        "no scheduled run while paused"
    );

    // Resume: scheduled runs go again, and the due run is queued and runs.
    engine.resume_scheduler().expect("resume");
    assert!(paused().is_none());
    eventually(
        "the due run is queued and runs",
        Duration::from_secs(10),
        || !engine.runs(due.id, None, 5).expect("runs").is_empty(),
    );
}
