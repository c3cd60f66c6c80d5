//! The catastrophic rollback at its default (3 failed repairs in a row) stays within the
//! person's current major: the last green version of that major comes back and a run proves
//! it; when the major never ran green, or the rolled-back version fails too, the person decides
//! (a notification with Re-plan) and the repairs stop.

use healer::memory::DecisionKind;
use healer::notification::{NotificationAction, NotificationKind};
use healer::workflow::{Author, RunStatus, RunTrigger, Runtime, Version};
use serde_json::json;

use crate::maintainer::{bed, tool, Bed, BROKEN, FIXED};
use crate::memory::still_broken;
use crate::model_server::{openai, Reply, TOKENS};
use crate::workflows::input;

/// Green while mode.txt says "ok"; otherwise it fails the way `still_broken` does (the same
/// KeyError on the same line, so the same error signature).
const MODE: &str = "import json\ndata = {\"total\": 3} if open(\"mode.txt\").read().strip() == \"ok\" else {\"totl\": 3}\nprint(json.dumps({\"total\": data[\"total\"]}))\n";

/// The third repair's fix also sets mode.txt back to "ok": the world is fine again, but the fix
/// itself still fails, so only a rollback finds out.
fn third_fix_restores_the_mode() -> String {
    "import json\nopen(\"mode.txt\", \"w\").write(\"ok\")\ndata = {\"totl\": 3}\nprint(json.dumps({\"total\": data[\"total\"]}))\n".to_string()
}

fn three_failing_repairs(third: String) -> Vec<Reply> {
    let mut replies = Vec::new();
    for code in [still_broken(1), still_broken(2), third] {
        replies.push(tool("fix", json!({"code": code, "comment": "Try again"})));
        replies.push(openai::text("Done.", TOKENS));
    }
    replies
}

async fn green_then_broken(bed: &Bed) -> i64 {
    let engine = &bed.engine;
    let w = engine
        .create_workflow(input("Sales total", Runtime::Python3, MODE))
        .expect("w");
    let folder = bed.paths.workflow_dir(w.id);
    std::fs::write(folder.join("mode.txt"), "ok").expect("mode");
    assert_eq!(
        engine.run_and_wait(w.id).await.expect("green").run.status,
        RunStatus::Succeeded
    );
    std::fs::write(folder.join("mode.txt"), "broken").expect("mode");
    w.id
}

#[tokio::test]
async fn the_last_green_version_of_the_major_comes_back_and_a_run_proves_it() {
    let bed = bed(false, true).await;
    let engine = &bed.engine;
    let w = green_then_broken(&bed).await;
    bed.server
        .script(three_failing_repairs(third_fix_restores_the_mode()));
    let healed = engine.run_until_healed(w).await.expect("healed");
    assert_eq!(
        bed.server.chats().len(),
        6,
        "no Level 2: the rollback settled it"
    );
    let active = engine.workflow(w).expect("w").active;
    assert_eq!(active.version, Version { major: 1, minor: 4 });
    assert_eq!(active.code, MODE);
    assert_eq!(active.author, Author::Healer);
    assert_eq!(
        active.change_comment,
        "Rolled back to 1.0 after 3 failed repairs"
    );
    // What happened after: the proving run ran the rolled-back version, green.
    assert_eq!(healed.last.trigger, RunTrigger::Rollback);
    assert_eq!(healed.last.version, Version { major: 1, minor: 4 });
    assert_eq!(healed.last.status, RunStatus::Succeeded);
    let after = engine.find_workflow("sales-total").expect("w");
    assert_eq!(after.fix_count, 0);
    assert!(!after.healing);
    let decision = engine
        .decisions(10)
        .expect("decisions")
        .into_iter()
        .find(|d| d.kind == DecisionKind::CatastrophicRollback)
        .expect("logged");
    assert!(decision
        .detail
        .contains(&format!("run {} proves it", healed.last.id)));
    let bundles: Vec<_> = std::fs::read_dir(bed.paths.data_dir().join("forensics"))
        .expect("forensics")
        .filter_map(|e| e.ok())
        .collect();
    assert_eq!(bundles.len(), 1);
    let bundle: serde_json::Value =
        serde_json::from_slice(&std::fs::read(bundles[0].path()).expect("read")).expect("json");
    assert_eq!(bundle["repairs"].as_array().map(Vec::len), Some(3));
}

#[tokio::test]
async fn a_rolled_back_version_that_fails_too_goes_to_the_person() {
    let bed = bed(false, true).await;
    let engine = &bed.engine;
    let w = green_then_broken(&bed).await;
    bed.server.script(three_failing_repairs(still_broken(3)));
    let healed = engine.run_until_healed(w).await.expect("healed");
    assert_eq!(healed.last.trigger, RunTrigger::Rollback);
    assert_eq!(
        healed.last.status,
        RunStatus::Failed,
        "the data is still broken"
    );
    assert_eq!(
        bed.server.chats().len(),
        6,
        "no repair of the rolled-back version: no loop"
    );
    let told = engine
        .notifications()
        .expect("list")
        .items
        .into_iter()
        .find(|n| n.kind == NotificationKind::MaintenanceFailed)
        .expect("the person is asked");
    assert!(told.body.contains("fails too"), "{}", told.body);
    assert!(told.actions.contains(&NotificationAction::Replan));
    assert!(engine
        .decisions(10)
        .expect("decisions")
        .iter()
        .any(|d| d.kind == DecisionKind::RollbackEscalated));
    // A later failure waits for the person too.
    engine.run_until_healed(w).await.expect("again");
    assert_eq!(bed.server.chats().len(), 6);
}

#[tokio::test]
async fn a_major_that_never_ran_green_is_not_rolled_back_to_an_older_one() {
    let bed = bed(false, true).await;
    let engine = &bed.engine;
    let w = engine
        .create_workflow(input("Sales total", Runtime::Python3, FIXED))
        .expect("w");
    assert_eq!(
        engine.run_and_wait(w.id).await.expect("green").run.status,
        RunStatus::Succeeded
    );
    engine.save_script(w.id, BROKEN, "New layout").expect("2.0");
    let mut replies = three_failing_repairs(still_broken(3));
    replies.push(openai::text(
        r#"{"action": "escalate", "reasoning": "three repairs failed"}"#,
        TOKENS,
    ));
    bed.server.script(replies);
    engine.run_until_healed(w.id).await.expect("healed");
    let active = engine.workflow(w.id).expect("w").active;
    assert_eq!(
        active.version,
        Version { major: 2, minor: 3 },
        "1.0's code is not put back"
    );
    assert_ne!(active.code, FIXED);
    assert!(
        !bed.paths.data_dir().join("forensics").exists(),
        "no rollback happened"
    );
    let told = engine
        .notifications()
        .expect("list")
        .items
        .into_iter()
        .find(|n| n.kind == NotificationKind::MaintenanceFailed)
        .expect("escalated");
    assert!(
        told.body.contains("No version 2.x has run green"),
        "{}",
        told.body
    );
    assert!(told.actions.contains(&NotificationAction::Replan));
    assert!(engine
        .decisions(10)
        .expect("decisions")
        .iter()
        .any(|d| d.kind == DecisionKind::RollbackEscalated));
}
