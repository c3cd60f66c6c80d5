//! Reviewing an agent's change: while the built-in agent works, its worktree against the
//! task's start (new files included); after, the commit it ended with — file by file, with the
//! lines added and removed and both texts. A real repository, the real runner and agent.

use std::time::Duration;

use healer::project::review::ReviewOf;
use healer::project::TaskEdit;
use healer::session::SessionStatus;
use serde_json::json;

use crate::project_fixtures::*;

fn task(title: &str) -> TaskEdit {
    TaskEdit {
        title: title.to_string(),
        description: "greet() must say Hello, with a comma and an exclamation mark.".to_string(),
        ..TaskEdit::default()
    }
}

#[tokio::test]
async fn a_working_agents_change_and_its_commit_are_reviewed_file_by_file() {
    let pb = project_bed(false, |_| {}).await;
    let engine = pb.engine();
    let t = engine
        .add_task(pb.project.id, task("Greet properly"))
        .expect("task");
    // It edits, writes a new file, then works on (a long command) while the person looks.
    pb.bed.server.script([
        call(
            "c1",
            "edit_file",
            json!({"path": "greet.py", "search": "'Hi ' + name", "replace": "'Hello, ' + name + '!'"}),
        ),
        call(
            "c2",
            "run_command",
            json!({"command": "printf 'one\\ntwo\\n' > NOTES.md && sleep 300", "timeout_secs": 600}),
        ),
    ]);
    let session = engine
        .run_project(pb.project.id, Some(&t.id))
        .expect("started");

    // The shell creates NOTES.md a moment before it writes its two lines; a look in between
    // rightly shows it empty, so wait for the written state the agent then works on in.
    let mut review = None;
    for _ in 0..400 {
        let now = engine.review_session(session.id).await.expect("review");
        let written = now
            .files
            .iter()
            .any(|f| f.path == "NOTES.md" && f.after.as_deref() == Some("one\ntwo\n"));
        if now.files.len() == 2 && written {
            review = Some(now);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let review = review.expect("the worktree shows both files while the agent works");
    assert_eq!(review.of, ReviewOf::Worktree);
    assert!(review.worktree.is_some());
    let greet = review
        .files
        .iter()
        .find(|f| f.path == "greet.py")
        .expect("greet.py");
    assert_eq!(
        (greet.how.as_str(), greet.added, greet.removed),
        ("modified", 1, 1)
    );
    assert!(greet
        .before
        .as_deref()
        .unwrap_or_default()
        .contains("'Hi ' + name"));
    assert!(greet
        .after
        .as_deref()
        .unwrap_or_default()
        .contains("'Hello, ' + name + '!'"));
    let notes = review
        .files
        .iter()
        .find(|f| f.path == "NOTES.md")
        .expect("the new file");
    assert_eq!(
        (notes.how.as_str(), notes.added, notes.removed),
        ("added", 2, 0)
    );
    assert_eq!(notes.before.as_deref(), Some(""));
    // The task's review is its running session's.
    let of_task = engine
        .review_task(pb.project.id, &t.id)
        .await
        .expect("task review");
    assert_eq!(of_task.files.len(), 2);

    engine.stop_session(session.id).expect("stop");
    let stopped = finished(engine, session.id).await;
    assert_eq!(stopped.status, SessionStatus::Stopped);

    // Run again to the end: it commits, and the review is of the commit.
    pb.bed.server.script([
        call(
            "c3",
            "run_command",
            json!({"command": "python3 -c 'import greet; print(greet.greet(\"Ada\"))'"}),
        ),
        call(
            "c4",
            "finish",
            json!({"summary": "greet() now says Hello, Ada!"}),
        ),
    ]);
    let done = engine
        .run_project_and_wait(pb.project.id, Some(&t.id))
        .await
        .expect("run");
    assert_eq!(done.status, SessionStatus::Finished, "{}", done.summary);
    let commit = done.commit_id.clone().expect("a commit");
    let committed = engine
        .review_task(pb.project.id, &t.id)
        .await
        .expect("task review");
    assert_eq!(committed.of, ReviewOf::Commit);
    assert_eq!(committed.commit.as_deref(), Some(&commit[..7]));
    let paths: Vec<&str> = committed.files.iter().map(|f| f.path.as_str()).collect();
    assert!(
        paths.contains(&"greet.py") && paths.contains(&"NOTES.md"),
        "{paths:?}"
    );
    assert!(
        paths.iter().all(|p| !p.starts_with(".healer/")),
        "Healer's own files are not the agent's change: {paths:?}"
    );

    // The Sessions page's history: its tokens, and its cost once its models have prices.
    let history = engine.session_history().expect("history");
    let past = history
        .iter()
        .find(|p| p.session.id == done.id)
        .expect("the session in the history");
    assert!(past.tokens > 0, "{past:?}");
    assert_eq!(past.cost_usd, None, "no price set: the cost is not known");
    let models: Vec<String> = engine
        .store()
        .session_steps(done.id, 0)
        .expect("steps")
        .into_iter()
        .filter_map(|s| s.step.model)
        .collect();
    assert!(!models.is_empty());
    let provider = engine.store().provider("scripted").expect("provider");
    engine
        .save_provider(healer::llm::ProviderInput {
            name: provider.name.clone(),
            title: None,
            kind: provider.kind,
            base_url: Some(provider.base_url.clone()),
            key_env: provider.key_env.clone(),
            prices: models
                .iter()
                .map(|m| healer::llm::ModelPrice {
                    model: m.clone(),
                    input_per_mtok: 1.0,
                    output_per_mtok: 2.0,
                    cached_input_per_mtok: None,
                })
                .collect(),
        })
        .expect("prices");
    let priced = engine.session_history().expect("history");
    let cost = priced
        .iter()
        .find(|p| p.session.id == done.id)
        .and_then(|p| p.cost_usd)
        .expect("a cost once priced");
    assert!(cost > 0.0 && cost < 1.0, "{cost}");
}

/// A task's work, once its task is closed and its slot folder went to the next task, still
/// opens as its own: "Open in editor" gets a checkout of its branch, never the folder that now
/// holds the other task's branch; its review stays its commit; and the checkout made for the
/// person gives way when the task is worked on again.
#[tokio::test]
async fn a_finished_tasks_work_opens_from_its_own_branch_after_its_folder_went_to_another_task() {
    let pb = project_bed(false, |_| {}).await;
    let engine = pb.engine();
    let first = engine
        .add_task(pb.project.id, task("Greet properly"))
        .expect("task");
    pb.bed.server.script([
        call(
            "c1",
            "edit_file",
            json!({"path": "greet.py", "search": "'Hi ' + name", "replace": "'Hello, ' + name + '!'"}),
        ),
        call("c2", "finish", json!({"summary": "greet() says Hello."})),
    ]);
    let one = engine
        .run_project_and_wait(pb.project.id, Some(&first.id))
        .await
        .expect("run");
    assert_eq!(one.status, SessionStatus::Finished, "{}", one.summary);
    assert!(one.commit_id.is_some(), "{one:?}");

    let second = engine
        .add_task(
            pb.project.id,
            TaskEdit {
                title: "Write notes".to_string(),
                description: "Add NOTES.md.".to_string(),
                ..TaskEdit::default()
            },
        )
        .expect("task");
    pb.bed.server.script([
        call(
            "c3",
            "run_command",
            json!({"command": "printf 'notes\\n' > NOTES.md"}),
        ),
        call("c4", "finish", json!({"summary": "Notes written."})),
    ]);
    let two = engine
        .run_project_and_wait(pb.project.id, Some(&second.id))
        .await
        .expect("run");
    assert_eq!(two.status, SessionStatus::Finished, "{}", two.summary);
    assert_eq!(
        one.worktree, two.worktree,
        "the closed task's slot is the one the next task reused (what this test is about)"
    );

    // The first task's review is still its own commit, and it opens elsewhere than the slot.
    let review = engine
        .review_task(pb.project.id, &first.id)
        .await
        .expect("review");
    assert_eq!(review.of, ReviewOf::Commit);
    let paths: Vec<&str> = review.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, vec!["greet.py"]);
    let shown = review.worktree.clone().expect("something to open");
    assert_ne!(shown, one.worktree);
    let opened = engine.session_worktree(one.id).await.expect("opens");
    assert_eq!(opened.display().to_string(), shown);
    let head = git2::Repository::open(&opened)
        .and_then(|r| {
            r.head()
                .map(|h| h.shorthand().unwrap_or_default().to_string())
        })
        .expect("a checkout");
    assert_eq!(head, one.branch);
    let greet = std::fs::read_to_string(opened.join("greet.py")).expect("greet.py");
    assert!(greet.contains("'Hello, ' + name + '!'"), "{greet}");
    assert!(
        !opened.join("NOTES.md").exists(),
        "the other task's work is not in it"
    );
    // Opened again: the same checkout.
    assert_eq!(
        engine.session_worktree(one.id).await.expect("opens"),
        opened
    );
    // The second task's own folder is its slot.
    assert_eq!(
        engine
            .session_worktree(two.id)
            .await
            .expect("opens")
            .display()
            .to_string(),
        two.worktree
    );

    // Worked on again, the first task takes its branch back from the person's checkout.
    engine
        .set_task_status(
            pb.project.id,
            &first.id,
            healer::tasklist::TaskStatus::Open,
            None,
        )
        .expect("reopened");
    pb.bed.server.script([call(
        "c5",
        "finish",
        json!({"summary": "Nothing more to do."}),
    )]);
    let again = engine
        .run_project_and_wait(pb.project.id, Some(&first.id))
        .await
        .expect("run");
    assert_ne!(again.status, SessionStatus::Failed, "{}", again.summary);
    assert!(!opened.exists(), "the person's checkout was put away");
}
