//! Healer's state at a glance (what the tray shows), pausing every schedule, and runs numbered
//! within their workflow — against a real engine, real scripts and the store.

use std::time::Duration;

use healer::engine::{Mood, Waiting, PAUSED_BY_YOU};
use healer::workflow::{RunStatus, Runtime, Schedule};
use healer::{Engine, Event};

use crate::data_dir;
use crate::workflows::input;

#[tokio::test]
async fn a_failed_workflow_needs_the_person_and_its_runs_count_from_one() {
    let (_tmp, paths) = data_dir();
    let engine = Engine::start(paths.clone(), "test").await.expect("engine");
    let glance = engine.glance().expect("glance");
    assert_eq!(glance.mood(), Mood::Healthy);
    assert_eq!(glance.sentence(), "All is well");

    let fine = engine
        .create_workflow(input("Fine", Runtime::Bash, "echo ok\n"))
        .expect("create");
    let broken = engine
        .create_workflow(input(
            "Sum orders",
            Runtime::Python3,
            "rows = [{'total': 3}]\nprint(sum(r['amount'] for r in rows))\n",
        ))
        .expect("create");
    let mut bus = engine.subscribe();
    for _ in 0..2 {
        engine.run_and_wait(fine.id).await.expect("run");
    }
    let failed = engine.run_and_wait(broken.id).await.expect("run");
    assert_eq!(failed.run.status, RunStatus::Failed);
    assert_eq!(failed.run.number, 1, "the first run of this workflow");
    assert_eq!(failed.run.id, 3, "the third run of all");
    let numbers: Vec<u32> = engine
        .runs(fine.id, None, 10)
        .expect("runs")
        .iter()
        .map(|r| r.number)
        .collect();
    assert_eq!(numbers, [2, 1]);
    let mut announced = Vec::new();
    while let Ok(record) = bus.try_recv() {
        if let Event::RunFinished {
            workflow_id,
            run_number,
            ..
        } = record.event
        {
            announced.push((workflow_id, run_number));
        }
    }
    assert_eq!(announced, [(fine.id, 1), (fine.id, 2), (broken.id, 1)]);
    let printed = engine.events(None, 50).expect("events");
    assert!(
        printed.iter().any(|r| r.event.describe()
            == "Run #1 of \"Sum orders\": KeyError: 'amount' (a script or data error)"),
        "{:?}",
        printed
            .iter()
            .map(|r| r.event.describe())
            .collect::<Vec<_>>()
    );

    // No model is set up, so the repair cannot start: the workflow waits for the person.
    let glance = engine.glance().expect("glance");
    assert_eq!(
        glance.waiting,
        [Waiting::Workflow {
            workflow_id: broken.id,
            title: "Sum orders".to_string()
        }]
    );
    assert_eq!(glance.mood(), Mood::NeedsYou);
    assert_eq!(glance.sentence(), "1 thing needs you");
    engine.shutdown().await;
}

#[tokio::test]
async fn pausing_every_schedule_holds_scheduled_runs_until_resumed() {
    let (_tmp, paths) = data_dir();
    let engine = Engine::start(paths.clone(), "test").await.expect("engine");
    let mut bus = engine.subscribe();
    engine.pause_scheduler().expect("pause");
    assert_eq!(
        engine.glance().expect("glance").paused.as_deref(),
        Some(PAUSED_BY_YOU)
    );
    assert_eq!(
        engine.scheduler_pause().expect("pause").as_deref(),
        Some(PAUSED_BY_YOU)
    );
    assert!(
        std::iter::from_fn(|| bus.try_recv().ok())
            .any(|r| matches!(r.event, Event::SchedulerPaused { .. })),
        "the pause is announced"
    );
    assert_eq!(
        engine.glance().expect("glance").sentence(),
        "All is well · schedules paused"
    );

    // Due two seconds from now (then once a minute): that time passes while paused.
    let mut due_soon = input("Ticker", Runtime::Bash, "echo tick\n");
    due_soon.schedule = Schedule::Cron {
        expression: crate::workflow_cli::soon(),
    };
    let w = engine.create_workflow(due_soon).expect("create");
    tokio::time::sleep(Duration::from_millis(3_500)).await;
    assert!(
        engine.runs(w.id, None, 10).expect("runs").is_empty(),
        "nothing ran on its schedule while paused"
    );
    // By hand still works.
    engine.run_and_wait(w.id).await.expect("run by hand");

    engine.resume_scheduler().expect("resume");
    assert_eq!(engine.glance().expect("glance").paused, None);
    let mut scheduled = false;
    for _ in 0..60 {
        let runs = engine.runs(w.id, None, 10).expect("runs");
        if runs
            .iter()
            .any(|r| r.trigger != healer::workflow::RunTrigger::Manual)
        {
            scheduled = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(scheduled, "a scheduled run followed the resume");
    engine.shutdown().await;
}
