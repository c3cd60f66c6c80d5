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
    let pb = project_bed(false, |_| {}).await;
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
