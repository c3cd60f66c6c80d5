//! A project's task list in its repository: written and read back, a hand edit noticed by the
//! running engine's watcher, bad lines reported with their number and kept through Healer's
//! writes, duplicates, unknown statuses and cycles each reported.

use std::time::Duration;

use healer::events::Event;
use healer::project::TaskEdit;
use healer::tasklist::{read_file, ProblemKind, TaskStatus, TASKS_FILE};

use crate::project_fixtures::*;

fn edit(title: &str) -> TaskEdit {
    TaskEdit {
        title: title.to_string(),
        ..TaskEdit::default()
    }
}

#[tokio::test]
async fn tasks_round_trip_through_the_file_and_a_hand_edit_is_noticed() {
    let pb = project_bed(true, |_| {}).await;
    let engine = pb.engine();
    let first = engine
        .add_task(
            pb.project.id,
            TaskEdit {
                description: "Say hello".to_string(),
                acceptance: vec!["greets".to_string()],
                labels: vec!["ui".to_string()],
                priority: Some(1),
                ..edit("Greet")
            },
        )
        .expect("added");
    let second = engine
        .add_task(
            pb.project.id,
            TaskEdit {
                deps: vec![first.id.clone()],
                ..edit("Wave")
            },
        )
        .expect("added");

    let path = pb.repo_dir.join(TASKS_FILE);
    let file = read_file(&path).expect("read");
    let back = file.task(&first.id).expect("first");
    assert_eq!(back, &first);
    assert_eq!(
        file.task(&second.id)
            .expect("second")
            .blocking_deps()
            .collect::<Vec<_>>(),
        [first.id.as_str()]
    );

    // A person edits the file by hand (their editor writes it in place).
    let mut events = engine.subscribe();
    let text = std::fs::read_to_string(&path).expect("text");
    std::fs::write(
        &path,
        text.replace("\"title\":\"Wave\"", "\"title\":\"Wave goodbye\""),
    )
    .expect("hand edit");
    let noticed = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let record = events.recv().await.expect("event");
            if let Event::ProjectTasksChanged {
                what, project_id, ..
            } = record.event
            {
                if project_id == pb.project.id && what.contains("outside Healer") {
                    return;
                }
            }
        }
    })
    .await;
    assert!(noticed.is_ok(), "the watcher announced the hand edit");
    let detail = engine.project_detail(pb.project.id).expect("detail");
    assert!(detail.tasks.iter().any(|t| t.task.title == "Wave goodbye"));
    let waiting = detail
        .tasks
        .iter()
        .find(|t| t.task.id == second.id)
        .expect("second");
    assert!(!waiting.ready);
    assert_eq!(waiting.waits_for, ["Greet"]);
    assert_eq!(detail.next.as_deref(), Some(first.id.as_str()));
}

#[tokio::test]
async fn a_malformed_line_is_reported_with_its_number_and_kept_on_the_next_write() {
    let pb = project_bed(false, |_| {}).await;
    let engine = pb.engine();
    let path = pb.repo_dir.join(TASKS_FILE);
    std::fs::create_dir_all(path.parent().expect("dir")).expect("dir");
    std::fs::write(
        &path,
        concat!(
            "{\"id\":\"a\",\"title\":\"A\",\"status\":\"open\",\"deps\":[\"c\"]}\n",
            "{\"id\":\"b\",\"title\":\"B\",\"status\":\"open\"\n",
            "{\"id\":\"c\",\"title\":\"C\",\"status\":\"open\",\"deps\":[\"a\"]}\n",
            "{\"id\":\"a\",\"title\":\"A again\",\"status\":\"open\"}\n",
            "{\"id\":\"d\",\"title\":\"D\",\"status\":\"doing\"}\n",
        ),
    )
    .expect("file");
    let detail = engine.project_detail(pb.project.id).expect("detail");
    let found: Vec<(Option<u32>, ProblemKind)> =
        detail.problems.iter().map(|p| (p.line, p.kind)).collect();
    assert_eq!(
        found,
        [
            (Some(2), ProblemKind::InvalidJson),
            (Some(4), ProblemKind::DuplicateId),
            (Some(5), ProblemKind::UnknownStatus),
            (None, ProblemKind::Cycle),
        ]
    );
    assert!(detail.problems[0]
        .message
        .starts_with("Line 2: not valid JSON"));
    assert_eq!(
        detail.next, None,
        "a and c wait for each other; nothing else is usable"
    );
    let refused = engine
        .run_project(pb.project.id, None)
        .expect_err("nothing is ready");
    assert!(
        refused.to_string().contains("none of the 2 open task(s)"),
        "{refused}"
    );

    // Healer writes the file: every line it could not read is still there, as it was.
    let added = engine.add_task(pb.project.id, edit("E")).expect("added");
    let text = std::fs::read_to_string(&path).expect("text");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 6);
    assert_eq!(
        lines[1],
        "{\"id\":\"b\",\"title\":\"B\",\"status\":\"open\""
    );
    assert!(lines[3].contains("A again"));
    assert!(lines[4].contains("\"doing\""));
    assert!(lines[5].contains(&format!("\"id\":\"{}\"", added.id)));
    let again = engine.project_detail(pb.project.id).expect("detail");
    assert_eq!(
        again.problems.iter().filter(|p| p.line == Some(2)).count(),
        1,
        "still reported"
    );

    // Closing by hand and reordering are writes too.
    engine
        .set_task_status(
            pb.project.id,
            "a",
            TaskStatus::Closed,
            Some("Not needed".to_string()),
        )
        .expect("closed");
    let after = read_file(&path).expect("read");
    assert_eq!(
        after.task("a").expect("a").closed_reason.as_deref(),
        Some("Not needed")
    );
    assert_eq!(
        after
            .problems
            .iter()
            .filter(|p| p.kind == ProblemKind::InvalidJson)
            .count(),
        1
    );
    engine
        .move_task(pb.project.id, &added.id, Some("a"))
        .expect("moved");
    let order: Vec<String> = read_file(&path)
        .expect("read")
        .tasks()
        .iter()
        .map(|t| t.id.clone())
        .collect();
    assert_eq!(order.first().map(String::as_str), Some(added.id.as_str()));
}
