//! The healer service for projects, end to end on the engine: real git repositories, the real
//! runner, the built-in agent's real tool loop against the scripted model server, real
//! verification processes.

use healer::project::TaskEdit;
use healer::session::SessionStatus;
use healer::store::MergePolicy;
use serde_json::json;

use crate::project_fixtures::*;

fn task(title: &str) -> TaskEdit {
    TaskEdit {
        title: title.to_string(),
        description: "greet() must say Hello, with a comma and an exclamation mark.".to_string(),
        acceptance: vec!["greet('Ada') returns 'Hello, Ada!'".to_string()],
        ..TaskEdit::default()
    }
}

/// The agent changes the wrong thing and says it is done: verification fails.
fn wrong_change(server: &crate::model_server::ModelServer) {
    server.script([
        call(
            "c1",
            "write_file",
            json!({"path": "greet.py", "content": "def greet(name):\n    return 'Hey ' + name\n"}),
        ),
        call("c2", "finish", json!({"summary": "done"})),
    ]);
}

#[tokio::test]
async fn a_resumed_built_in_session_continues_its_thread_with_the_message_and_is_linked() {
    let pb = project_bed(false, |s| s.merge = MergePolicy::LeaveBranch).await;
    let engine = pb.engine();
    let t = engine
        .add_task(pb.project.id, task("Greet properly"))
        .expect("task");
    wrong_change(&pb.bed.server);
    let first = engine
        .run_project_and_wait(pb.project.id, Some(&t.id))
        .await
        .expect("run");
    assert_eq!(first.status, SessionStatus::Failed, "{}", first.summary);
    let chats_before = pb.bed.server.chats().len();

    pb.bed.server.script([
        call("d1", "edit_file", json!({"path": "greet.py", "search": "'Hey ' + name", "replace": "'Hello, ' + name + '!'"})),
        call("d2", "finish", json!({"summary": "fixed the greeting"})),
    ]);
    let message = "Verification failed: the test wants 'Hello, Ada!'. Fix greet().";
    let resumed = engine
        .resume_session_and_wait(pb.project.id, &t.id, first.id, message)
        .await
        .expect("resume");
    assert_eq!(
        resumed.status,
        SessionStatus::Finished,
        "{}",
        resumed.summary
    );
    assert_ne!(resumed.id, first.id, "a new session of the task");
    assert_eq!(resumed.task_id, t.id);
    assert_eq!(resumed.resumed_from, Some(first.id));
    assert_eq!(
        resumed.agent_session_id, first.agent_session_id,
        "the built-in agent continued its own thread"
    );
    assert_eq!(resumed.worktree, first.worktree, "in the same worktree");
    assert!(file_at(&pb.repo_dir, "healer/t1", "greet.py").contains("Hello, "));

    // The first model call of the resume carried the earlier turns and then the message.
    let chats = pb.bed.server.chats();
    let body = &chats[chats_before].body;
    let sent = body["messages"].to_string();
    assert!(sent.contains("'Hey ' + name"), "the earlier turns: {sent}");
    let last = body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .expect("messages");
    assert_eq!(last["content"], json!(message));

    // Only the new turn's steps are the resumed session's.
    let steps = engine.store().session_steps(resumed.id, 0).expect("steps");
    assert!(steps
        .iter()
        .any(|s| s.step.text.contains("Resuming the agent's earlier session")));
    assert!(!steps
        .iter()
        .any(|s| s.step.tool.as_deref() == Some("write_file")));

    // A session of another task, or a closed task, is refused with a sentence.
    let err = engine
        .resume_session(pb.project.id, "nope", first.id, "x")
        .expect_err("not its task");
    assert!(err.to_string().contains("not a session of task"), "{err}");
}
