//! The real Codex CLI (0.169.0) driven by its adapter, offline: the scripted server answers its
//! OpenAI Responses API requests, in real temp git repositories, with HOME and CODEX_HOME in
//! the test's temp folder.

use std::path::PathBuf;
use std::time::Duration;

use healer::agent::codex::{rollout, Codex, CodexProvider, CodexSettings};
use healer::agent::{Agent, AgentUpdate, SessionSpec};
use healer::session::{SessionStatus, StepKind, StepSource, StepUsage};
use tokio_util::sync::CancellationToken;

use crate::agent_fixtures::{codex, run, run_with, script, step_usage, workspace, Workspace};
use crate::model_server::{responses, ModelServer, TOKENS};

const KEY: &str = "test-key-codex";

/// A model catalog entry for the scripted model: without one Codex falls back to metadata
/// that offers no `apply_patch` tool.
pub const CATALOG: &str = r#"{"models":[{"slug":"scripted-model","display_name":"Scripted",
 "apply_patch_tool_type":"freeform","shell_type":"shell_command",
 "supported_reasoning_levels":[{"effort":"medium","description":"default"}],
 "visibility":"list","supported_in_api":true,"priority":1,"support_verbosity":true,
 "truncation_policy":{"mode":"tokens","limit":10000},"experimental_supported_tools":[],
 "base_instructions":"You are a scripted test model.","context_window":128000,
 "default_reasoning_level":"medium"}]}"#;

const PATCH: &str = "*** Begin Patch\n*** Update File: hello.txt\n@@\n line one\n-line two\n+line TWO\n line three\n*** Add File: new.txt\n+made by apply_patch\n*** End Patch";

fn codex_home(ws: &Workspace) -> PathBuf {
    ws.home.join(".codex")
}

fn agent(ws: &Workspace, server: &ModelServer, stream_retries: u32) -> Codex {
    let catalog = ws.dir.path().join("models.json");
    std::fs::write(&catalog, CATALOG).expect("catalog");
    Codex::with_settings(
        None,
        CodexSettings {
            provider: Some(CodexProvider {
                id: "scripted".to_string(),
                name: "Scripted".to_string(),
                base_url: format!("{}/v1", server.url),
                env_key: Some("SCRIPTED_KEY".to_string()),
                // Codex's defaults retry a failing server for about 25 s.
                request_max_retries: Some(0),
                stream_max_retries: Some(stream_retries),
                stream_idle_timeout_ms: Some(20_000),
            }),
            model_catalog: Some(catalog),
            ..CodexSettings::default()
        },
    )
}

fn spec(ws: &Workspace, prompt: &str) -> SessionSpec {
    let mut spec = ws.spec(
        codex(),
        prompt,
        &[
            ("CODEX_HOME", codex_home(ws).to_string_lossy().into_owned()),
            ("SCRIPTED_KEY", KEY.to_string()),
        ],
    );
    spec.model = Some("scripted-model".to_string());
    spec
}

#[tokio::test]
async fn codex_runs_a_command_and_a_patch_its_steps_arrive_in_order_and_its_rollout_is_found() {
    let ws = workspace();
    let server = ModelServer::start(Some(KEY));
    server.script([
        responses::reply(
            &[responses::exec("c1", "echo hi > a.txt && cat a.txt")],
            TOKENS,
        ),
        responses::reply(&[responses::patch("c2", PATCH)], TOKENS),
        responses::reply(
            &[responses::text("All done: a.txt, hello.txt, new.txt.")],
            TOKENS,
        ),
    ]);

    let ran = run(&agent(&ws, &server, 0), spec(&ws, "-Write a.txt and patch")).await;

    assert_eq!(ran.end.status, SessionStatus::Finished, "{:?}", ran.end);
    assert_eq!(ran.end.summary, "All done: a.txt, hello.txt, new.txt.");
    assert_eq!(ran.end.exit_code, Some(0));
    assert_eq!(ws.read("a.txt"), "hi\n");
    assert_eq!(ws.read("hello.txt"), "line one\nline TWO\nline three\n");
    assert_eq!(ws.read("new.txt"), "made by apply_patch\n");

    let (thread, rollout_path) = ran.started().expect("Started");
    assert_eq!(ran.end.agent_session_id.as_deref(), Some(thread.as_str()));
    let steps = ran.steps();
    let repo = std::fs::canonicalize(&ws.repo).expect("repo");
    assert_eq!(
        ran.outline(),
        vec![
            (StepKind::Text, None, "-Write a.txt and patch".to_string()),
            (
                StepKind::ToolCall,
                Some("exec_command".to_string()),
                String::new()
            ),
            (StepKind::ToolResult, None, "hi".to_string()),
            (
                StepKind::ToolCall,
                Some("apply_patch".to_string()),
                String::new()
            ),
            (
                StepKind::ToolResult,
                None,
                format!(
                    "update {}\nadd {}",
                    repo.join("hello.txt").display(),
                    repo.join("new.txt").display()
                )
            ),
            (
                StepKind::Text,
                None,
                "All done: a.txt, hello.txt, new.txt.".to_string()
            ),
        ]
    );
    assert_eq!(steps[0].source, StepSource::User);
    assert_eq!(steps[5].source, StepSource::Agent);
    assert_eq!(steps[1].call_id, steps[2].call_id);
    assert_eq!(steps[3].call_id, steps[4].call_id);
    assert_ne!(steps[1].call_id, steps[3].call_id);
    assert!(!steps[2].is_error && !steps[4].is_error);
    // The turn's cost, on its last message: three model calls.
    let usage: Vec<StepUsage> = steps.iter().filter_map(|s| s.usage).collect();
    let reported = server.turn_usage();
    assert_eq!(reported.len(), 3);
    assert_eq!(usage, vec![step_usage(&reported)]);

    // The rollout is where the adapter said, and reads back into the conversation.
    let path = rollout_path.expect("a rollout");
    assert_eq!(rollout::find(&codex_home(&ws), &thread), Some(path.clone()));
    assert!(path.starts_with(codex_home(&ws).join("sessions")));
    let (from_file, skipped) = rollout::read(&std::fs::read_to_string(&path).expect("rollout"));
    assert_eq!(skipped, 0);
    let kinds: Vec<(StepKind, Option<String>)> =
        from_file.iter().map(|s| (s.kind, s.tool.clone())).collect();
    assert_eq!(
        kinds,
        vec![
            (StepKind::Text, None),
            (StepKind::ToolCall, Some("exec_command".to_string())),
            (StepKind::ToolResult, None),
            (StepKind::ToolCall, Some("apply_patch".to_string())),
            (StepKind::ToolResult, None),
            (StepKind::Text, None),
        ]
    );
    assert_eq!(from_file[0].text, "-Write a.txt and patch");
    assert_eq!(from_file[1].call_id.as_deref(), Some("c1"));
    let file_usage: Vec<StepUsage> = from_file.iter().filter_map(|s| s.usage).collect();
    let per_call: Vec<StepUsage> = reported.iter().map(|t| step_usage(&[*t])).collect();
    assert_eq!(file_usage, per_call);
    let read = healer::agent::transcript::read_file(&path).expect("readable");
    assert_eq!(
        read.kind,
        healer::agent::transcript::TranscriptKind::CodexRollout
    );
    assert_eq!(read.steps, from_file);

    let chats = server.chats();
    assert_eq!(chats.len(), 3);
    assert_eq!(chats[0].path, "/v1/responses");
    assert_eq!(
        chats[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert!(ws.leftovers().is_empty());
}

#[tokio::test]
async fn a_resumed_codex_thread_continues_with_its_history_and_counts_only_its_own_tokens() {
    let ws = workspace();
    let server = ModelServer::start(Some(KEY));
    server.script([
        responses::reply(&[responses::exec("c1", "echo one > one.txt")], TOKENS),
        responses::reply(&[responses::text("FIRST-ANSWER")], TOKENS),
        responses::reply(&[responses::exec("c9", "echo two >> one.txt")], TOKENS),
        responses::reply(&[responses::text("SECOND-ANSWER")], TOKENS),
    ]);
    let codex = agent(&ws, &server, 0);
    let first = run(&codex, spec(&ws, "MARKER-ONE")).await;
    assert_eq!(first.end.status, SessionStatus::Finished, "{:?}", first.end);
    let (thread, _) = first.started().expect("Started");

    let mut again = spec(&ws, "MARKER-TWO");
    again.resume = Some(thread.clone());
    let second = run(&codex, again).await;

    assert_eq!(
        second.end.status,
        SessionStatus::Finished,
        "{:?}",
        second.end
    );
    assert_eq!(second.end.summary, "SECOND-ANSWER");
    assert_eq!(second.started().map(|s| s.0), Some(thread));
    assert!(second
        .started()
        .and_then(|s| s.1)
        .is_some_and(|p| p.is_file()));
    assert_eq!(ws.read("one.txt"), "one\ntwo\n");
    // Codex reports the thread's running total; the resumed turn is charged its own two calls.
    let usage: Vec<StepUsage> = second.steps().iter().filter_map(|s| s.usage).collect();
    let reported = server.turn_usage();
    assert_eq!(reported.len(), 4);
    assert_eq!(usage, vec![step_usage(&reported[2..])]);
    // The first request after the resume carries the first turn, then the new message.
    let resumed = server.chats().get(2).expect("a request").body["input"].to_string();
    for earlier in [
        "MARKER-ONE",
        "echo one > one.txt",
        "FIRST-ANSWER",
        "MARKER-TWO",
    ] {
        assert!(
            resumed.contains(earlier),
            "{earlier} missing from {resumed}"
        );
    }
    assert!(resumed.find("MARKER-ONE") < resumed.find("MARKER-TWO"));
    // Calls of the two runs pair up apart, although Codex numbers items from 0 in each.
    let first_calls: Vec<_> = first
        .steps()
        .into_iter()
        .filter_map(|s| s.call_id)
        .collect();
    let second_calls: Vec<_> = second
        .steps()
        .into_iter()
        .filter_map(|s| s.call_id)
        .collect();
    assert!(second_calls.iter().all(|c| !first_calls.contains(c)));
}

#[tokio::test]
async fn a_server_error_fails_codex_quickly() {
    let ws = workspace();
    let server = ModelServer::start(Some(KEY));
    server.script([responses::error(500, "scripted outage")]);

    let ran = run(&agent(&ws, &server, 0), spec(&ws, "hello")).await;

    assert_eq!(ran.end.status, SessionStatus::Failed);
    assert!(
        ran.end.summary.starts_with("Codex stopped with an error: "),
        "{}",
        ran.end.summary
    );
    assert_eq!(ran.end.exit_code, Some(1));
    assert!(ran.end.agent_session_id.is_some());
    assert!(ran.took < Duration::from_secs(20), "took {:?}", ran.took);
    assert_eq!(server.chats().len(), 1);
}

#[tokio::test]
async fn messages_codex_repeats_after_a_broken_stream_are_shown_once() {
    let ws = workspace();
    let server = ModelServer::start(Some(KEY));
    // Each attempt breaks off after a message; Codex retries once, repeating it, then fails.
    server.script([
        responses::cut_short("Partial thoughts."),
        responses::cut_short("Partial thoughts."),
    ]);

    let ran = run(&agent(&ws, &server, 1), spec(&ws, "hello")).await;

    assert_eq!(ran.end.status, SessionStatus::Failed);
    assert!(
        ran.end.summary.contains("stream disconnected"),
        "{}",
        ran.end.summary
    );
    assert_eq!(server.chats().len(), 2);
    let said: Vec<_> = ran
        .steps()
        .into_iter()
        .filter(|s| s.text == "Partial thoughts.")
        .collect();
    assert_eq!(said.len(), 1, "{:?}", ran.outline());
    assert!(ran
        .steps()
        .iter()
        .any(|s| s.source == StepSource::System && s.text.starts_with("Reconnecting")));
}

#[tokio::test]
async fn codex_printing_garbage_exiting_at_once_missing_or_without_a_home_fails_clearly() {
    let ws = workspace();
    let server = ModelServer::start(Some(KEY));
    let codex = agent(&ws, &server, 0);

    let mut garbage = spec(&ws, "hello");
    garbage.program = Some(script(&ws, "garbage", "echo 'Welcome!'"));
    let ran = run(&codex, garbage).await;
    assert_eq!(ran.end.status, SessionStatus::Failed);
    assert_eq!(
        ran.end.summary,
        "Codex exited (code 0) without saying how its session went; its output was not its \
         JSON stream (1 unreadable lines, the first: \"Welcome!\")."
    );

    // The real CLI, asked to resume a thread it never had, ends at once.
    let mut unknown = spec(&ws, "hello");
    unknown.resume = Some("01a21269-610b-7a13-aea8-2437d8aed2bf".to_string());
    let ran = run(&codex, unknown).await;
    assert_eq!(ran.end.status, SessionStatus::Failed);
    assert_eq!(ran.end.exit_code, Some(1));
    assert!(
        ran.end.summary.contains("no rollout found"),
        "{}",
        ran.end.summary
    );

    let mut missing = spec(&ws, "hello");
    missing.program = Some(ws.dir.path().join("no-such-codex"));
    let ran = run(&codex, missing).await;
    assert_eq!(ran.end.status, SessionStatus::Failed);
    assert!(
        ran.end.summary.starts_with("Codex is not installed at "),
        "{}",
        ran.end.summary
    );

    // Without a Codex home of its own Codex would use the person's: Healer's own mistake.
    let mut homeless = spec(&ws, "hello");
    homeless.env.retain(|(n, _)| n != "CODEX_HOME");
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let error = healer::agent::Agent::run(&codex, homeless, tx, CancellationToken::new())
        .await
        .expect_err("refused");
    assert!(error.to_string().contains("CODEX_HOME"), "{error}");
    assert!(server.chats().is_empty());
}

fn sleeping(ws: &Workspace, server: &ModelServer) -> SessionSpec {
    server.script([responses::reply(
        &[responses::exec("c1", "sleep 30")],
        TOKENS,
    )]);
    spec(ws, "wait")
}

fn sleep_is_running(ws: &Workspace) -> bool {
    ws.leftovers()
        .iter()
        .any(|(_, cmd)| cmd.trim() == "sleep 30")
}

#[tokio::test]
async fn stop_mid_run_ends_codex_and_its_command_leaving_no_process() {
    let ws = workspace();
    let server = ModelServer::start(Some(KEY));
    let spec = sleeping(&ws, &server);
    let mut saw_sleep = false;
    let ran = run_with(
        &agent(&ws, &server, 0),
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
    assert!(ran.took < Duration::from_secs(10), "took {:?}", ran.took);
    assert!(ws.leftovers().is_empty(), "left: {:?}", ws.leftovers());
}

#[tokio::test]
async fn the_time_limit_ends_codex_and_its_command() {
    let ws = workspace();
    let server = ModelServer::start(Some(KEY));
    let mut spec = sleeping(&ws, &server);
    spec.time_limit = Duration::from_secs(3);

    let ran = run(&agent(&ws, &server, 0), spec).await;

    assert_eq!(ran.end.status, SessionStatus::TimedOut, "{:?}", ran.end);
    assert!(ran.took < Duration::from_secs(10), "took {:?}", ran.took);
    assert!(ws.leftovers().is_empty(), "left: {:?}", ws.leftovers());
}

#[tokio::test]
async fn codex_is_detected_with_its_version_and_the_npm_wrapper_gives_way_to_the_binary() {
    let wrapper = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/agents/node_modules/.bin/codex");
    let found = Codex::new(Some(wrapper))
        .installed()
        .await
        .expect("installed");
    assert_eq!(found.version, "codex-cli 0.169.0");
    assert_eq!(
        std::fs::canonicalize(&found.program).expect("real"),
        std::fs::canonicalize(codex()).expect("real")
    );
    assert_eq!(
        Codex::new(Some("/nonexistent/codex".into()))
            .installed()
            .await,
        None
    );
}

/// A Codex home under /tmp (the data folder itself there) is refused before Codex starts,
/// with what to do about it.
#[tokio::test]
async fn a_codex_home_under_tmp_is_refused_saying_where_the_data_folder_should_go() {
    use healer::agent::Agent;
    let ws = workspace();
    let mut spec = spec(&ws, "hello");
    let home = tempfile::Builder::new()
        .prefix("healer-data")
        .tempdir_in("/tmp")
        .expect("a folder under /tmp");
    spec.env.retain(|(name, _)| name != "CODEX_HOME");
    spec.env
        .push(("CODEX_HOME".to_string(), home.path().display().to_string()));
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let refused = Codex::new(None)
        .run(spec, tx, CancellationToken::new())
        .await
        .expect_err("refused");
    let said = refused.to_string();
    assert!(said.contains("is under /tmp"), "{said}");
    assert!(said.contains("move the data folder out of /tmp"), "{said}");
}
