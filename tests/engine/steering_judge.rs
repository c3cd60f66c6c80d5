//! The steering judge on a live session: the built-in agent's real tool loop against the
//! scripted model server, in a real repository. The agent waits in a command until the test
//! lets it go; meanwhile the judge is run with a test clock and its scripted answer is the
//! next reply the server gives. The judge's interval is tested at its shipped default.

use std::path::Path;
use std::time::Duration;

use chrono::{DateTime, Utc};
use healer::project::TaskEdit;
use healer::session::{SessionStatus, StepSource};
use healer::store::{JudgeAction, SessionRecord, SteeringKind, SteeringSettings};
use healer::tasklist::{read_file, TaskStatus, TASKS_FILE};
use serde_json::json;

use crate::model_server::{openai, Reply, TOKENS};
use crate::project_fixtures::*;

fn task(title: &str) -> TaskEdit {
    TaskEdit {
        title: title.to_string(),
        description: "Make the greeting polite.".to_string(),
        acceptance: vec!["greet(\"Ada\") returns \"Hello, Ada!\"".to_string()],
        ..TaskEdit::default()
    }
}

/// The agent's first call: a command that waits until the file `go` exists in its worktree.
pub(crate) fn wait_for_go() -> Reply {
    call(
        "c1",
        "run_command",
        json!({"command": "while [ ! -e go ]; do python3 -c 'import time; time.sleep(0.1)'; done; echo went", "timeout_secs": 300}),
    )
}

fn judge_says(answer: &str) -> Reply {
    openai::text(answer, TOKENS)
}

/// Start the agent on a new task and wait until it sits in its waiting command.
async fn waiting_session(pb: &ProjectBed, title: &str) -> (String, SessionRecord) {
    let t = pb
        .engine()
        .add_task(pb.project.id, task(title))
        .expect("task");
    let session = run_until_waiting(pb, &t.id).await;
    (t.id, session)
}

/// Start the agent on `task_id` and wait until it sits in its waiting command.
pub(crate) async fn run_until_waiting(pb: &ProjectBed, task_id: &str) -> SessionRecord {
    let engine = pb.engine();
    let session = engine
        .run_project(pb.project.id, Some(task_id))
        .expect("started");
    eventually(
        "the agent's waiting command",
        Duration::from_secs(30),
        || {
            let steps = engine.store().session_steps(session.id, 0).ok()?;
            steps
                .iter()
                .any(|s| s.step.tool.as_deref() == Some("run_command"))
                .then_some(())
        },
    )
    .await;
    engine.store().session(session.id).expect("session")
}

fn started(session: &SessionRecord) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(&session.started_at)
        .expect("time")
        .with_timezone(&Utc)
}

pub(crate) fn let_go(session: &SessionRecord) {
    std::fs::write(Path::new(&session.worktree).join("go"), "").expect("go");
}

/// The content of the last user message of a request the scripted server received.
pub(crate) fn last_user_message(chat: &crate::model_server::Seen) -> String {
    chat.body["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .expect("a user message")["content"]
        .to_string()
}

fn judgements(pb: &ProjectBed, task_id: &str) -> Vec<healer::store::SteeringEntry> {
    pb.engine()
        .store()
        .steering_timeline(pb.project.id, task_id)
        .expect("timeline")
        .into_iter()
        .filter(|e| e.kind == SteeringKind::Judgement)
        .collect()
}

#[tokio::test]
async fn continue_only_moves_the_timestamp_and_the_task_is_not_judged_again_within_fifteen_minutes()
{
    let pb = project_bed(false, |_| {}).await;
    let engine = pb.engine();
    let defaults = engine.store().steering_settings().expect("settings");
    assert_eq!(defaults, SteeringSettings::default(), "the shipped default");
    assert_eq!(defaults.judge_every_secs, 15 * 60);
    pb.bed.server.script([
        wait_for_go(),
        judge_says(r#"{"action": "continue", "message": null}"#),
        judge_says(r#"{"action": "continue", "message": null}"#),
        call("c2", "finish", json!({"summary": "done"})),
    ]);
    let (task_id, session) = waiting_session(&pb, "Be polite").await;
    let start = started(&session);
    let before = read_file(&pb.repo_dir.join(TASKS_FILE)).expect("tasks");
    let before = before.task(&task_id).expect("task").clone();

    // The Sessions page lists it, with its last activity and no loop.
    let live = engine.live_sessions(chrono::Utc::now()).expect("live");
    assert_eq!(live.len(), 1, "{live:?}");
    assert_eq!(live[0].origin, healer::steering::SessionOrigin::Healer);
    assert_eq!(live[0].session_id, Some(session.id));
    assert_eq!(live[0].title, "Be polite");
    assert!(live[0].last_activity_at.is_some());
    assert_eq!(live[0].loop_rule, None);

    // 14 minutes after the start: not due, no model asked.
    let early = engine
        .judge_tasks(start + chrono::Duration::minutes(14))
        .await
        .expect("looked");
    assert!(early.is_empty(), "{early:?}");
    assert_eq!(pb.bed.server.chats().len(), 1, "only the agent's request");

    // What the agent has changed so far is part of what the judge sees.
    std::fs::write(Path::new(&session.worktree).join("notes.txt"), "one\ntwo\n").expect("notes");

    // At 15 minutes: judged once, continue.
    let at = start + chrono::Duration::minutes(15);
    let judged = engine.judge_tasks(at).await.expect("judged");
    assert_eq!(judged.len(), 1, "{judged:?}");
    assert_eq!(judged[0].action, JudgeAction::Continue);
    assert_eq!(judged[0].bad_answer, None);
    let chats = pb.bed.server.chats();
    assert_eq!(chats.len(), 2);
    let asked = chats[1].body.to_string();
    for part in [
        "Be polite",
        "Make the greeting polite.",
        "Hello, Ada!",
        "run_command",
        "while [ ! -e go ]",
        "1 file(s) changed, 2 line(s) added, 0 removed",
        "notes.txt (added, +2 -0)",
    ] {
        assert!(asked.contains(part), "the judge is shown {part:?}: {asked}");
    }
    let kept = engine
        .store()
        .task_judgement(pb.project.id, &task_id)
        .expect("read")
        .expect("kept with the task");
    assert_eq!(
        DateTime::parse_from_rfc3339(&kept.judged_at).expect("time"),
        at
    );
    assert_eq!((kept.action, kept.bad_answers), (JudgeAction::Continue, 0));
    // Continue: the task itself is unchanged, nothing waits for the agent.
    let after = read_file(&pb.repo_dir.join(TASKS_FILE)).expect("tasks");
    let after = after.task(&task_id).expect("task").clone();
    assert_eq!(after, before);
    assert!(!engine
        .store()
        .steering_waiting(session.id)
        .expect("waiting"));
    let entries = judgements(&pb, &task_id);
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].action, Some(JudgeAction::Continue));
    assert!(entries[0].tokens > 0, "the judge's tokens are counted");

    // Counted from that judgement, not the start: 14 minutes later it is not due again…
    let again = engine
        .judge_tasks(at + chrono::Duration::minutes(14))
        .await
        .expect("looked");
    assert!(again.is_empty());
    assert_eq!(pb.bed.server.chats().len(), 2);
    // … and at 15 it is.
    let later = engine
        .judge_tasks(at + chrono::Duration::minutes(15))
        .await
        .expect("judged");
    assert_eq!(later.len(), 1);
    assert_eq!(pb.bed.server.chats().len(), 3);

    let_go(&session);
    // It ends on its own (its verification fails: the agent changed nothing).
    let record = finished(engine, session.id).await;
    assert_ne!(record.status, SessionStatus::Running);
}

#[tokio::test]
async fn a_new_session_of_a_task_judged_before_is_first_judged_a_whole_period_after_it_started() {
    let pb = project_bed(false, |_| {}).await;
    let engine = pb.engine();
    pb.bed.server.script([
        wait_for_go(),
        judge_says(r#"{"action": "continue", "message": null}"#),
        call("c2", "finish", json!({"summary": "done"})),
    ]);
    // The task was judged two hours ago, in an earlier session of it.
    let t = engine
        .add_task(pb.project.id, task("Be brief"))
        .expect("task");
    let long_ago = (Utc::now() - chrono::Duration::hours(2)).to_rfc3339();
    engine
        .store()
        .set_task_judgement(
            pb.project.id,
            &t.id,
            &long_ago,
            JudgeAction::Continue,
            false,
        )
        .expect("an earlier judgement");
    let session = run_until_waiting(&pb, &t.id).await;
    let start = started(&session);

    // A minute into the new session: not judged, whatever the task's last judgement.
    let early = engine
        .judge_tasks(start + chrono::Duration::minutes(1))
        .await
        .expect("looked");
    assert!(early.is_empty(), "{early:?}");
    assert_eq!(pb.bed.server.chats().len(), 1, "only the agent's request");
    // A whole period after the session started: judged, on the session's own turns.
    let judged = engine
        .judge_tasks(start + chrono::Duration::minutes(15))
        .await
        .expect("judged");
    assert_eq!(judged.len(), 1, "{judged:?}");
    let asked = pb.bed.server.chats()[1].body.to_string();
    assert!(asked.contains("while [ ! -e go ]"), "{asked}");
    let_go(&session);
    finished(engine, session.id).await;
}

#[tokio::test]
async fn steer_reaches_the_agent_as_its_next_message_and_is_commented_on_the_task() {
    let pb = project_bed(false, |_| {}).await;
    let engine = pb.engine();
    let told = "Stop waiting and edit greet.py so greet returns Hello, name!";
    pb.bed.server.script([
        wait_for_go(),
        judge_says(&json!({"action": "steer", "message": told}).to_string()),
        call("c2", "finish", json!({"summary": "done"})),
    ]);
    let (task_id, session) = waiting_session(&pb, "Be polite").await;
    let judged = engine
        .judge_tasks(started(&session) + chrono::Duration::minutes(15))
        .await
        .expect("judged");
    assert_eq!(judged.len(), 1);
    assert_eq!(judged[0].action, JudgeAction::Steer);
    assert!(engine
        .store()
        .steering_waiting(session.id)
        .expect("waiting"));
    // The judgement's entry says the message waits: nothing was delivered yet.
    let waiting = judgements(&pb, &task_id);
    let waiting = waiting.last().expect("the judgement");
    assert_eq!(
        waiting.delivery.as_ref().map(|d| d.state),
        Some(healer::store::DeliveryState::Waiting)
    );
    let file = read_file(&pb.repo_dir.join(TASKS_FILE)).expect("tasks");
    let t = file.task(&task_id).expect("task");
    assert_eq!(
        t.status,
        TaskStatus::InProgress,
        "steer does not stop the work"
    );
    let comment = t.comments.last().expect("a comment");
    assert_eq!(comment.author, "healer");
    assert!(comment.text.contains(told), "{}", comment.text);

    // The agent's next request carries the message as a user message.
    let_go(&session);
    // It ends on its own (its verification fails: the agent changed nothing).
    let record = finished(engine, session.id).await;
    assert_ne!(record.status, SessionStatus::Running);
    let chats = pb.bed.server.chats();
    assert_eq!(chats.len(), 3);
    let told_there = last_user_message(&chats[2]);
    assert!(told_there.contains(told), "{told_there}");
    let steps = engine.store().session_steps(session.id, 0).expect("steps");
    assert!(steps
        .iter()
        .any(|s| s.step.source == StepSource::User && s.step.text.contains(told)));
    let timeline = engine
        .store()
        .steering_timeline(pb.project.id, &task_id)
        .expect("timeline");
    let judgement = timeline
        .iter()
        .position(|e| e.kind == SteeringKind::Judgement)
        .expect("the judgement");
    let delivery = timeline
        .iter()
        .position(|e| e.kind == SteeringKind::Delivery && e.message.as_deref() == Some(told))
        .expect("its delivery");
    assert!(delivery > judgement);
    // Then the judgement says how it was delivered: the built-in agent's conversation.
    let delivered = timeline[judgement].delivery.clone().expect("a message");
    assert_eq!(delivered.state, healer::store::DeliveryState::Delivered);
    assert_eq!(delivered.via.as_deref(), Some("thread"));
    assert!(delivered.delivered_at.is_some());
}

#[tokio::test]
async fn a_bad_answer_counts_as_continue_and_is_recorded() {
    let pb = project_bed(false, |_| {}).await;
    let engine = pb.engine();
    pb.bed.server.script([
        wait_for_go(),
        // Prose, then an action outside the schema: neither is acted on.
        judge_says("The agent seems fine; I would let it continue."),
        judge_says(r#"{"action": "replace", "message": "x", "also": "restart the machine"}"#),
        call("c2", "finish", json!({"summary": "done"})),
    ]);
    let (task_id, session) = waiting_session(&pb, "Be polite").await;
    let start = started(&session);
    let before = read_file(&pb.repo_dir.join(TASKS_FILE)).expect("tasks");
    let before = before.task(&task_id).expect("task").clone();
    for (n, minutes) in [(1, 15), (2, 30)] {
        let judged = engine
            .judge_tasks(start + chrono::Duration::minutes(minutes))
            .await
            .expect("judged");
        assert_eq!(judged.len(), 1);
        assert_eq!(judged[0].action, JudgeAction::Continue);
        assert!(judged[0].bad_answer.is_some());
        let kept = engine
            .store()
            .task_judgement(pb.project.id, &task_id)
            .expect("read")
            .expect("kept");
        assert_eq!((kept.action, kept.bad_answers), (JudgeAction::Continue, n));
    }
    let entries = judgements(&pb, &task_id);
    assert_eq!(entries.len(), 2);
    assert!(
        entries
            .iter()
            .all(|e| e.action == Some(JudgeAction::Continue)
                && e.detail.contains("could not be used"))
    );
    // Nothing was done: no message waits, the session runs on, the task is as it was.
    assert!(!engine
        .store()
        .steering_waiting(session.id)
        .expect("waiting"));
    let after = read_file(&pb.repo_dir.join(TASKS_FILE)).expect("tasks");
    assert_eq!(after.task(&task_id).expect("task"), &before);
    let_go(&session);
    // It ends on its own (its verification fails: the agent changed nothing).
    let record = finished(engine, session.id).await;
    assert_ne!(record.status, SessionStatus::Running);
}

#[tokio::test]
async fn a_task_that_is_not_in_progress_is_not_judged() {
    let pb = project_bed(false, |_| {}).await;
    let engine = pb.engine();
    pb.bed.server.script([
        wait_for_go(),
        call("c2", "finish", json!({"summary": "done"})),
    ]);
    let (task_id, session) = waiting_session(&pb, "Be polite").await;
    // The person marks the task blocked in the task list while the agent still runs.
    healer::tasklist::modify(&pb.repo_dir, |file| {
        file.update(&task_id, &healer::store::now(), |t| {
            t.status = TaskStatus::Blocked;
        })
    })
    .expect("edited");
    let judged = engine
        .judge_tasks(started(&session) + chrono::Duration::hours(2))
        .await
        .expect("looked");
    assert!(judged.is_empty(), "{judged:?}");
    assert_eq!(pb.bed.server.chats().len(), 1, "no model asked");
    assert!(engine
        .store()
        .task_judgement(pb.project.id, &task_id)
        .expect("read")
        .is_none());
    let_go(&session);
    let _ = finished(engine, session.id).await;
    // A session that has ended is not judged either.
    let judged = engine
        .judge_tasks(started(&session) + chrono::Duration::hours(3))
        .await
        .expect("looked");
    assert!(judged.is_empty());
}

/// The agent writes some work, then waits.
fn work_then_wait() -> Reply {
    call(
        "c1",
        "run_command",
        json!({"command": "echo half-done > wip.txt; while [ ! -e go ]; do python3 -c 'import time; time.sleep(0.1)'; done", "timeout_secs": 300}),
    )
}

const WHY: &str = "It has rewritten the same function five times without running the test";

/// What a replace leaves: no process, no worktree, the work in a snapshot, the task open.
async fn assert_replaced(
    pb: &ProjectBed,
    task_id: &str,
    session: &SessionRecord,
    marker: &[String],
) {
    let engine = pb.engine();
    let record = finished(engine, session.id).await;
    assert_eq!(record.status, SessionStatus::Stopped);
    assert!(record.summary.contains(WHY), "{}", record.summary);
    assert!(marked_processes(marker).is_empty(), "no process is left");
    let repo = git2::Repository::open(&pb.repo_dir).expect("repo");
    let snapshots = engine
        .store()
        .snapshots(Some(pb.project.id), Some(task_id))
        .expect("snapshots");
    assert_eq!(snapshots.len(), 1);
    let pinned = repo
        .find_reference(&snapshots[0].ref_name)
        .expect("the snapshot ref")
        .peel_to_commit()
        .expect("commit");
    let blob = pinned
        .tree()
        .expect("tree")
        .get_path(Path::new("wip.txt"))
        .expect("the agent's work is in it")
        .to_object(&repo)
        .expect("blob");
    assert_eq!(blob.as_blob().expect("blob").content(), b"half-done\n");
    // The task starts again by itself (the shipped default), afresh: a new session in a new
    // worktree without the replaced agent's work.
    let next = eventually("the task started again", Duration::from_secs(30), || {
        engine
            .store()
            .list_sessions(pb.project.id, Some(task_id), 5)
            .ok()?
            .into_iter()
            .find(|s| s.id != session.id)
    })
    .await;
    let next = finished(engine, next.id).await;
    // The replaced worktree and branch were removed: the new one is made again from the main
    // branch, without the replaced agent's work.
    assert!(
        !Path::new(&next.worktree).join("wip.txt").exists(),
        "the new agent starts fresh"
    );
    let first = engine
        .store()
        .session_steps(next.id, 0)
        .expect("steps")
        .remove(0)
        .step
        .text;
    assert!(first.contains("new branch"), "{first}");
    let file = read_file(&pb.repo_dir.join(TASKS_FILE)).expect("tasks");
    let t = file.task(task_id).expect("task");
    let comment = t
        .comments
        .iter()
        .find(|c| c.text.contains(WHY))
        .expect("the replace is commented on the task");
    assert!(
        comment.text.contains("a new agent starts"),
        "{}",
        comment.text
    );
    let notes = engine.notifications().expect("notifications");
    assert!(
        notes
            .items
            .iter()
            .any(|n| n.title.contains("replaced the agent")),
        "{:?}",
        notes.items
    );
}

#[tokio::test]
async fn replace_in_aggressive_mode_ends_the_agent_keeps_its_work_and_reopens_the_task() {
    let pb = project_bed(false, |_| {}).await;
    let engine = pb.engine();
    let mut config = engine.store().healer_config(pb.project.id).expect("config");
    config.mode = healer::store::HealerMode::Aggressive;
    engine
        .store()
        .set_healer_config(pb.project.id, &config)
        .expect("aggressive");
    pb.bed.server.script([
        work_then_wait(),
        judge_says(&json!({"action": "replace", "message": WHY}).to_string()),
        // The new agent, on the task started again by itself.
        call("n1", "finish", json!({"summary": "looked at it"})),
    ]);
    let (task_id, session) = waiting_session(&pb, "Be polite").await;
    let marker = marker_of(engine, session.id);
    eventually("the waiting command", Duration::from_secs(30), || {
        (!marked_processes(&marker).is_empty()).then_some(())
    })
    .await;
    eventually("the agent's work", Duration::from_secs(30), || {
        Path::new(&session.worktree)
            .join("wip.txt")
            .exists()
            .then_some(())
    })
    .await;
    let judged = engine
        .judge_tasks(started(&session) + chrono::Duration::minutes(15))
        .await
        .expect("judged");
    assert_eq!(judged[0].action, JudgeAction::Replace);
    assert_replaced(&pb, &task_id, &session, &marker).await;
    assert!(engine
        .checkpoints()
        .expect("checkpoints")
        .pending
        .is_empty());
}

#[tokio::test]
async fn replace_in_conservative_mode_asks_first_and_replaces_when_the_person_agrees() {
    let pb = project_bed(false, |_| {}).await;
    let engine = pb.engine();
    assert_eq!(
        engine
            .store()
            .healer_config(pb.project.id)
            .expect("config")
            .mode,
        healer::store::HealerMode::Conservative,
        "the shipped default"
    );
    pb.bed.server.script([
        work_then_wait(),
        judge_says(&json!({"action": "replace", "message": WHY}).to_string()),
        call("n1", "finish", json!({"summary": "looked at it"})),
    ]);
    let (task_id, session) = waiting_session(&pb, "Be polite").await;
    let marker = marker_of(engine, session.id);
    eventually("the agent's work", Duration::from_secs(30), || {
        Path::new(&session.worktree)
            .join("wip.txt")
            .exists()
            .then_some(())
    })
    .await;
    engine
        .judge_tasks(started(&session) + chrono::Duration::minutes(15))
        .await
        .expect("judged");
    // Asked, not done: the agent still works.
    let pending = engine.checkpoints().expect("checkpoints").pending;
    assert_eq!(pending.len(), 1);
    assert!(pending[0].context.contains(WHY), "{}", pending[0].context);
    assert_eq!(
        engine.store().session(session.id).expect("session").status,
        SessionStatus::Running
    );
    assert!(Path::new(&session.worktree).join("wip.txt").exists());

    engine
        .decide_checkpoint(pending[0].id, Some(1), None)
        .await
        .expect("decided");
    assert_replaced(&pb, &task_id, &session, &marker).await;
}

#[tokio::test]
async fn replace_in_conservative_mode_leaves_the_agent_at_work_when_the_person_says_so() {
    let pb = project_bed(false, |_| {}).await;
    let engine = pb.engine();
    pb.bed.server.script([
        work_then_wait(),
        judge_says(&json!({"action": "replace", "message": WHY}).to_string()),
        // Asked again 15 minutes later, it still thinks so: no second question while one waits.
        judge_says(&json!({"action": "replace", "message": WHY}).to_string()),
        call("c2", "finish", json!({"summary": "done"})),
    ]);
    let (task_id, session) = waiting_session(&pb, "Be polite").await;
    let start = started(&session);
    engine
        .judge_tasks(start + chrono::Duration::minutes(15))
        .await
        .expect("judged");
    engine
        .judge_tasks(start + chrono::Duration::minutes(30))
        .await
        .expect("judged again");
    let pending = engine.checkpoints().expect("checkpoints").pending;
    assert_eq!(pending.len(), 1, "one question at a time");
    let decided = engine
        .decide_checkpoint(pending[0].id, Some(2), None)
        .await
        .expect("decided");
    let outcome = decided.decision.expect("decided").outcome;
    assert!(outcome.contains("goes on"), "{outcome}");
    assert_eq!(
        engine.store().session(session.id).expect("session").status,
        SessionStatus::Running
    );
    assert!(Path::new(&session.worktree).join("wip.txt").exists());
    let file = read_file(&pb.repo_dir.join(TASKS_FILE)).expect("tasks");
    assert_eq!(
        file.task(&task_id).expect("task").status,
        TaskStatus::InProgress
    );
    let_go(&session);
    let record = finished(engine, session.id).await;
    assert_ne!(record.status, SessionStatus::Running);
    assert!(engine
        .store()
        .snapshots(Some(pb.project.id), Some(&task_id))
        .expect("snapshots")
        .is_empty());
}

/// The person writes a live agent: through the CLI (`healer session say`, no engine of its
/// own: the mailbox is stored) the message waits; the agent's next model request carries it,
/// said to come from the person; the timeline's entry then shows it delivered through the
/// conversation. A session that ended takes no message.
#[tokio::test]
async fn a_message_the_person_writes_reaches_the_running_agent_at_its_next_request() {
    let pb = project_bed(false, |_| {}).await;
    let engine = pb.engine();
    let said = "Keep greet's signature as it is; only change the text.";
    pb.bed.server.script([
        wait_for_go(),
        call("c2", "finish", json!({"summary": "done"})),
    ]);
    let (task_id, session) = waiting_session(&pb, "Be polite").await;
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_healer"))
        .args(["session", "say", &session.id.to_string(), said])
        .env("HEALER_DATA_DIR", pb.bed.paths.data_dir())
        .output()
        .expect("healer runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("waits for the agent's next chance"));
    let entry = |pb: &ProjectBed| {
        pb.engine()
            .store()
            .steering_timeline(pb.project.id, &task_id)
            .expect("timeline")
            .into_iter()
            .find(|e| e.kind == SteeringKind::Message)
            .expect("the person's message on the timeline")
    };
    let waiting = entry(&pb);
    assert_eq!(waiting.message.as_deref(), Some(said));
    assert_eq!(
        waiting.delivery.as_ref().map(|d| d.state),
        Some(healer::store::DeliveryState::Waiting)
    );

    let_go(&session);
    let record = finished(engine, session.id).await;
    assert_ne!(record.status, SessionStatus::Running);
    let chats = pb.bed.server.chats();
    let text = last_user_message(&chats[1]);
    assert!(text.contains(said), "{text}");
    assert!(
        text.contains("The person you are working for writes"),
        "{text}"
    );
    let delivered = entry(&pb).delivery.expect("a message");
    assert_eq!(delivered.state, healer::store::DeliveryState::Delivered);
    assert_eq!(delivered.via.as_deref(), Some("thread"));
    // Its own entry shows the delivery: no second "told the agent" entry for it.
    assert!(!engine
        .store()
        .steering_timeline(pb.project.id, &task_id)
        .expect("timeline")
        .iter()
        .any(|e| e.kind == SteeringKind::Delivery));

    // The session has ended: a message cannot reach it, and the person is told why.
    let refused = engine
        .say_to_session(session.id, "one more thing")
        .expect_err("refused");
    assert!(
        refused.to_string().contains("is not working now"),
        "{refused}"
    );
    assert!(engine.say_to_session(session.id, "   ").is_err());
}
