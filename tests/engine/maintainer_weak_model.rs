//! A weak or slow model ends its repair cleanly: nothing usable is remembered, so the next
//! repair of the workflow asks the next tier's model rather than the same one again, or says
//! there is none; a model that answers too slowly is stopped at its tier's time budget with a
//! sentence saying how fast it wrote.

use healer::llm::{Tier, TierSetting};
use healer::maintainer::AutoFixStatus;
use healer::notification::NotificationKind;
use healer::workflow::Runtime;

use crate::maintainer::{bed, BROKEN};
use crate::model_server::{openai, TOKENS};
use crate::workflows::input;

fn tier(tier: Tier, model: &str, minutes: Option<u32>) -> TierSetting {
    TierSetting {
        tier,
        provider: "scripted".to_string(),
        model: model.to_string(),
        budget_tokens: 20_000,
        temperature: None,
        minutes,
    }
}

/// Three replies with nothing in them: no tool, no answer.
fn nothing() -> Vec<crate::model_server::Reply> {
    vec![openai::text("", TOKENS); 3]
}

#[tokio::test]
async fn a_model_that_gave_nothing_usable_is_not_asked_again_the_next_tier_is() {
    let bed = bed(false, true).await;
    let engine = &bed.engine;
    engine
        .set_tier(tier(Tier::Standard, "scripted-large", None))
        .expect("tier");
    let w = engine
        .create_workflow(input("Sales total", Runtime::Python3, BROKEN))
        .expect("create");
    bed.server.script(nothing());
    engine.run_until_healed(w.id).await.expect("healed");
    let fixes = engine.autofixes(w.id).expect("fixes");
    assert_eq!(fixes[0].status, AutoFixStatus::GaveUp);
    assert!(
        fixes[0].summary.contains("found no fix"),
        "{}",
        fixes[0].summary
    );
    let asked: Vec<String> = bed
        .server
        .chats()
        .iter()
        .map(|c| c.body["model"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(asked, ["scripted-small"; 3]);

    // Try auto-fix again starts at the first tier, whose model gave nothing: the next one is
    // asked instead.
    bed.server.clear_replies();
    bed.server.script(nothing());
    engine.retry_autofix(w.id).await.expect("again");
    engine.work_inbox(w.id).await.expect("work");
    let asked: Vec<String> = bed.server.chats()[3..]
        .iter()
        .map(|c| c.body["model"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        asked, ["scripted-large"; 3],
        "no second attempt on the same model"
    );

    // Both gave nothing: the third time no model is asked, and the person is told why.
    bed.server.clear_replies();
    let before = bed.server.chats().len();
    engine.retry_autofix(w.id).await.expect("again");
    engine.work_inbox(w.id).await.expect("work");
    assert_eq!(bed.server.chats().len(), before, "no model was asked");
    let fixes = engine.autofixes(w.id).expect("fixes");
    assert_eq!(fixes[0].status, AutoFixStatus::GaveUp);
    assert!(
        fixes[0]
            .summary
            .starts_with("Not tried again: scripted-small (scripted) gave nothing usable"),
        "{}",
        fixes[0].summary
    );
    let told = engine.notifications().expect("notifications").items;
    assert!(told
        .iter()
        .any(|n| n.kind == NotificationKind::MaintenanceFailed
            && n.body.contains("Set a stronger model")));
    engine.shutdown().await;
}

#[tokio::test]
async fn a_model_too_slow_for_its_tier_is_stopped_at_its_time_budget_with_its_speed() {
    let bed = bed(false, true).await;
    let engine = &bed.engine;
    // A person gave the cheap tier, a model at home, one minute an attempt.
    engine
        .set_tier(tier(Tier::Cheap, "scripted-small", Some(1)))
        .expect("tier");
    let w = engine
        .create_workflow(input("Sales total", Runtime::Python3, BROKEN))
        .expect("create");
    // It begins to answer, then writes nothing more for longer than the budget.
    bed.server.script([openai::halts(
        "Let me think about the data. The key total is",
        true,
    )]);
    let started = std::time::Instant::now();
    engine.run_until_healed(w.id).await.expect("healed");
    let took = started.elapsed();
    assert!(
        took >= std::time::Duration::from_secs(60) && took < std::time::Duration::from_secs(100),
        "{took:?}"
    );
    let fixes = engine.autofixes(w.id).expect("fixes");
    assert_eq!(fixes[0].status, AutoFixStatus::GaveUp);
    let summary = &fixes[0].summary;
    assert!(
        summary.starts_with("The local model answers too slowly for a repair (0."),
        "{summary}"
    );
    assert!(
        summary.contains(" tokens/s); Healer stopped after 1 minute."),
        "{summary}"
    );
    // A model at home costs time: the minute it was waited for is counted as such.
    let today = engine.usage_today().expect("usage").total;
    assert_eq!(today.local_calls, 1, "{today:?}");
    assert!((59..=70).contains(&today.local_secs), "{today:?}");
    engine.shutdown().await;
}
