//! The heal record tells the whole story: a logic failure's heal, contained when its repair
//! starts, is resolved by the fix's version once its re-run passes, and links the repair task
//! and the run. A nudge after an unusable reply is Healer's, not the person's. Events carry
//! what the UI needs as enums.

use healer::checkpoint::CheckpointTrigger;
use healer::events::Event;
use healer::heal::Outcome;
use healer::llm::MessageRole;
use healer::workflow::{RunStatus, Runtime, Version};
use serde_json::json;

use crate::maintainer::{bed, tool, BROKEN, FIXED};
use crate::model_server::{openai, TOKENS};
use crate::workflows::input;

#[tokio::test]
async fn a_logic_heal_is_resolved_by_the_version_whose_rerun_passed() {
    let bed = bed(false, true).await;
    let engine = &bed.engine;
    let w = engine
        .create_workflow(input("Sales total", Runtime::Python3, BROKEN))
        .expect("w");
    bed.server.script([
        tool("fix", json!({"code": FIXED, "comment": "Read totl"})),
        openai::text("Fixed.", TOKENS),
    ]);
    let mut events = engine.subscribe();
    let healed = engine.run_until_healed(w.id).await.expect("healed");
    assert_eq!(healed.last.status, RunStatus::Succeeded);
    let heals = engine.heals(10).expect("heals");
    assert_eq!(heals.len(), 1, "the green re-run needs no heal");
    let heal = &heals[0];
    assert_eq!(heal.outcome, Some(Outcome::Resolved));
    assert_eq!(heal.resolved_by, Some(Version { major: 1, minor: 1 }));
    assert_eq!(heal.resolved_run_id, Some(healed.last.id));
    assert_eq!(heal.task_id, Some(healed.fixes[0].task_id));
    assert_eq!(
        heal.summary,
        format!("Resolved by 1.1 (run {})", healed.last.id)
    );
    // The remedies it tried are kept: the maintainer contained it first.
    assert!(heal.remedies.iter().any(|r| r.remedy == "maintain"));
    let mut resolved = None;
    while let Ok(record) = events.try_recv() {
        if let Event::HealResolved {
            heal_id,
            version,
            run_id,
            task_id,
            ..
        } = record.event
        {
            resolved = Some((heal_id, version, run_id, task_id));
        }
    }
    assert_eq!(
        resolved,
        Some((
            heal.id,
            Version { major: 1, minor: 1 },
            healed.last.id,
            heal.task_id
        ))
    );
}

#[tokio::test]
async fn a_nudge_is_healers_and_leaves_the_planners_question_open() {
    let bed = bed(false, true).await;
    let engine = &bed.engine;
    let w = engine
        .create_workflow(input("Sales total", Runtime::Python3, BROKEN))
        .expect("w");
    bed.server.script([
        tool(
            "ask",
            json!({"question": "Which column holds the total now?"}),
        ),
        // Nothing usable: Healer nudges, and the model answers.
        openai::text("", TOKENS),
        openai::text("I asked which column to use.", TOKENS),
    ]);
    let chat = engine
        .replan_and_wait(w.id, "It broke, please fix it")
        .await
        .expect("turn");
    let roles: Vec<MessageRole> = chat.messages.iter().map(|m| m.role).collect();
    assert!(roles.contains(&MessageRole::Nudge), "{roles:?}");
    assert_eq!(
        roles.iter().filter(|r| **r == MessageRole::User).count(),
        1,
        "only the person's message is theirs: {roles:?}"
    );
    assert_eq!(
        chat.question.as_deref(),
        Some("Which column holds the total now?"),
        "the nudge is not the person's answer"
    );
    // The model was sent the nudge as a user turn.
    let third = bed.server.chats()[2].body["messages"].to_string();
    assert!(third.contains("no usable answer"), "{third}");
}

#[tokio::test]
async fn events_name_the_trigger_the_run_and_the_recovery_action_as_enums() {
    let bed = bed(false, true).await;
    let engine = &bed.engine;
    let w = engine
        .create_workflow(input(
            "Needs a program",
            Runtime::Python3,
            // A program the machine lacks (a missing module is installed, not asked about).
            "import subprocess, sys\nsys.exit(subprocess.run('healer-missing-tool-xyz', shell=True).returncode)\n",
        ))
        .expect("w");
    bed.server.script([openai::text(
        r#"{"action": "escalate", "reasoning": "the program is not installed"}"#,
        TOKENS,
    )]);
    let mut events = engine.subscribe();
    let healed = engine.run_until_healed(w.id).await.expect("healed");
    let pending = engine.checkpoints().expect("list").pending;
    let c = &pending[0];
    engine
        .decide_checkpoint(c.id, Some(3), None)
        .await
        .expect("decided");
    let mut seen = Vec::new();
    while let Ok(record) = events.try_recv() {
        let value = serde_json::to_value(&record.event).expect("json");
        match record.event {
            Event::RecoveryDecided { .. } | Event::CheckpointDecided { .. } => seen.push(value),
            _ => {}
        }
    }
    assert_eq!(seen[0]["action"], "escalate");
    assert_eq!(seen[1]["trigger"], json!(CheckpointTrigger::Hiccup));
    assert_eq!(seen[1]["run_id"], healed.first.run.id);
    assert_eq!(seen[1]["workflow_id"], w.id);
}
