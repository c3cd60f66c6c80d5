//! Comments on the agent's lines: kept as the person writes them, sent as one message — into
//! the running session's next request, or a session that picks the ended task up again on its
//! branch — and shown as answered once the agent's next change touches their lines. The
//! built-in agent's real tool loop against the scripted model server, in a real repository.

use healer::project::TaskEdit;
use healer::session::SessionStatus;
use healer::store::{MergePolicy, ReviewComment, SteeringKind};
use serde_json::json;

use crate::project_fixtures::*;
use crate::steering_judge::{last_user_message, let_go, run_until_waiting, wait_for_go};

const FIRST: &str = "def greet(name):\n    return 'Hello, ' + name + '!'\n";
const SECOND: &str = "def greet(name):\n    return f'Hello, {name}!'\n";

fn task() -> TaskEdit {
    TaskEdit {
        title: "Greet properly".to_string(),
        description: "greet() must say Hello, with a comma and an exclamation mark.".to_string(),
        ..TaskEdit::default()
    }
}

fn write(id: &str, content: &str) -> crate::model_server::Reply {
    call(
        id,
        "write_file",
        json!({"path": "greet.py", "content": content}),
    )
}

fn by_line(comments: &[ReviewComment], line: u32) -> &ReviewComment {
    comments
        .iter()
        .find(|c| c.line_start == line)
        .expect("the comment on that line")
}

#[tokio::test]
async fn comments_on_ended_work_go_to_a_new_session_and_the_lines_it_changes_are_answered() {
    let pb = project_bed(false, |s| s.merge = MergePolicy::LeaveBranch).await;
    let engine = pb.engine();
    let t = engine.add_task(pb.project.id, task()).expect("task");
    pb.bed.server.script([
        write("c1", FIRST),
        call("c2", "finish", json!({"summary": "greet() says Hello"})),
    ]);
    let first = engine
        .run_project_and_wait(pb.project.id, Some(&t.id))
        .await
        .expect("run");
    assert_eq!(first.status, SessionStatus::Finished, "{}", first.summary);

    // What a comment may be on: a line of a file the agent changed, as it reads now.
    let comment = |path: &'static str, start: u32, end: u32, text: &'static str| {
        engine.add_review_comment(pb.project.id, &t.id, path, start, end, text)
    };
    let refused = comment("test_greet.py", 1, 1, "x")
        .await
        .expect_err("not changed");
    assert!(
        refused.to_string().contains("not among the files"),
        "{refused}"
    );
    let refused = comment("greet.py", 3, 3, "x").await.expect_err("no line 3");
    assert!(refused.to_string().contains("has 2 lines"), "{refused}");
    assert!(comment("greet.py", 2, 2, "   ").await.is_err());

    let on_two = comment("greet.py", 2, 2, "Use an f-string here.")
        .await
        .expect("kept");
    assert_eq!(on_two.excerpt, "    return 'Hello, ' + name + '!'");
    assert!(on_two.sent_at.is_none());
    let mistaken = comment("greet.py", 1, 1, "typo").await.expect("kept");
    engine
        .delete_review_comment(mistaken.id)
        .expect("an unsent comment is forgotten");
    comment("greet.py", 1, 1, "Keep the name of the function.")
        .await
        .expect("kept");

    pb.bed.server.script([
        write("c3", SECOND),
        call("c4", "finish", json!({"summary": "an f-string"})),
    ]);
    let sent = engine
        .send_review_comments(pb.project.id, &t.id)
        .expect("sent");
    assert_eq!(sent.count, 2);
    assert!(
        sent.said.contains("picks the task up again"),
        "{}",
        sent.said
    );
    let second = engine.wait_session(sent.session_id).await.expect("ended");
    assert_eq!(second.status, SessionStatus::Finished, "{}", second.summary);
    assert_ne!(second.id, first.id);

    // One message carried both, with the lines as they read.
    let chats = pb.bed.server.chats();
    let asked = chats
        .iter()
        .map(last_user_message)
        .find(|m| m.contains("Use an f-string here."))
        .expect("the comments reached the agent's request");
    assert!(asked.contains("greet.py, line 2"), "{asked}");
    assert!(asked.contains("return 'Hello, ' + name + '!'"), "{asked}");
    assert!(asked.contains("Keep the name of the function."), "{asked}");

    // The agent changed line 2, not line 1.
    let comments = engine
        .review_comments(pb.project.id, &t.id)
        .await
        .expect("comments");
    assert_eq!(comments.len(), 2);
    assert!(comments
        .iter()
        .all(|c| c.sent_session_id == Some(second.id)));
    assert!(by_line(&comments, 2).addressed_at.is_some());
    assert!(by_line(&comments, 1).addressed_at.is_none());
    // What was sent is part of what the agent was told: it stays, and nothing waits.
    assert!(engine.delete_review_comment(on_two.id).is_err());
    let nothing = engine
        .send_review_comments(pb.project.id, &t.id)
        .expect_err("nothing waits");
    assert!(
        nothing.to_string().contains("no comment waits"),
        "{nothing}"
    );
}

#[tokio::test]
async fn comments_sent_while_the_agent_works_reach_its_next_request() {
    let pb = project_bed(false, |s| s.merge = MergePolicy::LeaveBranch).await;
    let engine = pb.engine();
    let t = engine.add_task(pb.project.id, task()).expect("task");
    pb.bed.server.script([
        write("c0", FIRST),
        wait_for_go(),
        write("c3", SECOND),
        call("c4", "finish", json!({"summary": "an f-string"})),
    ]);
    let session = run_until_waiting(&pb, &t.id).await;
    engine
        .add_review_comment(
            pb.project.id,
            &t.id,
            "greet.py",
            2,
            2,
            "Use an f-string here.",
        )
        .await
        .expect("kept on the working copy's lines");
    let sent = engine
        .send_review_comments(pb.project.id, &t.id)
        .expect("sent");
    assert_eq!(sent.session_id, session.id, "into the running session");
    assert!(sent.said.contains("while it works"), "{}", sent.said);
    let timeline = engine
        .store()
        .steering_timeline(pb.project.id, &t.id)
        .expect("timeline");
    assert!(timeline.iter().any(|e| e.kind == SteeringKind::Message
        && e.message
            .as_deref()
            .is_some_and(|m| m.contains("Use an f-string here."))));

    // Sent, and not answered while the agent has not changed the line yet.
    let before = engine
        .review_comments(pb.project.id, &t.id)
        .await
        .expect("comments");
    assert!(before[0].sent_at.is_some() && before[0].addressed_at.is_none());

    let_go(&session);
    let ended = finished(engine, session.id).await;
    assert_eq!(ended.status, SessionStatus::Finished, "{}", ended.summary);
    let chats = pb.bed.server.chats();
    assert!(
        chats
            .iter()
            .map(last_user_message)
            .any(|m| m.contains("Use an f-string here.") && m.contains("greet.py, line 2")),
        "the comment reached a request of the running session"
    );
    let comments = engine
        .review_comments(pb.project.id, &t.id)
        .await
        .expect("comments");
    assert!(comments[0].addressed_at.is_some(), "{comments:?}");
}
