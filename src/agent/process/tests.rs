//! The supervisor with plain shell programs: what a process that escaped its group leaves, and
//! the grace a process that ignores the stop signal gets (at its shipped default).

use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::*;

fn launch(body: &str, mark: &str, time_limit: Duration) -> Launch {
    let mut env = base_env(|name| std::env::var(name).ok());
    set(&mut env, MARK_VAR, mark);
    Launch {
        program: PathBuf::from("/bin/sh"),
        args: vec!["-c".into(), body.into()],
        cwd: std::env::temp_dir(),
        env,
        time_limit,
        stop_signal: Signal::SIGTERM,
        group: None,
    }
}

/// Supervise `launch` to its end (its marks: `mark`), with the lines it printed.
async fn supervised(launch: Launch, mark: &str) -> (Finished, Vec<String>) {
    let marks = [vec![format!("{MARK_VAR}={mark}")]];
    let (tx, _rx) = mpsc::unbounded_channel();
    let mut lines = Vec::new();
    let mut on_line = |line: &str| {
        lines.push(line.to_string());
        Flow::Continue
    };
    let finished = supervise(launch, &tx, &CancellationToken::new(), &marks, &mut on_line)
        .await
        .expect("started");
    (finished, lines)
}

#[tokio::test]
async fn a_process_that_left_the_group_is_ended_with_the_session() {
    let mark = new_mark();
    let marks = [vec![format!("{MARK_VAR}={mark}")]];
    // `setsid` puts the first sleep in a session of its own, out of reach of the group's kill.
    let body = "setsid sleep 60 & echo started; sleep 60";
    let (finished, lines) = supervised(launch(body, &mark, Duration::from_secs(1)), &mark).await;

    assert_eq!(finished.ending, Ending::TimedOut);
    assert_eq!(lines, vec!["started".to_string()]);
    assert!(marked_processes(&marks).is_empty());
}

#[tokio::test]
async fn an_agent_that_ignores_the_stop_signal_is_killed_after_the_grace() {
    let mark = new_mark();
    let marks = [vec![format!("{MARK_VAR}={mark}")]];
    let (tx, mut rx) = mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let body = "trap '' TERM; echo ready; while :; do sleep 0.1; done";
    let stop = cancel.clone();
    let mut on_line = |_: &str| {
        stop.cancel();
        Flow::Continue
    };
    let asked = Instant::now();
    let finished = supervise(
        launch(body, &mark, Duration::from_secs(60)),
        &tx,
        &cancel,
        &marks,
        &mut on_line,
    )
    .await
    .expect("started");
    let took = asked.elapsed();

    assert_eq!(finished.ending, Ending::Stopped);
    assert!(took >= STOP_GRACE, "killed after {took:?}");
    assert!(took < STOP_GRACE + Duration::from_secs(2), "took {took:?}");
    assert!(matches!(rx.try_recv(), Ok(AgentUpdate::Process { .. })));
    assert!(marked_processes(&marks).is_empty());
}

#[test]
fn the_base_environment_keeps_no_secret_of_healer() {
    let parent = |name: &str| match name {
        "PATH" => Some("/bin".to_string()),
        "HOME" => Some("/home/p".to_string()),
        "ANTHROPIC_API_KEY" | "OPENAI_API_KEY" => Some("sk-secret".to_string()),
        _ => None,
    };
    let env = base_env(parent);
    assert_eq!(get(&env, "PATH"), Some("/bin"));
    assert_eq!(get(&env, "HOME"), Some("/home/p"));
    assert_eq!(get(&env, "LANG"), Some("C.UTF-8"));
    assert!(env.iter().all(|(_, v)| v != "sk-secret"));
}

#[tokio::test]
async fn a_line_without_end_is_cut_at_the_cap() {
    let mark = new_mark();
    let marks = [vec![format!("{MARK_VAR}={mark}")]];
    let (tx, _rx) = mpsc::unbounded_channel();
    let total = MAX_LINE_BYTES + 1000;
    let body = format!("head -c {total} /dev/zero | tr '\\0' 'a'");
    let mut lengths = Vec::new();
    let mut on_line = |line: &str| {
        lengths.push(line.len());
        Flow::Continue
    };
    supervise(
        launch(&body, &mark, Duration::from_secs(60)),
        &tx,
        &CancellationToken::new(),
        &marks,
        &mut on_line,
    )
    .await
    .expect("started");

    assert_eq!(lengths, vec![MAX_LINE_BYTES, 1000]);
}

#[tokio::test]
async fn a_tool_that_left_with_an_emptied_environment_ends_with_the_session() {
    let groups = tempfile::tempdir().expect("groups");
    if let Some(why) = crate::contain::testing::groups_cannot_end_all(groups.path()) {
        println!("skipped: a tool that left with an emptied environment: {why}");
        return;
    }
    let mark = new_mark();
    // Out of the process group (`setsid`) and without the mark (`env -i`): only the control
    // group still holds it. The odd length of its sleep names it.
    let token = format!("7919.{}", std::process::id());
    let body = format!("setsid env -i sleep {token} & echo started; sleep 60");
    let mut with_group = launch(&body, &mark, Duration::from_secs(1));
    with_group.group = Some(GroupSpec {
        registry: groups.path().to_path_buf(),
        name: format!("test-agent-{mark}"),
    });
    let (finished, lines) = supervised(with_group, &mark).await;

    assert_eq!(finished.ending, Ending::TimedOut);
    assert_eq!(lines, vec!["started".to_string()]);
    assert!(
        crate::contain::testing::running_with(&token).is_empty(),
        "left: {:?}",
        crate::contain::testing::running_with(&token)
    );
    // The group's record is gone with it: nothing for the next start to end.
    let records: Vec<_> = std::fs::read_dir(groups.path())
        .expect("registry")
        .collect();
    assert!(records.is_empty(), "records left: {records:?}");
}

/// At the shipped limit (an hour), on tokio's paused clock: the hour passes without being
/// waited, the agent is a real process.
#[tokio::test(start_paused = true)]
async fn an_agent_that_never_ends_is_stopped_at_the_shipped_limit_of_an_hour() {
    let limit = Duration::from_secs(u64::from(
        crate::store::ProjectSettings::default().agent_time_limit_secs,
    ));
    assert_eq!(limit, Duration::from_secs(60 * 60));
    let mark = new_mark();
    let started = tokio::time::Instant::now();
    let (finished, _) = supervised(launch("sleep 100000", &mark, limit), &mark).await;
    let waited = started.elapsed();

    assert_eq!(finished.ending, Ending::TimedOut);
    assert!(
        waited >= limit && waited < limit + STOP_GRACE + Duration::from_secs(10),
        "stopped after {waited:?}"
    );
    // On the paused clock the sweep's wait takes no time: give the killed process a real moment.
    let marks = [vec![format!("{MARK_VAR}={mark}")]];
    let gone = (0..50).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(100));
        marked_processes(&marks).is_empty()
    });
    assert!(gone, "left: {:?}", marked_processes(&marks));
}
