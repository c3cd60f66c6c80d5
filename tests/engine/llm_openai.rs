//! The agent loop against a scripted OpenAI-compatible server: the real client, streaming,
//! tool calls, retries and refusals.

use std::time::Duration;

use healer::llm::{MessageRole, ProviderKind, StopReason, TaskStatus, Tier, ToolSet};
use healer::{ErrorCode, Event};
use serde_json::Value;

use crate::llm_fixtures::{file_tools, fix_request, setup};
use crate::model_server::{openai, TOKENS};

const EDIT: &str = r#"{"path": "report.py", "old": "rows['totl']", "new": "rows['total']"}"#;

#[tokio::test]
async fn a_maintainer_reads_and_edits_the_script_through_tools_and_finishes() {
    let s = setup(
        ProviderKind::OpenaiCompatible,
        "HEALER_TEST_KEY_OPENAI_STORY",
        "sk-story-1",
    )
    .await;
    s.server.script([
        openai::tool_calls(
            &[("call_1", "read_file", r#"{"path": "report.py"}"#)],
            TOKENS,
        ),
        openai::tool_calls(&[("call_2", "edit_file", EDIT)], TOKENS),
        openai::text("Fixed the key: 'totl' is now 'total'.", TOKENS),
    ]);
    let mut bus = s.engine.subscribe();
    let mut live = s.engine.subscribe_thread_text();

    let run = fix_request(&s.engine, file_tools(&s.work), Tier::Standard);
    let task_id = run.task_id;
    let outcome = s.engine.run_agent(run).await.expect("the loop finishes");

    assert_eq!(outcome.stop, StopReason::Answered);
    assert_eq!(
        outcome.answer.as_deref(),
        Some("Fixed the key: 'totl' is now 'total'.")
    );
    assert_eq!(outcome.steps, 3);
    assert_eq!(outcome.invalid_tool_calls, 0);
    // The usage is what the server reported, measured from each request and reply.
    let reported = s.server.reported();
    assert_eq!(outcome.usage.total(), reported.total());
    assert_eq!(outcome.usage.cached_tokens, 3 * TOKENS.cached);
    let chats = s.server.chats();
    assert!(
        chats[2].reported.map(|t| t.prompt) > chats[0].reported.map(|t| t.prompt),
        "a longer conversation costs more prompt tokens"
    );
    assert_eq!(
        std::fs::read_to_string(s.work.join("report.py")).expect("script"),
        "total = rows['total']\nprint(total)\n",
        "the tool really edited the file"
    );

    // The thread holds every step, in order.
    let thread = s.engine.task_thread(task_id).expect("thread");
    assert_eq!(thread.task.status, TaskStatus::Finished);
    let roles: Vec<_> = thread.messages.iter().map(|m| m.role).collect();
    use MessageRole::*;
    assert_eq!(
        roles,
        [System, User, Assistant, Tool, Assistant, Tool, Assistant]
    );
    assert_eq!(thread.messages[2].tool_calls[0].name, "read_file");
    assert_eq!(thread.messages[3].tool_call_id.as_deref(), Some("call_1"));
    assert!(thread.messages[3].content.contains("rows['totl']"));
    assert_eq!(
        thread.messages[6].usage.map(|u| u.prompt_tokens),
        chats[2].reported.map(|t| t.prompt)
    );
    assert_eq!(thread.messages[6].model.as_deref(), Some("scripted-large"));

    // Usage is stored for the task and for today.
    let today = s.engine.usage_today().expect("usage");
    assert_eq!(today.total.calls, 3);
    assert_eq!(today.total.tokens(), outcome.usage.total());
    assert_eq!(today.by_tier[0].tier, Tier::Standard);

    // Every step was published, and the text streamed as it came.
    let mut kinds = Vec::new();
    while let Ok(record) = bus.try_recv() {
        kinds.push(record.event.kind());
    }
    assert_eq!(
        kinds.iter().filter(|k| **k == "task_message_added").count(),
        7
    );
    assert_eq!(kinds.last(), Some(&"task_finished"));
    let mut streamed = String::new();
    while let Ok(piece) = live.try_recv() {
        assert_eq!(piece.task_id, task_id);
        streamed.push_str(&piece.text);
    }
    assert_eq!(streamed, "Fixed the key: 'totl' is now 'total'.");

    // The server got real OpenAI requests: streamed with usage, tools offered, results sent back.
    let chats = s.server.chats();
    assert_eq!(chats.len(), 3);
    assert_eq!(chats[0].path, "/v1/chat/completions");
    assert_eq!(chats[0].header("authorization"), Some("Bearer sk-story-1"));
    let body = &chats[2].body;
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true);
    assert_eq!(body["model"], "scripted-large");
    assert_eq!(body["tools"][1]["function"]["name"], "edit_file");
    let messages = body["messages"].as_array().expect("messages");
    assert_eq!(messages[0]["role"], "system");
    assert_eq!(messages[2]["tool_calls"][0]["id"], "call_1");
    assert_eq!(messages[3]["role"], "tool");
    assert_eq!(messages[3]["tool_call_id"], "call_1");
    assert_eq!(messages[5]["content"], "edited");
    assert!(body["max_tokens"].as_u64().unwrap_or(0) > 0);

    // The thread exports as an ATIF trajectory.
    let atif: Value =
        serde_json::from_str(&s.engine.export_atif(task_id).expect("atif")).expect("json");
    assert_eq!(atif["schema_version"], "ATIF-v1.7");
    assert_eq!(atif["agent"]["name"], "healer");
    assert_eq!(atif["agent"]["model_name"], "scripted-large");
    let steps = atif["steps"].as_array().expect("steps");
    let sources: Vec<_> = steps
        .iter()
        .map(|s| s["source"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(sources, ["system", "user", "agent", "agent", "agent"]);
    for (i, step) in steps.iter().enumerate() {
        assert_eq!(step["step_id"], i + 1);
    }
    assert_eq!(steps[3]["tool_calls"][0]["function_name"], "edit_file");
    assert_eq!(
        steps[3]["tool_calls"][0]["arguments"]["new"],
        "rows['total']"
    );
    assert_eq!(
        steps[3]["observation"]["results"][0]["source_call_id"],
        "call_2"
    );
    assert_eq!(steps[3]["observation"]["results"][0]["content"], "edited");
    assert_eq!(steps[4]["metrics"]["cached_tokens"], TOKENS.cached);
    assert_eq!(
        atif["final_metrics"]["total_prompt_tokens"],
        s.server.reported().prompt
    );
    assert_eq!(atif["final_metrics"]["total_steps"], 5);
    s.engine.shutdown().await;
}

#[tokio::test]
async fn invalid_tool_arguments_go_back_to_the_model_as_a_tool_error_and_are_counted() {
    let s = setup(
        ProviderKind::OpenaiCompatible,
        "HEALER_TEST_KEY_OPENAI_INVALID",
        "sk-invalid-1",
    )
    .await;
    s.server.script([
        // "new" is missing and "path" is a number: the schema refuses it, nothing runs.
        openai::tool_calls(
            &[("call_1", "edit_file", r#"{"path": 3, "old": "totl"}"#)],
            TOKENS,
        ),
        openai::tool_calls(&[("call_2", "edit_file", EDIT)], TOKENS),
        openai::text("Fixed.", TOKENS),
    ]);
    let run = fix_request(&s.engine, file_tools(&s.work), Tier::Standard);
    let task_id = run.task_id;
    let outcome = s.engine.run_agent(run).await.expect("the loop finishes");

    assert_eq!(outcome.stop, StopReason::Answered);
    assert_eq!(outcome.invalid_tool_calls, 1);
    assert_eq!(
        outcome.malformed_replies, 1,
        "a reply with only refused calls is unusable"
    );
    let thread = s.engine.task_thread(task_id).expect("thread");
    let refused = &thread.messages[3];
    assert!(refused.is_error);
    assert!(
        refused.content.contains("do not match its schema"),
        "{}",
        refused.content
    );
    assert!(
        refused.content.contains("new"),
        "names what is missing: {}",
        refused.content
    );
    // The model was told, in the next request.
    let second = &s.server.chats()[1].body;
    assert_eq!(second["messages"][3]["tool_call_id"], "call_1");
    assert!(second["messages"][3]["content"]
        .as_str()
        .unwrap_or_default()
        .starts_with("error: "));
    assert!(std::fs::read_to_string(s.work.join("report.py"))
        .expect("script")
        .contains("rows['total']"));
    s.engine.shutdown().await;
}

#[tokio::test]
async fn three_unusable_replies_in_a_row_end_the_loop_with_a_typed_reason() {
    let s = setup(
        ProviderKind::OpenaiCompatible,
        "HEALER_TEST_KEY_OPENAI_MALFORMED",
        "sk-malformed-1",
    )
    .await;
    s.server.script([
        openai::tool_calls(&[("c1", "delete_everything", "{}")], TOKENS),
        openai::tool_calls(&[("c2", "edit_file", "{path: report.py")], TOKENS),
        openai::text("", TOKENS),
        openai::text("never asked for", TOKENS),
    ]);
    let run = fix_request(&s.engine, file_tools(&s.work), Tier::Standard);
    let task_id = run.task_id;
    let outcome = s
        .engine
        .run_agent(run)
        .await
        .expect("a bound is not an error");

    assert_eq!(outcome.stop, StopReason::MalformedReplies);
    assert_eq!(outcome.malformed_replies, 3);
    assert_eq!(outcome.invalid_tool_calls, 2);
    assert_eq!(s.server.chats().len(), 3);
    let task = s.engine.task_thread(task_id).expect("thread").task;
    assert_eq!(task.status, TaskStatus::Stopped);
    assert!(
        task.summary.contains("malformed replies"),
        "{}",
        task.summary
    );
    s.engine.shutdown().await;
}

#[tokio::test]
async fn a_429_is_retried_after_the_wait_retry_after_asks_for() {
    let s = setup(
        ProviderKind::OpenaiCompatible,
        "HEALER_TEST_KEY_OPENAI_429",
        "sk-429-1",
    )
    .await;
    s.server.script([
        openai::error(429, "Rate limit reached", &[("retry-after", "1")]),
        openai::text("All good.", TOKENS),
    ]);
    let run = fix_request(&s.engine, ToolSet::empty(), Tier::Standard);
    let outcome = s.engine.run_agent(run).await.expect("the retry succeeds");

    assert_eq!(outcome.answer.as_deref(), Some("All good."));
    let chats = s.server.chats();
    assert_eq!(chats.len(), 2);
    let waited = chats[1].at.duration_since(chats[0].at);
    assert!(
        waited >= Duration::from_millis(950),
        "waited {waited:?}, Retry-After asked for 1 s"
    );
    assert!(waited < Duration::from_secs(5), "waited {waited:?}");
    s.engine.shutdown().await;
}

#[tokio::test]
async fn a_401_is_not_retried_and_the_task_fails_with_a_typed_error() {
    let s = setup(
        ProviderKind::OpenaiCompatible,
        "HEALER_TEST_KEY_OPENAI_401",
        "sk-right-401",
    )
    .await;
    std::env::set_var("HEALER_TEST_KEY_OPENAI_401", "sk-wrong-401-secret");
    s.server.script([openai::text("never reached", TOKENS)]);
    let run = fix_request(&s.engine, ToolSet::empty(), Tier::Standard);
    let task_id = run.task_id;
    let error = s
        .engine
        .run_agent(run)
        .await
        .expect_err("the key is refused");

    assert_eq!(error.code(), ErrorCode::ModelAuth);
    let message = error.to_string();
    assert!(message.contains("scripted refused the key"), "{message}");
    assert!(
        !message.contains("sk-wrong-401-secret"),
        "the echoed key is scrubbed: {message}"
    );
    assert_eq!(s.server.chats().len(), 1, "no retry on 401");
    let task = s.engine.task_thread(task_id).expect("thread").task;
    assert_eq!(task.status, TaskStatus::Failed);
    assert!(!task.summary.contains("sk-wrong-401-secret"));
    let finished = s
        .engine
        .events(None, 5)
        .expect("events")
        .into_iter()
        .find_map(|r| match r.event {
            Event::TaskFinished { summary, .. } => Some(summary),
            _ => None,
        })
        .expect("task_finished");
    assert!(finished.contains("refused the key"));
    s.engine.shutdown().await;
}

#[tokio::test]
async fn a_server_that_answers_with_one_json_document_is_read_too() {
    let s = setup(
        ProviderKind::OpenaiCompatible,
        "HEALER_TEST_KEY_OPENAI_WHOLE",
        "sk-whole-1",
    )
    .await;
    s.server
        .script([openai::whole_text("Done in one piece.", TOKENS)]);
    let outcome = s
        .engine
        .run_agent(fix_request(&s.engine, ToolSet::empty(), Tier::Standard))
        .await
        .expect("answered");
    assert_eq!(outcome.answer.as_deref(), Some("Done in one piece."));
    assert_eq!(outcome.usage.prompt_tokens, s.server.reported().prompt);
    assert_eq!(
        outcome.usage.completion_tokens,
        "Done in one piece.".len().div_ceil(4) as u64
    );
    assert_eq!(outcome.usage.cached_tokens, TOKENS.cached);
    s.engine.shutdown().await;
}

#[tokio::test]
async fn a_model_that_keeps_calling_tools_stops_at_the_step_limit() {
    let s = setup(
        ProviderKind::OpenaiCompatible,
        "HEALER_TEST_KEY_OPENAI_STEPS",
        "sk-steps-1",
    )
    .await;
    s.server.script((0..5).map(|i| {
        openai::tool_calls(
            &[(&format!("c{i}"), "read_file", r#"{"path": "report.py"}"#)],
            TOKENS,
        )
    }));
    let mut run = fix_request(&s.engine, file_tools(&s.work), Tier::Standard);
    run.limits = Some(healer::llm::LoopSettings {
        max_steps: 3,
        ..healer::llm::LoopSettings::default()
    });
    let outcome = s
        .engine
        .run_agent(run)
        .await
        .expect("a bound is not an error");
    assert_eq!(outcome.stop, StopReason::StepLimit);
    assert_eq!(outcome.steps, 3);
    assert_eq!(s.server.unused_replies(), 2);
    s.engine.shutdown().await;
}
