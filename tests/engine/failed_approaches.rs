//! What failed is not tried again: a fix whose code equals (whitespace aside) one already
//! recorded as failed for the error is refused by the tool, and a workflow whose repair gave up
//! stops costing tokens until the person acts.

use healer::maintainer::KEEP_SCHEDULE_AFTER_GIVE_UP;
use healer::memory::FixVerdict;
use healer::notification::{NotificationAction, NotificationKind};
use healer::workflow::{Runtime, Version, WorkflowStatus};
use serde_json::json;

use crate::maintainer::{bed, tool, BROKEN};
use crate::memory::still_broken;
use crate::model_server::{openai, TOKENS};
use crate::workflows::input;

/// The tool results the model was sent in a request.
fn tool_results(seen: &crate::model_server::Seen) -> Vec<String> {
    seen.body["messages"]
        .as_array()
        .map(|ms| {
            ms.iter()
                .filter(|m| m["role"] == "tool")
                .filter_map(|m| m["content"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn a_fix_already_tried_and_failed_is_refused_by_the_tool() {
    let bed = bed(false, true).await;
    let engine = &bed.engine;
    let w = engine
        .create_workflow(input("Sales total", Runtime::Python3, BROKEN))
        .expect("w");
    let tried = still_broken(1);
    // The same code with other spacing: blank lines, wider gaps, trailing blanks.
    let again = format!(
        "{}   \n\n",
        tried.replace('\n', "\n\n").replace(" = ", "  =  ")
    );
    assert_ne!(tried, again);
    bed.server.script([
        tool("fix", json!({"code": tried, "comment": "Add a comment"})),
        openai::text("Done.", TOKENS),
        tool(
            "fix",
            json!({"code": again, "comment": "Add a comment again"}),
        ),
        openai::text("I see no other way to repair it.", TOKENS),
    ]);
    let healed = engine.run_until_healed(w.id).await.expect("healed");
    let chats = bed.server.chats();
    assert_eq!(chats.len(), 4, "{}", healed.outcome);
    let refused = tool_results(&chats[3]).join("\n");
    assert!(
        refused.contains("the fix was not applied: it is the same code")
            && refused.contains("version 1.1 of \u{201c}Sales total\u{201d}")
            && refused.contains("tried for this error and failed"),
        "{refused}"
    );
    let versions: Vec<Version> = engine
        .versions(w.id)
        .expect("versions")
        .iter()
        .map(|v| v.version)
        .collect();
    assert_eq!(
        versions.len(),
        2,
        "the repeated fix was not stored: {versions:?}"
    );
    let thread = engine
        .autofix_detail(healed.fixes[1].task_id)
        .expect("detail")
        .thread;
    assert!(thread
        .messages
        .iter()
        .any(|m| m.is_error && m.content.contains("same code")));
}

fn maintenance_failed(bed: &crate::maintainer::Bed) -> Vec<healer::notification::Notification> {
    bed.engine
        .notifications()
        .expect("list")
        .items
        .into_iter()
        .filter(|n| n.kind == NotificationKind::MaintenanceFailed)
        .collect()
}

#[tokio::test]
async fn after_a_repair_gives_up_further_failures_are_counted_not_repaired() {
    let bed = bed(false, true).await;
    let engine = &bed.engine;
    let w = engine
        .create_workflow(input("Sales total", Runtime::Python3, BROKEN))
        .expect("w");
    bed.server.script([openai::text(
        "No fix: the data has no total any more.",
        TOKENS,
    )]);
    engine.run_until_healed(w.id).await.expect("first");
    assert_eq!(bed.server.chats().len(), 1);
    let told = maintenance_failed(&bed);
    assert_eq!(told.len(), 1);
    assert!(told[0].actions.contains(&NotificationAction::RetryAutofix));
    assert!(
        told[0].body.contains("keeps running on its schedule"),
        "{}",
        told[0].body
    );

    for _ in 0..3 {
        let healed = engine.run_until_healed(w.id).await.expect("again");
        assert!(healed.fixes.is_empty(), "no new repair task");
    }
    assert_eq!(bed.server.chats().len(), 1, "no model call since");
    let told = maintenance_failed(&bed);
    assert_eq!(told.len(), 1, "no new notification");
    assert_eq!(told[0].repeats, 3, "failed 3 more times since");
    assert!(told[0].repeated_at.is_some());
    let after = engine.find_workflow("sales-total").expect("w");
    assert_eq!(
        after.status,
        WorkflowStatus::NeedsAttention,
        "still scheduled"
    );
    let heal = &engine.heals(1).expect("heals")[0];
    assert!(heal
        .remedies
        .iter()
        .any(|r| r.remedy == "held_for_person" && r.detail.contains("3 more times")));
    // The give-up is remembered as a failed approach.
    let signature = heal.signature.clone();
    let fixes = engine.pattern(&signature).expect("pattern").fixes;
    assert!(fixes
        .iter()
        .any(|f| f.result == FixVerdict::Failed && f.description.starts_with("Gave up: No fix")));

    // Try auto-fix again: one new repair, told what the last one concluded.
    bed.server
        .script([openai::text("Still no fix: ask the person.", TOKENS)]);
    engine.retry_autofix(w.id).await.expect("retry");
    engine.work_inbox(w.id).await.expect("the repair");
    let chats = bed.server.chats();
    assert_eq!(chats.len(), 2);
    let context = chats[1].body["messages"].to_string();
    assert!(
        context.contains("An earlier repair of this error found no fix"),
        "{context}"
    );
    assert_eq!(
        maintenance_failed(&bed).len(),
        2,
        "the new repair gave up and said so"
    );
    let refused = engine.retry_autofix(999_999).await;
    assert!(refused.is_err());
}

#[tokio::test]
async fn a_new_major_version_lifts_the_hold_and_repairs_start_again() {
    let bed = bed(false, true).await;
    let engine = &bed.engine;
    let w = engine
        .create_workflow(input("Sales total", Runtime::Python3, BROKEN))
        .expect("w");
    bed.server.script([openai::text("No fix.", TOKENS)]);
    engine.run_until_healed(w.id).await.expect("first");
    engine.run_until_healed(w.id).await.expect("held");
    assert_eq!(bed.server.chats().len(), 1);
    // Re-plan saves 2.0 (still broken in the same way): repairs may start again.
    engine
        .save_script(w.id, &still_broken(7), "My own attempt")
        .expect("2.0");
    bed.server
        .script([openai::text("No fix for 2.0 either.", TOKENS)]);
    engine.run_until_healed(w.id).await.expect("repaired");
    assert_eq!(bed.server.chats().len(), 2, "a repair of 2.0 ran");
}

#[tokio::test]
async fn with_the_schedule_setting_off_a_give_up_pauses_and_resume_lifts_the_hold() {
    let bed = bed(false, true).await;
    let engine = &bed.engine;
    engine
        .store()
        .set_setting(KEEP_SCHEDULE_AFTER_GIVE_UP, &false)
        .expect("setting");
    let w = engine
        .create_workflow(input("Sales total", Runtime::Python3, BROKEN))
        .expect("w");
    bed.server.script([openai::text("No fix.", TOKENS)]);
    engine.run_until_healed(w.id).await.expect("first");
    let after = engine.find_workflow("sales-total").expect("w");
    assert_eq!(after.status, WorkflowStatus::Paused);
    assert!(maintenance_failed(&bed)[0].body.contains("It is paused"));
    engine.set_paused(w.id, false).expect("resume");
    assert!(engine.store().repair_hold(w.id).expect("hold").is_none());
    bed.server.script([openai::text("No fix again.", TOKENS)]);
    engine.run_until_healed(w.id).await.expect("repaired");
    assert_eq!(bed.server.chats().len(), 2, "resuming let repairs start");
}

#[tokio::test]
async fn a_held_failure_brings_its_alert_back_after_a_green_run_or_a_dismissal() {
    let bed = bed(false, true).await;
    let engine = &bed.engine;
    // Fails while the marker is missing, as a script whose input comes and goes does.
    let marker = bed._tmp.path().join("input-ready");
    let script = format!(
        "import json, os\nif not os.path.exists({:?}):\n    data = {{\"totl\": 3}}\n    print(data[\"total\"])\nprint(json.dumps({{\"total\": 3}}))\n",
        marker.display().to_string()
    );
    let w = engine
        .create_workflow(input("Sales total", Runtime::Python3, &script))
        .expect("w");
    bed.server.script([openai::text("No fix.", TOKENS)]);
    engine.run_until_healed(w.id).await.expect("gave up");
    let told = maintenance_failed(&bed);
    assert_eq!(told.len(), 1);
    let id = told[0].id;

    // Dismissed, then the failure comes back: the alert is back too, unread.
    engine.dismiss_notification(id).expect("dismiss");
    assert!(maintenance_failed(&bed).is_empty());
    engine.run_until_healed(w.id).await.expect("held");
    let back = maintenance_failed(&bed);
    assert_eq!(back.len(), 1, "the dismissed alert is back");
    assert_eq!((back[0].id, back[0].repeats, back[0].read), (id, 1, false));

    // A green run resolves it; failing again after that offers its buttons again.
    std::fs::write(&marker, "").expect("marker");
    let green = engine.run_and_wait(w.id).await.expect("green");
    assert_eq!(green.run.status, healer::workflow::RunStatus::Succeeded);
    assert!(maintenance_failed(&bed)[0].resolved);
    std::fs::remove_file(&marker).expect("marker gone");
    engine.run_until_healed(w.id).await.expect("held again");
    let again = &maintenance_failed(&bed)[0];
    assert_eq!(again.repeats, 2);
    assert!(!again.resolved, "it failed again since the green run");
    assert_eq!(
        bed.server.chats().len(),
        1,
        "no model call since the give-up"
    );
}
