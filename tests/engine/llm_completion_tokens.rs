//! `max_tokens` or `max_completion_tokens`: OpenAI's reasoning models refuse the first, older
//! OpenAI-compatible servers know only it. Against the scripted server answering as OpenAI does.

use healer::llm::{ProviderKind, Tier, TierSetting, ToolSet};

use crate::llm_fixtures::{fix_request, setup};
use crate::model_server::{openai, TOKENS};

fn use_model(s: &crate::llm_fixtures::Setup, model: &str) {
    s.engine
        .set_tier(TierSetting {
            tier: Tier::Standard,
            provider: "scripted".to_string(),
            model: model.to_string(),
            budget_tokens: 10_000,
            temperature: None,
            minutes: None,
        })
        .expect("tier");
}

#[tokio::test]
async fn a_model_that_refuses_max_tokens_is_asked_again_once_and_remembered() {
    let s = setup(
        ProviderKind::OpenaiCompatible,
        "HEALER_TEST_KEY_OPENAI_LIMIT_LEARN",
        "sk-limit-learn",
    )
    .await;
    use_model(&s, "scripted-reasoner");
    s.server.refuse_max_tokens("scripted-reasoner");
    s.server.script([
        openai::text("First answer.", TOKENS),
        openai::text("Second answer.", TOKENS),
    ]);

    let first = s
        .engine
        .run_agent(fix_request(&s.engine, ToolSet::empty(), Tier::Standard))
        .await
        .expect("answered after the second ask");
    assert_eq!(first.answer.as_deref(), Some("First answer."));
    let second = s
        .engine
        .run_agent(fix_request(&s.engine, ToolSet::empty(), Tier::Standard))
        .await
        .expect("answered");
    assert_eq!(second.answer.as_deref(), Some("Second answer."));

    let chats = s.server.chats();
    let caps: Vec<(bool, bool)> = chats
        .iter()
        .map(|c| {
            (
                c.body.get("max_tokens").is_some(),
                c.body.get("max_completion_tokens").is_some(),
            )
        })
        .collect();
    assert_eq!(
        caps,
        [(true, false), (false, true), (false, true)],
        "refused once, asked again with the new name, then asked with it straight away"
    );
    assert_eq!(
        chats[1].body["max_completion_tokens"], chats[0].body["max_tokens"],
        "the same cap under its other name"
    );
    let usage = s.engine.usage_today().expect("usage");
    assert_eq!(usage.total.calls, 2, "the refused request cost nothing");
    s.engine.shutdown().await;
}

#[tokio::test]
async fn openai_reasoning_models_get_max_completion_tokens_from_the_start() {
    let s = setup(
        ProviderKind::OpenaiCompatible,
        "HEALER_TEST_KEY_OPENAI_LIMIT_FAMILY",
        "sk-limit-family",
    )
    .await;
    use_model(&s, "gpt-5-mini");
    s.server.refuse_max_tokens("gpt-5-mini");
    s.server.script([openai::text("Answered.", TOKENS)]);
    let outcome = s
        .engine
        .run_agent(fix_request(&s.engine, ToolSet::empty(), Tier::Standard))
        .await
        .expect("answered");
    assert_eq!(outcome.answer.as_deref(), Some("Answered."));
    let chats = s.server.chats();
    assert_eq!(chats.len(), 1, "no refusal to recover from");
    assert!(chats[0].body.get("max_tokens").is_none());
    assert!(chats[0].body["max_completion_tokens"].as_u64().unwrap_or(0) > 0);
    s.engine.shutdown().await;
}

#[tokio::test]
async fn another_refusal_is_not_retried_under_the_other_name() {
    let s = setup(
        ProviderKind::OpenaiCompatible,
        "HEALER_TEST_KEY_OPENAI_LIMIT_OTHER",
        "sk-limit-other",
    )
    .await;
    s.server
        .script([openai::error(400, "Invalid value for 'temperature'", &[])]);
    let error = s
        .engine
        .run_agent(fix_request(&s.engine, ToolSet::empty(), Tier::Standard))
        .await
        .expect_err("refused");
    assert_eq!(error.code(), healer::ErrorCode::ModelRejected);
    assert_eq!(s.server.chats().len(), 1);
    s.engine.shutdown().await;
}
