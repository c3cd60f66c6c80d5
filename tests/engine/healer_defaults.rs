//! Every row of the healer service's planner, reached at the shipped defaults: the limit of
//! one repair per task is never raised here (a person's choice of mode, or a scenario switch a
//! row needs, is set where a test says so). Real git repositories, the real runner, the
//! built-in agent against the scripted model server, real checks and init scripts.

use healer::session::SessionStatus;
use healer::store::{
    HealerConfig, InvocationStatus, MergePolicy, DEFAULT_MAX_INVOCATIONS_PER_TASK,
};
use healer::tasklist::{read_file, TaskStatus, PROGRESS_FILE, TASKS_FILE};
use serde_json::json;

use crate::healer_service::{
    aggressive, commit_in, ended_invocations, healer_on, repairs_of, spells_of, task, wrong_change,
    GREEN, WRONG,
};
use crate::project_fixtures::*;

fn at_the_defaults(engine: &healer::Engine, project_id: i64) {
    let config = engine.healer_config(project_id).expect("settings");
    assert_eq!(
        config.max_invocations_per_subtask,
        DEFAULT_MAX_INVOCATIONS_PER_TASK
    );
    assert_eq!(DEFAULT_MAX_INVOCATIONS_PER_TASK, 1);
}

fn status_of(repo: &std::path::Path, id: &str) -> TaskStatus {
    read_file(&repo.join(TASKS_FILE))
        .expect("tasks")
        .task(id)
        .expect("task")
        .status
}

/// A person opens a task again (from the board) so it can run.
fn reopen(engine: &healer::Engine, project_id: i64, id: &str) {
    engine
        .set_task_status(project_id, id, TaskStatus::Open, None)
        .expect("reopened");
}

/// Rows "the agent could not finish" (resume) and "… for the third time" (blocked with a
/// follow-up), and the per-task limit at its default: the first failure is repaired once, the
/// second is skipped with the reason, the third — after the person ran it again — contains the
/// task although the limit was reached.
#[tokio::test]
async fn a_task_that_keeps_failing_is_repaired_once_then_blocked_at_its_third_failure() {
    // The built-in agent may make one model call: each session ends at its step limit.
    let pb = project_bed(false, |s| {
        s.merge = MergePolicy::LeaveBranch;
        s.max_steps = 1;
    })
    .await;
    let engine = pb.engine();
    healer_on(engine, pb.project.id);
    at_the_defaults(engine, pb.project.id);
    let t = engine
        .add_task(pb.project.id, task("Greet properly"))
        .expect("task");
    pb.bed.server.script([
        call("a1", "read_file", json!({"path": "greet.py"})),
        call("a2", "read_file", json!({"path": "greet.py"})),
    ]);
    let first = engine
        .run_project_and_wait(pb.project.id, Some(&t.id))
        .await
        .expect("run");
    assert_eq!(first.status, SessionStatus::Failed, "{}", first.summary);
    // 1st failure: the agent resumes its own session (and fails again); that 2nd failure is
    // past the limit and the task has not given up yet: skipped, saying when Healer comes back.
    let two = ended_invocations(engine, &t.id, 2).await;
    assert_eq!(
        spells_of(&two[1]),
        [
            ("retry_with_claude_code_resume", false),
            ("update_progress_with_guidance", true)
        ]
    );
    assert_eq!(two[0].status, InvocationStatus::Skipped);
    assert!(
        two[0].reason.contains("once for this task") && two[0].reason.contains("failed 3 times"),
        "{}",
        two[0].reason
    );

    // The person runs it again; it fails a third time: blocked with a follow-up.
    if status_of(&pb.repo_dir, &t.id) != TaskStatus::Open {
        reopen(engine, pb.project.id, &t.id);
    }
    pb.bed
        .server
        .script([call("a3", "read_file", json!({"path": "greet.py"}))]);
    let third = engine
        .run_project_and_wait(pb.project.id, Some(&t.id))
        .await
        .expect("run");
    assert_eq!(third.status, SessionStatus::Failed, "{}", third.summary);
    let all = ended_invocations(engine, &t.id, 3).await;
    let last = &all[0];
    assert_eq!(last.session_id, Some(third.id));
    assert_eq!(last.status, InvocationStatus::Contained, "{}", last.reason);
    assert_eq!(
        spells_of(last),
        [
            ("mark_task_blocked_with_followup", true),
            ("update_progress_with_guidance", true)
        ]
    );
    let file = read_file(&pb.repo_dir.join(TASKS_FILE)).expect("tasks");
    assert_eq!(file.task(&t.id).expect("task").status, TaskStatus::Blocked);
    assert!(file
        .task(last.followup_task.as_deref().expect("follow-up"))
        .is_some());
    let progress = std::fs::read_to_string(pb.repo_dir.join(PROGRESS_FILE)).expect("progress");
    assert!(progress.contains("failed 3 times"), "{progress}");

    // The follow-up names the sessions by title and time, each with its trajectory's path.
    let followup = file
        .task(last.followup_task.as_deref().expect("follow-up"))
        .expect("follow-up")
        .description
        .clone();
    let sessions = engine
        .store()
        .list_sessions(pb.project.id, Some(&t.id), 10)
        .expect("sessions");
    assert_eq!(sessions.len(), 3);
    assert!(!followup.contains("session 1 ("), "{followup}");
    for s in &sessions {
        let path = pb.bed.paths.session_trajectory(s.id).display().to_string();
        assert!(followup.contains(&path), "{path} in {followup}");
        let written: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("trajectory written"))
                .expect("ATIF");
        assert_eq!(written["session_id"], format!("healer-session-{}", s.id));
    }
    assert!(
        followup.contains("\u{201c}Greet properly\u{201d} with Healer's built-in agent, started "),
        "{followup}"
    );
    assert!(followup.contains(" UTC: failed"), "{followup}");

    // The first invocation's trajectory links the session its resume started.
    let resumed = sessions
        .iter()
        .find(|s| s.resumed_from == Some(first.id))
        .expect("the resumed session");
    let exported: serde_json::Value =
        serde_json::from_str(&engine.export_session_atif(first.id).expect("atif")).expect("json");
    let refs: Vec<&serde_json::Value> = exported["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .filter_map(|s| {
            s["observation"]["results"][0]["subagent_trajectory_ref"][0]["extra"]["trajectory"]
                .as_object()
        })
        .flat_map(|inv| inv["steps"].as_array().into_iter().flatten())
        .filter_map(|s| s["observation"]["results"][0]["subagent_trajectory_ref"].as_array())
        .flatten()
        .collect();
    assert_eq!(refs.len(), 1, "{exported:#}");
    assert_eq!(
        refs[0]["session_id"],
        format!("healer-session-{}", resumed.id)
    );
    let path = refs[0]["trajectory_path"].as_str().expect("a path");
    assert!(std::path::Path::new(path).is_file(), "{path}");
    // The Sessions page's history: every session, newest first, with its project and tokens.
    let history = engine.session_history().expect("history");
    let ids: Vec<i64> = history.iter().map(|p| p.session.id).collect();
    let mut newest_first = ids.clone();
    newest_first.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(ids, newest_first);
    assert!(history.iter().filter(|p| p.session.task_id == t.id).count() == 3);
    assert!(history.iter().all(|p| p.project_name == "greeter"));
    assert!(history.iter().any(|p| p.tokens > 0), "{history:?}");
    // The limit held: one repair in all.
    let repairs = all
        .iter()
        .flat_map(|i| i.spells.iter())
        .filter(|s| s.spell.starts_with("retry_") || s.spell == "fix_typecheck_errors")
        .count();
    assert_eq!(repairs, 1);
}

/// Rows "red verification" (rewind the uncommitted change, block) and "red verification for
/// the third time" (back to the last green commit) at the default limit: the person reopens
/// the blocked task, the second failure is skipped, the agent commits red work, and the third
/// failure takes the branch back to the green commit with what came after pinned first.
#[tokio::test]
async fn a_task_failing_three_times_after_committing_red_work_goes_back_to_the_last_green_commit() {
    let pb = project_bed(false, |_| {}).await;
    let engine = pb.engine();
    // The person's choice of mode: rewinds without asking (the limits stay at the defaults).
    aggressive(engine, pb.project.id, |_| {});
    at_the_defaults(engine, pb.project.id);

    // 1. A green task: verification passes, Healer commits and fast-forwards main.
    let first = engine
        .add_task(pb.project.id, task("Greet properly"))
        .expect("task");
    pb.bed.server.script([
        call(
            "g1",
            "write_file",
            json!({"path": "greet.py", "content": GREEN}),
        ),
        call("g2", "finish", json!({"summary": "done"})),
    ]);
    let green = engine
        .run_project_and_wait(pb.project.id, Some(&first.id))
        .await
        .expect("green run");
    assert_eq!(green.status, SessionStatus::Finished, "{}", green.summary);
    let green_commit = green.commit_id.clone().expect("a green commit");

    // 2. Later work on top of it fails: rewound and blocked; reopened by the person, it
    // fails again (skipped: the limit, and it has not given up yet).
    let t = engine
        .add_task(pb.project.id, task("Greet loudly"))
        .expect("task");
    wrong_change(&pb.bed.server);
    let s1 = engine
        .run_project_and_wait(pb.project.id, Some(&t.id))
        .await
        .expect("run");
    assert_eq!(s1.status, SessionStatus::Failed, "{}", s1.summary);
    let inv = ended_invocations(engine, &t.id, 1).await.remove(0);
    assert_eq!(
        repairs_of(&inv),
        [
            ("rewind_uncommitted_changes", true),
            ("mark_task_blocked_with_followup", true)
        ]
    );
    assert_eq!(status_of(&pb.repo_dir, &t.id), TaskStatus::Blocked);
    reopen(engine, pb.project.id, &t.id);
    wrong_change(&pb.bed.server);
    let s2 = engine
        .run_project_and_wait(pb.project.id, Some(&t.id))
        .await
        .expect("run");
    assert_eq!(s2.status, SessionStatus::Failed, "{}", s2.summary);
    let skipped = ended_invocations(engine, &t.id, 2).await.remove(0);
    assert_eq!(
        skipped.status,
        InvocationStatus::Skipped,
        "{}",
        skipped.reason
    );
    let worktree = std::path::PathBuf::from(&s2.worktree);

    // 3. The agent commits its red work, and fails a third time.
    std::fs::write(worktree.join("greet.py"), WRONG).expect("red work");
    let red_commit = commit_in(&worktree, "louder (red)");
    assert_ne!(red_commit, green_commit);
    if status_of(&pb.repo_dir, &t.id) != TaskStatus::Open {
        reopen(engine, pb.project.id, &t.id);
    }
    const LATER: &str = "def greet(name):\n    return 'HEY ' + name\n";
    pb.bed.server.script([
        call(
            "r1",
            "write_file",
            json!({"path": "greet.py", "content": LATER}),
        ),
        call(
            "r2",
            "write_file",
            json!({"path": "notes/loud.txt", "content": "untracked\n"}),
        ),
        call("r3", "finish", json!({"summary": "done"})),
    ]);
    let third = engine
        .run_project_and_wait(pb.project.id, Some(&t.id))
        .await
        .expect("run");
    assert_eq!(third.status, SessionStatus::Failed, "{}", third.summary);

    let inv = ended_invocations(engine, &t.id, 3).await.remove(0);
    assert_eq!(inv.session_id, Some(third.id));
    assert_eq!(
        repairs_of(&inv),
        [
            ("rewind_to_last_green_commit", true),
            ("mark_task_blocked_with_followup", true),
            ("update_progress_with_guidance", true)
        ],
        "{:?}",
        inv.spells
    );
    assert_eq!(inv.status, InvocationStatus::Contained, "{}", inv.reason);
    assert!(
        inv.spells[1].summary.contains(&green_commit[..7]),
        "{}",
        inv.spells[1].summary
    );
    let git = git2::Repository::open(&worktree).expect("worktree");
    let head = git.head().expect("head");
    assert!(head.is_branch(), "the branch moved, HEAD is not detached");
    assert_eq!(
        head.peel_to_commit().expect("commit").id().to_string(),
        green_commit
    );
    assert_eq!(
        std::fs::read(worktree.join("greet.py")).expect("greet.py"),
        GREEN.as_bytes()
    );
    assert!(!worktree.join("notes/loud.txt").exists());

    // The snapshot keeps what came after: the red commit and the last session's files.
    let snap_id = inv.snapshot_id.expect("a snapshot");
    let snap = engine
        .snapshots(Some(pb.project.id), Some(&t.id))
        .expect("snapshots")
        .into_iter()
        .find(|s| s.id == snap_id)
        .expect("recorded");
    let pinned = git
        .find_reference(&snap.ref_name)
        .expect("the ref")
        .peel_to_commit()
        .expect("commit");
    assert!(
        git.graph_descendant_of(pinned.id(), git2::Oid::from_str(&red_commit).expect("oid"))
            .expect("graph")
            || pinned.id().to_string() == red_commit,
        "the snapshot keeps the red commit"
    );
    let said = engine.restore_snapshot(snap_id).await.expect("restore");
    assert!(said.contains("Restored"), "{said}");
    assert_eq!(
        std::fs::read(worktree.join("greet.py")).expect("greet.py"),
        LATER.as_bytes()
    );
    assert_eq!(
        std::fs::read(worktree.join("notes/loud.txt")).expect("untracked"),
        b"untracked\n"
    );
}

/// Row "the init script's tests fail" (main is red before the agent starts): a progress note
/// and the task blocked with a follow-up; no agent session runs.
#[tokio::test]
async fn tests_red_on_main_block_the_task_with_a_follow_up_before_any_agent_runs() {
    let pb = project_bed(false, |s| {
        s.init_script = Some("python3 -m unittest -q test_unit".to_string())
    })
    .await;
    let engine = pb.engine();
    healer_on(engine, pb.project.id);
    at_the_defaults(engine, pb.project.id);
    write_files(
        &pb.repo_dir,
        &[(
            "test_unit.py",
            "import unittest\nfrom greet import greet\n\nclass Greet(unittest.TestCase):\n    def test_greet(self):\n        self.assertEqual(greet('Ada'), 'Hello, Ada!')\n",
        )],
    );
    let repo = git2::Repository::open(&pb.repo_dir).expect("repo");
    commit_all(&repo, "a unittest that main fails");
    let t = engine
        .add_task(pb.project.id, task("Greet properly"))
        .expect("task");
    let failed = engine
        .run_project_and_wait(pb.project.id, Some(&t.id))
        .await
        .expect("run");
    assert_eq!(failed.status, SessionStatus::Failed);
    let inv = ended_invocations(engine, &t.id, 1).await.remove(0);
    assert_eq!(inv.scenario, "InitScriptTestFailure");
    assert_eq!(inv.status, InvocationStatus::Contained, "{}", inv.reason);
    assert_eq!(
        spells_of(&inv),
        [
            ("update_progress_with_guidance", true),
            ("mark_task_blocked_with_followup", true)
        ]
    );
    let file = read_file(&pb.repo_dir.join(TASKS_FILE)).expect("tasks");
    assert_eq!(file.task(&t.id).expect("task").status, TaskStatus::Blocked);
    let followup = file
        .task(inv.followup_task.as_deref().expect("follow-up"))
        .expect("follow-up task");
    assert!(
        followup.description.contains("AssertionError"),
        "{}",
        followup.description
    );
    // The model was never asked: no agent ran on a red main.
    assert!(pb.bed.server.chats().is_empty());
}

/// Row "the init script cannot prepare the worktree", with the doctor's repair of a broken
/// task list: another task marked in progress with no session goes back to open, a line that
/// is not a task is reported for the person (and kept), then a progress note and a block.
#[tokio::test]
async fn an_init_script_that_cannot_prepare_the_worktree_gets_the_doctor_and_a_block() {
    let pb = project_bed(false, |s| {
        s.init_script = Some("python3 -c 'import greeter_helpers_not_installed'".to_string())
    })
    .await;
    let engine = pb.engine();
    healer_on(engine, pb.project.id);
    at_the_defaults(engine, pb.project.id);
    let t = engine
        .add_task(pb.project.id, task("Greet properly"))
        .expect("task");
    let other = engine
        .add_task(pb.project.id, task("Greet in French"))
        .expect("task");
    // A hand edit left the other task in progress (no agent on it) and a stray line.
    healer::tasklist::modify(&pb.repo_dir, |f| {
        f.update(&other.id, "2026-01-01T00:00:00Z", |task| {
            task.status = TaskStatus::InProgress
        })
    })
    .expect("a hand edit");
    let tasks_path = pb.repo_dir.join(TASKS_FILE);
    let mut text = std::fs::read_to_string(&tasks_path).expect("tasks");
    text.push_str("remember to ask Ada about the comma\n");
    std::fs::write(&tasks_path, &text).expect("a stray line");

    let failed = engine
        .run_project_and_wait(pb.project.id, Some(&t.id))
        .await
        .expect("run");
    assert_eq!(failed.status, SessionStatus::Failed);
    let inv = ended_invocations(engine, &t.id, 1).await.remove(0);
    assert_eq!(inv.scenario, "InitScriptEnvironmentFailure");
    assert_eq!(
        spells_of(&inv),
        [
            ("run_tasks_doctor_like_checks", true),
            ("update_progress_with_guidance", true),
            ("mark_task_blocked_with_followup", true)
        ],
        "{:?}",
        inv.spells
    );
    let doctor = &inv.spells[0].summary;
    assert!(doctor.contains(&other.id), "{doctor}");
    assert!(doctor.contains("back to open"), "{doctor}");
    assert!(doctor.contains("need a person"), "{doctor}");
    let file = read_file(&tasks_path).expect("tasks");
    assert_eq!(file.task(&other.id).expect("task").status, TaskStatus::Open);
    assert_eq!(file.task(&t.id).expect("task").status, TaskStatus::Blocked);
    let after = std::fs::read_to_string(&tasks_path).expect("tasks");
    assert!(
        after.contains("remember to ask Ada about the comma"),
        "the person's line is kept: {after}"
    );
    assert!(pb.bed.server.chats().is_empty());
}

/// Row "stuck" with its switch on (off by default; the limit untouched): a task left in
/// progress for three hours gets the doctor (back to open), a progress note and a block.
#[tokio::test]
async fn a_stuck_task_gets_the_doctor_a_progress_note_and_a_block() {
    let pb = project_bed(false, |_| {}).await;
    let engine = pb.engine();
    let config = HealerConfig {
        scenarios: healer::store::HealerScenarios {
            on_stuck_subtask: true,
            ..Default::default()
        },
        ..HealerConfig::default()
    };
    engine
        .set_healer_config(pb.project.id, config)
        .expect("settings");
    at_the_defaults(engine, pb.project.id);
    let t = engine
        .add_task(pb.project.id, task("Greet properly"))
        .expect("task");
    // A session that ends well: no invocation yet.
    pb.bed.server.script([
        call(
            "g1",
            "write_file",
            json!({"path": "greet.py", "content": GREEN}),
        ),
        call("g2", "finish", json!({"summary": "done"})),
    ]);
    let session = engine
        .run_project_and_wait(pb.project.id, Some(&t.id))
        .await
        .expect("run");
    assert!(engine
        .healer_invocations(None, Some(&t.id), 10)
        .expect("invocations")
        .is_empty());
    // Then the task shows in progress with nothing happening for three hours.
    healer::tasklist::modify(&pb.repo_dir, |f| {
        f.update(&t.id, "2026-01-01T00:00:00Z", |task| {
            task.status = TaskStatus::InProgress
        })
    })
    .expect("a hand edit");
    let later = chrono::Utc::now() + chrono::Duration::hours(3);
    let report = engine.act_on_stuck(later).await.expect("scan");
    assert!(report
        .tasks
        .iter()
        .any(|s| s.task_id == t.id && s.session_id == Some(session.id)));
    let inv = ended_invocations(engine, &t.id, 1).await.remove(0);
    assert_eq!(inv.scenario, "SubtaskStuck");
    assert_eq!(inv.status, InvocationStatus::Contained, "{}", inv.reason);
    assert_eq!(
        spells_of(&inv),
        [
            ("run_tasks_doctor_like_checks", true),
            ("update_progress_with_guidance", true),
            ("mark_task_blocked_with_followup", true)
        ]
    );
    assert!(
        inv.spells[0].summary.contains("back to open"),
        "{}",
        inv.spells[0].summary
    );
    assert_eq!(status_of(&pb.repo_dir, &t.id), TaskStatus::Blocked);
}

/// Row "the agent itself fails, for the third time": the built-in agent's retry fails too
/// (skipped past the limit), and when the person runs it again the task is blocked.
#[tokio::test]
async fn an_agent_that_cannot_run_three_times_is_blocked_with_a_note() {
    use crate::project_agent_fixtures::{agent_bed, fake_agent};
    use healer::session::AgentKind;
    let bed = agent_bed(AgentKind::ClaudeCode, |s| s.max_steps = 1).await;
    let broken = fake_agent(
        bed.tmp.path(),
        "claude",
        "echo 'claude: cannot find its native binary' >&2; exit 3",
    );
    bed.set(|s| s.agent_program = Some(broken.display().to_string()));
    at_the_defaults(&bed.engine, bed.project.id);
    let t = bed.task("Greet properly");
    // The built-in agent's retry reads a file and ends at its step limit.
    bed.server
        .script([call("m1", "read_file", json!({"path": "greet.py"}))]);
    let failed = bed
        .engine
        .run_project_and_wait(bed.project.id, Some(&t.id))
        .await
        .expect("run");
    assert_eq!(failed.status, SessionStatus::Failed);
    let two = ended_invocations(&bed.engine, &t.id, 2).await;
    assert_eq!(two[1].scenario, "RuntimeError");
    assert_eq!(
        spells_of(&two[1]),
        [
            ("retry_with_minimal_subagent", false),
            ("update_progress_with_guidance", true)
        ]
    );
    assert_eq!(
        two[0].status,
        InvocationStatus::Skipped,
        "{}",
        two[0].reason
    );

    if status_of(&bed.repo_dir, &t.id) != TaskStatus::Open {
        reopen(&bed.engine, bed.project.id, &t.id);
    }
    let again = bed
        .engine
        .run_project_and_wait(bed.project.id, Some(&t.id))
        .await
        .expect("run");
    assert_eq!(again.status, SessionStatus::Failed);
    let last = ended_invocations(&bed.engine, &t.id, 3).await.remove(0);
    assert_eq!(last.scenario, "RuntimeError");
    assert_eq!(last.status, InvocationStatus::Contained, "{}", last.reason);
    assert_eq!(
        spells_of(&last),
        [
            ("update_progress_with_guidance", true),
            ("mark_task_blocked_with_followup", true)
        ]
    );
    assert_eq!(status_of(&bed.repo_dir, &t.id), TaskStatus::Blocked);
}

/// Row "the agent stopped on type errors": an agent whose own final word is an error naming
/// tsc's errors (a stand-in for Claude Code's `result` line — the program is not what is
/// tested here) gets an emergency subtask for exactly those errors, first.
#[tokio::test]
async fn an_agent_that_stops_on_type_errors_gets_an_emergency_subtask_for_them() {
    use crate::project_agent_fixtures::{agent_bed, fake_agent};
    use healer::session::AgentKind;
    let bed = agent_bed(AgentKind::ClaudeCode, |_| {}).await;
    write_files(
        &bed.repo_dir,
        &[("count.ts", "export const count: number = \"one\";\n")],
    );
    let repo = git2::Repository::open(&bed.repo_dir).expect("repo");
    commit_all(&repo, "a type error");
    let dir = bed.tmp.path();
    let said = |n: u32, error: bool, text: &str| {
        let init = json!({"type": "system", "subtype": "init", "session_id": format!("cc-{n}")});
        let result = json!({
            "type": "result",
            "subtype": if error { "error_during_execution" } else { "success" },
            "is_error": error,
            "result": text,
        });
        std::fs::write(
            dir.join(format!("said-{n}.jsonl")),
            format!("{init}\n{result}\n"),
        )
        .expect("lines");
    };
    said(
        1,
        true,
        "I could not finish: the type check fails.\ncount.ts(1,14): error TS2322: Type 'string' is not assignable to type 'number'.",
    );
    said(2, false, "count is a number now");
    let counter = dir.join("calls");
    let agent = fake_agent(
        dir,
        "claude",
        &format!(
            "case \"$1\" in --version) echo '2.1.328 (Claude Code)'; exit 0;; esac\n\
             n=$(($(cat {c} 2>/dev/null || echo 0) + 1)); echo $n > {c}\n\
             if [ $n -ge 2 ]; then sed -i 's/\"one\"/1/' count.ts; n=2; fi\n\
             cat {d}/said-$n.jsonl",
            c = counter.display(),
            d = dir.display()
        ),
    );
    bed.set(|s| s.agent_program = Some(agent.display().to_string()));
    at_the_defaults(&bed.engine, bed.project.id);
    let t = bed.task("Greet properly");
    let failed = bed
        .engine
        .run_project_and_wait(bed.project.id, Some(&t.id))
        .await
        .expect("run");
    assert_eq!(failed.status, SessionStatus::Failed, "{}", failed.summary);
    let inv = ended_invocations(&bed.engine, &t.id, 1).await.remove(0);
    assert_eq!(inv.scenario, "SubtaskFailed", "{}", inv.reason);
    assert_eq!(
        spells_of(&inv).first(),
        Some(&("fix_typecheck_errors", true)),
        "{:?}",
        inv.spells
    );
    let worktree = std::path::PathBuf::from(&failed.worktree);
    let fixed = std::fs::read_to_string(worktree.join("count.ts")).expect("count.ts");
    assert!(fixed.contains("number = 1"), "{fixed}");
    // The failed session, then the emergency subtask.
    let sessions = bed
        .engine
        .store()
        .list_sessions(bed.project.id, Some(&t.id), 5)
        .expect("sessions");
    assert!(sessions.len() >= 2);
}
