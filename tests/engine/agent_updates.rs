//! An agent update never breaks a session silently (issue 41). The version of the agent's
//! program is read as a session starts and kept; a version Healer was not tested with is said
//! on the session, which runs; a line of its stream Healer does not understand is kept as a
//! raw step and counted; a session whose stream Healer cannot follow ends with a sentence
//! naming the agent and its version (at once when it exits, by the stuck rule at its shipped
//! 30 minutes when it keeps writing); and the built-in agent is not tried in its place when it
//! has no model, so the reason the person reads is the first one.

use std::time::Duration;

use healer::failure::ProjectScenario;
use healer::llm::Tier;
use healer::session::{AgentKind, SessionStatus, StepSource};
use healer::tasklist::{read_file, TaskStatus, TASKS_FILE};
use serde_json::json;

use crate::agent_fixtures::claude;
use crate::healer_service::{ended_invocations, spells_of};
use crate::model_server::{anthropic, TOKENS};
use crate::project_agent_fixtures::*;
use crate::project_fixtures::{eventually, finished};

/// A `claude` that says it is 9.9.9 and writes a line of a type no Claude Code 2.1 writes
/// before the real program's stream.
fn newer_claude(dir: &std::path::Path) -> std::path::PathBuf {
    fake_agent(
        dir,
        "claude",
        &format!(
            "if [ \"$1\" = --version ]; then echo '9.9.9 (Claude Code)'; exit 0; fi\n\
             echo '{{\"type\":\"brand_new_event\",\"said\":\"something new\"}}'\n\
             exec {} \"$@\"",
            claude().display()
        ),
    )
}

#[tokio::test]
async fn a_newer_claude_code_runs_with_a_note_and_its_unknown_line_is_kept_as_a_raw_step() {
    let bed = agent_bed(AgentKind::ClaudeCode, |s| {
        s.approvals.preset = healer::approval::Preset::NeverAsk;
    })
    .await;
    let newer = newer_claude(bed.tmp.path());
    bed.set(|s| s.agent_program = Some(newer.display().to_string()));
    bed.task("Greet properly");
    let greet = bed.first_worktree().join("greet.py");
    bed.server.script([
        anthropic::tool_calls(
            "",
            &[(
                "toolu_1",
                "Edit",
                &json!({"file_path": greet, "old_string": "'Hi ' + name",
                        "new_string": "'Hello, ' + name + '!'"})
                .to_string(),
            )],
            TOKENS,
        ),
        anthropic::text("greet() now says Hello, Ada!", TOKENS),
    ]);
    let session = bed
        .engine
        .run_project_and_wait(bed.project.id, None)
        .await
        .expect("run");
    assert_eq!(
        session.status,
        SessionStatus::Finished,
        "{}",
        session.summary
    );
    assert!(
        session.commit_id.is_some(),
        "the work is committed on green"
    );
    assert_eq!(
        session.agent_version.as_deref(),
        Some("9.9.9 (Claude Code)")
    );
    assert_eq!(session.raw_lines, 1);
    let steps = bed
        .engine
        .store()
        .session_steps(session.id, 0)
        .expect("steps");
    let texts: Vec<&str> = steps.iter().map(|s| s.step.text.as_str()).collect();
    assert!(
        texts.iter().any(|t| t.starts_with(
            "Claude Code 9.9 is newer than the 2.1 Healer was tested with."
        )),
        "{texts:#?}"
    );
    let raw = steps
        .iter()
        .find(|s| s.step.text.contains("brand_new_event"))
        .expect("the unknown line is a step");
    assert_eq!(raw.step.source, StepSource::System);
    assert!(
        raw.step
            .text
            .starts_with("Claude Code 9.9.9 wrote a line Healer does not understand"),
        "{}",
        raw.step.text
    );
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("1 line of Claude Code 9.9.9's output was not understood;")),
        "{texts:#?}"
    );
}

#[tokio::test]
async fn a_stream_healer_cannot_follow_ends_with_a_sentence_and_no_fallback_without_a_model_is_tried(
) {
    let bed = agent_bed(AgentKind::ClaudeCode, |_| {}).await;
    // The built-in agent has no model to work with.
    for tier in [Tier::Cheap, Tier::Standard, Tier::Deep] {
        bed.engine.clear_tier(tier).expect("tier cleared");
    }
    let lines: String = (1..=6)
        .map(|n| format!("echo '{{\"type\":\"frame_v9\",\"n\":{n}}}'\n"))
        .collect();
    let unknown = fake_agent(
        bed.tmp.path(),
        "claude",
        &format!(
            "if [ \"$1\" = --version ]; then echo '9.9.9 (Claude Code)'; exit 0; fi\n\
             {lines}sed -i \"s/'Hi ' + name/'Hello, ' + name + '!'/\" greet.py\nexit 0"
        ),
    );
    bed.set(|s| s.agent_program = Some(unknown.display().to_string()));
    let t = bed.task("Greet properly");
    let session = bed
        .engine
        .run_project_and_wait(bed.project.id, Some(&t.id))
        .await
        .expect("run");
    assert_eq!(session.status, SessionStatus::Failed);
    assert_eq!(session.raw_lines, 6);
    assert!(
        session.summary.starts_with(
            "Healer could not follow Claude Code 9.9.9: none of the 6 lines it wrote were of a \
             kind Healer knows (Healer was tested with 2.1.328)"
        ),
        "{}",
        session.summary
    );
    let steps = bed
        .engine
        .store()
        .session_steps(session.id, 0)
        .expect("steps");
    let kept = steps
        .iter()
        .filter(|s| s.step.text.contains("frame_v9"))
        .count();
    assert_eq!(kept, 6, "every line is shown");

    // The healer service does not hand the task to a built-in agent that has no model: no
    // session of it, and the reason on the task is the first one.
    let inv = ended_invocations(&bed.engine, &t.id, 1).await.remove(0);
    assert_eq!(inv.scenario, ProjectScenario::RuntimeError.as_str());
    let spells = spells_of(&inv);
    assert_eq!(
        spells.first(),
        Some(&("retry_with_minimal_subagent", false))
    );
    let minimal = &inv.spells[0];
    assert!(
        minimal
            .summary
            .starts_with("Healer's built-in agent was not tried in its place: no model is set up"),
        "{}",
        minimal.summary
    );
    let sessions = bed
        .engine
        .store()
        .list_sessions(bed.project.id, Some(&t.id), 5)
        .expect("sessions");
    assert_eq!(sessions.len(), 1, "no other agent was started");
    assert!(bed.server.chats().is_empty(), "no model was asked");
    let file = read_file(&bed.repo_dir.join(TASKS_FILE)).expect("tasks");
    let task = file.task(&t.id).expect("task");
    assert_ne!(
        task.status,
        TaskStatus::InProgress,
        "never stuck in progress"
    );
    assert_ne!(task.status, TaskStatus::Closed);
}

#[tokio::test]
async fn a_stream_that_never_ends_and_is_never_understood_is_ended_by_the_stuck_rule_naming_the_agent(
) {
    let bed = agent_bed(AgentKind::ClaudeCode, |_| {}).await;
    let endless = fake_agent(
        bed.tmp.path(),
        "claude",
        "if [ \"$1\" = --version ]; then echo '9.9.9 (Claude Code)'; exit 0; fi\n\
         while true; do echo '{\"type\":\"frame_v9\"}'; sleep 0.2; done",
    );
    bed.set(|s| s.agent_program = Some(endless.display().to_string()));
    let t = bed.task("Greet properly");
    let session = bed
        .engine
        .run_project(bed.project.id, Some(&t.id))
        .expect("started");
    eventually(
        "lines it does not understand",
        Duration::from_secs(30),
        || {
            let s = bed.engine.store().session(session.id).expect("session");
            (s.raw_lines >= 3).then_some(())
        },
    )
    .await;
    let started = chrono::DateTime::parse_from_rfc3339(
        &bed.engine
            .store()
            .session(session.id)
            .expect("s")
            .started_at,
    )
    .expect("time")
    .with_timezone(&chrono::Utc);
    // Lines Healer cannot read are not signs of life: at the shipped 30 minutes it is stuck.
    let early = bed
        .engine
        .end_stuck_sessions(started + chrono::Duration::minutes(29))
        .expect("looked");
    assert!(early.is_empty());
    let ended = bed
        .engine
        .end_stuck_sessions(started + chrono::Duration::minutes(31))
        .expect("looked");
    assert_eq!(ended, vec![session.id]);
    let record = finished(&bed.engine, session.id).await;
    assert_eq!(record.status, SessionStatus::Failed);
    assert!(
        record
            .summary
            .starts_with("Healer could not follow Claude Code 9.9.9 for 3"),
        "{}",
        record.summary
    );
    let file = read_file(&bed.repo_dir.join(TASKS_FILE)).expect("tasks");
    assert_ne!(
        file.task(&t.id).expect("task").status,
        TaskStatus::InProgress
    );
}
