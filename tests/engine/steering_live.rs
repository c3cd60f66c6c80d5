//! Steering on a live session: the built-in agent's real tool loop against the scripted model
//! server, in a real repository. A loop is caught by the free detector as the steps arrive,
//! its rule recorded, and the message reaches the agent as the next user message of its
//! thread — seen in the next request the scripted server receives — at zero tokens.

use std::time::Duration;

use healer::looping::LoopRule;
use healer::project::TaskEdit;
use healer::session::StepSource;
use healer::store::SteeringKind;
use serde_json::json;

use crate::project_fixtures::*;

const TOLD: &str = "Healer, which watches this session, says:";

fn task(title: &str) -> TaskEdit {
    TaskEdit {
        title: title.to_string(),
        description: "Make check.sh pass.".to_string(),
        ..TaskEdit::default()
    }
}

fn check_call(id: &str) -> crate::model_server::Reply {
    call(id, "run_command", json!({"command": "bash check.sh"}))
}

#[tokio::test]
async fn a_looping_built_in_agent_is_told_at_once_at_zero_tokens_and_the_rule_is_recorded() {
    // The project lists its own check script among what the agent may run without asking.
    let pb = project_bed(false, |s| {
        s.approvals.allowed = vec!["bash check.sh".to_string()]
    })
    .await;
    let engine = pb.engine();
    let t = engine
        .add_task(pb.project.id, task("Run the check"))
        .expect("task");
    // Six identical failing runs, then it gives up: the detector must fire on the way.
    pb.bed.server.script([
        check_call("c1"),
        check_call("c2"),
        check_call("c3"),
        check_call("c4"),
        check_call("c5"),
        check_call("c6"),
        call("c7", "finish", json!({"summary": "gave up"})),
    ]);

    let session = engine
        .run_project_and_wait(pb.project.id, Some(&t.id))
        .await
        .expect("run");

    // The message reached the model as a user message, naming the command, in a request
    // after the loop was complete, and steering asked no model of its own.
    let chats = pb.bed.server.chats();
    assert_eq!(
        chats.len(),
        7,
        "one request per scripted reply, none for steering"
    );
    let told_at = chats
        .iter()
        .position(|c| c.body.to_string().contains(TOLD))
        .expect("a request carries the steering message");
    assert!(told_at >= 3, "told only after the loop: request {told_at}");
    let messages = chats[told_at].body["messages"]
        .as_array()
        .expect("messages")
        .clone();
    let told = messages
        .iter()
        .find(|m| m["role"] == "user" && m["content"].to_string().contains(TOLD))
        .expect("a user message");
    assert!(
        told["content"].to_string().contains("bash check.sh"),
        "{told}"
    );

    // The timeline: the loop with its rule and evidence, then its delivery into the thread.
    let timeline = engine
        .store()
        .steering_timeline(pb.project.id, &t.id)
        .expect("timeline");
    let looped = timeline
        .iter()
        .find(|e| e.kind == SteeringKind::Loop)
        .expect("a loop entry");
    let rule = looped.rule.expect("the rule");
    assert!(
        matches!(rule, LoopRule::Repeat | LoopRule::RepeatedError),
        "{rule:?}"
    );
    assert_eq!(looped.session_id, Some(session.id));
    assert_eq!(looped.tokens, 0);
    assert!(looped.evidence.len() >= 3, "{:?}", looped.evidence);
    assert!(looped.evidence.iter().all(|e| e.contains("check.sh")));
    assert!(
        !looped.detail.contains("rule"),
        "plain words: {}",
        looped.detail
    );
    let delivered: Vec<_> = timeline
        .iter()
        .filter(|e| e.kind == SteeringKind::Delivery)
        .collect();
    assert!(!delivered.is_empty());
    assert!(delivered[0].id > looped.id);
    assert_eq!(delivered[0].message, looped.message);
    let pulse = engine.store().session_pulse(session.id).expect("pulse");
    assert_eq!(pulse.loop_rule, Some(rule));
    assert!(pulse.last_activity_at.is_some());

    // The delivered message is a step of the session, as the person sees it.
    let steps = engine.store().session_steps(session.id, 0).expect("steps");
    assert!(steps
        .iter()
        .any(|s| s.step.source == StepSource::User && s.step.text.contains(TOLD)));
    assert!(!engine
        .store()
        .steering_waiting(session.id)
        .expect("waiting"));

    // The same session exported as an ATIF trajectory: `healer session check` finds the loop.
    let file = pb.repo_dir.with_extension("atif.json");
    std::fs::write(&file, engine.export_session_atif(session.id).expect("atif")).expect("file");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_healer"))
        .args(["session", "check", "--json"])
        .arg(&file)
        .env("HEALER_DATA_DIR", file.with_extension("data"))
        .output()
        .expect("healer runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let verdict: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(verdict["verdict"], "looping", "{verdict:#}");
    assert_eq!(verdict["rule"], rule.as_str());
}

#[tokio::test]
async fn an_agent_that_makes_progress_is_not_told_anything() {
    let pb = project_bed(false, |_| {}).await;
    let engine = pb.engine();
    let t = engine
        .add_task(pb.project.id, task("Greet properly"))
        .expect("task");
    pb.bed.server.script([
        call("c1", "read_file", json!({"path": "greet.py"})),
        call(
            "c2",
            "edit_file",
            json!({"path": "greet.py", "search": "'Hi ' + name", "replace": "'Hello, ' + name + '!'"}),
        ),
        call(
            "c3",
            "run_command",
            json!({"command": "python3 -c 'import greet; print(greet.greet(\"Ada\"))'"}),
        ),
        call("c4", "finish", json!({"summary": "done"})),
    ]);
    let session = engine
        .run_project_and_wait(pb.project.id, Some(&t.id))
        .await
        .expect("run");
    let timeline = engine
        .store()
        .steering_timeline(pb.project.id, &t.id)
        .expect("timeline");
    assert!(
        timeline
            .iter()
            .all(|e| !matches!(e.kind, SteeringKind::Loop | SteeringKind::Delivery)),
        "{timeline:?}"
    );
    // Its true heartbeat moved with its steps, and one heartbeat is on the timeline.
    let pulse = engine.store().session_pulse(session.id).expect("pulse");
    assert_eq!(pulse.loop_rule, None);
    assert!(pulse.last_activity_at.is_some());
    let beats = timeline
        .iter()
        .filter(|e| e.kind == SteeringKind::Heartbeat)
        .count();
    assert_eq!(beats, 1, "noted at most every five minutes");
    let _ = eventually("nothing left waiting", Duration::from_secs(1), || {
        (!engine
            .store()
            .steering_waiting(session.id)
            .expect("waiting"))
        .then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_session_silent_for_thirty_minutes_by_the_clock_is_ended_as_stuck() {
    use healer::failure::{FailureSource, ProjectScenario};
    use healer::session::SessionStatus;
    use healer::store::{SteeringSettings, DEFAULT_ZOMBIE_AFTER_SECS};
    use healer::tasklist::{read_file, TaskStatus, TASKS_FILE};

    let pb = project_bed(false, |_| {}).await;
    let engine = pb.engine();
    assert_eq!(
        engine.store().steering_settings().expect("settings"),
        SteeringSettings::default(),
        "the shipped default"
    );
    assert_eq!(DEFAULT_ZOMBIE_AFTER_SECS, 30 * 60);
    let t = engine
        .add_task(pb.project.id, task("Wait for ever"))
        .expect("task");
    pb.bed.server.script([call(
        "c1",
        "run_command",
        json!({"command": "sleep 300 & sleep 300; echo never", "timeout_secs": 600}),
    )]);
    let session = engine
        .run_project(pb.project.id, Some(&t.id))
        .expect("started");
    let marker = marker_of(engine, session.id);
    eventually("the sleeping command", Duration::from_secs(30), || {
        (marked_processes(&marker).len() >= 2).then_some(())
    })
    .await;
    let last = eventually("a heartbeat", Duration::from_secs(10), || {
        engine
            .store()
            .session_pulse(session.id)
            .expect("pulse")
            .last_activity_at
    })
    .await;
    let last = chrono::DateTime::parse_from_rfc3339(&last)
        .expect("time")
        .with_timezone(&chrono::Utc);

    // Healer's own looks are not activity: 29 minutes of silence is not stuck, and looking
    // did not move the heartbeat.
    let early = engine
        .end_stuck_sessions(last + chrono::Duration::minutes(29))
        .expect("looked");
    assert!(early.is_empty());
    let pulse = engine.store().session_pulse(session.id).expect("pulse");
    assert_eq!(
        pulse.last_activity_at.as_deref().map(|s| s.to_string()),
        Some(last.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
    );

    // At 30 minutes it is a zombie: ended, its processes gone, the task open with why.
    let ended = engine
        .end_stuck_sessions(last + chrono::Duration::minutes(30))
        .expect("looked");
    assert_eq!(ended, vec![session.id]);
    let record = finished(engine, session.id).await;
    assert_eq!(record.status, SessionStatus::Failed);
    assert!(record.summary.contains("stuck"), "{}", record.summary);
    assert!(record.summary.contains("30 minutes"), "{}", record.summary);
    assert!(marked_processes(&marker).is_empty(), "no process is left");
    let file = read_file(&pb.repo_dir.join(TASKS_FILE)).expect("tasks");
    let reopened = file.task(&t.id).expect("task");
    assert_eq!(reopened.status, TaskStatus::Open);
    assert_eq!(reopened.assignee, None);
    let comment = reopened.comments.last().expect("a comment");
    assert_eq!(comment.author, "healer");
    assert!(comment.text.contains("stuck"), "{}", comment.text);
    assert!(
        std::path::Path::new(&record.worktree)
            .join("greet.py")
            .exists(),
        "the worktree is kept"
    );

    // The timeline says so, the healer service got a SubtaskStuck failure, the person is told.
    let timeline = engine
        .store()
        .steering_timeline(pb.project.id, &t.id)
        .expect("timeline");
    assert!(timeline.iter().any(|e| e.kind == SteeringKind::Zombie));
    let heals = engine.heals(10).expect("heals");
    assert_eq!(heals.len(), 1);
    assert_eq!(heals[0].scenario, ProjectScenario::SubtaskStuck.as_str());
    assert_eq!(
        heals[0].source,
        FailureSource::ProjectTask {
            project_id: pb.project.id,
            task_id: t.id.clone(),
            session_id: session.id
        }
    );
    let notes = engine.notifications().expect("notifications");
    assert!(
        notes
            .items
            .iter()
            .any(|n| n.title.contains("stuck agent") && n.body.contains("30 minutes")),
        "{:?}",
        notes.items
    );
}
