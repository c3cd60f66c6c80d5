//! A provider that misbehaves (a scripted server): an answer far past what was asked for is
//! cut where the model's allowance ends and counted by what arrived, not by what the server
//! claims; an answer sent as one huge document is refused, not stored.

use healer::llm::{ProviderKind, StopReason, Tier, ToolSet};
use serde_json::json;

use crate::llm_fixtures::{fix_request, setup};
use crate::model_server::{Reply, Tokens};

/// 20 MB of prose in 20 events, the usage claiming 1,020 tokens.
fn flood() -> Reply {
    let megabyte = "The fix is to read the file again. ".repeat(30_000);
    let mut events = vec![format!(
        "data: {}\n\n",
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]})
    )];
    for _ in 0..20 {
        events.push(format!(
            "data: {}\n\n",
            json!({"choices": [{"index": 0, "delta": {"content": megabyte}}]})
        ));
    }
    events.push(format!(
        "data: {}\n\n",
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
               "usage": {"prompt_tokens": 100, "completion_tokens": 1020}})
    ));
    events.push("data: [DONE]\n\n".to_string());
    Reply::Stream(events)
}

#[tokio::test]
async fn a_flood_of_text_is_cut_at_what_the_model_may_write_and_counted_by_what_arrived() {
    let s = setup(
        ProviderKind::OpenaiCompatible,
        "HEALER_TEST_KEY_FLOOD",
        "sk-flood",
    )
    .await;
    s.server.script([flood()]);
    let before = std::fs::metadata(s.paths.db())
        .map(|m| m.len())
        .unwrap_or(0);
    let outcome = s
        .engine
        .run_agent(fix_request(&s.engine, ToolSet::empty(), Tier::Standard))
        .await
        .expect("an answer, cut");
    assert_eq!(outcome.stop, StopReason::Answered);
    let answer = outcome.answer.expect("the text that fitted");
    // At most 16 bytes of each token asked for are read (the tier allows 10,000).
    assert!(answer.len() <= 160_000, "{} bytes kept", answer.len());
    assert!(answer.len() >= 50_000, "{} bytes kept", answer.len());
    assert!(
        outcome.usage.completion_tokens >= answer.len() as u64 / 8,
        "what arrived is counted, not the 1,020 claimed: {:?}",
        outcome.usage
    );
    let thread = s.engine.task_thread(outcome.task_id).expect("thread");
    let stored: usize = thread.messages.iter().map(|m| m.content.len()).sum();
    assert!(stored < 400_000, "{stored} bytes in the thread");
    let after = std::fs::metadata(s.paths.db())
        .map(|m| m.len())
        .unwrap_or(0);
    assert!(
        after.saturating_sub(before) < 5_000_000,
        "the database grew by {} bytes",
        after.saturating_sub(before)
    );
    s.engine.shutdown().await;
}

#[tokio::test]
async fn an_answer_sent_whole_and_huge_is_refused_as_unreadable_not_stored() {
    let s = setup(
        ProviderKind::OpenaiCompatible,
        "HEALER_TEST_KEY_HUGE_JSON",
        "sk-huge-json",
    )
    .await;
    let huge = "x".repeat(12 << 20);
    let reply = || {
        crate::model_server::openai::whole_text(
            &huge,
            Tokens {
                prompt: 10,
                completion: 5,
                cached: 0,
            },
        )
    };
    s.server.script([reply(), reply(), reply()]);
    let outcome = s
        .engine
        .run_agent(fix_request(&s.engine, ToolSet::empty(), Tier::Standard))
        .await
        .expect("the loop ends on its own bound");
    // The provider's doing, not the model's: a repair waits for such a provider.
    assert_eq!(outcome.stop, StopReason::UnreadableReplies);
    assert!(outcome.answer.is_none());
    // Answered, though unreadably: what each call read counts against the caps.
    let today = s.engine.usage_today().expect("usage").total;
    assert_eq!(today.calls, 3, "{today:?}");
    assert!(today.prompt_tokens > 0, "{today:?}");
    let thread = s.engine.task_thread(outcome.task_id).expect("thread");
    let stored: usize = thread.messages.iter().map(|m| m.content.len()).sum();
    assert!(stored < 100_000, "{stored} bytes in the thread");
    s.engine.shutdown().await;
}

/// At the shipped read timeout (two minutes): a server that starts an answer and then sends
/// nothing more "stopped answering"; it is not "cannot reach", which sends a person to check
/// an address that works.
#[tokio::test]
async fn a_server_that_goes_quiet_mid_answer_stopped_answering_after_two_minutes() {
    let s = setup(
        ProviderKind::OpenaiCompatible,
        "HEALER_TEST_KEY_QUIET",
        "sk-quiet",
    )
    .await;
    s.server
        .script([crate::model_server::openai::halts("The key is", true)]);
    let started = std::time::Instant::now();
    let error = s
        .engine
        .run_agent(fix_request(&s.engine, ToolSet::empty(), Tier::Standard))
        .await
        .expect_err("the provider stopped answering");
    let waited = started.elapsed();
    let said = error.to_string();
    assert!(
        said.contains("stopped answering (nothing came for 120 s)"),
        "{said}"
    );
    assert!(!said.contains("cannot reach"), "{said}");
    assert!(
        matches!(
            error,
            healer::Error::Llm(ref e) if e.is_outage()
        ),
        "a repair waits for such a provider: {error:?}"
    );
    assert!(
        waited >= std::time::Duration::from_secs(120)
            && waited < std::time::Duration::from_secs(170),
        "{waited:?}"
    );
    s.engine.shutdown().await;
}

/// An error answered with 20 MB of body: 64 KB of it are read, the rest hung up on, and the
/// person reads one line.
#[tokio::test]
async fn an_error_body_of_megabytes_is_read_up_to_64_kb_and_said_in_a_line() {
    let s = setup(
        ProviderKind::OpenaiCompatible,
        "HEALER_TEST_KEY_ERROR_FLOOD",
        "sk-error-flood",
    )
    .await;
    let body = format!(
        "{{\"error\": {{\"message\": \"bad request {}\"}}}}",
        "x".repeat(20 << 20)
    );
    s.server.script([Reply::Status {
        status: 400,
        headers: vec![],
        body,
    }]);
    let error = s
        .engine
        .run_agent(fix_request(&s.engine, ToolSet::empty(), Tier::Standard))
        .await
        .expect_err("refused");
    let said = error.to_string();
    assert!(said.contains("refused the request (HTTP 400"), "{said}");
    assert!(said.len() < 1_000, "{} bytes said", said.len());
    // The client hangs up on the rest (its connection task runs on this runtime: wait
    // asynchronously).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while s.server.hung_up() == 0 && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(s.server.hung_up(), 1, "20 MB were read whole");
    s.engine.shutdown().await;
}

/// A log long enough to need cutting on a server of 1,024 tokens.
fn long_request(engine: &healer::Engine) -> healer::llm::AgentRun {
    let mut run = fix_request(engine, ToolSet::empty(), Tier::Standard);
    let log: String = (0..600)
        .map(|i| format!("worker {i}: retrying the upload after a timeout\n"))
        .collect();
    run.messages = vec![healer::llm::ChatMessage::User {
        text: format!("The job failed. Its log:\n{log}"),
    }];
    run
}

/// What a server says about its context is believed within bounds: a description past 2 MB is
/// not read, a context under 256 tokens is a mistake (or a trap to cut every prompt to
/// nothing); within them, the prompt is cut to fit.
#[tokio::test]
async fn a_servers_context_is_believed_only_from_a_description_within_bounds() {
    let props = |n_ctx: u64, pad: usize| {
        Reply::Json(json!({
            "default_generation_settings": {"n_ctx": n_ctx},
            "chat_template_caps": {"supports_tool_calls": true},
            "pad": "x".repeat(pad),
        }))
    };
    for (case, (reply, cut)) in [
        (props(1024, 0), true),
        (props(1024, 3 << 20), false),
        (props(100, 0), false),
    ]
    .into_iter()
    .enumerate()
    {
        let s = setup(
            ProviderKind::OpenaiCompatible,
            "HEALER_TEST_KEY_FACTS",
            "sk-facts",
        )
        .await;
        s.server.set_props(reply);
        s.server.script([crate::model_server::openai::text(
            "Done.",
            crate::model_server::TOKENS,
        )]);
        s.engine
            .run_agent(long_request(&s.engine))
            .await
            .expect("answered");
        let sent = s.server.chats().pop().expect("a chat").body.to_string();
        assert_eq!(
            sent.contains("to fit the model's context]"),
            cut,
            "case {case}: {} bytes sent",
            sent.len()
        );
        s.engine.shutdown().await;
    }
}

/// A tool name or call id of a kilobyte is kept at 256 bytes.
#[tokio::test]
async fn a_tool_name_or_id_past_256_bytes_is_cut() {
    let s = setup(
        ProviderKind::OpenaiCompatible,
        "HEALER_TEST_KEY_LONG_NAME",
        "sk-long-name",
    )
    .await;
    let name = "read_file_".repeat(100);
    let id = "call_".repeat(200);
    let reply = || {
        crate::model_server::openai::tool_calls(
            &[(id.as_str(), name.as_str(), "{}")],
            crate::model_server::TOKENS,
        )
    };
    s.server.script([reply(), reply(), reply()]);
    let outcome = s
        .engine
        .run_agent(fix_request(&s.engine, ToolSet::empty(), Tier::Standard))
        .await
        .expect("ends on its own bound");
    let thread = s.engine.task_thread(outcome.task_id).expect("thread");
    let calls: Vec<_> = thread
        .messages
        .iter()
        .flat_map(|m| m.tool_calls.iter())
        .collect();
    assert!(!calls.is_empty());
    for call in calls {
        assert!(call.name.len() <= 256, "{} bytes of name", call.name.len());
        assert!(call.id.len() <= 256, "{} bytes of id", call.id.len());
    }
    s.engine.shutdown().await;
}
