//! Healing memory, tier escalation and the circuit breakers, end to end in the engine with
//! real scripts and the scripted model server.

use healer::breakers::{BreakerSettings, BREAKERS};
use healer::checkpoint::CheckpointTrigger;
use healer::maintainer::AutoFixStatus;
use healer::memory::{DecisionKind, FixVerdict};
use healer::notification::NotificationKind;
use healer::workflow::{Author, RunStatus, Runtime, Version};
use serde_json::json;

use crate::maintainer::{bed, tool, Bed, BROKEN, FIXED};
use crate::model_server::{openai, TOKENS};
use crate::workflows::input;

/// The same data-shape bug, repaired in a way that still fails on the same key.
pub fn still_broken(n: u32) -> String {
    format!("import json\ndata = {{\"totl\": {n}}}\n# try {n}\nprint(json.dumps({{\"total\": data[\"total\"]}}))\n")
}

fn breakers(bed: &Bed, change: impl FnOnce(&mut BreakerSettings)) {
    let mut settings = BreakerSettings::default();
    change(&mut settings);
    bed.engine
        .store()
        .set_setting(BREAKERS, &settings)
        .expect("breakers");
}

#[tokio::test]
async fn a_second_workflow_with_the_same_bug_gets_the_known_fix_at_zero_tokens() {
    let bed = bed(false, true).await;
    let engine = &bed.engine;
    let a = engine
        .create_workflow(input("Sales total", Runtime::Python3, BROKEN))
        .expect("a");
    bed.server.script([
        tool("fix", json!({"code": FIXED, "comment": "Read totl"})),
        openai::text("Fixed.", TOKENS),
    ]);
    let healed = engine.run_until_healed(a.id).await.expect("a healed");
    assert_eq!(healed.last.status, RunStatus::Succeeded);
    let signature = engine.patterns(10).expect("patterns")[0].signature.clone();
    let detail = engine.pattern(&signature).expect("pattern");
    assert_eq!(detail.fixes.len(), 1);
    assert_eq!(detail.fixes[0].result, FixVerdict::Success);
    assert!(detail.fixes[0]
        .diff
        .contains("+print(json.dumps({\"total\": data[\"totl\"]}))"));

    let before = bed.server.seen().len();
    let b = engine
        .create_workflow(input("Branch sales", Runtime::Python3, BROKEN))
        .expect("b");
    let healed = engine.run_until_healed(b.id).await.expect("b healed");
    assert_eq!(
        bed.server.seen().len(),
        before,
        "no request reached the model"
    );
    assert_eq!(
        healed.last.status,
        RunStatus::Succeeded,
        "{}",
        healed.outcome
    );
    let active = engine.workflow(b.id).expect("b").active;
    assert_eq!(active.version, Version { major: 1, minor: 1 });
    assert_eq!(active.code, FIXED);
    assert_eq!(active.change_comment, format!("Known fix for {signature}"));
    assert_eq!(healed.fixes.len(), 1);
    assert_eq!(healed.fixes[0].status, AutoFixStatus::Fixed);
    assert_eq!(healed.fixes[0].tokens, 0);
    let pattern = engine.pattern(&signature).expect("pattern");
    // `healer patterns list|show` read the same memory.
    let cli = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_healer"))
            .env("HEALER_DATA_DIR", bed.paths.data_dir())
            .env("HEALER_KEYRING", "off")
            .args(args)
            .output()
            .expect("healer runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert!(cli(&["patterns", "list"]).contains(&format!("{signature}  seen 2×")));
    let shown = cli(&["patterns", "show", &signature]);
    assert!(shown.contains("Known fix for"), "{shown}");
    assert!(shown.contains("success"), "{shown}");
    assert!(shown.contains("+print(json.dumps"), "{shown}");
    assert_eq!(pattern.pattern.count, 2);
    assert_eq!(
        (
            pattern.pattern.fixes,
            pattern.pattern.successes,
            pattern.pattern.pending
        ),
        (2, 2, 0)
    );
    assert_eq!(pattern.fixes.len(), 2, "the known fix is recorded back");
    assert!(pattern
        .fixes
        .iter()
        .all(|f| f.result == FixVerdict::Success));
}

#[tokio::test]
async fn approaches_that_failed_are_given_to_the_maintainer_as_do_not_repeat() {
    let bed = bed(false, true).await;
    let engine = &bed.engine;
    let w = engine
        .create_workflow(input("Sales total", Runtime::Python3, BROKEN))
        .expect("w");
    bed.server.script([
        tool(
            "fix",
            json!({"code": still_broken(1), "comment": "Add a comment"}),
        ),
        openai::text("Tried something.", TOKENS),
        openai::text("I give up.", TOKENS),
    ]);
    engine.run_until_healed(w.id).await.expect("healed");
    let chats = bed.server.chats();
    assert_eq!(chats.len(), 3);
    let second_task = chats[2].body["messages"].to_string();
    assert!(
        second_task.contains("Tried before for this error, and it failed"),
        "{second_task}"
    );
    assert!(second_task.contains("Add a comment"), "{second_task}");
    assert!(!chats[0].body["messages"]
        .to_string()
        .contains("Tried before"));
}

#[tokio::test]
async fn at_the_defaults_the_fix_attempts_in_a_row_reach_every_tier() {
    let bed = bed(false, true).await;
    let engine = &bed.engine;
    for (tier, model) in [
        (healer::llm::Tier::Cheap, "model-cheap"),
        (healer::llm::Tier::Standard, "model-standard"),
        (healer::llm::Tier::Deep, "model-deep"),
    ] {
        engine
            .set_tier(healer::llm::TierSetting {
                tier,
                provider: "scripted".to_string(),
                model: model.to_string(),
                budget_tokens: tier.default_budget(),
                temperature: None,
                minutes: None,
            })
            .expect("tier");
    }
    let w = engine
        .create_workflow(input("Sales total", Runtime::Python3, BROKEN))
        .expect("w");
    let mut replies = Vec::new();
    for n in 1..=3 {
        replies.push(tool(
            "fix",
            json!({"code": still_broken(n), "comment": format!("Try {n}")}),
        ));
        replies.push(openai::text("Done.", TOKENS));
    }
    replies.push(openai::text(
        r#"{"action": "escalate", "reasoning": "three repairs failed"}"#,
        TOKENS,
    ));
    bed.server.script(replies);
    engine.run_until_healed(w.id).await.expect("healed");
    let models: Vec<String> = bed.server.chats()[..6]
        .iter()
        .step_by(2)
        .map(|c| c.body["model"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(models, ["model-cheap", "model-standard", "model-deep"]);
    assert_eq!(
        bed.server.chats().len(),
        7,
        "after the third attempt Level 2 asks the person; no fourth repair"
    );
}

#[tokio::test]
async fn the_same_error_in_three_workflows_within_the_hour_pauses_its_repairs() {
    let bed = bed(false, true).await;
    let engine = &bed.engine;
    bed.server.script([
        openai::text("No fix for the first.", TOKENS),
        openai::text("No fix for the second.", TOKENS),
    ]);
    let mut ids = Vec::new();
    for title in ["North sales", "South sales", "East sales"] {
        let w = engine
            .create_workflow(input(title, Runtime::Python3, BROKEN))
            .expect("w");
        engine.run_until_healed(w.id).await.expect("healed");
        ids.push(w.id);
    }
    assert_eq!(bed.server.chats().len(), 2, "no repair for the third");
    let pending = engine.checkpoints().expect("list").pending;
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].trigger, CheckpointTrigger::Systemic);
    assert!(
        pending[0].context.contains("3 workflows"),
        "{}",
        pending[0].context
    );
    assert!(engine.autofixes(ids[2]).expect("fixes").is_empty());
    // While it waits, the workflows it names do not run (Run now says why), and a failure
    // with that error elsewhere starts no repair.
    let refused = engine.run_now(ids[0]).expect_err("waits for the decision");
    assert!(
        refused.to_string().contains("waits for your decision"),
        "{refused}"
    );
    let west = engine
        .create_workflow(input("West sales", Runtime::Python3, BROKEN))
        .expect("w");
    engine.run_until_healed(west.id).await.expect("west");
    assert_eq!(bed.server.chats().len(), 2);
    let decisions = engine.decisions(10).expect("decisions");
    assert!(decisions.iter().any(|d| d.kind == DecisionKind::Systemic));
    // Decided: each runs again, and repairs resume.
    engine
        .decide_checkpoint(pending[0].id, Some(1), None)
        .await
        .expect("resume");
    bed.server
        .script([openai::text("No fix this time either.", TOKENS)]);
    engine.work_queued_runs(ids[2]).await.expect("again");
    assert_eq!(bed.server.chats().len(), 3);
}

#[tokio::test]
async fn healing_over_the_daily_tokens_asks_with_allow_more_pause_and_skip() {
    let bed = bed(false, true).await;
    breakers(&bed, |b| b.daily_healing_tokens = 100);
    let engine = &bed.engine;
    let w = engine
        .create_workflow(input("Sales total", Runtime::Python3, BROKEN))
        .expect("w");
    bed.server.script([
        tool("fix", json!({"code": still_broken(1), "comment": "One"})),
        openai::text("Done.", TOKENS),
    ]);
    // The fix's re-run fails the same way: the second repair would go over the allowance.
    engine.run_until_healed(w.id).await.expect("first");
    assert_eq!(
        bed.server.chats().len(),
        2,
        "the second repair did not start"
    );
    let c = engine.checkpoints().expect("list").pending.remove(0);
    assert_eq!(c.trigger, CheckpointTrigger::Cost);
    let labels: Vec<&str> = c.options.iter().map(|o| o.label.as_str()).collect();
    assert_eq!(labels, ["Allow 50k more", "Skip", "Pause"]);
    let used = bed.server.reported().total();
    assert!(
        c.context.contains(&format!("used {used} tokens today")),
        "{}",
        c.context
    );
    bed.server.script([openai::text("Still no fix.", TOKENS)]);
    let decided = engine
        .decide_checkpoint(c.id, Some(1), None)
        .await
        .expect("allow");
    assert!(decided
        .decision
        .expect("decided")
        .outcome
        .starts_with("Allowed 50000 more tokens today"));
    engine.work_queued_runs(w.id).await.expect("the run again");
    assert_eq!(
        bed.server.chats().len(),
        3,
        "repairs go on within the new allowance"
    );
}

#[tokio::test]
async fn a_workflow_fixed_too_often_is_flagged_for_review() {
    let bed = bed(false, true).await;
    breakers(&bed, |b| b.review_fixes = 1);
    let engine = &bed.engine;
    let w = engine
        .create_workflow(input("Sales total", Runtime::Python3, BROKEN))
        .expect("w");
    bed.server.script([
        tool("fix", json!({"code": still_broken(1), "comment": "One"})),
        openai::text("Done.", TOKENS),
        tool("fix", json!({"code": FIXED, "comment": "Two"})),
        openai::text("Done.", TOKENS),
    ]);
    engine.run_until_healed(w.id).await.expect("healed");
    let after = engine.find_workflow("sales-total").expect("w");
    assert!(after.review);
    let list = engine.notifications().expect("list");
    let n = list
        .items
        .iter()
        .find(|n| n.kind == NotificationKind::Review)
        .expect("review notification");
    assert!(n.body.contains("2 times"), "{}", n.body);
    // A person's save clears it.
    engine
        .save_script(w.id, FIXED, "Looked at it")
        .expect("save");
    assert!(!engine.find_workflow("sales-total").expect("w").review);
}

#[tokio::test]
async fn a_fix_whose_rerun_fails_differently_is_rolled_back() {
    let bed = bed(false, true).await;
    let engine = &bed.engine;
    let w = engine
        .create_workflow(input("Sales total", Runtime::Python3, BROKEN))
        .expect("w");
    bed.server.script([
        tool(
            "fix",
            json!({"code": "raise ValueError('a new problem')\n", "comment": "Rewrite"}),
        ),
        openai::text("Rewrote it.", TOKENS),
    ]);
    engine.run_until_healed(w.id).await.expect("healed");
    assert_eq!(
        bed.server.chats().len(),
        2,
        "no repair of the rolled-back fix"
    );
    let active = engine.workflow(w.id).expect("w").active;
    assert_eq!(active.version, Version { major: 1, minor: 2 });
    assert_eq!(active.code, BROKEN);
    assert_eq!(active.author, Author::Healer);
    assert!(active
        .change_comment
        .starts_with("Rolled back the automatic fix that made 1.1:"));
    assert!(active.change_comment.contains("ValueError"));
    let signature = engine
        .patterns(10)
        .expect("patterns")
        .last()
        .expect("one")
        .signature
        .clone();
    let fixes = engine.pattern(&signature).expect("pattern").fixes;
    assert_eq!(
        fixes[0].result,
        FixVerdict::Failed,
        "counts as a failed attempt"
    );
    assert_eq!(engine.find_workflow("sales-total").expect("w").fix_count, 1);
    assert!(engine
        .decisions(10)
        .expect("decisions")
        .iter()
        .any(|d| d.kind == DecisionKind::FixRolledBack));
}
