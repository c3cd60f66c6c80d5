//! Steering reaches a live Claude Code session through the hooks Healer installs: the real
//! pinned Claude Code CLI, offline, against the scripted server. The judge steers while
//! Claude Code's tool runs; when the tool ends, its `PostToolUse` hook (`healer hook
//! claude-code`) hands the message over and it is in the very next request Claude Code sends.

use std::path::Path;
use std::time::Duration;

use healer::session::AgentKind;
use healer::store::{JudgeAction, SteeringKind};
use healer::tasklist::{read_file, TASKS_FILE};
use serde_json::json;

use crate::model_server::{anthropic, openai, TOKENS};
use crate::project_agent_fixtures::*;
use crate::project_fixtures::{eventually, finished};

const TOLD: &str = "Stop waiting for the file and edit greet.py now.";

#[tokio::test]
async fn a_judges_steer_reaches_claude_code_through_its_hook_in_the_next_request() {
    std::env::set_var(healer::project::HOOK_CLI_VAR, env!("CARGO_BIN_EXE_healer"));
    let bed = agent_bed(AgentKind::ClaudeCode, |_| {}).await;
    bed.task("Greet properly");
    let wait = "while [ ! -e go ]; do python3 -c 'import time; time.sleep(0.1)'; done; echo went";
    bed.server.script([
        anthropic::tool_calls(
            "",
            &[("toolu_1", "Bash", &json!({"command": wait}).to_string())],
            TOKENS,
        ),
        // The judge's answer (the steering model is the OpenAI-compatible provider's).
        openai::text(
            &json!({"action": "steer", "message": TOLD}).to_string(),
            TOKENS,
        ),
        anthropic::text("I will edit greet.py.", TOKENS),
    ]);
    let session = bed
        .engine
        .run_project(bed.project.id, None)
        .expect("started");
    let worktree = bed.first_worktree();
    eventually("Claude Code in its tool", Duration::from_secs(60), || {
        let steps = bed.engine.store().session_steps(session.id, 0).ok()?;
        steps
            .iter()
            .any(|s| s.step.tool.as_deref() == Some("Bash"))
            .then_some(())
    })
    .await;

    // The hooks reach Claude Code on its command line: nothing is written into the
    // worktree (a repository could have put a link there), and git sees nothing new.
    assert!(
        !worktree.join(".claude").exists(),
        "Healer wrote into the worktree's .claude"
    );
    let repo = git2::Repository::open(&worktree).expect("worktree");
    let statuses = repo.statuses(None).expect("status");
    assert!(
        statuses
            .iter()
            .all(|s| !s.path().unwrap_or_default().starts_with(".claude")),
        "nothing of Claude Code's in git status"
    );

    let session = bed.engine.store().session(session.id).expect("session");
    let start = chrono::DateTime::parse_from_rfc3339(&session.started_at)
        .expect("time")
        .with_timezone(&chrono::Utc);
    let judged = bed
        .engine
        .judge_tasks(start + chrono::Duration::minutes(15))
        .await
        .expect("judged");
    assert_eq!(judged.len(), 1, "{judged:?}");
    assert_eq!(judged[0].action, JudgeAction::Steer, "{judged:?}");
    let before = bed.server.chats().len();

    std::fs::write(Path::new(&worktree).join("go"), "").expect("go");
    let _ = finished(&bed.engine, session.id).await;

    // The first request after the tool ended carries the message (as the hook's reason).
    let chats = bed.server.chats();
    let next = chats
        .iter()
        .skip(before)
        .find(|c| c.path.contains("/v1/messages") && c.body["tools"].is_array())
        .expect("Claude Code asked again");
    assert!(next.body.to_string().contains(TOLD), "{}", next.body);
    let file = read_file(&bed.repo_dir.join(TASKS_FILE)).expect("tasks");
    let comment = file
        .task("t1")
        .expect("t1")
        .comments
        .last()
        .cloned()
        .expect("a comment");
    assert!(comment.text.contains(TOLD), "{}", comment.text);
    let timeline = bed
        .engine
        .store()
        .steering_timeline(bed.project.id, "t1")
        .expect("timeline");
    let delivery = timeline
        .iter()
        .find(|e| e.kind == SteeringKind::Delivery)
        .expect("the delivery");
    assert_eq!(delivery.message.as_deref(), Some(TOLD));
    assert!(
        delivery.detail.contains("before its next step"),
        "{}",
        delivery.detail
    );
    // The hook calls were true heartbeats.
    assert!(bed
        .engine
        .store()
        .session_pulse(session.id)
        .expect("pulse")
        .last_activity_at
        .is_some());
}

#[tokio::test]
async fn a_judges_steer_reaches_codex_when_its_turn_ends_by_resuming_it() {
    use crate::model_server::responses;
    let bed = agent_bed(AgentKind::Codex, |_| {}).await;
    bed.task("Greet properly");
    let wait = "while [ ! -e go ]; do python3 -c 'import time; time.sleep(0.1)'; done; echo went";
    bed.server.script([
        responses::reply(&[responses::exec("c1", wait)], TOKENS),
        openai::text(
            &json!({"action": "steer", "message": TOLD}).to_string(),
            TOKENS,
        ),
        responses::reply(&[responses::text("The file came; I am done.")], TOKENS),
        responses::reply(&[responses::text("Understood, editing greet.py.")], TOKENS),
    ]);
    let session = bed
        .engine
        .run_project(bed.project.id, None)
        .expect("started");
    let worktree = bed.first_worktree();
    eventually("Codex in its command", Duration::from_secs(60), || {
        let steps = bed.engine.store().session_steps(session.id, 0).ok()?;
        steps
            .iter()
            .any(|s| s.step.tool.as_deref() == Some("exec_command"))
            .then_some(())
    })
    .await;
    let session = bed.engine.store().session(session.id).expect("session");
    let start = chrono::DateTime::parse_from_rfc3339(&session.started_at)
        .expect("time")
        .with_timezone(&chrono::Utc);
    let judged = bed
        .engine
        .judge_tasks(start + chrono::Duration::minutes(15))
        .await
        .expect("judged");
    assert_eq!(judged.len(), 1, "{judged:?}");
    assert_eq!(judged[0].action, JudgeAction::Steer, "{judged:?}");

    std::fs::write(Path::new(&worktree).join("go"), "").expect("go");
    let _ = finished(&bed.engine, session.id).await;

    // The turn ended; the next request Codex sent (its resumed thread) carries the message.
    let chats = bed.server.chats();
    let responses: Vec<_> = chats
        .iter()
        .filter(|c| c.path.contains("/responses"))
        .collect();
    assert_eq!(
        responses.len(),
        3,
        "the first turn's two calls, then the resume"
    );
    let resumed = responses[2].body.to_string();
    assert!(resumed.contains(TOLD), "{resumed}");
    assert!(
        !responses[1].body.to_string().contains(TOLD),
        "not before the turn ended"
    );
    let steps = bed
        .engine
        .store()
        .session_steps(session.id, 0)
        .expect("steps");
    assert!(steps
        .iter()
        .any(|s| s.step.source == healer::session::StepSource::User && s.step.text.contains(TOLD)));
    let timeline = bed
        .engine
        .store()
        .steering_timeline(bed.project.id, "t1")
        .expect("timeline");
    let delivery = timeline
        .iter()
        .find(|e| e.kind == SteeringKind::Delivery)
        .expect("the delivery");
    assert!(delivery.detail.contains("resumed"), "{}", delivery.detail);
    assert!(!bed
        .engine
        .store()
        .steering_waiting(session.id)
        .expect("waiting"));
}

#[tokio::test]
async fn a_loop_in_claude_code_is_told_through_its_hook_at_zero_tokens() {
    std::env::set_var(healer::project::HOOK_CLI_VAR, env!("CARGO_BIN_EXE_healer"));
    let bed = agent_bed(AgentKind::ClaudeCode, |_| {}).await;
    bed.task("Greet properly");
    let same = || {
        anthropic::tool_calls(
            "Let me run the check.",
            &[(
                &format!("toolu_{}", uuid_like()),
                "Bash",
                &json!({"command": "cat config.ini"}).to_string(),
            )],
            TOKENS,
        )
    };
    bed.server.script([
        same(),
        same(),
        same(),
        same(),
        same(),
        // A message that arrives after the last call is given at the Stop hook, which makes
        // Claude Code take another turn: one answer for each message that may still wait.
        anthropic::text("I give up.", TOKENS),
        anthropic::text("I still give up.", TOKENS),
        anthropic::text("Really, I give up.", TOKENS),
        anthropic::text("Done.", TOKENS),
    ]);
    let session = bed
        .engine
        .run_project_and_wait(bed.project.id, None)
        .await
        .expect("run");
    let timeline = bed
        .engine
        .store()
        .steering_timeline(bed.project.id, "t1")
        .expect("timeline");
    let looped = timeline
        .iter()
        .find(|e| e.kind == SteeringKind::Loop)
        .expect("the loop");
    assert_eq!(looped.tokens, 0);
    assert!(
        looped.detail.contains("wrote it what it saw"),
        "Claude Code can be told: {}",
        looped.detail
    );
    // Delivered through Claude Code's hook, and the loop's entry says so.
    let delivered = looped.delivery.clone().expect("a message");
    assert_eq!(delivered.state, healer::store::DeliveryState::Delivered);
    assert_eq!(delivered.via.as_deref(), Some("hook"));
    let told = looped.message.clone().expect("what it was told");
    // The message is in a later request Claude Code made, and no request was steering's own.
    let chats: Vec<_> = bed
        .server
        .chats()
        .into_iter()
        .filter(|c| c.body["tools"].is_array())
        .collect();
    assert!(
        (6..=9).contains(&chats.len()),
        "only the agent's own requests, none of steering's: {}",
        chats.len()
    );
    let first = chats
        .iter()
        .position(|c| {
            c.body.to_string().contains("cat config.ini")
                && c.body
                    .to_string()
                    .contains("Healer, which watches this session")
        })
        .expect("a request carries the message");
    assert!(first >= 3, "told after the loop: request {first}");
    assert!(chats[first]
        .body
        .to_string()
        .contains(&told[..40.min(told.len())]));
    let delivery = timeline
        .iter()
        .find(|e| e.kind == SteeringKind::Delivery)
        .expect("the delivery");
    assert!(delivery.detail.contains("before its next step"));
    assert_ne!(session.status, healer::session::SessionStatus::Running);
}

/// Claude Code tells calls apart by id: each scripted call gets its own.
fn uuid_like() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    format!("loop{}", N.fetch_add(1, Ordering::Relaxed))
}
