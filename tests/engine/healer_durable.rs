//! Durable healing for project tasks (issue 24): an invocation that asks the person is a stored
//! state, not a loop in memory. Through the CLI with no daemon, and with a daemon killed with
//! SIGKILL while the question waits: the decision carries out the plan (rewind with the
//! snapshot holding the untracked files, the task blocked, the follow-up written), the task is
//! held while Healer works on it, and a rewind after the worktree changed pins a second
//! snapshot first. Real git repositories, the real runner and verification, the built-in
//! agent against the scripted model server.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use healer::store::{HealerConfig, InvocationStatus, Store};
use healer::tasklist::{read_file, TaskStatus, TASKS_FILE};
use serde_json::json;

use crate::faults::{healer, Daemon};
use crate::healer_service::{greeter_on_disk, repairs_of, GreeterOnDisk, WRONG};
use crate::maintainer::{KEY, KEY_VAR};
use crate::model_server::ModelServer;
use crate::project_fixtures::*;

/// The exit status of `project run --wait` when Healer waits for the person's answer.
const WAITS_FOR_ANSWER: i32 = 3;

/// The greeter project at the healer service's defaults (conservative: a rewind asks first),
/// its agent scripted to make the wrong change and leave an untracked file.
struct Bed {
    server: ModelServer,
    _tmp: tempfile::TempDir,
    paths: healer::Paths,
    task_id: String,
}

async fn bed() -> Bed {
    // The shipped defaults: conservative, a rewind asks first.
    let GreeterOnDisk {
        server,
        tmp,
        paths,
        t,
        ..
    } = greeter_on_disk(HealerConfig::default().mode).await;
    server.script([
        call(
            "c1",
            "write_file",
            json!({"path": "greet.py", "content": WRONG}),
        ),
        call(
            "c2",
            "write_file",
            json!({"path": "notes.txt", "content": "what I tried\n"}),
        ),
        call("c3", "finish", json!({"summary": "done"})),
    ]);
    Bed {
        server,
        _tmp: tmp,
        paths,
        task_id: t.id,
    }
}

impl Bed {
    fn cli(&self, args: &[&str]) -> Output {
        healer(&self.paths)
            .env(KEY_VAR, KEY)
            .args(args)
            .output()
            .expect("healer runs")
    }

    fn store(&self) -> Store {
        Store::open(&self.paths.db()).expect("store")
    }

    fn repo(&self) -> PathBuf {
        self._tmp.path().join("greeter")
    }
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The checkpoint number in "healer checkpoint decide N OPTION".
fn question_of(said: &str) -> i64 {
    said.split("healer checkpoint decide ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no question in:\n{said}"))
}

/// `project run --wait` without a terminal: the session fails, Healer pins a snapshot and asks;
/// the command prints the question and how to answer it, and exits 3.
fn run_until_asked(bed: &Bed) -> (i64, PathBuf) {
    let out = bed.cli(&[
        "project",
        "run",
        "greeter",
        "--task",
        &bed.task_id,
        "--wait",
    ]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(WAITS_FOR_ANSWER), "{said}");
    assert!(
        said.contains("Healer wants to undo an agent's changes"),
        "{said}"
    );
    assert!(said.contains("1 (Proceed)"), "{said}");
    let checkpoint = question_of(&said);
    let store = bed.store();
    let inv = store
        .invocations(None, Some(&bed.task_id), 5)
        .expect("invocations")
        .remove(0);
    assert_eq!(inv.status, InvocationStatus::Waiting, "{}", inv.reason);
    assert_eq!(inv.waiting_checkpoint, Some(checkpoint));
    let worktree = PathBuf::from(
        &store
            .list_sessions(inv.project_id, None, 5)
            .expect("sessions")
            .remove(0)
            .worktree,
    );
    // Nothing is undone while the question waits.
    assert_eq!(
        std::fs::read(worktree.join("greet.py")).expect("greet.py"),
        WRONG.as_bytes()
    );
    (checkpoint, worktree)
}

/// What the decision must have done: rewound, blocked, a follow-up written, the invocation
/// contained, the untracked file kept in a snapshot.
fn assert_carried_out(bed: &Bed, worktree: &Path, said: &str) {
    assert!(said.contains("Done: "), "{said}");
    assert!(said.contains("back at its last commit"), "{said}");
    let now = std::fs::read_to_string(worktree.join("greet.py")).expect("greet.py");
    assert!(now.contains("'Hi '"), "not rewound: {now}");
    assert!(
        !worktree.join("notes.txt").exists(),
        "the untracked file is still there"
    );
    let file = read_file(&bed.repo().join(TASKS_FILE)).expect("tasks");
    let blocked = file.task(&bed.task_id).expect("task");
    assert_eq!(blocked.status, TaskStatus::Blocked);
    let store = bed.store();
    let inv = store
        .invocations(None, Some(&bed.task_id), 5)
        .expect("invocations")
        .remove(0);
    assert_eq!(inv.status, InvocationStatus::Contained, "{}", inv.reason);
    assert_eq!(
        repairs_of(&inv),
        [
            ("rewind_uncommitted_changes", true),
            ("mark_task_blocked_with_followup", true)
        ]
    );
    let followup = inv.followup_task.clone().expect("a follow-up");
    assert_eq!(
        file.task(&followup).expect("follow-up task").status,
        TaskStatus::Open
    );
    // The snapshot the question named holds the untracked file.
    let snap = store
        .snapshot(inv.snapshot_id.expect("a snapshot"))
        .expect("snapshot");
    let git = git2::Repository::open(bed.repo()).expect("repo");
    let tree = git
        .find_commit(git2::Oid::from_str(&snap.commit_id).expect("oid"))
        .expect("snapshot commit")
        .tree()
        .expect("tree");
    assert!(
        tree.get_name("notes.txt").is_some(),
        "the snapshot lost notes.txt"
    );
    // The person heard of the failure and of how Healer's work ended, by the task's title.
    let titles: Vec<String> = store
        .list_notifications()
        .expect("notifications")
        .items
        .into_iter()
        .map(|n| n.title)
        .collect();
    for expected in [
        "\u{201c}Greet properly\u{201d} in \u{201c}greeter\u{201d} needs a look",
        "Healer made safe \u{201c}Greet properly\u{201d} in \u{201c}greeter\u{201d}",
    ] {
        assert!(
            titles.iter().any(|t| t == expected),
            "{expected:?} in {titles:?}"
        );
    }
}

#[tokio::test]
async fn with_no_daemon_the_rewind_question_decided_from_the_cli_rewinds_blocks_and_writes_the_follow_up(
) {
    let bed = bed().await;
    let (checkpoint, worktree) = run_until_asked(&bed);

    // The task is held while Healer waits: a second run is refused with the reason, asked
    // for by name or as the next task.
    let again = bed.cli(&["project", "run", "greeter", "--task", &bed.task_id]);
    assert_eq!(again.status.code(), Some(1), "{}", text(&again));
    assert!(
        text(&again).contains("waits for your answer to its question"),
        "{}",
        text(&again)
    );
    let next = bed.cli(&["project", "run", "greeter"]);
    assert_eq!(next.status.code(), Some(1), "{}", text(&next));
    assert!(
        text(&next).contains("waits for your answer to its question"),
        "{}",
        text(&next)
    );
    assert_eq!(
        bed.store()
            .list_sessions(1, None, 10)
            .expect("sessions")
            .len(),
        1,
        "no second session started"
    );

    // The CLI becomes the engine for the decision, and the decision acts.
    let out = bed.cli(&["checkpoint", "decide", &checkpoint.to_string(), "1"]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(said.contains("snapshot 1"), "{said}");
    assert_carried_out(&bed, &worktree, &said);
    // One snapshot: nothing changed between the question and the answer.
    assert_eq!(
        bed.store().snapshots(None, None).expect("snapshots").len(),
        1
    );
    drop(bed.server);
}

#[tokio::test]
async fn a_rewind_after_the_worktree_changed_while_healer_asked_pins_a_second_snapshot_first() {
    let bed = bed().await;
    let (checkpoint, worktree) = run_until_asked(&bed);
    // The person's editor writes in the worktree while the question waits.
    std::fs::write(
        worktree.join("notes.txt"),
        "my own notes, written after Healer asked\n",
    )
    .expect("edited");

    let out = bed.cli(&["checkpoint", "decide", &checkpoint.to_string(), "1"]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    // The answer names the snapshot that holds the work as it was when the person answered.
    assert!(said.contains("snapshot 2"), "{said}");
    let snaps = bed.store().snapshots(None, None).expect("snapshots");
    assert_eq!(snaps.len(), 2, "{snaps:?}");
    let second = snaps.iter().find(|s| s.seq == 2).expect("snapshot 2");
    assert!(
        second.reason.contains("changed after Healer asked"),
        "{}",
        second.reason
    );

    // Nothing is lost: the second snapshot brings the person's edit back.
    let out = bed.cli(&["snapshot", "restore", &second.id.to_string()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(worktree.join("notes.txt")).expect("notes"),
        "my own notes, written after Healer asked\n"
    );
    drop(bed.server);
}

#[tokio::test]
async fn a_daemon_killed_while_healer_waits_for_the_answer_carries_it_out_after_its_restart() {
    let bed = bed().await;
    let daemon_cmd = || {
        let mut cmd: Command = healer(&bed.paths);
        cmd.env(KEY_VAR, KEY).arg("daemon");
        cmd
    };
    let logs = bed._tmp.path().join("daemon.log");
    let mut daemon = Daemon::start(daemon_cmd(), logs.clone());
    let (checkpoint, worktree) = run_until_asked(&bed);

    // SIGKILL: nothing is left in memory, only the stored state.
    daemon.child.kill().expect("killed");
    daemon.child.wait().expect("reaped");
    drop(daemon);
    let daemon = Daemon::start(daemon_cmd(), bed._tmp.path().join("daemon2.log"));
    let inv = bed
        .store()
        .invocations(None, Some(&bed.task_id), 5)
        .expect("invocations")
        .remove(0);
    assert_eq!(
        inv.status,
        InvocationStatus::Waiting,
        "a restart must not end a question that waits: {}",
        inv.reason
    );

    let out = bed.cli(&["checkpoint", "decide", &checkpoint.to_string(), "1"]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert_carried_out(&bed, &worktree, &said);
    drop(daemon);
    drop(bed.server);
}

/// The answer given with the engine killed while it carried it out (at `failpoint`); a daemon
/// started after it carries the answer out, once.
async fn killed_mid_act_then_carried_out_once(failpoint: &str) {
    let bed = bed().await;
    let (checkpoint, worktree) = run_until_asked(&bed);
    // The person's editor writes while the question waits: the act pins a second snapshot.
    std::fs::write(worktree.join("notes.txt"), "mine, after Healer asked\n").expect("edited");
    let out = healer(&bed.paths)
        .env(KEY_VAR, KEY)
        .env("HEALER_FAILPOINT", failpoint)
        .args(["checkpoint", "decide", &checkpoint.to_string(), "1"])
        .output()
        .expect("healer runs");
    assert!(
        text(&out).contains(&format!("failpoint {failpoint}")),
        "{failpoint}: {}",
        text(&out)
    );
    let inv = bed
        .store()
        .invocations(None, Some(&bed.task_id), 5)
        .expect("invocations")
        .remove(0);
    assert_ne!(inv.status, InvocationStatus::Unresolved, "{failpoint}");

    let mut cmd: Command = healer(&bed.paths);
    cmd.env(KEY_VAR, KEY).arg("daemon");
    let mut daemon = Daemon::start(cmd, bed._tmp.path().join("after.log"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let inv = loop {
        let inv = bed
            .store()
            .invocations(None, Some(&bed.task_id), 5)
            .expect("invocations")
            .remove(0);
        if inv.status != InvocationStatus::Running {
            break inv;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{failpoint}: still running"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    daemon.stop();
    assert_eq!(
        inv.status,
        InvocationStatus::Contained,
        "{failpoint}: {}",
        inv.reason
    );
    let done = bed
        .store()
        .checkpoint(checkpoint)
        .expect("checkpoint")
        .decision
        .map(|d| d.outcome)
        .unwrap_or_default();
    assert_carried_out(&bed, &worktree, &done);
    // Once: one follow-up task, the snapshot of the question and one of the answer.
    let file = read_file(&bed.repo().join(TASKS_FILE)).expect("tasks");
    let followups = file.tasks().iter().filter(|t| t.id != bed.task_id).count();
    assert_eq!(followups, 1, "{failpoint}: {:?}", file.tasks());
    let snaps = bed.store().snapshots(None, None).expect("snapshots");
    assert_eq!(snaps.len(), 2, "{failpoint}: {snaps:?}");
    drop(bed.server);
}

#[tokio::test]
async fn an_answer_the_engine_died_carrying_out_is_carried_out_once_by_the_next_engine() {
    for failpoint in [
        "snapshot_pinned",
        "healer.act_claimed",
        "healer.spell_recorded",
    ] {
        killed_mid_act_then_carried_out_once(failpoint).await;
    }
}

#[tokio::test]
async fn an_answer_that_keeps_ending_the_engine_is_given_up_after_three_tries_with_a_sentence() {
    let bed = bed().await;
    let (checkpoint, _) = run_until_asked(&bed);
    let point = "healer.before_spell_recorded";
    // Try 1: the command that records the answer.
    let out = healer(&bed.paths)
        .env(KEY_VAR, KEY)
        .env("HEALER_FAILPOINT", point)
        .args(["checkpoint", "decide", &checkpoint.to_string(), "1"])
        .output()
        .expect("healer runs");
    assert!(
        text(&out).contains("aborting at failpoint"),
        "{}",
        text(&out)
    );
    // Tries 2 and 3: engines that take it up at their start, and end the same way.
    for _ in 0..2 {
        let mut daemon = healer(&bed.paths)
            .env(KEY_VAR, KEY)
            .env("HEALER_FAILPOINT", point)
            .arg("daemon")
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("daemon");
        let status = daemon.wait().expect("ended");
        assert!(!status.success(), "the daemon ended at the failpoint");
    }
    let mut cmd: Command = healer(&bed.paths);
    cmd.env(KEY_VAR, KEY).arg("daemon");
    let mut daemon = Daemon::start(cmd, bed._tmp.path().join("last.log"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let inv = loop {
        let inv = bed
            .store()
            .invocations(None, Some(&bed.task_id), 5)
            .expect("invocations")
            .remove(0);
        if inv.status != InvocationStatus::Running {
            break inv;
        }
        assert!(std::time::Instant::now() < deadline, "still running");
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    daemon.stop();
    assert_eq!(inv.status, InvocationStatus::Unresolved);
    assert!(
        inv.reason
            .contains("stopped several times while it carried out your answer"),
        "{}",
        inv.reason
    );
    // It is said where the person looks: the question's outcome.
    let outcome = bed
        .store()
        .checkpoint(checkpoint)
        .expect("checkpoint")
        .decision
        .map(|d| d.outcome)
        .unwrap_or_default();
    assert!(outcome.contains("stopped trying"), "{outcome}");
    drop(bed.server);
}
