//! Workflows end to end in the engine: real scripts, real processes, real SQLite.

use std::time::Duration;

use healer::failure::FailureClass;
use healer::heal::Outcome;
use healer::workflow::{
    AttemptStatus, Author, RetryPolicy, RunStatus, RunTrigger, Runtime, Schedule, Version,
    WorkflowInput, WorkflowStatus,
};
use healer::{Engine, ErrorCode, Paths};

use crate::data_dir;

pub fn input(title: &str, runtime: Runtime, code: &str) -> WorkflowInput {
    WorkflowInput {
        title: title.to_string(),
        runtime,
        entry: None,
        schedule: Schedule::Manual,
        env: vec![],
        timeout_secs: 30,
        retry: Some(RetryPolicy {
            initial_ms: 50,
            max_interval_ms: 200,
            jitter: false,
            ..RetryPolicy::default()
        }),
        code: code.to_string(),
        summary: format!("{title} (test)"),
    }
}

async fn engine(paths: &Paths) -> Engine {
    Engine::start(paths.clone(), "test").await.expect("engine")
}

#[tokio::test]
async fn a_script_runs_in_its_folder_and_its_result_and_output_are_kept() {
    let (_tmp, paths) = data_dir();
    let engine = engine(&paths).await;
    let code = "import json, os\nprint('hello from', os.getcwd())\njson.dump({'rows': 3}, open(os.environ['HEALER_RESULT'], 'w'))\n";
    let w = engine
        .create_workflow(input("Count rows", Runtime::Python3, code))
        .expect("create");
    assert_eq!(w.name, "count-rows");

    let detail = engine.run_and_wait(w.id).await.expect("run");
    assert_eq!(detail.run.status, RunStatus::Succeeded, "{detail:?}");
    assert_eq!(detail.run.trigger, RunTrigger::Manual);
    assert_eq!(detail.run.version, Version::FIRST);
    let attempt = &detail.attempts[0];
    assert_eq!(attempt.status, AttemptStatus::Succeeded);
    assert_eq!(attempt.exit_code, Some(0));
    let folder = paths.workflow_dir(w.id).canonicalize().expect("folder");
    assert!(
        attempt
            .stdout
            .contains(&format!("hello from {}", folder.display())),
        "{}",
        attempt.stdout
    );
    assert_eq!(attempt.result.as_deref(), Some(r#"{"rows":3}"#));

    let list = engine.list_workflows().expect("list");
    assert_eq!(list[0].last_run.as_ref().map(|r| r.id), Some(detail.run.id));
    assert_eq!(list[0].schedule_text, "Only when run by hand");
    engine.shutdown().await;
}

#[tokio::test]
async fn saves_make_majors_fixes_make_minors_and_a_stale_fix_is_not_applied() {
    let (_tmp, paths) = data_dir();
    let engine = engine(&paths).await;
    let w = engine
        .create_workflow(input("Versions", Runtime::Bash, "echo one\n"))
        .expect("create");
    let store = engine.store();

    let fix = store
        .save_minor(
            w.id,
            1,
            "echo one fixed\n",
            "Fix the greeting",
            &Author::Task { task_id: 7 },
        )
        .expect("fix")
        .expect("applied");
    assert_eq!(fix.version.to_string(), "1.1");
    assert_eq!(fix.summary, "Versions (test)", "a fix keeps the summary");

    let saved = engine
        .save_script(w.id, "echo two\n", "Rewrite")
        .expect("save");
    assert_eq!(saved.version.to_string(), "2.0");

    // A fix made for 1.x after the person saved 2.0 is refused, and nothing is stored.
    let stale = store
        .save_minor(
            w.id,
            1,
            "echo stale\n",
            "Late fix",
            &Author::Task { task_id: 8 },
        )
        .expect("no error");
    assert!(stale.is_none());

    let history: Vec<_> = engine
        .versions(w.id)
        .expect("history")
        .iter()
        .map(|v| (v.version.to_string(), v.active))
        .collect();
    assert_eq!(
        history,
        [
            ("1.0".to_string(), false),
            ("1.1".to_string(), false),
            ("2.0".to_string(), true)
        ]
    );
    assert_eq!(
        store
            .latest_of_major(w.id, 1)
            .expect("latest")
            .map(|v| v.version.to_string()),
        Some("1.1".to_string())
    );
    assert_eq!(
        store.active_version(w.id).expect("active").code,
        "echo two\n"
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn versions_cannot_be_changed_once_stored() {
    let (_tmp, paths) = data_dir();
    let engine = engine(&paths).await;
    let w = engine
        .create_workflow(input("Immutable", Runtime::Bash, "echo one\n"))
        .expect("create");
    let conn = rusqlite::Connection::open(paths.db()).expect("raw");
    let err = conn
        .execute(
            "UPDATE scripts SET code = 'echo hacked' WHERE workflow_id = ?1",
            [w.id],
        )
        .expect_err("refused");
    assert!(err.to_string().contains("immutable"), "{err}");
    engine.shutdown().await;
}

#[tokio::test]
async fn a_transient_failure_is_retried_and_recovers_in_the_same_run() {
    let (_tmp, paths) = data_dir();
    let engine = engine(&paths).await;
    let code = r#"
import os, socket
if os.environ["HEALER_ATTEMPT"] == "1":
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
    socket.create_connection(("127.0.0.1", port), timeout=5)
print("fetched on attempt", os.environ["HEALER_ATTEMPT"])
"#;
    let w = engine
        .create_workflow(input("Flaky fetch", Runtime::Python3, code))
        .expect("create");
    let detail = engine.run_and_wait(w.id).await.expect("run");
    assert_eq!(detail.run.status, RunStatus::Succeeded, "{detail:?}");
    assert_eq!(detail.attempts.len(), 2);
    let first = &detail.attempts[0];
    assert_eq!(first.class, Some(FailureClass::Transient));
    assert_eq!(
        first
            .evidence
            .as_ref()
            .and_then(|e| e.error_type.as_deref()),
        Some("ConnectionRefusedError")
    );
    assert!(
        first
            .note
            .as_deref()
            .unwrap_or("")
            .starts_with("Retrying in"),
        "{:?}",
        first.note
    );
    assert!(detail.attempts[1].stdout.contains("fetched on attempt 2"));
    assert!(
        detail.run.summary.contains("on attempt 2"),
        "{}",
        detail.run.summary
    );
    assert!(
        engine.heals(10).expect("heals").is_empty(),
        "a recovered run needs no heal"
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn a_logic_error_is_not_retried_and_goes_to_the_heal_pipeline() {
    let (_tmp, paths) = data_dir();
    let engine = engine(&paths).await;
    let code = "rows = [{'total': 3}]\nprint(sum(r['amount'] for r in rows))\n";
    let w = engine
        .create_workflow(input("Sum orders", Runtime::Python3, code))
        .expect("create");
    let detail = engine.run_and_wait(w.id).await.expect("run");
    assert_eq!(detail.run.status, RunStatus::Failed);
    assert_eq!(detail.attempts.len(), 1, "logic errors are not retried");
    assert_eq!(detail.run.class, Some(FailureClass::Logic));
    assert!(
        detail.run.summary.starts_with("KeyError: 'amount'"),
        "{}",
        detail.run.summary
    );
    assert_eq!(
        engine.store().workflow(w.id).expect("w").status,
        WorkflowStatus::NeedsAttention
    );

    // The run's task goes on to heal; wait for it.
    let mut heals = Vec::new();
    for _ in 0..100 {
        heals = engine.heals(10).expect("heals");
        if heals.first().is_some_and(|h| h.outcome.is_some()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let heal = heals.first().expect("a heal");
    assert_eq!(heal.class, FailureClass::Logic);
    assert_eq!(heal.outcome, Some(Outcome::Contained));
    assert_eq!(
        heal.source,
        healer::failure::FailureSource::ScriptRun {
            workflow_id: w.id,
            run_id: detail.run.id
        }
    );

    // A later success makes the workflow healthy again.
    engine
        .save_script(w.id, "print('fixed')\n", "Use the new field")
        .expect("save");
    let fixed = engine.run_and_wait(w.id).await.expect("run");
    assert_eq!(fixed.run.status, RunStatus::Succeeded);
    assert_eq!(fixed.run.version.to_string(), "2.0");
    assert_eq!(
        engine.store().workflow(w.id).expect("w").status,
        WorkflowStatus::Active
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn the_time_limit_ends_the_whole_process_group_even_a_child_ignoring_sigterm() {
    let (_tmp, paths) = data_dir();
    let engine = engine(&paths).await;
    let code =
        "bash -c 'trap \"\" TERM; echo $$ > child.pid; while true; do sleep 1; done' &\nwait\n";
    let mut w_input = input("Stubborn", Runtime::Bash, code);
    w_input.timeout_secs = 1;
    let w = engine.create_workflow(w_input).expect("create");
    let detail = engine.run_and_wait(w.id).await.expect("run");
    assert_eq!(detail.run.status, RunStatus::Failed);
    let attempt = &detail.attempts[0];
    assert!(attempt.timed_out);
    assert_eq!(attempt.class, Some(FailureClass::Timeout));
    assert!(
        attempt.note.as_deref().unwrap_or("").contains("time limit"),
        "{:?}",
        attempt.note
    );

    let pid: i32 = std::fs::read_to_string(paths.workflow_dir(w.id).join("child.pid"))
        .expect("child wrote its pid")
        .trim()
        .parse()
        .expect("pid");
    assert!(!alive(pid), "the child that ignored SIGTERM must be gone");
    engine.shutdown().await;
}

#[tokio::test]
async fn a_flood_of_output_is_capped_and_binary_garbage_stays_readable() {
    let (_tmp, paths) = data_dir();
    let engine = engine(&paths).await;
    let code = "import sys\nsys.stdout.buffer.write(b'start\\n' + b'x' * 100_000_000 + b'\\nthe end\\n')\nsys.stderr.buffer.write(bytes(range(256)))\n";
    // A hundred megabytes through the capture on a loaded CI machine can take longer than the
    // tests' usual 30 s; the limit is not what this test is about.
    let w = engine
        .create_workflow(WorkflowInput {
            timeout_secs: 600,
            ..input("Chatty", Runtime::Python3, code)
        })
        .expect("create");
    let detail = engine.run_and_wait(w.id).await.expect("run");
    assert_eq!(
        detail.run.status,
        RunStatus::Succeeded,
        "{:?} {:?}",
        detail.run.summary,
        detail.attempts.first().map(|a| &a.note)
    );
    let attempt = &detail.attempts[0];
    assert!(attempt.stdout_cut > 99_000_000, "{}", attempt.stdout_cut);
    assert!(attempt.stdout.len() < 200_000, "{}", attempt.stdout.len());
    assert!(attempt.stdout.starts_with("start\n"));
    assert!(attempt.stdout.ends_with("the end\n"));
    assert!(attempt.stdout.contains("bytes cut by Healer"));
    assert!(
        attempt.stderr.contains('\u{fffd}'),
        "invalid UTF-8 replaced, not dropped"
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn a_script_that_deletes_its_own_file_ends_cleanly_and_runs_again() {
    let (_tmp, paths) = data_dir();
    let engine = engine(&paths).await;
    let w = engine
        .create_workflow(input(
            "Self-deleting",
            Runtime::Bash,
            "rm -- \"$0\"\necho gone\n",
        ))
        .expect("create");
    for _ in 0..2 {
        let detail = engine.run_and_wait(w.id).await.expect("run");
        assert_eq!(detail.run.status, RunStatus::Succeeded, "{detail:?}");
        assert!(detail.attempts[0].stdout.contains("gone"));
    }
    engine.shutdown().await;
}

#[tokio::test]
async fn a_missing_interpreter_is_an_environment_failure_that_names_it() {
    let (_tmp, paths) = data_dir();
    let engine = engine(&paths).await;
    let w = engine
        .create_workflow(input("Gone", Runtime::Bash, "echo hi\n"))
        .expect("create");
    // The interpreter disappears after the workflow was made.
    let mut changed = input(
        "Gone",
        Runtime::Custom {
            command: "healer-no-such-interpreter {file}".to_string(),
        },
        "",
    );
    changed.entry = Some(w.entry.clone());
    engine
        .store()
        .update_workflow(w.id, &changed)
        .expect("update");

    let detail = engine.run_and_wait(w.id).await.expect("run");
    assert_eq!(detail.run.class, Some(FailureClass::Environment));
    let message = &detail.attempts[0]
        .evidence
        .as_ref()
        .expect("evidence")
        .message;
    assert!(
        message.contains("healer-no-such-interpreter not found on PATH"),
        "{message}"
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn bad_input_is_refused_with_a_message_per_field() {
    let (_tmp, paths) = data_dir();
    let engine = engine(&paths).await;
    let mut bad = input(
        "",
        Runtime::Custom {
            command: "healer-no-such-interpreter {file}".to_string(),
        },
        " ",
    );
    bad.schedule = Schedule::Cron {
        expression: "99 * * * *".to_string(),
    };
    let problems = engine.validate_workflow(&bad);
    let fields: Vec<_> = problems.iter().map(|p| p.field.as_str()).collect();
    assert_eq!(fields, ["title", "code", "schedule", "runtime"]);
    let err = engine.create_workflow(bad).expect_err("refused");
    assert_eq!(err.code(), ErrorCode::InvalidInput);
    assert!(
        err.to_string().contains("not a valid cron expression"),
        "{err}"
    );
    assert_eq!(
        engine.list_workflows().expect("list").len(),
        0,
        "nothing half-created"
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn one_workflow_never_runs_twice_at_once() {
    let (_tmp, paths) = data_dir();
    let engine = engine(&paths).await;
    let w = engine
        .create_workflow(input("Slow", Runtime::Bash, "sleep 1\n"))
        .expect("create");
    engine.run_now(w.id).expect("first");
    let err = engine.run_now(w.id).expect_err("second refused");
    assert!(err.to_string().contains("already running"), "{err}");
    engine.shutdown().await;
}

#[tokio::test]
async fn the_scheduler_runs_due_workflows_and_catches_up_a_missed_time_once() {
    let (_tmp, paths) = data_dir();
    {
        let engine = engine(&paths).await;
        // Once a minute, two seconds from now: a seconds field may not ask for more often
        // than every 10 seconds.
        let mut every_minute = input("Ticker", Runtime::Bash, "echo tick\n");
        every_minute.schedule = Schedule::Cron {
            expression: crate::workflow_cli::soon(),
        };
        let w = engine.create_workflow(every_minute).expect("create");
        // It runs on its own.
        let mut ran = false;
        for _ in 0..60 {
            if !engine.runs(w.id, None, 10).expect("runs").is_empty() {
                ran = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(ran, "a workflow due in two seconds ran within 6 s");
        engine.set_paused(w.id, true).expect("pause");
        engine.shutdown().await;
    }
    // Healer was "closed" for an hour: 60 missed times.
    let store = healer::store::Store::open(&paths.db()).expect("store");
    let w = store.workflow_by_name("ticker").expect("w");
    store
        .set_workflow_status(w.id, WorkflowStatus::Active)
        .expect("active");
    let an_hour_ago = (chrono::Utc::now() - chrono::Duration::hours(1))
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    store
        .mark_due_handled(w.id, &an_hour_ago, None)
        .expect("rewind");
    let before = store.list_runs(w.id, None, 1000).expect("runs").len();

    let engine = engine(&paths).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    engine.set_paused(w.id, true).expect("pause");
    let runs = engine.runs(w.id, None, 1000).expect("runs");
    let catch_ups = runs
        .iter()
        .filter(|r| r.trigger == RunTrigger::CatchUp)
        .count();
    assert_eq!(catch_ups, 1, "missed times run once, not once each");
    assert!(runs.len() - before <= 2, "{} new runs", runs.len() - before);
    engine.shutdown().await;
}

fn alive(pid: i32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .unwrap_or_default()
            .contains(") Z ")
}

#[tokio::test]
async fn the_examples_really_run_each_as_it_says() {
    let (_tmp, paths) = data_dir();
    let engine = engine(&paths).await;
    let examples = engine.load_examples().expect("examples");
    let names: Vec<_> = examples.iter().map(|w| w.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "daily-weather-summary",
            "exchange-rates",
            "weekly-sales-report",
            "team-chat-digest"
        ]
    );
    let mut seen = Vec::new();
    for w in &examples {
        let detail = engine.run_and_wait(w.id).await.expect("run");
        let classes: Vec<_> = detail.attempts.iter().map(|a| a.class).collect();
        seen.push((w.name.clone(), detail.run.status, classes));
    }
    assert_eq!(
        seen,
        [
            (
                "daily-weather-summary".to_string(),
                RunStatus::Succeeded,
                vec![None]
            ),
            (
                "exchange-rates".to_string(),
                RunStatus::Succeeded,
                vec![Some(FailureClass::Transient), None]
            ),
            (
                "weekly-sales-report".to_string(),
                RunStatus::Failed,
                vec![Some(FailureClass::Logic)]
            ),
            (
                "team-chat-digest".to_string(),
                RunStatus::Failed,
                vec![Some(FailureClass::Environment)]
            ),
        ]
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn the_concurrency_cap_holds_runs_back_until_a_slot_is_free() {
    let (_tmp, paths) = data_dir();
    {
        let store = healer::store::Store::open(&paths.db()).expect("store");
        store
            .set_setting(healer::scheduler::MAX_CONCURRENT_RUNS, &1_usize)
            .expect("setting");
    }
    let engine = engine(&paths).await;
    let code = "import time\ntime.sleep(0.4)\n";
    let a = engine
        .create_workflow(input("A", Runtime::Python3, code))
        .expect("a");
    let b = engine
        .create_workflow(input("B", Runtime::Python3, code))
        .expect("b");
    let (ra, rb) = tokio::join!(engine.run_and_wait(a.id), engine.run_and_wait(b.id));
    let (ra, rb) = (ra.expect("a ran"), rb.expect("b ran"));
    let span = |d: &healer::workflow::RunDetail| {
        (
            d.attempts[0].started_at.clone(),
            d.attempts[0].finished_at.clone().unwrap_or_default(),
        )
    };
    let (a_start, a_end) = span(&ra);
    let (b_start, b_end) = span(&rb);
    assert!(
        a_end <= b_start || b_end <= a_start,
        "with one slot the runs must not overlap: A {a_start}..{a_end}, B {b_start}..{b_end}"
    );
    engine.shutdown().await;
}
