//! A model provider that fails a repair (down, overloaded, hanging mid-answer, answering what
//! cannot be read) is the provider's failure, not the repair's: the repair waits for it at the
//! shipped waits and says so, names the provider when it gives up, and never turns auto-repair
//! off — the next failure is repaired as usual.

use healer::maintainer::{AutoFixStatus, PROVIDER_WAITS};
use healer::notification::{NotificationAction, NotificationKind};
use healer::workflow::{RunStatus, Runtime};
use serde_json::json;

use crate::maintainer::{bed, tool, BROKEN, FIXED};
use crate::model_server::{openai, Reply, TOKENS};
use crate::workflows::input;

/// When the repair's inbox item may be taken again (the store's time), and how many times it
/// waited.
fn waiting(db: &std::path::Path, task_id: i64) -> Option<(chrono::DateTime<chrono::Utc>, u32)> {
    let conn = rusqlite::Connection::open(db).expect("raw");
    conn.query_row(
        "SELECT not_before, provider_waits FROM inbox WHERE task_id = ?1 AND status = 'pending'",
        [task_id],
        |r| Ok((r.get::<_, String>(0)?, r.get::<_, u32>(1)?)),
    )
    .ok()
    .map(|(at, waits)| {
        (
            chrono::DateTime::parse_from_rfc3339(&at)
                .expect("a time")
                .with_timezone(&chrono::Utc),
            waits,
        )
    })
}

/// The test clock: the wait is over.
fn wait_over(db: &std::path::Path, task_id: i64) {
    let conn = rusqlite::Connection::open(db).expect("raw");
    conn.execute(
        "UPDATE inbox SET not_before = '2000-01-01T00:00:00Z' WHERE task_id = ?1 AND status = 'pending'",
        [task_id],
    )
    .expect("the wait ends");
}

fn unreadable() -> Reply {
    Reply::Status {
        status: 200,
        headers: vec![],
        body: "<html><body>Bad gateway</body></html>".to_string(),
    }
}

#[tokio::test]
async fn a_provider_that_fails_is_waited_for_then_named_and_auto_repair_stays_on() {
    let bed = bed(false, true).await;
    let engine = &bed.engine;
    let db = bed.paths.db();
    let w = engine
        .create_workflow(input("Sales total", Runtime::Python3, BROKEN))
        .expect("create");
    let down = |status: u16| openai::error(status, "the server is overloaded", &[]);
    // Four times the provider fails the repair, each time differently; every HTTP failure is
    // asked four times (the shipped retries) before it counts.
    let rounds: [(Vec<Reply>, &str); 4] = [
        (vec![down(500); 4], "HTTP 500"),
        (vec![down(429); 4], "rate limiting"),
        (
            vec![openai::halts("The key is", false)],
            "stopped answering (the answer broke off",
        ),
        (vec![unreadable(); 3], "answers could not be read"),
    ];
    let mut task_id = None;
    for (round, (replies, said)) in rounds.into_iter().enumerate() {
        if let Some(task_id) = task_id {
            wait_over(&db, task_id);
        }
        bed.server.clear_replies();
        bed.server.script(replies);
        let started = chrono::Utc::now();
        let healed = engine.run_until_healed(w.id).await.expect("healed");
        assert_eq!(healed.last.status, RunStatus::Failed);
        let fixes = engine.autofixes(w.id).expect("fixes");
        assert_eq!(fixes.len(), 1, "one repair, waiting, round {round}");
        let fix = &fixes[0];
        task_id = Some(fix.task_id);
        assert!(fix.summary.contains(said), "round {round}: {}", fix.summary);
        let notifications = engine.notifications().expect("notifications").items;
        assert!(
            notifications
                .iter()
                .all(|n| n.kind != NotificationKind::MaintenanceFailed),
            "a provider's failure never asks the person to Re-plan: {notifications:?}"
        );
        let Some(wait) = PROVIDER_WAITS.get(round) else {
            // After the last wait the repair ends, naming the provider.
            assert_eq!(fix.status, AutoFixStatus::Interrupted, "{}", fix.summary);
            assert!(waiting(&db, fix.task_id).is_none());
            let told = notifications
                .iter()
                .find(|n| n.task_id == Some(fix.task_id))
                .expect("the person is told");
            assert!(
                told.title.contains("the model provider is failing"),
                "{}",
                told.title
            );
            assert!(told.body.contains("scripted"), "{}", told.body);
            assert!(told.body.contains("auto-repair stays on"), "{}", told.body);
            assert_eq!(told.actions, [NotificationAction::OpenSettings]);
            break;
        };
        assert_eq!(fix.status, AutoFixStatus::Working, "round {round}");
        assert!(
            fix.summary.starts_with("Waiting for the model provider:"),
            "{}",
            fix.summary
        );
        assert!(
            fix.summary
                .contains(&format!("in {} minutes", wait.as_secs() / 60)),
            "{}",
            fix.summary
        );
        let (at, waits) = waiting(&db, fix.task_id).expect("the repair waits in line");
        assert_eq!(waits, u32::try_from(round).expect("small") + 1);
        let asked = at - started;
        let shipped = chrono::Duration::from_std(*wait).expect("a wait");
        assert!(
            asked >= shipped && asked <= shipped + chrono::Duration::seconds(60),
            "round {round}: asked again after {asked}, shipped {shipped}"
        );
        let workflow = engine.find_workflow("sales-total").expect("workflow");
        assert!(workflow.healing, "the repair is still under way");
    }

    // Auto-repair was never turned off: the next failure is repaired, as usual.
    let workflow = engine.find_workflow("sales-total").expect("workflow");
    assert!(!workflow.healing);
    assert_eq!(
        workflow.fix_count, 0,
        "the provider's failures are no attempts"
    );
    bed.server.clear_replies();
    bed.server.script([
        tool("fix", json!({"code": FIXED, "comment": "Read \"totl\""})),
        openai::text("Fixed.", TOKENS),
    ]);
    let healed = engine.run_until_healed(w.id).await.expect("healed");
    assert_eq!(
        healed.last.status,
        RunStatus::Succeeded,
        "{}",
        healed.outcome
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn a_repair_waiting_for_its_provider_survives_the_engine_stopping_and_goes_on_after() {
    let crate::maintainer::Bed {
        _tmp,
        paths,
        engine,
        server,
    } = bed(false, true).await;
    let w = engine
        .create_workflow(input("Sales total", Runtime::Python3, BROKEN))
        .expect("create");
    server.script(vec![openai::error(503, "unavailable", &[]); 4]);
    engine.run_until_healed(w.id).await.expect("healed");
    let task_id = engine.autofixes(w.id).expect("fixes")[0].task_id;
    assert!(waiting(&paths.db(), task_id).is_some());
    engine.shutdown().await;
    drop(engine);

    let lease = healer::lease::Lease::acquire(&paths, "test").expect("lease");
    let engine = healer::Engine::start_with_lease(
        paths.clone(),
        "test",
        lease,
        healer::engine::EngineOptions {
            scheduler: false,
            keys: Some(healer::llm::Keys::env_only()),
            ..healer::engine::EngineOptions::default()
        },
    )
    .await
    .expect("the engine again");
    let fixes = engine.autofixes(w.id).expect("fixes");
    assert_eq!(fixes[0].task_id, task_id);
    assert_eq!(
        fixes[0].status,
        AutoFixStatus::Working,
        "a wait is a stored state: {}",
        fixes[0].summary
    );
    assert!(waiting(&paths.db(), task_id).is_some(), "still in line");

    wait_over(&paths.db(), task_id);
    server.script([
        tool("fix", json!({"code": FIXED, "comment": "Read \"totl\""})),
        openai::text("Fixed.", TOKENS),
    ]);
    let healed = engine.run_until_healed(w.id).await.expect("healed");
    assert_eq!(
        healed.last.status,
        RunStatus::Succeeded,
        "{}",
        healed.outcome
    );
    let fixes = engine.autofixes(w.id).expect("fixes");
    assert_eq!(fixes.len(), 1, "the same repair went on");
    assert_eq!(fixes[0].status, AutoFixStatus::Fixed);
    engine.shutdown().await;
}
