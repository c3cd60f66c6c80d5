//! A person's own programs write `.healer/tasks.jsonl` while Healer runs twenty tasks and
//! writes their status (issue 23, item 4): a shell appending lines one by one (800), and an
//! editor saving the way editors do — a new file with the person's change, renamed over the
//! old one (200 saves). Not one of the person's lines is lost, and no task is left in
//! progress once the sessions have ended: an editor's save from a copy read before Healer
//! wrote undoes Healer's write, and the engine puts it right when it sees the change.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use healer::store::VerifyCommand;
use healer::tasklist::{read_file, TaskStatus, TASKS_FILE};

use super::Figures;
use crate::model_server::{openai, TOKENS};
use crate::project_fixtures::{eventually, project_bed, ProjectBed};

const TASKS: usize = 20;

/// The person's line `n` of kind `who` (closed, so that no session picks it up).
fn line(who: &str, n: usize) -> String {
    format!("{{\"id\":\"{who}{n}\",\"title\":\"{who} line {n}\",\"status\":\"closed\"}}\n")
}

/// Appends `count` lines to `file` one at a time, as `echo … >> tasks.jsonl` does.
fn appender(file: PathBuf, count: usize, done: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        for n in 0..count {
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&file)
                .expect("the task list");
            f.write_all(line("hand", n).as_bytes()).expect("append");
            drop(f);
            std::thread::sleep(Duration::from_millis(3));
        }
        done.store(true, Ordering::SeqCst);
    })
}

/// Saves `count` times as an editor does: read, add a line, write a new file, rename it over.
fn editor(file: PathBuf, count: usize, done: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let temp = file.with_file_name(".tasks.jsonl.swp");
        for n in 0..count {
            let mut text = std::fs::read_to_string(&file).expect("the task list");
            // An editor keeps the buffer open a moment before it saves.
            std::thread::sleep(Duration::from_millis(4));
            text.push_str(&line("editor", n));
            std::fs::write(&temp, &text).expect("the editor's file");
            std::fs::rename(&temp, &file).expect("the editor's save");
            std::thread::sleep(Duration::from_millis(8));
        }
        done.store(true, Ordering::SeqCst);
    })
}

async fn twenty_tasks_while(
    start: impl FnOnce(PathBuf, Arc<AtomicBool>) -> std::thread::JoinHandle<()>,
) -> (ProjectBed, usize) {
    let bed = project_bed(true, |s| {
        s.verify = vec![VerifyCommand {
            name: "check".to_string(),
            command: "true".to_string(),
        }];
    })
    .await;
    let engine = bed.engine();
    for i in 0..TASKS {
        engine
            .add_task(
                bed.project.id,
                healer::project::TaskEdit {
                    title: format!("Task {i}"),
                    ..healer::project::TaskEdit::default()
                },
            )
            .expect("task");
    }
    let file = bed.repo_dir.join(TASKS_FILE);
    let done = Arc::new(AtomicBool::new(false));
    let person = start(file.clone(), done.clone());
    for i in 1..=TASKS {
        let args = serde_json::json!({"path": format!("notes/n{i}.txt"), "content": "done\n"});
        let finish = serde_json::json!({"summary": "wrote a note"});
        bed.bed.server.script([
            openai::tool_calls(&[("c1", "write_file", &args.to_string())], TOKENS),
            openai::tool_calls(&[("c2", "finish", &finish.to_string())], TOKENS),
        ]);
        let session = engine
            .run_project_and_wait(bed.project.id, Some(&format!("t{i}")))
            .await
            .expect("run");
        assert!(session.commit_id.is_some(), "{}", session.summary);
    }
    while !done.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    person.join().expect("the person's program");
    // The engine sees the last change of the person's (after its watcher's pause) and puts
    // the list right: nothing left in progress, and every task of Healer's closed.
    let stuck = eventually(
        "no task left in progress and every task closed",
        Duration::from_secs(20),
        || {
            let list = read_file(&file).ok()?;
            let stuck = list
                .tasks()
                .iter()
                .filter(|t| t.status == TaskStatus::InProgress)
                .count();
            (stuck == 0 && not_closed(&file) == 0).then_some(0)
        },
    )
    .await;
    assert_eq!(not_closed(&file), 0, "every task of Healer's is closed");
    (bed, stuck)
}

/// Healer's tasks that are not closed.
fn not_closed(file: &Path) -> usize {
    let list = read_file(file).expect("readable");
    (1..=TASKS)
        .filter(|i| {
            list.task(&format!("t{i}"))
                .is_none_or(|t| t.status != TaskStatus::Closed)
        })
        .count()
}

fn report(test: &str, injected: u32, lost: usize, stuck: usize) {
    Figures {
        faults: injected,
        ..Figures::default()
    }
    .print(test);
    println!("tasklist: {test}: {lost} lines lost, {stuck} tasks stuck");
}

#[tokio::test]
async fn lines_appended_by_hand_while_twenty_tasks_run_are_all_kept() {
    let (bed, stuck) = twenty_tasks_while(|file, done| appender(file, 800, done)).await;
    let ids = read_file(&bed.repo_dir.join(TASKS_FILE)).expect("list");
    let hand = ids
        .tasks()
        .iter()
        .filter(|t| t.id.starts_with("hand"))
        .count();
    report("task-list appends", 800, 800 - hand, stuck);
    assert_eq!(hand, 800, "lost {} of the person's 800 lines", 800 - hand);
    assert_eq!(stuck, 0);
}

#[tokio::test]
async fn an_editors_saves_while_twenty_tasks_run_lose_no_line_and_leave_no_task_stuck() {
    let (bed, stuck) = twenty_tasks_while(|file, done| editor(file, 200, done)).await;
    let list = read_file(&bed.repo_dir.join(TASKS_FILE)).expect("list");
    let saved = list
        .tasks()
        .iter()
        .filter(|t| t.id.starts_with("editor"))
        .count();
    report("task-list editor saves", 200, 200 - saved, stuck);
    assert_eq!(saved, 200, "lost {} of the person's 200 lines", 200 - saved);
    assert_eq!(stuck, 0);
}

/// An editor saved an old copy of the list while Healer was closed: the task whose session
/// had finished with a commit shows "in progress" again. At the next start Healer closes it
/// again with its commit, before anything else looks at the list.
#[tokio::test]
async fn a_stale_copy_saved_while_healer_was_closed_is_put_right_at_the_next_start() {
    use healer::project::{ProjectInput, TaskEdit};

    let crate::maintainer::Bed {
        _tmp,
        paths,
        engine,
        server,
    } = crate::maintainer::bed(false, true).await;
    let repo = paths.data_dir().parent().expect("tmp").join("greeter");
    crate::project_fixtures::git_repo(&repo, crate::project_fixtures::GREETER);
    let project = engine
        .add_project(ProjectInput {
            path: repo.display().to_string(),
            name: "greeter".to_string(),
            settings: healer::store::ProjectSettings {
                verify: vec![VerifyCommand {
                    name: "check".to_string(),
                    command: "true".to_string(),
                }],
                ..healer::store::ProjectSettings::default()
            },
        })
        .expect("project");
    engine
        .add_task(
            project.id,
            TaskEdit {
                title: "Write a note".to_string(),
                ..TaskEdit::default()
            },
        )
        .expect("task");
    let file = repo.join(TASKS_FILE);
    // The editor's copy, as it was while the agent worked.
    let args = serde_json::json!({"path": "note.txt", "content": "done\n"});
    let finish = serde_json::json!({"summary": "wrote a note"});
    server.script([
        openai::tool_calls(&[("c1", "write_file", &args.to_string())], TOKENS),
        openai::tool_calls(&[("c2", "finish", &finish.to_string())], TOKENS),
    ]);
    let session = engine
        .run_project_and_wait(project.id, Some("t1"))
        .await
        .expect("run");
    let commit = session.commit_id.clone().expect("a commit");
    engine.shutdown().await;
    drop(engine);

    let mut stale = read_file(&file).expect("list");
    stale
        .update("t1", "2020-01-01T00:00:00.000Z", |t| {
            t.status = TaskStatus::InProgress;
            t.commit = None;
        })
        .expect("stale");
    std::fs::write(&file, stale.render_bytes()).expect("the editor's save");

    let engine = crate::project_agent_fixtures::engine_at(&paths).await;
    let list = read_file(&file).expect("list");
    let task = list.task("t1").expect("t1");
    assert_eq!(task.status, TaskStatus::Closed, "{task:?}");
    assert_eq!(task.commit.as_deref(), Some(commit.as_str()));
    engine.shutdown().await;
    report("task-list stale copy at start", 1, 0, 0);
}

/// Saves as an editor does (copy, add a line, rename back) until `stop`; how many it saved.
fn editor_until(file: PathBuf, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<usize> {
    std::thread::spawn(move || {
        let temp = file.with_file_name(".tasks.jsonl.swp");
        let mut n = 0;
        while !stop.load(Ordering::SeqCst) {
            let mut text = std::fs::read_to_string(&file).unwrap_or_default();
            std::thread::sleep(Duration::from_millis(4));
            text.push_str(&line("editor", n));
            std::fs::write(&temp, &text).expect("the editor's file");
            std::fs::rename(&temp, &file).expect("the editor's save");
            n += 1;
            // Thirty saves a second: far more than a person makes, so races come often.
            std::thread::sleep(Duration::from_millis(30));
        }
        n
    })
}

#[tokio::test]
async fn forty_tasks_added_from_the_command_line_while_an_editor_saves_are_all_in_the_list() {
    let bed = project_bed(false, |_| {}).await;
    let file = bed.repo_dir.join(TASKS_FILE);
    std::fs::create_dir_all(file.parent().expect("folder")).expect(".healer");
    if !file.exists() {
        std::fs::write(&file, "").expect("an empty list");
    }
    let stop = Arc::new(AtomicBool::new(false));
    let person = editor_until(file.clone(), stop.clone());
    let mut said_added = 0;
    for i in 0..40 {
        let out = crate::faults::healer(&bed.bed.paths)
            .args(["project", "task", "add", "greeter", "--title"])
            .arg(format!("Added from the command line {i}"))
            .output()
            .expect("healer runs");
        let said = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{said}");
        if said.contains("Added task") {
            said_added += 1;
        }
    }
    stop.store(true, Ordering::SeqCst);
    let saves = person.join().expect("the editor");
    let list = read_file(&file).expect("list");
    let ours = list
        .tasks()
        .iter()
        .filter(|t| t.title.starts_with("Added from the command line"))
        .count();
    let editors = list
        .tasks()
        .iter()
        .filter(|t| t.id.starts_with("editor"))
        .count();
    report(
        "task-list adds racing an editor",
        saves as u32,
        40 - ours,
        0,
    );
    assert_eq!(said_added, 40);
    assert_eq!(ours, 40, "{} of Healer's 40 tasks lost", 40 - ours);
    assert_eq!(
        editors,
        saves,
        "{} of the editor's lines lost",
        saves - editors
    );
}
