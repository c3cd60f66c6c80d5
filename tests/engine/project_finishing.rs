//! Finishing an agent's work from the task's review, with real git: accepted when the main
//! branch moved (rebased, or merged, then checked again), a conflict that writes nothing and
//! then resolved by the agent and accepted, checks that fail after the main branch came in,
//! and a discard that a snapshot brings back.

use std::path::Path;

use git2::Repository;
use healer::engine::Acceptance;
use healer::project::finish::{AcceptHow, BringMainIn};
use healer::project::TaskEdit;
use healer::session::SessionStatus;
use healer::store::MergePolicy;
use healer::tasklist::{read_file, TaskStatus, TASKS_FILE};
use serde_json::json;

use crate::project_fixtures::*;

fn task(title: &str) -> TaskEdit {
    TaskEdit {
        title: title.to_string(),
        description: "greet() must say Hello, with a comma and an exclamation mark.".to_string(),
        ..TaskEdit::default()
    }
}

/// The agent fixes greet.py and finishes; its work is left on its branch.
async fn green_on_branch(pb: &ProjectBed) -> String {
    let engine = pb.engine();
    let t = engine
        .add_task(pb.project.id, task("Greet properly"))
        .expect("task");
    pb.bed.server.script([
        call(
            "c1",
            "write_file",
            json!({"path": "greet.py", "content": "def greet(name):\n    return 'Hello, ' + name + '!'\n"}),
        ),
        call("c2", "finish", json!({"summary": "greet() says Hello"})),
    ]);
    let session = engine
        .run_project_and_wait(pb.project.id, Some(&t.id))
        .await
        .expect("run");
    assert_eq!(
        session.status,
        SessionStatus::Finished,
        "{}",
        session.summary
    );
    assert!(!session.merged, "left on its branch");
    t.id
}

/// The person commits on the main branch in their own checkout.
fn commit_on_main(repo_dir: &Path, files: &[(&str, &str)], message: &str) -> git2::Oid {
    let repo = Repository::open(repo_dir).expect("repo");
    write_files(repo_dir, files);
    commit_all(&repo, message)
}

fn main_tip(repo_dir: &Path) -> git2::Commit<'static> {
    let repo = Box::leak(Box::new(Repository::open(repo_dir).expect("repo")));
    repo.find_branch("main", git2::BranchType::Local)
        .expect("main")
        .get()
        .peel_to_commit()
        .expect("commit")
}

/// The project's checks are now `check` alone.
fn checks_are(pb: &ProjectBed, check: healer::store::VerifyCommand) {
    let mut settings = pb.project.settings.clone();
    settings.verify = vec![check];
    pb.engine()
        .update_project(
            pb.project.id,
            healer::project::ProjectInput {
                path: pb.project.path.clone(),
                name: pb.project.name.clone(),
                settings,
            },
        )
        .expect("settings");
}

fn task_status(repo_dir: &Path, id: &str) -> (TaskStatus, Option<String>) {
    let file = read_file(&repo_dir.join(TASKS_FILE)).expect("tasks");
    let t = file.task(id).expect("task");
    (t.status, t.closed_reason.clone())
}

#[tokio::test]
async fn work_whose_main_branch_moved_is_rebased_checked_again_and_accepted() {
    let pb = project_bed(false, |s| s.merge = MergePolicy::LeaveBranch).await;
    let id = green_on_branch(&pb).await;
    let moved = commit_on_main(&pb.repo_dir, &[("NOTES.md", "a note\n")], "a note");

    let accepted = pb
        .engine()
        .accept_task(pb.project.id, &id, None)
        .await
        .expect("accept");
    let Acceptance::Accepted { how, said, .. } = &accepted else {
        panic!("{accepted:?}")
    };
    assert_eq!(*how, AcceptHow::FastForward);
    assert!(said.contains("brought into the work first"), "{said}");
    assert!(!said.contains("healer/"), "{said}");
    assert!(said.contains("checks passed again"), "{said}");
    // A straight history: the agent's commit replayed on the person's.
    let tip = main_tip(&pb.repo_dir);
    assert_eq!(tip.parent_count(), 1);
    assert_eq!(tip.parent_id(0).expect("parent"), moved);
    assert!(file_at(&pb.repo_dir, "main", "greet.py").contains("Hello, "));
    assert_eq!(file_at(&pb.repo_dir, "main", "NOTES.md"), "a note\n");
    // The person's checkout (on main) follows.
    let on_disk = std::fs::read_to_string(pb.repo_dir.join("greet.py")).expect("greet.py");
    assert!(on_disk.contains("Hello, "), "{on_disk}");
    let (status, reason) = task_status(&pb.repo_dir, &id);
    assert_eq!(status, TaskStatus::Closed);
    assert!(reason.expect("reason").starts_with("Accepted into main on"));
    // Nothing more to accept.
    let again = pb.engine().accept_task(pb.project.id, &id, None).await;
    assert!(
        again
            .as_ref()
            .is_err_and(|e| e.to_string().contains("nothing")),
        "{again:?}"
    );
}

#[tokio::test]
async fn work_whose_main_branch_moved_is_merged_then_squashed_into_one_commit() {
    let pb = project_bed(false, |s| {
        s.merge = MergePolicy::LeaveBranch;
        s.finishing.bring_main_in = BringMainIn::Merge;
    })
    .await;
    let id = green_on_branch(&pb).await;
    let moved = commit_on_main(&pb.repo_dir, &[("NOTES.md", "a note\n")], "a note");

    let accepted = pb
        .engine()
        .accept_task(pb.project.id, &id, Some(AcceptHow::Squash))
        .await
        .expect("accept");
    assert!(
        matches!(
            accepted,
            Acceptance::Accepted {
                how: AcceptHow::Squash,
                ..
            }
        ),
        "{accepted:?}"
    );
    // The branch holds a merge of the main branch …
    let repo = Repository::open(&pb.repo_dir).expect("repo");
    let branch_tip = repo
        .find_branch(&format!("healer/{id}"), git2::BranchType::Local)
        .expect("branch")
        .get()
        .peel_to_commit()
        .expect("commit");
    assert_eq!(branch_tip.parent_count(), 2, "main merged into the branch");
    // … and the main branch one commit with all of the work.
    let tip = main_tip(&pb.repo_dir);
    assert_eq!(tip.parent_count(), 1);
    assert_eq!(tip.parent_id(0).expect("parent"), moved);
    assert_eq!(
        tip.message().expect("message").lines().next(),
        Some("Greet properly")
    );
    assert!(file_at(&pb.repo_dir, "main", "greet.py").contains("Hello, "));
    assert_eq!(file_at(&pb.repo_dir, "main", "NOTES.md"), "a note\n");
}

#[tokio::test]
async fn a_check_that_fails_once_the_main_branch_came_in_accepts_nothing() {
    let pb = project_bed(false, |s| s.merge = MergePolicy::LeaveBranch).await;
    let id = green_on_branch(&pb).await;
    // The person's commit breaks what the check needs.
    let moved = commit_on_main(
        &pb.repo_dir,
        &[
            ("helpers.py", "raise SystemExit('helpers are broken')\n"),
            ("greet_extra.py", ""),
        ],
        "helpers",
    );
    let check = healer::store::VerifyCommand {
        name: "test".to_string(),
        command: "python3 helpers.py && python3 -c 'from greet import greet; assert greet(\"Ada\") == \"Hello, Ada!\"'".to_string(),
    };
    checks_are(&pb, check);

    let accepted = pb
        .engine()
        .accept_task(pb.project.id, &id, None)
        .await
        .expect("accept");
    let Acceptance::ChecksFailed {
        check,
        output,
        said,
    } = &accepted
    else {
        panic!("{accepted:?}")
    };
    assert_eq!(check, "test");
    assert!(output.contains("helpers are broken"), "{output}");
    assert!(said.contains("nothing was accepted"), "{said}");
    assert_eq!(main_tip(&pb.repo_dir).id(), moved, "main did not move");
    assert_eq!(task_status(&pb.repo_dir, &id).0, TaskStatus::Closed);
}

#[tokio::test]
async fn a_conflict_writes_nothing_and_the_agent_resolves_it_into_the_main_branch() {
    let pb = project_bed(false, |s| s.merge = MergePolicy::LeaveBranch).await;
    let id = green_on_branch(&pb).await;
    // The person changed the same line.
    commit_on_main(
        &pb.repo_dir,
        &[("greet.py", "def greet(name):\n    return 'Howdy ' + name\n")],
        "howdy",
    );
    let before = main_tip(&pb.repo_dir).id();

    let accepted = pb
        .engine()
        .accept_task(pb.project.id, &id, None)
        .await
        .expect("accept");
    let Acceptance::Conflict { files, said } = &accepted else {
        panic!("{accepted:?}")
    };
    assert_eq!(files, &vec!["greet.py".to_string()]);
    assert!(said.contains("greet.py"), "{said}");
    // No marker anywhere the person looks; nothing moved.
    let theirs = std::fs::read_to_string(pb.repo_dir.join("greet.py")).expect("file");
    assert!(!theirs.contains("<<<<<<<"), "{theirs}");
    assert_eq!(main_tip(&pb.repo_dir).id(), before);

    // *Ask the agent to resolve it*: it sees both sides in its worktree and resolves them.
    pb.bed.server.script([
        call("r1", "read_file", json!({"path": "greet.py"})),
        call(
            "r2",
            "write_file",
            json!({"path": "greet.py", "content": "def greet(name):\n    return 'Hello, ' + name + '!'\n"}),
        ),
        call("r3", "finish", json!({"summary": "kept Hello, dropped Howdy"})),
    ]);
    let session = pb
        .engine()
        .resolve_conflict_with_agent(pb.project.id, &id, None)
        .expect("resolving session");
    let ended = pb.engine().wait_session(session.id).await.expect("ended");
    assert_eq!(ended.status, SessionStatus::Finished, "{}", ended.summary);
    assert!(ended.merged, "{}", ended.summary);
    // The agent saw the conflict markers in what it read.
    let asked = pb.bed.server.seen();
    let read = asked
        .iter()
        .map(|s| s.body.to_string())
        .find(|b| b.contains("<<<<<<<"));
    assert!(read.is_some(), "the agent read both sides");
    let tip = main_tip(&pb.repo_dir);
    assert_eq!(
        tip.parent_count(),
        2,
        "a merge of the main branch and the work"
    );
    assert!(tip.parent_ids().any(|p| p == before));
    let greet = file_at(&pb.repo_dir, "main", "greet.py");
    assert!(
        greet.contains("Hello, ") && !greet.contains("<<<<<<<"),
        "{greet}"
    );
    assert_eq!(task_status(&pb.repo_dir, &id).0, TaskStatus::Closed);
}

#[tokio::test]
async fn a_resolution_that_leaves_conflict_markers_is_not_committed() {
    let pb = project_bed(false, |s| s.merge = MergePolicy::LeaveBranch).await;
    let id = green_on_branch(&pb).await;
    commit_on_main(
        &pb.repo_dir,
        &[("greet.py", "def greet(name):\n    return 'Howdy ' + name\n")],
        "howdy",
    );
    let before = main_tip(&pb.repo_dir).id();
    pb.bed
        .server
        .script([call("r1", "finish", json!({"summary": "done"}))]);
    let session = pb
        .engine()
        .resolve_conflict_with_agent(pb.project.id, &id, None)
        .expect("resolving session");
    let ended = pb.engine().wait_session(session.id).await.expect("ended");
    assert_eq!(ended.status, SessionStatus::Failed, "{}", ended.summary);
    assert!(
        ended.summary.contains("conflict markers in greet.py"),
        "{}",
        ended.summary
    );
    assert_eq!(main_tip(&pb.repo_dir).id(), before);
}

#[tokio::test]
async fn discarded_work_is_gone_from_git_and_a_snapshot_brings_it_back() {
    let pb = project_bed(false, |s| s.merge = MergePolicy::LeaveBranch).await;
    let id = green_on_branch(&pb).await;
    let branch = format!("healer/{id}");

    let discarded = pb
        .engine()
        .discard_task_work(pb.project.id, &id)
        .await
        .expect("discard");
    assert!(discarded.said.contains("snapshot"), "{}", discarded.said);
    let repo = Repository::open(&pb.repo_dir).expect("repo");
    assert!(
        repo.find_branch(&branch, git2::BranchType::Local).is_err(),
        "branch gone"
    );
    assert_eq!(task_status(&pb.repo_dir, &id).0, TaskStatus::Open);
    assert!(!file_at(&pb.repo_dir, "main", "greet.py").contains("Hello, "));

    pb.engine()
        .restore_snapshot(discarded.snapshot_id)
        .await
        .expect("restore");
    assert!(
        file_at(&pb.repo_dir, &branch, "greet.py").contains("Hello, "),
        "the branch is back with the work"
    );
}

/// A check (the agent's test code, run in the worktree) can rewrite the worktree's `.git` to
/// name the person's own repository. Healer's commit must not follow it onto their branch.
#[tokio::test]
async fn a_check_that_points_the_worktree_at_the_persons_repository_commits_nothing_there() {
    let pb = project_bed(false, |_| {}).await;
    let person_git = pb.repo_dir.join(".git");
    let check = healer::store::VerifyCommand {
        name: "test".to_string(),
        command: format!(
            "python3 -c \"import pathlib; pathlib.Path('.git').write_text('gitdir: {}\\n')\"",
            person_git.display()
        ),
    };
    checks_are(&pb, check);
    let before = main_tip(&pb.repo_dir).id();
    let index_before = std::fs::read(person_git.join("index")).expect("index");
    let t = pb
        .engine()
        .add_task(pb.project.id, task("Greet properly"))
        .expect("task");
    pb.bed.server.script([
        call(
            "c1",
            "write_file",
            json!({"path": "greet.py", "content": "def greet(name):\n    return 'Hello, ' + name + '!'\n"}),
        ),
        call("c2", "finish", json!({"summary": "greet() says Hello"})),
    ]);
    let session = pb
        .engine()
        .run_project_and_wait(pb.project.id, Some(&t.id))
        .await
        .expect("run");
    assert_ne!(
        session.status,
        SessionStatus::Finished,
        "{}",
        session.summary
    );
    assert!(!session.merged);
    assert!(
        session.summary.contains("will not use the git data"),
        "{}",
        session.summary
    );
    assert_eq!(main_tip(&pb.repo_dir).id(), before, "main did not move");
    assert_eq!(
        std::fs::read(person_git.join("index")).expect("index"),
        index_before,
        "the person's index was not touched"
    );
    let head = Repository::open(&pb.repo_dir)
        .and_then(|r| r.head().and_then(|h| h.peel_to_commit()).map(|c| c.id()))
        .expect("head");
    assert_eq!(head, before, "nothing was committed on the person's branch");
}

/// "Ask the agent to resolve it" is the person's decision to accept: when the engine stops while
/// the agent resolves the conflict, the next engine starts the agent on it again (the merge under
/// way kept in its worktree) and accepts the work as the person chose.
#[tokio::test]
async fn an_engine_stopped_while_the_agent_resolves_a_conflict_carries_the_accept_out_after_its_restart(
) {
    let pb = project_bed(false, |s| s.merge = MergePolicy::LeaveBranch).await;
    let id = green_on_branch(&pb).await;
    commit_on_main(
        &pb.repo_dir,
        &[("greet.py", "def greet(name):\n    return 'Howdy ' + name\n")],
        "howdy",
    );
    let before = main_tip(&pb.repo_dir).id();
    pb.bed.server.script([crate::steering_judge::wait_for_go()]);
    let first = pb
        .engine()
        .resolve_conflict_with_agent(pb.project.id, &id, Some(AcceptHow::Squash))
        .expect("resolving session");
    eventually(
        "the agent at work",
        std::time::Duration::from_secs(30),
        || {
            let steps = pb.engine().store().session_steps(first.id, 0).ok()?;
            steps
                .iter()
                .any(|s| s.step.tool.as_deref() == Some("run_command"))
                .then_some(())
        },
    )
    .await;
    let ProjectBed {
        bed:
            crate::maintainer::Bed {
                _tmp,
                paths,
                engine,
                server,
            },
        repo_dir,
        project,
    } = pb;
    engine.shutdown().await;
    drop(engine);
    let stopped = healer::store::Store::open(&paths.db())
        .and_then(|s| s.session(first.id))
        .expect("session");
    assert_eq!(stopped.status, SessionStatus::Interrupted);
    assert_eq!(main_tip(&repo_dir).id(), before, "nothing accepted yet");

    server.script([
        call(
            "r2",
            "write_file",
            json!({"path": "greet.py", "content": "def greet(name):\n    return 'Hello, ' + name + '!'\n"}),
        ),
        call("r3", "finish", json!({"summary": "kept Hello, dropped Howdy"})),
    ]);
    let engine = healer::Engine::start(paths.clone(), "test")
        .await
        .expect("restarted");
    let again = eventually(
        "the resolution started again",
        std::time::Duration::from_secs(30),
        || {
            engine
                .store()
                .list_sessions(project.id, Some(&id), 10)
                .ok()?
                .into_iter()
                .find(|s| s.id > first.id)
        },
    )
    .await;
    let ended = engine.wait_session(again.id).await.expect("ended");
    assert_eq!(ended.status, SessionStatus::Finished, "{}", ended.summary);
    assert!(ended.merged, "{}", ended.summary);
    // Squashed as the person chose: one commit on top of their main, with the resolution.
    let tip = main_tip(&repo_dir);
    assert_eq!(tip.parent_count(), 1);
    assert_eq!(tip.parent_id(0).expect("parent"), before);
    assert!(file_at(&repo_dir, "main", "greet.py").contains("Hello, "));
    assert!(engine.store().accept_intents().expect("intents").is_empty());
    engine.shutdown().await;
}
