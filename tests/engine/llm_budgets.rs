//! Tiers, caps and the errors a caller turns into a message for the person.

use healer::llm::{
    BudgetCap, Budgets, Keys, Llm, LlmError, ProviderInput, ProviderKind, StopReason, Tier,
    TierSetting, ToolSet,
};
use healer::{Error, ErrorCode};

use crate::data_dir;
use crate::llm_fixtures::{fix_request, setup};
use crate::model_server::{openai, ModelServer, TOKENS};

#[tokio::test]
async fn the_daily_cap_refuses_a_call_before_it_reaches_the_server() {
    let s = setup(
        ProviderKind::OpenaiCompatible,
        "HEALER_TEST_KEY_DAY_CAP",
        "sk-day-cap",
    )
    .await;
    s.server.script([
        openai::text("First answer.", TOKENS),
        openai::text("Second answer.", TOKENS),
    ]);
    let first = s
        .engine
        .run_agent(fix_request(&s.engine, ToolSet::empty(), Tier::Standard))
        .await
        .expect("the first call fits");
    assert_eq!(first.stop, StopReason::Answered);
    // Today's cap leaves 50 tokens beyond what the first call used: too few for another.
    let used = s.server.reported().total();
    s.engine
        .set_llm_budgets(Budgets {
            per_day_tokens: used + 50,
            ..Budgets::default()
        })
        .expect("budgets");

    let error = s
        .engine
        .run_agent(fix_request(&s.engine, ToolSet::empty(), Tier::Standard))
        .await
        .expect_err("the cap refuses the second");
    assert_eq!(error.code(), ErrorCode::BudgetExceeded);
    assert!(matches!(
        error,
        Error::Llm(LlmError::BudgetExceeded {
            cap: BudgetCap::DayTokens,
            ..
        })
    ));
    let message = error.to_string();
    assert!(
        message.starts_with("budget exceeded: the daily token cap"),
        "{message}"
    );
    assert!(message.contains("was not made"), "{message}");
    assert_eq!(s.server.chats().len(), 1, "no request reached the server");
    assert_eq!(s.server.unused_replies(), 1);
    s.engine.shutdown().await;
}

#[tokio::test]
async fn a_missing_tier_falls_back_to_the_nearest_and_says_so() {
    let s = setup(
        ProviderKind::OpenaiCompatible,
        "HEALER_TEST_KEY_FALLBACK",
        "sk-fallback",
    )
    .await;
    s.server
        .script([openai::text("Deep thoughts, cheaply.", TOKENS)]);
    // Only standard is mapped; deep is asked for.
    let tiers = s.engine.tiers().expect("tiers");
    let deep = tiers.iter().find(|t| t.tier == Tier::Deep).expect("deep");
    assert!(deep.setting.is_none());
    assert_eq!(deep.default_budget, 20_000);
    let note = deep
        .resolves_to
        .as_ref()
        .and_then(|c| c.fallback.clone())
        .expect("it says what it falls back to");
    assert_eq!(
        note,
        "the deep tier is not configured; using the standard tier (scripted / scripted-large)"
    );

    let run = fix_request(&s.engine, ToolSet::empty(), Tier::Deep);
    let task_id = run.task_id;
    let outcome = s.engine.run_agent(run).await.expect("answered");
    assert_eq!(outcome.choice.requested, Tier::Deep);
    assert_eq!(outcome.choice.used, Tier::Standard);
    assert_eq!(outcome.choice.fallback.as_deref(), Some(note.as_str()));
    let summary = s.engine.task_thread(task_id).expect("thread").task.summary;
    assert!(
        summary.contains("the deep tier is not configured"),
        "{summary}"
    );
    let today = s.engine.usage_today().expect("usage");
    assert_eq!(
        today.by_tier[0].tier,
        Tier::Standard,
        "usage counts the tier used"
    );
    s.engine.shutdown().await;
}

#[tokio::test]
async fn with_no_model_configured_the_error_is_typed_and_says_what_to_do() {
    let s = setup(
        ProviderKind::OpenaiCompatible,
        "HEALER_TEST_KEY_NO_MODEL",
        "sk-no-model",
    )
    .await;
    s.engine.clear_tier(Tier::Standard).expect("unmap");
    let error = s
        .engine
        .run_agent(fix_request(&s.engine, ToolSet::empty(), Tier::Cheap))
        .await
        .expect_err("nothing to call");
    assert_eq!(error.code(), ErrorCode::NoModelConfigured);
    // Said as the window says it; the CLI adds the commands (tests/engine/cli.rs).
    assert!(error.to_string().contains("Settings → Models"), "{error}");
    assert!(!error.to_string().contains("healer tier set"), "{error}");
    assert!(s.server.seen().is_empty());
    s.engine.shutdown().await;
}

#[tokio::test]
async fn a_provider_without_a_key_is_refused_before_any_request() {
    let s = setup(
        ProviderKind::OpenaiCompatible,
        "HEALER_TEST_KEY_MISSING",
        "sk-missing",
    )
    .await;
    std::env::remove_var("HEALER_TEST_KEY_MISSING");
    let error = s
        .engine
        .run_agent(fix_request(&s.engine, ToolSet::empty(), Tier::Standard))
        .await
        .expect_err("no key");
    assert_eq!(error.code(), ErrorCode::MissingKey);
    assert!(
        error.to_string().contains("HEALER_TEST_KEY_MISSING"),
        "{error}"
    );
    assert!(s.server.seen().is_empty());
    s.engine.shutdown().await;
}

#[tokio::test]
async fn ollama_is_found_with_its_models_and_needs_no_key() {
    let (_tmp, paths) = data_dir();
    let store = healer::store::Store::open(&paths.db()).expect("store");
    let server = ModelServer::start(None);
    server.set_models(&["llama3.2:3b", "qwen2.5-coder:7b"]);
    let llm = Llm::with(
        store.clone(),
        healer::events::Bus::new(store.clone()),
        Keys::env_only(),
        server.url.clone(),
    );
    let found = llm.detect_ollama().await.expect("detect");
    assert!(found.running);
    assert_eq!(found.models, ["llama3.2:3b", "qwen2.5-coder:7b"]);
    assert_eq!(llm.ollama_status().await.expect("status"), found);

    // Add it, map a tier: a call goes to its /v1 with no key at all.
    llm.save_provider(&ProviderInput {
        name: "local".to_string(),
        title: None,
        kind: ProviderKind::Ollama,
        base_url: Some(server.url.clone()),
        key_env: None,
        prices: vec![],
    })
    .expect("provider");
    let views = llm.providers().await.expect("views");
    assert_eq!(views[0].key, healer::llm::KeySource::NotNeeded);
    let test = llm.test_provider("local").await.expect("test");
    assert!(test.ok);
    assert_eq!(test.models.len(), 2);
    llm.set_tier(&TierSetting {
        tier: Tier::Cheap,
        provider: "local".to_string(),
        model: "llama3.2:3b".to_string(),
        budget_tokens: 5_000,
        temperature: None,
        minutes: None,
    })
    .expect("tier");
    server.script([openai::text("Local answer.", TOKENS)]);
    let task = llm
        .start_task(healer::llm::TaskKind::Analyzer, "Classify", None)
        .expect("task");
    let outcome = llm
        .run_agent(healer::llm::AgentRun {
            task_id: task.id,
            tier: Tier::Cheap,
            system: String::new(),
            history: Vec::new(),
            messages: vec![healer::llm::ChatMessage::User {
                text: "hello".to_string(),
            }],
            tools: ToolSet::empty(),
            limits: None,
            max_tokens: None,
            task_tokens: None,
            inbox: None,
            temperature: None,
            choice: None,
            answer_schema: None,
        })
        .await
        .expect("answered");
    assert_eq!(outcome.answer.as_deref(), Some("Local answer."));
    let chat = &server.chats()[0];
    assert_eq!(chat.path, "/v1/chat/completions");
    assert_eq!(chat.header("authorization"), None);
    // What the model's context is was asked of Ollama first, once.
    let shown: Vec<_> = server
        .seen()
        .into_iter()
        .filter(|s| s.path == "/api/show")
        .collect();
    assert_eq!(shown.len(), 1);
    assert_eq!(shown[0].body["model"], "llama3.2:3b");

    // Nothing listening: a plain "not running", at once.
    drop(server);
    let gone = Llm::with(
        store.clone(),
        healer::events::Bus::new(store),
        Keys::env_only(),
        "http://127.0.0.1:9".to_string(),
    )
    .detect_ollama()
    .await
    .expect("detect");
    assert!(!gone.running);
    assert!(gone.detail.unwrap_or_default().contains("no Ollama at"));
}

/// Caps that contradict each other are refused with why: a task cap below one call's would stop
/// every task at its first call.
#[tokio::test]
async fn caps_that_contradict_each_other_are_refused_with_why() {
    let s = setup(
        ProviderKind::OpenaiCompatible,
        "HEALER_TEST_KEY_CAPS",
        "sk-caps",
    )
    .await;
    let defaults = healer::llm::Budgets::default();
    s.engine
        .set_llm_budgets(defaults.clone())
        .expect("the shipped caps agree");
    let refused = s
        .engine
        .set_llm_budgets(healer::llm::Budgets {
            per_task_tokens: 1_000,
            ..defaults
        })
        .expect_err("below one call");
    assert_eq!(refused.code(), ErrorCode::InvalidInput);
    assert!(
        refused
            .to_string()
            .contains("less than one call may write (4096)"),
        "{refused}"
    );
    s.engine.shutdown().await;
}
