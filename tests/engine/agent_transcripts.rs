//! Records of a session read back without a live process: an ATIF trajectory as Healer
//! exports it (from a real agent loop against the scripted server) becomes the same flat steps
//! the live adapters produce; a file that is none of the known records is refused clearly.
//! (Claude Code transcripts and Codex rollouts are read back in their adapters' tests, from the
//! files the real CLIs wrote.)

use healer::agent::transcript::{read_file, read_text, TranscriptKind};
use healer::llm::{ProviderKind, Tier};
use healer::session::{StepKind, StepSource, StepUsage};

use crate::agent_fixtures::step_usage;
use crate::llm_fixtures::{file_tools, fix_request, setup};
use crate::model_server::{openai, TOKENS};

#[tokio::test]
async fn an_exported_atif_trajectory_reads_back_into_steps() {
    let s = setup(
        ProviderKind::OpenaiCompatible,
        "HEALER_TEST_KEY_ATIF_READER",
        "sk-atif-reader",
    )
    .await;
    s.server.script([
        openai::tool_calls(
            &[("call_1", "read_file", r#"{"path": "report.py"}"#)],
            TOKENS,
        ),
        openai::text("Nothing to fix.", TOKENS),
    ]);
    let run = fix_request(&s.engine, file_tools(&s.work), Tier::Standard);
    let task_id = run.task_id;
    s.engine.run_agent(run).await.expect("the loop finishes");
    let exported = s.engine.export_atif(task_id).expect("atif");
    let path = s.tmp.path().join("trajectory.json");
    std::fs::write(&path, &exported).expect("written");

    let read = read_file(&path).expect("readable");

    assert_eq!(read.kind, TranscriptKind::Atif);
    let outline: Vec<(StepSource, StepKind, Option<String>)> = read
        .steps
        .iter()
        .map(|s| (s.source, s.kind, s.tool.clone()))
        .collect();
    assert_eq!(
        outline,
        vec![
            (StepSource::System, StepKind::Text, None),
            (StepSource::User, StepKind::Text, None),
            (
                StepSource::Agent,
                StepKind::ToolCall,
                Some("read_file".to_string())
            ),
            (StepSource::Agent, StepKind::ToolResult, None),
            (StepSource::Agent, StepKind::Text, None),
        ]
    );
    let steps = &read.steps;
    assert_eq!(steps[2].call_id.as_deref(), Some("call_1"));
    assert_eq!(steps[3].call_id.as_deref(), Some("call_1"));
    assert!(steps[3].text.contains("rows['totl']"));
    assert_eq!(
        steps[2]
            .arguments
            .as_deref()
            .map(serde_json::from_str::<serde_json::Value>)
            .and_then(Result::ok),
        Some(serde_json::json!({"path": "report.py"}))
    );
    assert_eq!(steps[4].text, "Nothing to fix.");
    assert_eq!(steps[4].model.as_deref(), Some("scripted-large"));
    let usage: Vec<StepUsage> = steps.iter().filter_map(|s| s.usage).collect();
    // What the server measured and reported for each of the two calls, read back unchanged.
    let reported: Vec<StepUsage> = s
        .server
        .turn_usage()
        .iter()
        .map(|t| step_usage(&[*t]))
        .collect();
    assert_eq!(reported.len(), 2);
    assert_eq!(usage, reported);
    s.engine.shutdown().await;
}

#[test]
fn a_file_that_is_no_known_record_is_refused_with_what_it_is_not() {
    let error = read_text("{\"hello\": \"world\"}\n").expect_err("refused");
    assert!(error.contains("not a Claude Code transcript, a Codex rollout or an ATIF"));
    let error = read_text("{\n  \"schema_version\": \"other-1\"\n}").expect_err("refused");
    assert!(error.contains("not an ATIF version"), "{error}");
    let error = read_text("").expect_err("refused");
    assert!(error.contains("not a Claude Code transcript"), "{error}");
}
