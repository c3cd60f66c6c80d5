//! A project's task worked by the real Claude Code and Codex CLIs through the runner, offline:
//! the scripted model server is a model provider configured in Healer, whose key reaches the
//! agent's process and nothing Healer keeps. The agent runs a command and edits a file, the
//! project's check passes, the work is committed on the task's branch and the task closes with
//! its commit; the session's steps are stored in order and its transcript is recorded.

use std::time::Duration;

use healer::failure::ProjectScenario;
use healer::session::{AgentKind, SessionStatus, StepKind, StepSource};
use healer::store::StoredStep;
use healer::tasklist::{read_file, TaskStatus, TASKS_FILE};
use serde_json::json;

use crate::maintainer::KEY;
use crate::model_server::{anthropic, responses, TOKENS};
use crate::project_agent_fixtures::*;
use crate::project_fixtures::{eventually, file_at, finished, marked_processes, marker_of};

const SHOW_GREETING: &str = "python3 -c 'import greet; print(greet.greet(\"Ada\"))'";

/// (source, kind, tool) of each step, for one comparison of the order.
fn outline(steps: &[StoredStep]) -> Vec<(StepSource, StepKind, Option<String>)> {
    steps
        .iter()
        .map(|s| (s.step.source, s.step.kind, s.step.tool.clone()))
        .collect()
}

fn healer_note() -> (StepSource, StepKind, Option<String>) {
    (StepSource::System, StepKind::Text, None)
}

/// What every agent run leaves: the task closed with the commit on its branch (and main moved
/// to it), the check's step, and no key in the database.
fn assert_closed_with_commit(bed: &AgentBed, session: &healer::project::SessionRecord) {
    assert_eq!(
        session.status,
        SessionStatus::Finished,
        "{}",
        session.summary
    );
    // The pinned program: its version kept, every line of its stream understood.
    let tested = healer::agent::installed::tested_version(session.agent).expect("tested");
    assert!(
        session
            .agent_version
            .as_deref()
            .is_some_and(|v| v.contains(tested)),
        "{:?}",
        session.agent_version
    );
    assert_eq!(
        session.raw_lines, 0,
        "a line of the pinned program was not understood"
    );
    let commit = session.commit_id.clone().expect("a commit");
    assert!(file_at(&bed.repo_dir, "healer/t1", "greet.py").contains("'Hello, ' + name + '!'"));
    assert!(file_at(&bed.repo_dir, "main", "greet.py").contains("'Hello, ' + name + '!'"));
    let file = read_file(&bed.repo_dir.join(TASKS_FILE)).expect("tasks");
    let task = file.task("t1").expect("t1");
    assert_eq!(task.status, TaskStatus::Closed);
    assert_eq!(task.commit.as_deref(), Some(commit.as_str()));
    let bytes = bed.database_bytes();
    assert!(
        !bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()),
        "the provider's key is nowhere in the database"
    );
}

#[tokio::test]
async fn claude_code_on_a_healer_provider_runs_bash_edits_a_file_and_the_task_closes_with_its_commit(
) {
    let bed = agent_bed(AgentKind::ClaudeCode, |s| {
        // The command prints the key's variable, which asks under the default; these tests are
        // about the key, so the person here accepts the risk.
        s.approvals.preset = healer::approval::Preset::NeverAsk;
    })
    .await;
    bed.task("Greet properly");
    let greet = bed.first_worktree().join("greet.py");
    bed.server.script([
        anthropic::tool_calls(
            "Let me see what it says now.",
            &[(
                "toolu_1",
                "Bash",
                &json!({"command": format!("echo key=$ANTHROPIC_API_KEY; {SHOW_GREETING}")})
                    .to_string(),
            )],
            TOKENS,
        ),
        anthropic::tool_calls(
            "",
            &[(
                "toolu_2",
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
    assert_closed_with_commit(&bed, &session);

    // Every step, in order: Healer's note, the prompt, the agent's words and tools, then the
    // check Healer ran and the commit.
    let steps = bed
        .engine
        .store()
        .session_steps(session.id, 0)
        .expect("steps");
    let agent = |kind, tool: Option<&str>| (StepSource::Agent, kind, tool.map(str::to_string));
    assert_eq!(
        outline(&steps),
        vec![
            healer_note(),
            (StepSource::User, StepKind::Text, None),
            agent(StepKind::Text, None),
            agent(StepKind::ToolCall, Some("Bash")),
            agent(StepKind::ToolResult, None),
            agent(StepKind::ToolCall, Some("Edit")),
            agent(StepKind::ToolResult, None),
            agent(StepKind::Text, None),
            healer_note(),
            (
                StepSource::System,
                StepKind::ToolResult,
                Some("test".to_string())
            ),
            healer_note(),
        ]
    );
    assert!(steps[1].step.text.contains("Your task: Greet properly"));
    // The command ran with the key, and the key was kept out of the stored result.
    let printed = &steps[4].step.text;
    assert!(printed.contains("Hi Ada"), "{printed}");
    assert!(printed.contains("key=[redacted]"), "{printed}");
    assert!(steps[9].step.text.starts_with("test: passed"));
    assert!(steps[10].step.text.starts_with("Committed "));
    let seqs: Vec<u32> = steps.iter().map(|s| s.seq).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "stored in order");

    // Claude Code's own session id and transcript, in the folder Healer keeps for it.
    let transcript = session.transcript.clone().expect("the transcript's path");
    assert!(
        transcript.starts_with(&bed.agent_home().display().to_string()),
        "{transcript}"
    );
    assert!(std::path::Path::new(&transcript).is_file(), "{transcript}");
    let id = session.agent_session_id.clone().expect("its session id");
    assert!(transcript.ends_with(&format!("{id}.jsonl")), "{transcript}");

    // The requests reached the provider with its key, and only the allowed tools ran.
    let chats = bed.server.chats();
    assert!(chats.iter().all(|c| c.header("x-api-key") == Some(KEY)));
    let detail = bed.engine.session_detail(session.id).expect("detail");
    assert_eq!(detail.session.agent, AgentKind::ClaudeCode);
}

#[tokio::test]
async fn codex_on_a_healer_provider_runs_a_command_applies_a_patch_and_the_task_closes_with_its_commit(
) {
    let bed = agent_bed(AgentKind::Codex, |s| {
        // The command prints the key's variable, which asks under the default; these tests are
        // about the key, so the person here accepts the risk.
        s.approvals.preset = healer::approval::Preset::NeverAsk;
    })
    .await;
    bed.task("Greet properly");
    let patch = "*** Begin Patch\n*** Update File: greet.py\n@@\n def greet(name):\n-    return 'Hi ' + name\n+    return 'Hello, ' + name + '!'\n*** End Patch";
    bed.server.script([
        responses::reply(
            &[responses::exec(
                "c1",
                &format!("echo key=$HEALER_CODEX_API_KEY; {SHOW_GREETING}"),
            )],
            TOKENS,
        ),
        responses::reply(&[responses::patch("c2", patch)], TOKENS),
        responses::reply(&[responses::text("greet() now says Hello, Ada!")], TOKENS),
    ]);

    let session = bed
        .engine
        .run_project_and_wait(bed.project.id, None)
        .await
        .expect("run");
    assert_closed_with_commit(&bed, &session);

    let steps = bed
        .engine
        .store()
        .session_steps(session.id, 0)
        .expect("steps");
    let agent = |kind, tool: Option<&str>| (StepSource::Agent, kind, tool.map(str::to_string));
    assert_eq!(
        outline(&steps),
        vec![
            healer_note(),
            (StepSource::User, StepKind::Text, None),
            agent(StepKind::ToolCall, Some("exec_command")),
            agent(StepKind::ToolResult, None),
            agent(StepKind::ToolCall, Some("apply_patch")),
            agent(StepKind::ToolResult, None),
            agent(StepKind::Text, None),
            healer_note(),
            (
                StepSource::System,
                StepKind::ToolResult,
                Some("test".to_string())
            ),
            healer_note(),
        ]
    );
    let printed = &steps[3].step.text;
    assert!(printed.contains("Hi Ada"), "{printed}");
    // The command ran with the key, and the key was kept out of the stored result.
    assert!(printed.contains("key=[redacted]"), "{printed}");
    assert!(steps[5].step.text.contains("greet.py"));
    assert_eq!(steps[6].step.text, "greet() now says Hello, Ada!");

    // Codex's rollout, in the Codex home Healer keeps for the project; its config names the
    // provider and key variable Healer set and keeps the person's own catalog line.
    let rollout = session.transcript.clone().expect("the rollout's path");
    assert!(
        rollout.starts_with(&bed.agent_home().join("sessions").display().to_string()),
        "{rollout}"
    );
    assert!(std::path::Path::new(&rollout).is_file());
    let config: toml::Table = toml::from_str(
        &std::fs::read_to_string(bed.agent_home().join("config.toml")).expect("config"),
    )
    .expect("TOML");
    assert_eq!(config["model_provider"].as_str(), Some("healer"));
    assert_eq!(
        config["model_providers"]["healer"]["env_key"].as_str(),
        Some("HEALER_CODEX_API_KEY")
    );
    assert!(config.contains_key("model_catalog_json"));
    let seen = bed.server.chats();
    assert!(seen
        .iter()
        .all(|c| c.header("authorization") == Some(&format!("Bearer {KEY}"))));
}

#[tokio::test]
async fn an_agent_program_that_exits_at_once_is_a_runtime_error_not_a_task_it_gave_up_on() {
    let bed = agent_bed(AgentKind::ClaudeCode, |_| {}).await;
    let broken = fake_agent(
        bed.tmp.path(),
        "claude",
        "echo 'claude: cannot find its native binary' >&2; exit 3",
    );
    bed.set(|s| s.agent_program = Some(broken.display().to_string()));
    // The healer service would retry with the built-in agent (a model call): this is about
    // the runner alone (tests/engine/healer_service.rs has the retry).
    bed.engine
        .set_healer_config(
            bed.project.id,
            healer::store::HealerConfig {
                enabled: false,
                ..healer::store::HealerConfig::default()
            },
        )
        .expect("healer off");
    bed.task("Greet properly");
    let session = bed
        .engine
        .run_project_and_wait(bed.project.id, None)
        .await
        .expect("run");
    assert_eq!(session.status, SessionStatus::Failed);
    assert!(bed.server.chats().is_empty(), "no model was asked");
    let heal = &bed.engine.heals(10).expect("heals")[0];
    assert_eq!(heal.scenario, ProjectScenario::RuntimeError.as_str());
    let file = read_file(&bed.repo_dir.join(TASKS_FILE)).expect("tasks");
    assert_ne!(file.task("t1").expect("t1").status, TaskStatus::Closed);
}

#[tokio::test]
async fn codex_given_an_anthropic_provider_is_told_why_before_it_starts() {
    let bed = agent_bed(AgentKind::Codex, |_| {}).await;
    // Past the form's check, as a provider changed after the project chose it would be.
    bed.set(|s| s.agent_provider = Some(ANTHROPIC.to_string()));
    bed.task("Greet properly");
    let session = bed
        .engine
        .run_project_and_wait(bed.project.id, None)
        .await
        .expect("run");
    assert_eq!(session.status, SessionStatus::Failed);
    assert!(
        session
            .summary
            .contains("Codex speaks only OpenAI's Responses API"),
        "{}",
        session.summary
    );
    assert!(bed.server.chats().is_empty(), "no model was asked");
    let heal = &bed.engine.heals(10).expect("heals")[0];
    assert_eq!(heal.scenario, ProjectScenario::RuntimeError.as_str());
}

#[tokio::test]
async fn stop_mid_run_ends_claude_code_and_its_tool_through_the_runner_and_keeps_the_worktree() {
    let bed = agent_bed(AgentKind::ClaudeCode, |_| {}).await;
    bed.task("Wait a long time");
    // Claude Code refuses a bare `sleep`; a slow program is what a long tool looks like.
    let slow = "python3 -c 'import time; time.sleep(300)'";
    bed.server.script([anthropic::tool_calls(
        "",
        &[("toolu_1", "Bash", &json!({"command": slow}).to_string())],
        TOKENS,
    )]);
    let session = bed
        .engine
        .run_project(bed.project.id, None)
        .expect("started");
    let marks = marker_of(&bed.engine, session.id);
    // Claude Code and its tool (in a session of its own) both carry the session's marks.
    eventually("Claude Code and its tool", Duration::from_secs(30), || {
        (marked_processes(&marks).len() >= 2).then_some(())
    })
    .await;

    bed.engine.stop_session(session.id).expect("stop");
    let ended = finished(&bed.engine, session.id).await;
    assert_eq!(ended.status, SessionStatus::Stopped, "{}", ended.summary);
    assert!(
        marked_processes(&marks).is_empty(),
        "no process of the session is left"
    );
    assert!(std::path::Path::new(&ended.worktree)
        .join("greet.py")
        .exists());
    let file = read_file(&bed.repo_dir.join(TASKS_FILE)).expect("tasks");
    assert_eq!(file.task("t1").expect("t1").status, TaskStatus::Open);
}
