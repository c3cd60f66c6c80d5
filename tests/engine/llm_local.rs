//! Model servers people run at home, as first-class providers: llama.cpp's real server with a
//! small model that follows no instruction (tests/engine/llama_server.rs), and a scripted
//! server for what a real one will not do on demand.

use healer::llm::{
    AgentRun, ChatMessage, KeySource, LoopSettings, ProviderInput, ProviderKind, StopReason, Tier,
    TierSetting, ToolSet,
};
use healer::steering::{answer_schema, parse_answer};
use healer::Engine;

use crate::llama_server::{LlamaServer, MODEL};
use crate::llm_fixtures::setup;
use crate::model_server::{openai, TOKENS};

/// An engine whose provider "home" is the server at `base_url`, named with no key; the cheap
/// tier maps to `model`.
async fn engine_with_home(base_url: &str, model: &str) -> (tempfile::TempDir, Engine) {
    let (tmp, paths) = crate::data_dir();
    let lease = healer::lease::Lease::acquire(&paths, "test").expect("lease");
    let options = healer::engine::EngineOptions {
        scheduler: false,
        keys: Some(healer::llm::Keys::env_only()),
        ..healer::engine::EngineOptions::default()
    };
    let engine = Engine::start_with_lease(paths, "test", lease, options)
        .await
        .expect("engine");
    engine
        .save_provider(ProviderInput {
            name: "home".to_string(),
            title: Some("Model at home".to_string()),
            kind: ProviderKind::OpenaiCompatible,
            base_url: Some(base_url.to_string()),
            key_env: None,
            prices: vec![],
        })
        .expect("a provider with no key is saved");
    engine
        .set_tier(TierSetting {
            tier: Tier::Cheap,
            provider: "home".to_string(),
            model: model.to_string(),
            budget_tokens: 2_000,
            temperature: None,
            minutes: None,
        })
        .expect("tier");
    (tmp, engine)
}

/// What the steering judge asks about a session going in circles, with its schema.
fn judge_run(engine: &Engine, question: &str) -> AgentRun {
    crate::llama_server::judge_run(engine, question, true)
}

/// The cheap tier (the judge's) on the scripted server's small model.
fn cheap_on_scripted(s: &crate::llm_fixtures::Setup) {
    s.engine
        .set_tier(TierSetting {
            tier: Tier::Cheap,
            provider: "scripted".to_string(),
            model: "scripted-small".to_string(),
            budget_tokens: 2_000,
            temperature: None,
            minutes: None,
        })
        .expect("tier");
}

const STUCK: &str = "Task: Fix the failing date parser\nAcceptance criteria:\n- cargo test passes\n\n\
Its worktree has no change yet since the task started.\n\n\
The agent has been working for 30 minutes. Its last 3 turns, oldest first:\n\n\
--- turn 1 ---\nRan cargo test: 1 failed (parse_date)\n\n--- turn 2 ---\nRan cargo test: 1 failed (parse_date)\n\n\
--- turn 3 ---\nRan cargo test: 1 failed (parse_date)\n";

#[tokio::test]
async fn a_llama_server_needs_no_key_and_lists_its_model() {
    let server = LlamaServer::start(2048);
    let (_tmp, engine) = engine_with_home(&server.base_url(), MODEL).await;
    let test = engine.test_provider("home").await.expect("tested");
    assert!(test.ok, "{:?}", test.error);
    assert_eq!(test.key, KeySource::NotNeeded);
    assert!(test.models.iter().any(|m| m == MODEL), "{:?}", test.models);
    engine.shutdown().await;
}

#[tokio::test]
async fn the_judges_answer_from_a_weak_local_model_passes_its_schema_when_the_server_enforces_it() {
    let server = LlamaServer::start(4096);
    let (_tmp, engine) = engine_with_home(&server.base_url(), MODEL).await;
    let outcome = engine
        .run_agent(judge_run(&engine, STUCK))
        .await
        .expect("the model answered");
    assert_eq!(outcome.stop, StopReason::Answered);
    let answer = outcome.answer.expect("an answer");
    // The prompt alone gets this model's rambling to its limit (see the benchmark); the
    // schema, enforced by the server's grammar, gets an answer Healer can use.
    let judged = parse_answer(&answer);
    assert!(judged.is_ok(), "{answer:?}: {judged:?}");
    assert!(
        outcome.usage.completion_tokens < u64::from(healer::llm::JUDGE_MAX_TOKENS),
        "it ended on its own, not at the limit: {:?}",
        outcome.usage
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn a_server_that_refuses_a_schema_is_asked_with_the_prompt_alone_once_and_from_then_on() {
    let s = setup(
        ProviderKind::OpenaiCompatible,
        "HEALER_TEST_KEY_NO_SCHEMA",
        "sk-no-schema",
    )
    .await;
    cheap_on_scripted(&s);
    s.server.refuse_answer_schema();
    let said = r#"{"action": "continue", "message": null}"#;
    s.server
        .script([openai::text(said, TOKENS), openai::text(said, TOKENS)]);
    for _ in 0..2 {
        let outcome = s
            .engine
            .run_agent(judge_run(&s.engine, STUCK))
            .await
            .expect("answered with the prompt alone");
        let answer = outcome.answer.expect("an answer");
        assert!(parse_answer(&answer).is_ok(), "{answer}");
    }
    let chats = s.server.chats();
    let with_schema: Vec<bool> = chats
        .iter()
        .map(|c| c.body.get("response_format").is_some())
        .collect();
    assert_eq!(
        with_schema,
        [true, false, false],
        "asked with the schema once, then without it, and remembered"
    );
    s.engine.shutdown().await;
}

#[tokio::test]
async fn a_schema_goes_to_the_server_and_one_tool_call_per_turn_to_a_server_at_home() {
    let s = setup(
        ProviderKind::OpenaiCompatible,
        "HEALER_TEST_KEY_SCHEMA_SENT",
        "sk-schema-sent",
    )
    .await;
    cheap_on_scripted(&s);
    s.server.script([openai::text(
        r#"{"action": "continue", "message": null}"#,
        TOKENS,
    )]);
    s.engine
        .run_agent(judge_run(&s.engine, STUCK))
        .await
        .expect("answered");
    let chat = s.server.chats().pop().expect("a chat");
    assert_eq!(chat.body["response_format"]["type"], "json_schema");
    assert_eq!(
        chat.body["response_format"]["json_schema"]["schema"],
        answer_schema()
    );
    // The scripted server is on 127.0.0.1: a server at home, where a weak model calls one
    // tool at a time. The fix request offers tools.
    s.server.script([openai::text("Done.", TOKENS)]);
    s.engine
        .run_agent(crate::llm_fixtures::fix_request(
            &s.engine,
            crate::llm_fixtures::file_tools(&s.work),
            Tier::Standard,
        ))
        .await
        .expect("answered");
    let chat = s.server.chats().pop().expect("a chat");
    assert_eq!(chat.body["parallel_tool_calls"], false);
    assert!(chat.body.get("response_format").is_none(), "a free answer");
    // Calls to a server at home are counted as such, in time.
    let today = s.engine.usage_today().expect("usage").total;
    assert_eq!(today.local_calls, today.calls, "{today:?}");
    assert_eq!(today.local_calls, 2, "{today:?}");
    s.engine.shutdown().await;
}

/// The fix request of the model tests, on the cheap tier (the server at home), with
/// `tools` and at most `steps` model calls.
fn home_fix(engine: &Engine, tools: ToolSet, steps: u32, text: &str) -> AgentRun {
    let mut run = crate::llm_fixtures::fix_request(engine, tools, Tier::Cheap);
    run.limits = Some(LoopSettings {
        max_steps: steps,
        max_duration_secs: 300,
        max_malformed_replies: 2,
    });
    run.temperature = Some(0.0);
    run.messages = vec![ChatMessage::User {
        text: text.to_string(),
    }];
    run
}

#[tokio::test]
async fn a_model_whose_template_cannot_call_tools_is_asked_for_steps_it_can_take() {
    // Gemma 3's chat template has no tool calling: asked natively, this model answers in
    // prose. Asked for each step as JSON of a schema the server enforces, every step it
    // takes is a call of an offered tool with arguments that pass the tool's schema, or the
    // answer.
    let server = LlamaServer::start(4096);
    let (tmp, engine) = engine_with_home(&server.base_url(), MODEL).await;
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&work).expect("work");
    std::fs::write(work.join("report.py"), "total = rows['totl']\n").expect("script");
    let outcome = engine
        .run_agent(home_fix(
            &engine,
            crate::llm_fixtures::file_tools(&work),
            3,
            "Call read_file with the path report.py.",
        ))
        .await
        .expect("the loop ran");
    assert_eq!(outcome.invalid_tool_calls, 0, "{outcome:?}");
    let thread = engine.task_thread(outcome.task_id).expect("thread");
    let calls: Vec<_> = thread
        .messages
        .iter()
        .flat_map(|m| m.tool_calls.iter())
        .collect();
    assert!(
        !calls.is_empty(),
        "a tool was called: {:?}",
        thread
            .messages
            .iter()
            .map(|m| &m.content)
            .collect::<Vec<_>>()
    );
    for call in calls {
        assert!(
            ["read_file", "edit_file"].contains(&call.name.as_str()),
            "{call:?}"
        );
    }
    engine.shutdown().await;
}

#[tokio::test]
async fn a_prompt_longer_than_the_servers_context_is_cut_to_fit_it() {
    // 1,024 tokens of context; a request of about 6,000 tokens of log.
    let server = LlamaServer::start(1024);
    let (_tmp, engine) = engine_with_home(&server.base_url(), MODEL).await;
    let log: String = (0..600)
        .map(|i| {
            format!(
                "2026-12-07T05:{:02}:{:02} worker {i}: retrying the upload\n",
                i / 60 % 60,
                i % 60
            )
        })
        .collect();
    let outcome = engine
        .run_agent(home_fix(
            &engine,
            ToolSet::empty(),
            1,
            &format!("The job failed. Its log:\n{log}\nSay in one sentence what went wrong."),
        ))
        .await
        .expect("answered, not refused for its size");
    assert_eq!(outcome.stop, StopReason::Answered, "{outcome:?}");
    assert!(outcome.usage.prompt_tokens <= 1024, "{:?}", outcome.usage);
    engine.shutdown().await;
}

#[tokio::test]
async fn a_repair_by_a_weak_local_model_ends_cleanly_with_the_notice_and_re_plan() {
    // The maintainer on the real server: whatever this small model makes of the failure, the
    // repair ends within its bounds. Either it gives up, and the person gets the
    // maintenance-failed notice with Re-plan and an explanation of a readable length (the
    // thread keeps the rest), or its edit passed the syntax check and became 1.1, which ran
    // (seen on CI: an edit that ran and failed again, which the next repair takes up).
    crate::pyenv_guard::guard();
    let server = LlamaServer::start(4096);
    let (_tmp, engine) = engine_with_home(&server.base_url(), MODEL).await;
    let w = engine
        .create_workflow(crate::workflows::input(
            "Sales total",
            healer::workflow::Runtime::Python3,
            crate::maintainer::BROKEN,
        ))
        .expect("create");
    let started = std::time::Instant::now();
    let healed = engine.run_until_healed(w.id).await.expect("healed or not");
    let took = started.elapsed();
    assert_eq!(healed.fixes.len(), 1, "one repair task");
    let fix = &healed.fixes[0];
    if fix.status == healer::maintainer::AutoFixStatus::Fixed {
        assert_ne!(healed.last.id, healed.first.run.id, "the new version ran");
        assert_eq!(healed.last.version.to_string(), "1.1");
        return engine.shutdown().await;
    }
    assert_eq!(
        fix.status,
        healer::maintainer::AutoFixStatus::GaveUp,
        "{fix:?}"
    );
    assert!(fix.summary.chars().count() <= 1_600, "{}", fix.summary);
    let list = engine.notifications().expect("notifications");
    let failed = list
        .items
        .iter()
        .find(|n| n.kind == healer::notification::NotificationKind::MaintenanceFailed)
        .expect("a maintenance_failed notification");
    assert!(failed
        .actions
        .contains(&healer::notification::NotificationAction::Replan));
    // The loop's own bound is 10 minutes; this model's steps end far sooner.
    assert!(took < std::time::Duration::from_secs(600), "{took:?}");
    engine.shutdown().await;
}

/// `healer provider detect-llama-cpp` where `HEALER_LLAMA_CPP_URL` says, as JSON.
fn detect_llama_cpp(url: &str) -> serde_json::Value {
    let (_tmp, paths) = crate::data_dir();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_healer"))
        .env("HEALER_DATA_DIR", paths.data_dir())
        .env("HEALER_LLAMA_CPP_URL", url)
        .env_remove("HEALER_LOG")
        .args(["provider", "detect-llama-cpp", "--json"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("healer runs");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {} {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[tokio::test]
async fn llama_cpp_is_found_where_it_listens_by_what_it_says_not_by_its_port() {
    let server = LlamaServer::start(2048);
    let found = detect_llama_cpp(&format!("http://127.0.0.1:{}", server.port));
    assert_eq!(found["running"], true, "{found}");
    assert!(
        found["models"]
            .as_array()
            .is_some_and(|m| m.iter().any(|m| m == MODEL)),
        "{found}"
    );

    // Another server on the port (here an OpenAI-compatible one that is not llama.cpp) is not
    // taken for it, and an empty port says so.
    let other = crate::model_server::ModelServer::start(None);
    let not_it = detect_llama_cpp(&other.url);
    assert_eq!(not_it["running"], false, "{not_it}");
    assert!(
        not_it["detail"]
            .as_str()
            .is_some_and(|d| d.contains("answers, but not as llama.cpp's server")),
        "{not_it}"
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("a port")
        .local_addr()
        .expect("addr")
        .port();
    let nothing = detect_llama_cpp(&format!("http://127.0.0.1:{port}"));
    assert_eq!(nothing["running"], false, "{nothing}");
    assert!(
        nothing["detail"]
            .as_str()
            .is_some_and(|d| d.contains("no llama.cpp server at")),
        "{nothing}"
    );
}
