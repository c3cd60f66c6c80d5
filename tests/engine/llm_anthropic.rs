//! The agent loop against a scripted Anthropic Messages server: tool use streamed in pieces,
//! usage from message_start and message_delta, and the request in Anthropic's shape.

use healer::llm::{ProviderKind, StopReason, Tier, ToolSet};

use crate::llm_fixtures::{file_tools, fix_request, setup};
use crate::model_server::{anthropic, openai, TOKENS};

#[tokio::test]
async fn an_anthropic_model_edits_through_a_tool_and_finishes() {
    let s = setup(
        ProviderKind::Anthropic,
        "HEALER_TEST_KEY_ANTHROPIC_STORY",
        "sk-ant-story",
    )
    .await;
    s.server.script([
        anthropic::tool_calls(
            "I'll fix the key.",
            &[(
                "toolu_1",
                "edit_file",
                r#"{"path": "report.py", "old": "rows['totl']", "new": "rows['total']"}"#,
            )],
            TOKENS,
        ),
        anthropic::text("The key is fixed.", TOKENS),
    ]);
    let mut live = s.engine.subscribe_thread_text();
    let run = fix_request(&s.engine, file_tools(&s.work), Tier::Standard);
    let task_id = run.task_id;
    let outcome = s.engine.run_agent(run).await.expect("the loop finishes");

    assert_eq!(outcome.stop, StopReason::Answered);
    assert_eq!(outcome.answer.as_deref(), Some("The key is fixed."));
    assert!(std::fs::read_to_string(s.work.join("report.py"))
        .expect("script")
        .contains("rows['total']"));
    // Anthropic counts cache reads apart from input; Healer's prompt tokens include them.
    let reported = s.server.reported();
    assert_eq!(outcome.usage.prompt_tokens, reported.prompt);
    assert_eq!(outcome.usage.cached_tokens, 2 * TOKENS.cached);
    assert_eq!(outcome.usage.completion_tokens, reported.completion);

    let thread = s.engine.task_thread(task_id).expect("thread");
    assert_eq!(thread.messages[2].content, "I'll fix the key.");
    assert_eq!(thread.messages[2].tool_calls[0].id, "toolu_1");

    let mut streamed = String::new();
    while let Ok(piece) = live.try_recv() {
        streamed.push_str(&piece.text);
    }
    assert_eq!(streamed, "I'll fix the key.The key is fixed.");

    let chats = s.server.chats();
    assert_eq!(chats.len(), 2);
    assert_eq!(chats[0].path, "/v1/messages");
    assert_eq!(chats[0].header("x-api-key"), Some("sk-ant-story"));
    assert_eq!(chats[0].header("anthropic-version"), Some("2023-06-01"));
    let body = &chats[1].body;
    assert_eq!(body["stream"], true);
    assert!(body["system"]
        .as_str()
        .unwrap_or_default()
        .contains("You repair scripts"));
    assert_eq!(body["tools"][1]["input_schema"]["required"][0], "path");
    let messages = body["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 3, "user, assistant, user (tool result)");
    assert_eq!(messages[1]["content"][1]["type"], "tool_use");
    assert_eq!(messages[1]["content"][1]["input"]["new"], "rows['total']");
    assert_eq!(messages[2]["role"], "user");
    assert_eq!(messages[2]["content"][0]["type"], "tool_result");
    assert_eq!(messages[2]["content"][0]["tool_use_id"], "toolu_1");
    assert_eq!(messages[2]["content"][0]["is_error"], false);
    s.engine.shutdown().await;
}

#[tokio::test]
async fn an_overloaded_anthropic_server_is_retried_with_backoff() {
    let s = setup(
        ProviderKind::Anthropic,
        "HEALER_TEST_KEY_ANTHROPIC_529",
        "sk-ant-529",
    )
    .await;
    s.server.script([
        openai::error(529, "Overloaded", &[]),
        anthropic::text("Back again.", TOKENS),
    ]);
    let outcome = s
        .engine
        .run_agent(fix_request(&s.engine, ToolSet::empty(), Tier::Standard))
        .await
        .expect("the retry succeeds");
    assert_eq!(outcome.answer.as_deref(), Some("Back again."));
    assert_eq!(s.server.chats().len(), 2);
    s.engine.shutdown().await;
}
