//! The tier budget at its shipped defaults: it counts what the model writes in one attempt, so a
//! typical repair (eval, fix, a closing sentence) of a 150-line script with 400 lines of logs
//! completes on the cheap tier's 5,000; a model that keeps writing stops there. The scripted
//! server reports usage measured from each request and reply. The repair's temperature and
//! system prompt (the maintainer as specified) are checked on the same requests.

use healer::llm::{ProviderKind, StopReason, Tier, TierSetting};
use healer::workflow::{RunStatus, Runtime};
use serde_json::json;

use crate::llm_fixtures::{fix_request, setup};
use crate::maintainer::{bed, tool};
use crate::model_server::{openai, TOKENS};
use crate::typical_repair::scripts;
use crate::workflows::input;

#[tokio::test]
async fn a_typical_repair_completes_on_the_cheap_tiers_default_budget() {
    let bed = bed(false, true).await;
    let engine = &bed.engine;
    let budget = Tier::Cheap.default_budget();
    assert_eq!(budget, 5_000);
    engine
        .set_tier(TierSetting {
            tier: Tier::Cheap,
            provider: "scripted".to_string(),
            model: "scripted-small".to_string(),
            budget_tokens: budget,
            temperature: None,
            minutes: None,
        })
        .expect("cheap at its default budget");
    let (broken, fixed) = scripts();
    assert_eq!(broken.lines().count(), 150);
    let w = engine
        .create_workflow(input("Daily sales report", Runtime::Python3, &broken))
        .expect("workflow");
    bed.server.script([
        tool("eval", json!({"code": fixed})),
        tool(
            "fix",
            json!({"code": fixed, "comment": "The export calls the figure amount now"}),
        ),
        openai::text("The export renamed total to amount.", TOKENS),
    ]);
    let healed = engine.run_until_healed(w.id).await.expect("healed");
    assert_eq!(
        healed.last.status,
        RunStatus::Succeeded,
        "{}",
        healed.outcome
    );
    let chats = bed.server.chats();
    assert_eq!(chats.len(), 3, "eval, fix and the closing sentence");
    let reported = bed.server.reported();
    assert!(
        reported.prompt > u64::from(budget),
        "what the model read ({}) is more than the budget, and does not count toward it",
        reported.prompt
    );
    assert!(reported.completion < u64::from(budget));
    let fix = &healed.fixes[0];
    assert_eq!(
        fix.tokens,
        reported.total(),
        "the task's usage is the server's"
    );

    // The maintainer as specified: a repair's temperature, its rules, and the time.
    for chat in &chats {
        assert_eq!(chat.body["temperature"], json!(0.1));
        assert_eq!(chat.body["model"], "scripted-small");
    }
    let system = chats[0].body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        system.contains("Do not change the script's output format"),
        "{system}"
    );
    assert!(system.contains("Do not weaken error handling"), "{system}");
    let year = chrono::Local::now().format("%Y").to_string();
    assert!(
        system.contains("The current time is") && system.contains(&year),
        "{system}"
    );
}

#[tokio::test]
async fn a_tier_with_its_own_temperature_sends_it() {
    let bed = bed(false, true).await;
    let engine = &bed.engine;
    engine
        .set_tier(TierSetting {
            tier: Tier::Cheap,
            provider: "scripted".to_string(),
            model: "scripted-small".to_string(),
            budget_tokens: 5_000,
            temperature: Some(0.3),
            minutes: None,
        })
        .expect("tier");
    assert_eq!(
        engine.tiers().expect("tiers")[0]
            .setting
            .as_ref()
            .and_then(|s| s.temperature),
        Some(0.3)
    );
    let w = engine
        .create_workflow(input(
            "Sales total",
            Runtime::Python3,
            crate::maintainer::BROKEN,
        ))
        .expect("workflow");
    bed.server
        .script([openai::text("No fix: the data has no total.", TOKENS)]);
    engine.run_until_healed(w.id).await.expect("healed");
    assert_eq!(bed.server.chats()[0].body["temperature"], json!(0.3));
    let refused = engine.set_tier(TierSetting {
        tier: Tier::Cheap,
        provider: "scripted".to_string(),
        model: "scripted-small".to_string(),
        budget_tokens: 5_000,
        temperature: Some(7.0),
        minutes: None,
    });
    assert!(refused
        .expect_err("out of range")
        .to_string()
        .contains("between 0 and 2"));
}

#[tokio::test]
async fn a_model_that_keeps_writing_stops_at_the_default_budget() {
    let s = setup(
        ProviderKind::OpenaiCompatible,
        "HEALER_TEST_KEY_WRITES_ON",
        "sk-writes-on",
    )
    .await;
    s.engine
        .set_tier(TierSetting {
            tier: Tier::Cheap,
            provider: "scripted".to_string(),
            model: "scripted-small".to_string(),
            budget_tokens: Tier::Cheap.default_budget(),
            temperature: None,
            minutes: None,
        })
        .expect("cheap at its default budget");
    // Each reply writes about 2,000 tokens: a call with 8,000 characters of arguments.
    let args = json!({ "path": "report-".repeat(1_143) }).to_string();
    s.server
        .script((0..5).map(|_| openai::tool_calls(&[("call_1", "read_file", &args)], TOKENS)));
    let outcome = s
        .engine
        .run_agent(fix_request(
            &s.engine,
            crate::llm_fixtures::file_tools(&s.work),
            Tier::Cheap,
        ))
        .await
        .expect("the loop stops on its own");
    assert_eq!(outcome.stop, StopReason::TokenLimit);
    let chats = s.server.chats();
    assert_eq!(
        chats.len(),
        3,
        "2,000 + 2,000 written leave room for one more"
    );
    // Each call may write what is left of the budget (within the per-call cap).
    assert_eq!(chats[0].body["max_tokens"], 4_096);
    let written: u64 = chats[..2]
        .iter()
        .filter_map(|c| c.reported)
        .map(|t| t.completion)
        .sum();
    assert_eq!(chats[2].body["max_tokens"], json!(5_000 - written));
    assert_eq!(
        outcome.usage.completion_tokens,
        s.server.reported().completion
    );
}
