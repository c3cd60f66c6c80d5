//! The real Claude Code CLI (2.1.328) driven by its adapter, offline: the scripted server
//! answers its Anthropic Messages requests, in real temp git repositories.

use std::time::Duration;

use healer::agent::claude_code::{transcript, ClaudeCode, DEFAULT_ALLOWED_TOOLS};
use healer::agent::{Agent, AgentUpdate, SessionSpec};
use healer::session::{SessionStatus, StepKind, StepSource, StepUsage};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::agent_fixtures::{
    claude, outline, run, run_with, script, step_usage, workspace, Workspace,
};
use crate::model_server::{anthropic, ModelServer, TOKENS};

const KEY: &str = "test-key-claude";

fn spec(ws: &Workspace, server: &ModelServer, prompt: &str) -> SessionSpec {
    let mut spec = ws.spec(
        claude(),
        prompt,
        &[
            ("ANTHROPIC_BASE_URL", server.url.clone()),
            ("ANTHROPIC_API_KEY", KEY.to_string()),
            // Claude Code's default is 10 retries over about 3 minutes.
            ("CLAUDE_CODE_MAX_RETRIES", "0".to_string()),
        ],
    );
    spec.allowed_tools = DEFAULT_ALLOWED_TOOLS.map(str::to_string).to_vec();
    spec
}

fn call(id: &str, tool: &str, input: serde_json::Value) -> (String, String, String) {
    (id.to_string(), tool.to_string(), input.to_string())
}

fn tool_reply(said: &str, calls: &[(String, String, String)]) -> crate::model_server::Reply {
    let calls: Vec<(&str, &str, &str)> = calls
        .iter()
        .map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str()))
        .collect();
    anthropic::tool_calls(said, &calls, TOKENS)
}

#[tokio::test]
async fn claude_code_runs_bash_and_edits_a_file_its_steps_arrive_in_order_and_its_transcript_is_found(
) {
    let ws = workspace();
    let server = ModelServer::start(Some(KEY));
    let hello = ws.repo.join("hello.txt");
    server.script([
        tool_reply(
            "I'll start with a file.",
            &[call(
                "toolu_1",
                "Bash",
                json!({"command": "echo hi > a.txt && cat a.txt"}),
            )],
        ),
        tool_reply(
            "",
            &[call(
                "toolu_2",
                "Edit",
                json!({"file_path": hello, "old_string": "line two", "new_string": "line TWO"}),
            )],
        ),
        anthropic::text("All done: a.txt written, hello.txt edited.", TOKENS),
    ]);

    let ran = run(
        &ClaudeCode::new(None),
        spec(&ws, &server, "Write a.txt, fix hello.txt"),
    )
    .await;

    assert_eq!(ran.end.status, SessionStatus::Finished, "{:?}", ran.end);
    assert_eq!(
        ran.end.summary,
        "All done: a.txt written, hello.txt edited."
    );
    assert_eq!(ran.end.exit_code, Some(0));
    assert_eq!(ws.read("a.txt"), "hi\n");
    assert_eq!(ws.read("hello.txt"), "line one\nline TWO\nline three\n");

    assert!(matches!(ran.updates.first(), Some(AgentUpdate::Step(_))));
    assert!(matches!(
        ran.updates.get(1),
        Some(AgentUpdate::Process { .. })
    ));
    let (session_id, transcript_path) = ran.started().expect("Started");
    assert_eq!(
        ran.end.agent_session_id.as_deref(),
        Some(session_id.as_str())
    );
    let steps = ran.steps();
    assert_eq!(
        ran.outline(),
        vec![
            (
                StepKind::Text,
                None,
                "Write a.txt, fix hello.txt".to_string()
            ),
            (StepKind::Text, None, "I'll start with a file.".to_string()),
            (StepKind::ToolCall, Some("Bash".to_string()), String::new()),
            (StepKind::ToolResult, None, "hi".to_string()),
            (StepKind::ToolCall, Some("Edit".to_string()), String::new()),
            (StepKind::ToolResult, None, steps[5].text.trim().to_string()),
            (
                StepKind::Text,
                None,
                "All done: a.txt written, hello.txt edited.".to_string()
            ),
        ]
    );
    assert_eq!(steps[0].source, StepSource::User);
    assert_eq!(steps[1].source, StepSource::Agent);
    assert_eq!(steps[2].call_id.as_deref(), Some("toolu_1"));
    assert_eq!(steps[3].call_id.as_deref(), Some("toolu_1"));
    assert!(!steps[3].is_error && !steps[5].is_error);
    assert!(steps[2]
        .arguments
        .as_deref()
        .is_some_and(|a| a.contains("echo hi > a.txt")));
    // Each of the three model calls is counted once, on its last step, with its final usage.
    let usage: Vec<StepUsage> = steps.iter().filter_map(|s| s.usage).collect();
    let reported: Vec<StepUsage> = server
        .turn_usage()
        .iter()
        .map(|t| step_usage(&[*t]))
        .collect();
    assert_eq!(reported.len(), 3);
    assert_eq!(usage, reported);
    assert!(steps[2].usage.is_some() && steps[4].usage.is_some() && steps[6].usage.is_some());

    // The transcript is where the adapter said, and reads back into the same steps.
    let path = transcript_path.expect("a transcript path");
    assert!(path.starts_with(ws.home.join(".claude/projects")));
    let text = std::fs::read_to_string(&path).expect("the transcript exists");
    let (from_file, skipped) = transcript::read(&text);
    assert_eq!(skipped, 0);
    assert_eq!(outline(&from_file), ran.outline());
    let file_usage: Vec<StepUsage> = from_file.iter().filter_map(|s| s.usage).collect();
    assert_eq!(file_usage, reported);
    // Told apart from the other kinds of record; a line cut short by a crash is skipped.
    std::fs::write(&path, format!("{text}{{\"type\":\"assistant\",\"mess")).expect("cut");
    let read = healer::agent::transcript::read_file(&path).expect("readable");
    assert_eq!(
        read.kind,
        healer::agent::transcript::TranscriptKind::ClaudeCode
    );
    assert_eq!(read.steps, from_file);
    assert_eq!(read.skipped_lines, 1);

    let chats = server.chats();
    assert_eq!(chats.len(), 3);
    assert!(chats[0].path.starts_with("/v1/messages"));
    assert_eq!(chats[0].header("x-api-key"), Some(KEY));
    assert!(ws.leftovers().is_empty());
}

#[tokio::test]
async fn a_resumed_claude_code_session_continues_with_its_history() {
    let ws = workspace();
    let server = ModelServer::start(Some(KEY));
    server.script([
        tool_reply(
            "",
            &[call(
                "toolu_a",
                "Bash",
                json!({"command": "echo one > one.txt"}),
            )],
        ),
        anthropic::text("FIRST-ANSWER", TOKENS),
        anthropic::text("SECOND-ANSWER", TOKENS),
    ]);
    let first = run(&ClaudeCode::new(None), spec(&ws, &server, "MARKER-ONE")).await;
    assert_eq!(first.end.status, SessionStatus::Finished, "{:?}", first.end);
    let (id, transcript_path) = first.started().expect("Started");

    let mut again = spec(&ws, &server, "MARKER-TWO");
    again.resume = Some(id.clone());
    let second = run(&ClaudeCode::new(None), again).await;

    assert_eq!(
        second.end.status,
        SessionStatus::Finished,
        "{:?}",
        second.end
    );
    assert_eq!(second.end.summary, "SECOND-ANSWER");
    assert_eq!(second.started().map(|s| s.0), Some(id));
    assert_eq!(second.started().and_then(|s| s.1), transcript_path);
    // The request after the resume carries the whole first session, then the new message.
    let last = server.chats().pop().expect("a request");
    let messages = last.body["messages"].to_string();
    for earlier in ["MARKER-ONE", "toolu_a", "FIRST-ANSWER", "MARKER-TWO"] {
        assert!(
            messages.contains(earlier),
            "{earlier} missing from {messages}"
        );
    }
    assert!(messages.find("MARKER-ONE") < messages.find("MARKER-TWO"));
}

#[tokio::test]
async fn a_server_error_fails_the_session_quickly_with_the_api_error() {
    let ws = workspace();
    let server = ModelServer::start(Some(KEY));
    server.script([anthropic::error(500, "scripted outage")]);

    let ran = run(&ClaudeCode::new(None), spec(&ws, &server, "hello")).await;

    assert_eq!(ran.end.status, SessionStatus::Failed);
    assert!(
        ran.end
            .summary
            .starts_with("Claude Code stopped with an error (api error): API Error: 500"),
        "{}",
        ran.end.summary
    );
    assert!(ran.end.agent_session_id.is_some());
    assert!(ran.took < Duration::from_secs(20), "took {:?}", ran.took);
    assert_eq!(server.chats().len(), 1);
}

#[tokio::test]
async fn garbage_from_the_model_server_fails_the_session() {
    let ws = workspace();
    let server = ModelServer::start(Some(KEY));
    // Claude Code answers a broken stream with one request that does not stream; the script
    // has nothing left for it (the server answers 500).
    server.script([anthropic::garbage()]);

    let ran = run(&ClaudeCode::new(None), spec(&ws, &server, "hello")).await;

    assert_eq!(ran.end.status, SessionStatus::Failed);
    assert!(ran.end.summary.contains("API Error"), "{}", ran.end.summary);
    assert_eq!(server.chats().len(), 2);
}

#[tokio::test]
async fn a_program_printing_garbage_or_exiting_at_once_or_missing_fails_clearly() {
    let ws = workspace();
    let server = ModelServer::start(Some(KEY));
    let agent = ClaudeCode::new(None);

    let mut garbage = spec(&ws, &server, "hello");
    garbage.program = Some(script(&ws, "garbage", "echo 'Welcome!'\necho '<html>'"));
    let ran = run(&agent, garbage).await;
    assert_eq!(ran.end.status, SessionStatus::Failed);
    assert_eq!(
        ran.end.summary,
        "Claude Code exited (code 0) without saying how its session went; its output was not \
         its JSON stream (2 unreadable lines, the first: \"Welcome!\")."
    );

    // A stream that is nothing but garbage is given up on, long before the time limit.
    let mut flood = spec(&ws, &server, "hello");
    flood.program = Some(script(&ws, "flood", "yes 'not json'"));
    let ran = run(&agent, flood).await;
    assert_eq!(ran.end.status, SessionStatus::Failed);
    assert!(
        ran.end.summary.contains("so Healer stopped it"),
        "{}",
        ran.end.summary
    );
    assert!(ran.took < Duration::from_secs(10), "took {:?}", ran.took);

    let mut at_once = spec(&ws, &server, "hello");
    at_once.program = Some(script(
        &ws,
        "at-once",
        "echo 'claude: cannot start' >&2\nexit 3",
    ));
    let ran = run(&agent, at_once).await;
    assert_eq!(ran.end.status, SessionStatus::Failed);
    assert_eq!(ran.end.exit_code, Some(3));
    assert_eq!(
        ran.end.summary,
        "Claude Code exited (code 3) without saying how its session went: claude: cannot start."
    );

    // The real CLI, asked to resume a session it never had, ends at once.
    let mut unknown = spec(&ws, &server, "hello");
    unknown.resume = Some("99999999-2222-4333-8444-555555555555".to_string());
    let ran = run(&agent, unknown).await;
    assert_eq!(ran.end.status, SessionStatus::Failed);
    assert!(
        ran.end.summary.contains("No conversation found"),
        "{}",
        ran.end.summary
    );

    let mut missing = spec(&ws, &server, "hello");
    missing.program = Some(ws.dir.path().join("no-such-claude"));
    let ran = run(&agent, missing).await;
    assert_eq!(ran.end.status, SessionStatus::Failed);
    assert!(
        ran.end
            .summary
            .starts_with("Claude Code is not installed at "),
        "{}",
        ran.end.summary
    );
    assert!(server.chats().is_empty());
}

/// Script a Bash `sleep` and wait, in the session, until it runs.
fn sleeping(ws: &Workspace, server: &ModelServer) -> SessionSpec {
    server.script([tool_reply(
        "Waiting.",
        // Claude Code refuses `sleep` ("use run_in_background"): a slow command instead.
        &[call(
            "toolu_s",
            "Bash",
            json!({"command": "python3 -c 'import time; time.sleep(30)'"}),
        )],
    )]);
    spec(ws, server, "wait")
}

fn sleep_is_running(ws: &Workspace) -> bool {
    ws.leftovers()
        .iter()
        .any(|(_, cmd)| cmd.contains("time.sleep(30)") && !cmd.contains("eval"))
}

#[tokio::test]
async fn stop_mid_run_ends_claude_code_and_its_tool_leaving_no_process() {
    let ws = workspace();
    let server = ModelServer::start(Some(KEY));
    let spec = sleeping(&ws, &server);
    let mut saw_sleep = false;
    let ran = run_with(
        &ClaudeCode::new(None),
        spec,
        CancellationToken::new(),
        |update, cancel| {
            if matches!(update, AgentUpdate::Step(s) if s.kind == StepKind::ToolCall) {
                crate::model_server::eventually("sleep starts", Duration::from_secs(10), || {
                    sleep_is_running(&ws)
                });
                saw_sleep = true;
                cancel.cancel();
            }
        },
    )
    .await;

    assert!(saw_sleep);
    assert_eq!(ran.end.status, SessionStatus::Stopped);
    assert!(ran.end.agent_session_id.is_some());
    assert!(ws.leftovers().is_empty(), "left: {:?}", ws.leftovers());
}

#[tokio::test]
async fn the_time_limit_ends_claude_code_and_its_tool() {
    let ws = workspace();
    let server = ModelServer::start(Some(KEY));
    let mut spec = sleeping(&ws, &server);
    spec.time_limit = Duration::from_secs(3);

    let ran = run(&ClaudeCode::new(None), spec).await;

    assert_eq!(ran.end.status, SessionStatus::TimedOut);
    assert!(
        ran.end.summary.contains("time limit of 3 s"),
        "{}",
        ran.end.summary
    );
    assert!(ran.took < Duration::from_secs(10), "took {:?}", ran.took);
    assert!(ws.leftovers().is_empty(), "left: {:?}", ws.leftovers());
}

#[tokio::test]
async fn claude_code_is_detected_with_its_version_and_the_npm_wrapper_gives_way_to_the_binary() {
    let wrapper = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/agents/node_modules/.bin/claude");
    let found = ClaudeCode::new(Some(wrapper))
        .installed()
        .await
        .expect("installed");
    assert_eq!(found.version, "2.1.328 (Claude Code)");
    assert_eq!(
        std::fs::canonicalize(&found.program).expect("real"),
        std::fs::canonicalize(claude()).expect("real")
    );
    let missing = ClaudeCode::new(Some("/nonexistent/claude".into()));
    assert_eq!(missing.installed().await, None);
}

#[tokio::test]
async fn a_retried_api_error_shows_as_a_notice_and_the_session_goes_on() {
    let ws = workspace();
    let server = ModelServer::start(Some(KEY));
    server.script([
        anthropic::error(500, "scripted outage"),
        anthropic::text("Recovered.", TOKENS),
    ]);
    let mut spec = spec(&ws, &server, "hello");
    spec.env
        .push(("CLAUDE_CODE_MAX_RETRIES".to_string(), "1".to_string()));

    let ran = run(&ClaudeCode::new(None), spec).await;

    assert_eq!(ran.end.status, SessionStatus::Finished, "{:?}", ran.end);
    assert_eq!(ran.end.summary, "Recovered.");
    let notices: Vec<String> = ran
        .steps()
        .into_iter()
        .filter(|s| s.source == StepSource::System)
        .map(|s| s.text)
        .collect();
    assert_eq!(
        notices,
        vec!["The model's API failed (500 server_error); Claude Code retries (attempt 1 of 1)."]
    );
    assert_eq!(server.chats().len(), 2);
}

#[tokio::test]
async fn a_tool_the_project_does_not_allow_is_refused_and_named_in_the_summary() {
    let ws = workspace();
    let server = ModelServer::start(Some(KEY));
    server.script([
        tool_reply(
            "",
            &[call(
                "toolu_x",
                "Bash",
                json!({"command": "echo no > no.txt"}),
            )],
        ),
        anthropic::text("Could not run it.", TOKENS),
    ]);
    let mut spec = spec(&ws, &server, "hello");
    spec.allowed_tools = vec!["Read".to_string()];

    let ran = run(&ClaudeCode::new(None), spec).await;

    assert_eq!(ran.end.status, SessionStatus::Finished, "{:?}", ran.end);
    assert!(ws.read("no.txt").is_empty(), "the refused command ran");
    let steps = ran.steps();
    let result = steps
        .iter()
        .find(|s| s.kind == StepKind::ToolResult)
        .expect("a result");
    assert!(result.is_error);
    assert!(steps.iter().any(|s| s.source == StepSource::System
        && s.text
            .starts_with("Claude Code was not allowed to use Bash")));
    assert!(
        ran.end.summary.ends_with(
            "(Claude Code was not allowed to use Bash: add it to the project's allowed tools if \
             the task needs it.)"
        ),
        "{}",
        ran.end.summary
    );
}

#[tokio::test]
async fn the_scripted_server_answers_claude_codes_side_requests_without_using_the_script() {
    let server = ModelServer::start(Some(KEY));
    server.script([anthropic::text("MAIN-TURN", TOKENS)]);
    let client = reqwest::Client::new();
    let post = |body: serde_json::Value| {
        client
            .post(format!("{}/v1/messages?beta=true", server.url))
            .header("x-api-key", KEY)
            .header("anthropic-version", "2023-06-01")
            .header("x-app", "cli")
            .header("user-agent", "claude-cli/2.1.328 (external, sdk-cli)")
            .json(&body)
            .send()
    };
    // A title request: no tools, a `system` message inside `messages`.
    let side = post(json!({"model": "m", "max_tokens": 10, "stream": false,
        "messages": [{"role": "user", "content": "title?"},
                     {"role": "system", "content": "be short"}]}))
    .await
    .expect("answered");
    assert_eq!(side.status(), 200);
    let side: serde_json::Value = side.json().await.expect("json");
    assert_eq!(side["content"][0]["text"], "Scripted session");
    assert_eq!(server.unused_replies(), 1);

    let main = post(json!({"model": "m", "max_tokens": 10, "stream": true,
        "tools": [{"name": "Bash", "input_schema": {"type": "object"}}],
        "messages": [{"role": "user", "content": "go"}]}))
    .await
    .expect("answered");
    // The scripted turn, streamed in pieces.
    let streamed = main.text().await.expect("body");
    assert!(streamed.contains("\"MAIN-TU\"") && streamed.contains("\"RN\""));
    assert_eq!(server.unused_replies(), 0);
}
