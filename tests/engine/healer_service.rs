//! The healer service for projects, end to end on the engine: real git repositories, the real
//! runner, the built-in agent's real tool loop against the scripted model server, real
//! verification processes.

use std::time::Duration;

use healer::project::TaskEdit;
use healer::session::SessionStatus;
use healer::store::{HealerConfig, HealerInvocation, HealerMode, InvocationStatus, MergePolicy};
use healer::tasklist::{read_file, Dep, TaskStatus, TASKS_FILE};
use serde_json::{json, Value};

use crate::project_fixtures::*;

pub(crate) fn task(title: &str) -> TaskEdit {
    TaskEdit {
        title: title.to_string(),
        description: "greet() must say Hello, with a comma and an exclamation mark.".to_string(),
        acceptance: vec!["greet('Ada') returns 'Hello, Ada!'".to_string()],
        ..TaskEdit::default()
    }
}

/// The agent changes the wrong thing and says it is done: verification fails.
pub(crate) fn wrong_change(server: &crate::model_server::ModelServer) {
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

/// Wait for an invocation of `task` to end and read it back (newest first).
pub(crate) async fn ended_invocations(
    engine: &healer::Engine,
    task: &str,
    n: usize,
) -> Vec<HealerInvocation> {
    eventually("the healer service to end", Duration::from_secs(90), || {
        let all = engine
            .healer_invocations(None, Some(task), 50)
            .expect("invocations");
        let open = |i: &HealerInvocation| {
            matches!(
                i.status,
                InvocationStatus::Running | InvocationStatus::Waiting
            )
        };
        (all.len() >= n && !all.iter().any(open)).then_some(all)
    })
    .await
}

pub(crate) fn aggressive(
    engine: &healer::Engine,
    project_id: i64,
    change: impl FnOnce(&mut HealerConfig),
) {
    let mut config = HealerConfig {
        mode: HealerMode::Aggressive,
        ..HealerConfig::default()
    };
    change(&mut config);
    engine
        .set_healer_config(project_id, config)
        .expect("healer settings");
}

/// The healer service on, at its defaults (the runner's beds have it off).
pub(crate) fn healer_on(engine: &healer::Engine, project_id: i64) {
    engine
        .set_healer_config(project_id, HealerConfig::default())
        .expect("healer settings");
}

/// The repairs of a red verification's invocation: what came after its first step, the failing
/// checks run once more on the unchanged worktree — asserted red again (a real failure, not a
/// flaky one).
pub(crate) fn repairs_of(inv: &HealerInvocation) -> Vec<(&str, bool)> {
    let all = spells_of(inv);
    assert_eq!(
        all.first(),
        Some(&("verify_again", false)),
        "the checks run again first: {:?}",
        inv.spells
    );
    all.get(1..).unwrap_or_default().to_vec()
}

pub(crate) fn spells_of(inv: &HealerInvocation) -> Vec<(&str, bool)> {
    inv.spells
        .iter()
        .map(|s| (s.spell.as_str(), s.success))
        .collect()
}

pub(crate) const WRONG: &str = "def greet(name):\n    return 'Hey ' + name\n";

#[tokio::test]
async fn a_red_verification_is_rewound_after_a_snapshot_and_the_task_blocked_with_a_follow_up() {
    let pb = project_bed(false, |s| s.merge = MergePolicy::LeaveBranch).await;
    let engine = pb.engine();
    aggressive(engine, pb.project.id, |_| {});
    let t = engine
        .add_task(pb.project.id, task("Greet properly"))
        .expect("task");
    wrong_change(&pb.bed.server);
    // An untracked file the agent left too: the snapshot must keep it.
    let session = engine
        .run_project_and_wait(pb.project.id, Some(&t.id))
        .await
        .expect("run");
    assert_eq!(session.status, SessionStatus::Failed);
    let worktree = std::path::PathBuf::from(&session.worktree);

    let inv = ended_invocations(engine, &t.id, 1).await.remove(0);
    assert_eq!(inv.scenario, "VerificationFailed");
    assert_eq!(inv.status, InvocationStatus::Contained, "{}", inv.reason);
    assert_eq!(
        repairs_of(&inv),
        [
            ("rewind_uncommitted_changes", true),
            ("mark_task_blocked_with_followup", true)
        ]
    );
    assert_eq!(inv.session_id, Some(session.id));

    // Rewound: the worktree holds the last commit again.
    let now = std::fs::read_to_string(worktree.join("greet.py")).expect("greet.py");
    assert!(now.contains("'Hi '"), "{now}");
    // The agent's change is in a snapshot; restoring it brings it back byte for byte.
    let snap_id = inv.snapshot_id.expect("a snapshot");
    let snaps = engine
        .snapshots(Some(pb.project.id), Some(&t.id))
        .expect("snapshots");
    let snap = snaps.iter().find(|s| s.id == snap_id).expect("recorded");
    assert_eq!(snap.ref_name, format!("refs/healer/snapshots/{}/1", t.id));
    let said = engine.restore_snapshot(snap_id).await.expect("restore");
    assert!(said.contains("Restored"), "{said}");
    assert_eq!(
        std::fs::read(worktree.join("greet.py")).expect("greet.py"),
        WRONG.as_bytes()
    );

    // Blocked, with a follow-up task cross-linked in tasks.jsonl.
    let file = read_file(&pb.repo_dir.join(TASKS_FILE)).expect("tasks");
    let blocked = file.task(&t.id).expect("task");
    assert_eq!(blocked.status, TaskStatus::Blocked);
    let followup_id = inv.followup_task.clone().expect("follow-up");
    let followup = file.task(&followup_id).expect("follow-up task");
    assert!(followup.title.contains("Greet properly"));
    // It names the session by its title and points at its trajectory.
    assert!(
        followup.description.contains(&format!(
            "trajectory: {}",
            pb.bed.paths.session_trajectory(session.id).display()
        )),
        "{}",
        followup.description
    );
    // The person's part names the session in words; ids, paths and commands are for the agent,
    // after the line the window folds away.
    let (person, agent) = followup
        .description
        .split_once("For the agent that picks this up:")
        .expect("the agent's part");
    assert!(person.contains("Sessions of this task"), "{person}");
    assert!(
        !person.contains(&pb.bed.paths.data_dir().display().to_string())
            && !person.contains("healer ")
            && !person.contains(&format!("({})", t.id)),
        "{person}"
    );
    assert!(
        agent.contains(&format!("The blocked task is {}", t.id)),
        "{agent}"
    );
    assert!(followup
        .deps
        .iter()
        .any(|d| matches!(d, Dep::Link { id, kind } if *id == t.id && kind == "discovered-from")));
    assert!(blocked.deps.iter().any(|d| d.id() == followup_id));
    assert_eq!(followup.status, TaskStatus::Open);

    // Live: start, each spell, complete — on the bus and in the store.
    let kinds: Vec<String> = engine
        .events(None, 300)
        .expect("events")
        .iter()
        .map(|e| e.event.kind().to_string())
        .filter(|k| k.starts_with("healer_"))
        .collect();
    assert_eq!(
        kinds.iter().rev().cloned().collect::<Vec<_>>(),
        [
            "healer_invocation_start",
            "healer_spell_applied",
            "healer_spell_applied",
            "healer_spell_applied",
            "healer_invocation_complete"
        ]
    );

    // The session's ATIF export links the invocation's own trajectory.
    let atif: Value =
        serde_json::from_str(&engine.export_session_atif(session.id).expect("atif")).expect("json");
    let steps = atif["steps"].as_array().expect("steps");
    let heal = steps.last().expect("a step");
    let reference = &heal["observation"]["results"][0]["subagent_trajectory_ref"][0];
    assert_eq!(
        reference["session_id"],
        json!(format!("healer-invocation-{}", inv.id))
    );
    let sub = &reference["extra"]["trajectory"];
    assert_eq!(sub["agent"]["name"], json!("healer"));
    assert_eq!(sub["agent"]["extra"]["type"], json!("healing-agent"));
    // The checks run again, then the rewind.
    assert_eq!(
        sub["steps"][1]["tool_calls"][0]["function_name"],
        json!("verify_again")
    );
    assert_eq!(
        sub["steps"][2]["tool_calls"][0]["function_name"],
        json!("rewind_uncommitted_changes")
    );
}

#[tokio::test]
async fn in_conservative_mode_a_rewind_asks_first_naming_the_snapshot() {
    let pb = project_bed(false, |s| s.merge = MergePolicy::LeaveBranch).await;
    let engine = pb.engine();
    healer_on(engine, pb.project.id);
    // The defaults: conservative.
    assert_eq!(
        engine.healer_config(pb.project.id).expect("config").mode,
        HealerMode::Conservative
    );
    let t = engine
        .add_task(pb.project.id, task("Greet properly"))
        .expect("task");
    wrong_change(&pb.bed.server);
    let session = engine
        .run_project_and_wait(pb.project.id, Some(&t.id))
        .await
        .expect("run");
    let worktree = std::path::PathBuf::from(&session.worktree);
    let checkpoint = eventually("the question", Duration::from_secs(30), || {
        engine
            .checkpoints()
            .expect("checkpoints")
            .pending
            .into_iter()
            .next()
    })
    .await;
    let snap = engine
        .snapshots(Some(pb.project.id), Some(&t.id))
        .expect("snapshots")
        .remove(0);
    assert!(
        checkpoint
            .context
            .contains(&format!("this task's snapshot {}", snap.seq)),
        "{}",
        checkpoint.context
    );
    let labels: Vec<&str> = checkpoint
        .options
        .iter()
        .map(|o| o.label.as_str())
        .collect();
    assert_eq!(labels, ["Proceed", "Skip", "Pause"]);
    // It names the project and the task it is about.
    let about = checkpoint.project_task.clone().expect("a project's task");
    assert_eq!(
        (
            about.project_id,
            about.task_id.as_str(),
            about.task_title.as_str()
        ),
        (pb.project.id, t.id.as_str(), "Greet properly")
    );
    assert_eq!(about.project_name, pb.project.name);
    // Nothing was discarded while it waits.
    assert_eq!(
        std::fs::read(worktree.join("greet.py")).expect("greet.py"),
        WRONG.as_bytes()
    );
    // It waits, stored, for the answer: nothing in memory holds it.
    let waiting = engine
        .healer_invocations(None, Some(&t.id), 5)
        .expect("invocations");
    assert_eq!(waiting[0].status, InvocationStatus::Waiting);
    assert_eq!(waiting[0].waiting_checkpoint, Some(checkpoint.id));
    // The board says the task is held: not "runs next", and why.
    let board = engine.project_detail(pb.project.id).expect("board");
    assert_eq!(board.next, None);
    let held = board
        .tasks
        .iter()
        .find(|b| b.task.id == t.id)
        .expect("the task");
    assert!(!held.ready);
    assert_eq!(held.waiting.as_deref(), Some(healer::project::HELD_WORDS));
    // The person is told under the project, with buttons for the question and the task.
    let notes = engine
        .store()
        .list_notifications()
        .expect("notifications")
        .items;
    let asks = notes
        .iter()
        .find(|n| n.checkpoint_id == Some(checkpoint.id))
        .expect("a notification that asks");
    assert_eq!(
        asks.title,
        format!(
            "Healer asks you about \u{201c}Greet properly\u{201d} in \u{201c}{}\u{201d}",
            pb.project.name
        )
    );
    assert_eq!(
        asks.actions,
        [
            healer::notification::NotificationAction::AnswerQuestion,
            healer::notification::NotificationAction::OpenTask
        ]
    );
    assert_eq!(asks.project_id, Some(pb.project.id));
    assert_eq!(asks.project_name.as_deref(), Some(pb.project.name.as_str()));
    assert_eq!(asks.project_task.as_deref(), Some(t.id.as_str()));
    // The failure's own notice is about the task too.
    assert!(notes
        .iter()
        .any(|n| n.checkpoint_id.is_none() && n.project_task.as_deref() == Some(t.id.as_str())));

    let decided = engine
        .decide_checkpoint(checkpoint.id, Some(1), None)
        .await
        .expect("proceed");
    // The answer says what was done, once it is done.
    let outcome = decided.decision.expect("decided").outcome;
    assert!(
        outcome.starts_with("Done: ") && outcome.contains("back at its last commit"),
        "{outcome}"
    );
    assert!(
        outcome.contains(&format!("snapshot {}", snap.seq)),
        "{outcome}"
    );
    let inv = ended_invocations(engine, &t.id, 1).await.remove(0);
    assert_eq!(inv.status, InvocationStatus::Contained, "{}", inv.reason);
    // Answered: its notification no longer offers to answer it.
    let answered = engine
        .store()
        .list_notifications()
        .expect("notifications")
        .items
        .into_iter()
        .find(|n| n.checkpoint_id == Some(checkpoint.id))
        .expect("the question's notification");
    assert_eq!(
        answered.actions,
        [healer::notification::NotificationAction::OpenTask]
    );
    assert_eq!(repairs_of(&inv)[0], ("rewind_uncommitted_changes", true));
    assert!(std::fs::read_to_string(worktree.join("greet.py"))
        .expect("greet.py")
        .contains("'Hi '"));
}

/// A real type checker: TypeScript's `tsc`, as the UI installs it.
pub(crate) fn tsc() -> String {
    let tsc = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("ui/node_modules/.bin/tsc");
    assert!(
        tsc.exists(),
        "run `cd ui && npm ci` first: {} is missing",
        tsc.display()
    );
    tsc.display().to_string()
}

#[tokio::test]
async fn an_init_type_error_is_fixed_by_an_emergency_subtask_and_the_task_continues() {
    let check = format!("{} --noEmit --strict count.ts", tsc());
    let pb = project_bed(false, |s| s.init_script = Some(check)).await;
    let engine = pb.engine();
    healer_on(engine, pb.project.id);
    write_files(
        &pb.repo_dir,
        &[("count.ts", "export const count: number = \"one\";\n")],
    );
    let repo = git2::Repository::open(&pb.repo_dir).expect("repo");
    commit_all(&repo, "a type error on main");
    let t = engine
        .add_task(pb.project.id, task("Greet properly"))
        .expect("task");
    pb.bed.server.script([
        // The emergency subtask: only the type error.
        call("e1", "edit_file", json!({"path": "count.ts", "search": "\"one\"", "replace": "1"})),
        call("e2", "finish", json!({"summary": "count is a number"})),
        // The task, continued.
        call("c1", "edit_file", json!({"path": "greet.py", "search": "'Hi ' + name", "replace": "'Hello, ' + name + '!'"})),
        call("c2", "finish", json!({"summary": "greet() now says Hello, Ada!"})),
    ]);
    let first = engine
        .run_project_and_wait(pb.project.id, Some(&t.id))
        .await
        .expect("run");
    assert_eq!(first.status, SessionStatus::Failed);
    assert!(first.summary.contains("init script"), "{}", first.summary);

    let inv = ended_invocations(engine, &t.id, 1).await.remove(0);
    assert_eq!(inv.scenario, "InitScriptTypecheckFailure");
    assert_eq!(inv.status, InvocationStatus::Resolved, "{}", inv.reason);
    assert_eq!(spells_of(&inv)[0], ("fix_typecheck_errors", true));
    assert!(inv.reason.contains("init script passed"), "{}", inv.reason);
    assert!(inv.reason.contains("the task continues"), "{}", inv.reason);

    // The task went on: a session ran the init script (green now), the agent, verification,
    // and committed.
    let closed = eventually("the task to close", Duration::from_secs(60), || {
        let f = read_file(&pb.repo_dir.join(TASKS_FILE)).ok()?;
        let task = f.task(&t.id)?.clone();
        (task.status == TaskStatus::Closed).then_some(task)
    })
    .await;
    assert!(closed.commit.is_some());
    let committed = file_at(&pb.repo_dir, "main", "count.ts");
    assert!(committed.contains("number = 1"), "{committed}");
    assert!(file_at(&pb.repo_dir, "main", "greet.py").contains("Hello, "));
    let sessions = engine
        .store()
        .list_sessions(pb.project.id, Some(&t.id), 10)
        .expect("sessions");
    assert_eq!(
        sessions.len(),
        3,
        "the failed one, the emergency subtask, the continued task"
    );
    assert!(
        sessions[1].summary.contains("Emergency fix done"),
        "{}",
        sessions[1].summary
    );
}

#[tokio::test]
async fn the_cli_lists_heals_and_snapshots_restores_one_and_scans() {
    let pb = project_bed(false, |s| s.merge = MergePolicy::LeaveBranch).await;
    aggressive(pb.engine(), pb.project.id, |_| {});
    let t = pb
        .engine()
        .add_task(pb.project.id, task("Greet properly"))
        .expect("task");
    wrong_change(&pb.bed.server);
    let session = pb
        .engine()
        .run_project_and_wait(pb.project.id, Some(&t.id))
        .await
        .expect("run");
    ended_invocations(pb.engine(), &t.id, 1).await;
    let ProjectBed { bed, .. } = pb;
    let crate::maintainer::Bed {
        _tmp,
        paths,
        engine,
        ..
    } = bed;
    engine.shutdown().await;
    drop(engine);
    let json = |args: &[&str]| -> Value {
        let out = crate::cli::run(&paths, args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            crate::cli::text(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("json")
    };

    let heals = json(&["heals", "--project", "greeter", "--json"]);
    assert_eq!(heals[0]["status"], json!("contained"));
    assert_eq!(heals[0]["spells"][0]["spell"], json!("verify_again"));
    assert_eq!(
        heals[0]["spells"][1]["spell"],
        json!("rewind_uncommitted_changes")
    );
    let snaps = json(&["snapshot", "list", "--json"]);
    let id = snaps[0]["id"].as_i64().expect("id");
    let out = crate::cli::run(&paths, &["snapshot", "restore", &id.to_string()]);
    assert!(out.status.success(), "{}", crate::cli::text(&out.stderr));
    assert!(crate::cli::text(&out.stdout).contains("Restored the snapshot"));
    let worktree = std::path::PathBuf::from(&session.worktree);
    assert_eq!(
        std::fs::read(worktree.join("greet.py")).expect("greet.py"),
        WRONG.as_bytes()
    );
    let scan = json(&["scan", "--json"]);
    assert_eq!(scan["tasks"], json!([]));
    let atif = crate::cli::run(&paths, &["session", "export-atif", &session.id.to_string()]);
    assert!(crate::cli::text(&atif.stdout).contains("\"healing-agent\""));
    let text = crate::cli::run(&paths, &["heals"]);
    assert!(crate::cli::text(&text.stdout).contains("rewind_uncommitted_changes ✓"));
}

/// An engine on `paths` as the desktop app would start it (no scheduler, keys from the
/// environment only).
pub(crate) async fn engine_on(paths: &healer::Paths) -> healer::Engine {
    let lease = healer::lease::Lease::acquire(paths, "test").expect("lease");
    let options = healer::engine::EngineOptions {
        scheduler: false,
        keys: Some(healer::llm::Keys::env_only()),
        ..healer::engine::EngineOptions::default()
    };
    healer::Engine::start_with_lease(paths.clone(), "test", lease, options)
        .await
        .expect("engine")
}

/// A task the CLI runs as its own engine (`healer project run --wait`) with `failpoint` set:
/// the greeter project in aggressive mode, its agent scripted to make the wrong change.
struct CliRun {
    _server: crate::model_server::ModelServer,
    _tmp: tempfile::TempDir,
    paths: healer::Paths,
    repo: std::path::PathBuf,
    project: healer::project::Project,
    t: healer::tasklist::Task,
    out: std::process::Output,
}

/// The greeter project in a data folder of its own, for the CLI to run (no engine left open):
/// its model set up on the scripted server, the healer service in `mode`, one task.
pub(crate) struct GreeterOnDisk {
    pub server: crate::model_server::ModelServer,
    pub tmp: tempfile::TempDir,
    pub paths: healer::Paths,
    pub repo: std::path::PathBuf,
    pub project: healer::project::Project,
    pub t: healer::tasklist::Task,
}

pub(crate) async fn greeter_on_disk(mode: HealerMode) -> GreeterOnDisk {
    use crate::maintainer::{configure_model, KEY};
    let server = crate::model_server::ModelServer::start(Some(KEY));
    let (tmp, paths) = crate::data_dir();
    let repo = tmp.path().join("greeter");
    git_repo(&repo, GREETER);
    let engine = engine_on(&paths).await;
    configure_model(&engine, &server);
    let project = engine
        .add_project(healer::project::ProjectInput {
            path: repo.display().to_string(),
            name: "greeter".to_string(),
            settings: healer::store::ProjectSettings {
                verify: vec![python_check()],
                merge: MergePolicy::LeaveBranch,
                ..healer::store::ProjectSettings::default()
            },
        })
        .expect("project");
    engine
        .set_healer_config(
            project.id,
            HealerConfig {
                mode,
                ..HealerConfig::default()
            },
        )
        .expect("healer settings");
    let t = engine
        .add_task(project.id, task("Greet properly"))
        .expect("task");
    engine.shutdown().await;
    drop(engine);
    GreeterOnDisk {
        server,
        tmp,
        paths,
        repo,
        project,
        t,
    }
}

async fn task_run_by_the_cli_with_failpoint(failpoint: &str) -> CliRun {
    use crate::maintainer::{KEY, KEY_VAR};
    let GreeterOnDisk {
        server,
        tmp,
        paths,
        repo,
        project,
        t,
    } = greeter_on_disk(HealerMode::Aggressive).await;
    wrong_change(&server);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_healer"))
        .env("HEALER_DATA_DIR", paths.data_dir())
        .env("HEALER_KEYRING", "off")
        .env(KEY_VAR, KEY)
        .env("HEALER_FAILPOINT", failpoint)
        .env_remove("HEALER_LOG")
        .stdin(std::process::Stdio::null())
        .args(["project", "run", "greeter", "--task", &t.id, "--wait"])
        .output()
        .expect("healer runs");
    CliRun {
        _server: server,
        _tmp: tmp,
        paths,
        repo,
        project,
        t,
        out,
    }
}

#[tokio::test]
async fn healer_killed_between_the_snapshot_and_its_record_finds_the_snapshot_at_the_next_start() {
    // The CLI runs the task as its own engine; Healer dies right after pinning the snapshot.
    let CliRun {
        _server,
        _tmp,
        paths,
        repo,
        t,
        out,
        ..
    } = task_run_by_the_cli_with_failpoint("snapshot_pinned").await;
    assert!(
        crate::cli::text(&out.stderr).contains("aborting at failpoint snapshot_pinned"),
        "{}",
        crate::cli::text(&out.stderr)
    );
    let git = git2::Repository::open(&repo).expect("repo");
    let refs: Vec<String> = git
        .references_glob("refs/healer/snapshots/*")
        .expect("refs")
        .flatten()
        .filter_map(|r| r.name().ok().map(str::to_string))
        .collect();
    assert_eq!(
        refs,
        [format!("refs/healer/snapshots/{}/1", t.id)],
        "the ref was pinned"
    );
    let store = healer::store::Store::open(&paths.db()).expect("store");
    assert!(
        store.snapshots(None, None).expect("snapshots").is_empty(),
        "not recorded"
    );
    drop(store);

    // The next start records it, says so, and ends the cut-short invocation.
    let engine = engine_on(&paths).await;
    let snaps = engine.snapshots(None, None).expect("snapshots");
    assert_eq!(snaps.len(), 1);
    assert_eq!(snaps[0].ref_name, refs[0]);
    assert!(
        snaps[0].worktree.contains("worktrees"),
        "{}",
        snaps[0].worktree
    );
    let inv = engine
        .healer_invocations(None, None, 5)
        .expect("invocations")
        .remove(0);
    assert_eq!(inv.status, InvocationStatus::Unresolved);
    assert!(inv.reason.contains("Healer stopped"), "{}", inv.reason);
    let said = engine
        .events(None, 50)
        .expect("events")
        .into_iter()
        .find_map(|e| match e.event {
            healer::Event::RecoveredAtStartup { summary } if summary.contains("Healer service") => {
                Some(summary)
            }
            _ => None,
        })
        .expect("reported at start");
    assert!(said.contains("pinned but not recorded"), "{said}");
    // The agent's work, never rewound, is what the snapshot holds: restoring it changes nothing.
    let text = engine.restore_snapshot(snaps[0].id).await.expect("restore");
    assert!(text.contains("already matched"), "{text}");
    engine.shutdown().await;
}

/// A check that fails once while the (git-ignored) `flaky.mark` is in the worktree — it
/// removes it — else the greeter's check: a flaky test.
fn flaky_check() -> healer::store::VerifyCommand {
    healer::store::VerifyCommand {
        name: "test".to_string(),
        command: format!(
            "if [ -e flaky.mark ]; then rm flaky.mark; echo 'flaky: connection reset' >&2; exit 1; fi; {}",
            python_check().command
        ),
    }
}

/// A flaky check after real edits, with a real agent: task 1 goes green (`green`, scripted once
/// the bed exists), task 2 adds a changelog (`then`: the agent's answers, before and after its
/// resume) and its check fails once. The service runs the check again on the unchanged
/// worktree, sees it pass (flaky), resumes the agent's own session with the failure and
/// guidance, and the task closes with the agent's change committed.
async fn a_flaky_check_resumes_the_agents_own_session(
    kind: healer::session::AgentKind,
    green: impl FnOnce(&crate::project_agent_fixtures::AgentBed) -> Vec<crate::model_server::Reply>,
    then: impl FnOnce(&crate::project_agent_fixtures::AgentBed) -> Vec<crate::model_server::Reply>,
) {
    use crate::project_agent_fixtures::agent_bed;
    let bed = agent_bed(kind, |s| {
        s.verify = vec![flaky_check()];
        s.merge = MergePolicy::FastForward;
    })
    .await;
    write_files(&bed.repo_dir, &[(".gitignore", "flaky.mark\n")]);
    commit_all(
        &git2::Repository::open(&bed.repo_dir).expect("repo"),
        "ignore the mark",
    );
    bed.engine
        .set_healer_config(
            bed.project.id,
            HealerConfig {
                mode: HealerMode::Aggressive,
                ..HealerConfig::default()
            },
        )
        .expect("config");
    // Task 1 goes green: its commit is one Healer recorded as passing.
    bed.task("Greet properly");
    bed.server.script(green(&bed));
    let green = bed
        .engine
        .run_project_and_wait(bed.project.id, None)
        .await
        .expect("run");
    assert_eq!(green.status, SessionStatus::Finished, "{}", green.summary);

    // Task 2: the agent adds a changelog, and the check fails once.
    let t2 = bed.task("Write a changelog");
    std::fs::write(bed.first_worktree().join("flaky.mark"), "").expect("mark");
    bed.server.script(then(&bed));
    let first = bed
        .engine
        .run_project_and_wait(bed.project.id, Some(&t2.id))
        .await
        .expect("run");
    assert_eq!(first.status, SessionStatus::Failed, "{}", first.summary);
    let all = ended_invocations(&bed.engine, &t2.id, 1).await;
    assert_eq!(all.len(), 1, "one failure, one invocation");
    let inv = all[0].clone();
    assert_eq!(inv.scenario, "VerificationFailed");
    assert_eq!(inv.status, InvocationStatus::Resolved, "{}", inv.reason);
    // The checks ran again on the unchanged worktree and passed: flaky, so the agent resumes.
    assert_eq!(
        spells_of(&inv),
        [
            ("verify_again", true),
            ("retry_with_claude_code_resume", true)
        ]
    );
    assert!(
        inv.spells[0].summary.contains("the failure was flaky"),
        "{}",
        inv.spells[0].summary
    );
    assert!(inv.reason.contains("test passed"), "{}", inv.reason);

    // The resume was the agent's own session, told the failure and guidance.
    let sessions = bed
        .engine
        .store()
        .list_sessions(bed.project.id, Some(&t2.id), 5)
        .expect("sessions");
    assert_eq!(sessions.len(), 2);
    let resumed = &sessions[0];
    assert_eq!(resumed.resumed_from, Some(first.id));
    assert!(first.agent_session_id.is_some());
    assert_eq!(
        resumed.agent_session_id, first.agent_session_id,
        "the agent's own session, continued"
    );
    assert_eq!(
        resumed.status,
        SessionStatus::Finished,
        "{}",
        resumed.summary
    );
    let chats = bed.server.chats();
    let last = chats.last().expect("a request").body.to_string();
    assert!(
        last.contains(WROTE_IT),
        "the earlier turn was resumed: {last}"
    );
    assert!(last.contains("flaky"), "the guidance: {last}");
    // What the failed session did last, and the progress notes, come with the failure.
    assert!(
        last.contains("What the failed session did last"),
        "the last steps: {last}"
    );
    assert!(last.contains(WROTE_IT), "{last}");
    assert!(
        last.contains("The end of the project's progress notes"),
        "{last}"
    );
    let file = read_file(&bed.repo_dir.join(TASKS_FILE)).expect("tasks");
    let closed = file.task(&t2.id).expect("t2");
    assert_eq!(closed.status, TaskStatus::Closed, "{:?}", closed.note);
    // The agent's change, made before the flaky failure, is what was committed.
    let commit = resumed.commit_id.clone().expect("a commit");
    let git = git2::Repository::open(&bed.repo_dir).expect("repo");
    let tree = git
        .find_commit(git2::Oid::from_str(&commit).expect("oid"))
        .expect("commit")
        .tree()
        .expect("tree");
    assert!(tree.get_name("CHANGELOG.md").is_some());
}

const CHANGELOG: &str = "- greet() says Hello, with a comma and an exclamation mark\n";
const WROTE_IT: &str = "I wrote CHANGELOG.md.";
const PASSES_NOW: &str = "I ran the check again: it passes. Nothing more to change.";

#[tokio::test]
async fn a_flaky_check_resumes_the_real_claude_codes_own_session_with_guidance_and_resolves() {
    use crate::model_server::{anthropic, TOKENS};
    // Claude Code's `--resume`.
    a_flaky_check_resumes_the_agents_own_session(
        healer::session::AgentKind::ClaudeCode,
        |bed| {
            let greet = bed.first_worktree().join("greet.py");
            vec![
                anthropic::tool_calls(
                    "",
                    &[(
                        "toolu_1",
                        "Edit",
                        &json!({"file_path": greet, "old_string": "'Hi ' + name", "new_string": "'Hello, ' + name + '!'"})
                            .to_string(),
                    )],
                    TOKENS,
                ),
                anthropic::text("greet() now says Hello, Ada!", TOKENS),
            ]
        },
        |bed| {
            let changelog = bed.first_worktree().join("CHANGELOG.md");
            vec![
                anthropic::tool_calls(
                    "",
                    &[(
                        "toolu_2",
                        "Write",
                        &json!({"file_path": changelog, "content": CHANGELOG}).to_string(),
                    )],
                    TOKENS,
                ),
                anthropic::text(WROTE_IT, TOKENS),
                anthropic::text(PASSES_NOW, TOKENS),
            ]
        },
    )
    .await;
}

#[tokio::test]
async fn a_flaky_check_resumes_the_real_codexs_own_thread_with_guidance_and_resolves() {
    use crate::model_server::{responses, TOKENS};
    // `codex exec resume` of the same thread.
    let patch = "*** Begin Patch\n*** Update File: greet.py\n@@\n def greet(name):\n-    return 'Hi ' + name\n+    return 'Hello, ' + name + '!'\n*** End Patch";
    a_flaky_check_resumes_the_agents_own_session(
        healer::session::AgentKind::Codex,
        |_| {
            vec![
                responses::reply(&[responses::patch("c1", patch)], TOKENS),
                responses::reply(&[responses::text("greet() now says Hello, Ada!")], TOKENS),
            ]
        },
        |_| {
            let add = format!(
                "*** Begin Patch\n*** Add File: CHANGELOG.md\n+{}\n*** End Patch",
                CHANGELOG.trim_end()
            );
            vec![
                responses::reply(&[responses::patch("c2", &add)], TOKENS),
                responses::reply(&[responses::text(WROTE_IT)], TOKENS),
                responses::reply(&[responses::text(PASSES_NOW)], TOKENS),
            ]
        },
    )
    .await;
}

#[tokio::test]
async fn a_worktree_deleted_and_the_task_list_edited_by_hand_while_healer_waits_lose_nothing() {
    let pb = project_bed(false, |s| s.merge = MergePolicy::LeaveBranch).await;
    let engine = pb.engine();
    healer_on(engine, pb.project.id);
    let t = engine
        .add_task(pb.project.id, task("Greet properly"))
        .expect("task");
    wrong_change(&pb.bed.server);
    let session = engine
        .run_project_and_wait(pb.project.id, Some(&t.id))
        .await
        .expect("run");
    // Conservative: the rewind waits for the person, with the snapshot pinned.
    let checkpoint = eventually("the question", Duration::from_secs(30), || {
        engine
            .checkpoints()
            .expect("checkpoints")
            .pending
            .into_iter()
            .next()
    })
    .await;
    // Meanwhile a person edits the task list by hand (a new task, a new title) and the
    // worktree is deleted.
    let tasks_path = pb.repo_dir.join(TASKS_FILE);
    let text = std::fs::read_to_string(&tasks_path).expect("tasks");
    let edited = text.replace("\"Greet properly\"", "\"Greet properly (edited by hand)\"")
        + "{\"id\":\"by-hand\",\"title\":\"Written by a person\",\"status\":\"open\"}\n";
    std::fs::write(&tasks_path, edited).expect("hand edit");
    std::fs::remove_dir_all(&session.worktree).expect("worktree deleted");

    engine
        .decide_checkpoint(checkpoint.id, Some(1), None)
        .await
        .expect("proceed");
    let inv = ended_invocations(engine, &t.id, 1).await.remove(0);
    // The rewind could not run and says why; the next spell ran.
    assert_eq!(inv.spells[1].spell, "rewind_uncommitted_changes");
    assert!(!inv.spells[1].success);
    assert!(
        inv.spells[1].summary.contains("not found"),
        "{}",
        inv.spells[1].summary
    );
    assert_eq!(inv.spells[2].spell, "mark_task_blocked_with_followup");
    assert!(inv.spells[2].success, "{}", inv.spells[2].summary);
    assert_eq!(inv.status, InvocationStatus::Contained);
    // No write lost: the person's edits are kept beside Healer's.
    let file = read_file(&tasks_path).expect("tasks");
    let blocked = file.task(&t.id).expect("task");
    assert_eq!(blocked.title, "Greet properly (edited by hand)");
    assert_eq!(blocked.status, TaskStatus::Blocked);
    assert!(file.task("by-hand").is_some());
    assert!(file
        .task(inv.followup_task.as_deref().expect("follow-up"))
        .is_some());
    // The snapshot pinned before the question is in the repository.
    let snap = engine
        .snapshots(Some(pb.project.id), Some(&t.id))
        .expect("s")
        .remove(0);
    let git = git2::Repository::open(&pb.repo_dir).expect("repo");
    assert!(git.find_reference(&snap.ref_name).is_ok());
}

#[tokio::test]
async fn a_configured_agent_that_cannot_run_is_replaced_by_the_built_in_agent_told_only_the_failure(
) {
    use crate::project_agent_fixtures::{agent_bed, fake_agent};
    use healer::session::AgentKind;
    let bed = agent_bed(AgentKind::ClaudeCode, |_| {}).await;
    let broken = fake_agent(
        bed.tmp.path(),
        "claude",
        "echo 'claude: cannot find its native binary' >&2; exit 3",
    );
    bed.set(|s| s.agent_program = Some(broken.display().to_string()));
    let t = bed.task("Greet properly");
    bed.server.script([
        call("m1", "edit_file", json!({"path": "greet.py", "search": "'Hi ' + name", "replace": "'Hello, ' + name + '!'"})),
        call("m2", "finish", json!({"summary": "greet() now says Hello, Ada!"})),
    ]);
    let failed = bed
        .engine
        .run_project_and_wait(bed.project.id, Some(&t.id))
        .await
        .expect("run");
    assert_eq!(failed.status, SessionStatus::Failed);
    let inv = ended_invocations(&bed.engine, &t.id, 1).await.remove(0);
    assert_eq!(inv.scenario, "RuntimeError");
    assert_eq!(inv.status, InvocationStatus::Resolved, "{}", inv.reason);
    assert_eq!(spells_of(&inv), [("retry_with_minimal_subagent", true)]);
    let sessions = bed
        .engine
        .store()
        .list_sessions(bed.project.id, Some(&t.id), 5)
        .expect("sessions");
    assert_eq!(sessions[0].agent, AgentKind::Builtin);
    assert_eq!(sessions[0].status, SessionStatus::Finished);
    // Told the task and the failure, not the whole task prompt with progress notes.
    let first = &bed.server.chats()[0].body["messages"];
    let told = first.to_string();
    assert!(
        told.contains("Healer here: the agent itself failed"),
        "{told}"
    );
    assert!(told.contains("cannot find its native binary"), "{told}");
    // With the end of the project's progress notes (what was done before on the project).
    assert!(
        told.contains("The end of the project's progress notes"),
        "{told}"
    );
    let file = read_file(&bed.repo_dir.join(TASKS_FILE)).expect("tasks");
    assert_eq!(file.task(&t.id).expect("task").status, TaskStatus::Closed);
}

pub(crate) const GREEN: &str = "def greet(name):\n    return 'Hello, ' + name + '!'\n";

/// Commit everything in `worktree` (as an agent that commits its own work would) and return
/// the new commit.
pub(crate) fn commit_in(worktree: &std::path::Path, message: &str) -> String {
    let repo = git2::Repository::open(worktree).expect("worktree");
    let mut index = repo.index().expect("index");
    index
        .add_all(["greet.py"], git2::IndexAddOption::DEFAULT, None)
        .expect("add");
    index.write().expect("index written");
    let tree = repo
        .find_tree(index.write_tree().expect("tree"))
        .expect("tree");
    let parent = repo.head().expect("head").peel_to_commit().expect("commit");
    let me = git2::Signature::now("An agent", "agent@example.com").expect("signature");
    repo.commit(Some("HEAD"), &me, &me, message, &tree, &[&parent])
        .expect("commit")
        .to_string()
}

/// A spell that panics inside a full invocation (a real `healer project run` process whose
/// first spell hits a panicking failpoint): the next spell runs and the invocation's record
/// says which spell stopped on an internal error.
#[tokio::test]
async fn a_spell_that_panics_inside_an_invocation_is_recorded_and_the_next_spell_runs() {
    let CliRun {
        _server,
        _tmp,
        paths,
        repo,
        project,
        t,
        out,
    } = task_run_by_the_cli_with_failpoint("panic:spell.rewind_uncommitted_changes").await;
    let stderr = crate::cli::text(&out.stderr);
    assert!(
        stderr.contains("failpoint spell.rewind_uncommitted_changes"),
        "the spell did panic: {stderr}"
    );

    let engine = engine_on(&paths).await;
    let inv = engine
        .healer_invocations(None, Some(&t.id), 5)
        .expect("invocations")
        .remove(0);
    assert_eq!(
        repairs_of(&inv),
        [
            ("rewind_uncommitted_changes", false),
            ("mark_task_blocked_with_followup", true)
        ],
        "{:?} {stderr}",
        inv.spells
    );
    assert!(
        inv.spells[1].summary.contains("internal error"),
        "{}",
        inv.spells[1].summary
    );
    assert_eq!(inv.status, InvocationStatus::Contained, "{}", inv.reason);
    let file = read_file(&repo.join(TASKS_FILE)).expect("tasks");
    assert_eq!(file.task(&t.id).expect("task").status, TaskStatus::Blocked);
    // The panic came before the rewind: the agent's change is still in the worktree.
    let session = engine
        .store()
        .list_sessions(project.id, Some(&t.id), 1)
        .expect("sessions")
        .remove(0);
    assert_eq!(
        std::fs::read_to_string(std::path::Path::new(&session.worktree).join("greet.py"))
            .expect("greet.py"),
        WRONG
    );
    engine.shutdown().await;
}

/// The stuck scan tells a finding once while it lasts, and remembers that across a restart:
/// a task still stuck after the engine restarted is listed by the scan but not told again.
#[tokio::test]
async fn a_restart_does_not_report_a_still_stuck_task_again() {
    let (tmp, paths) = crate::data_dir();
    let repo = tmp.path().join("greeter");
    git_repo(&repo, GREETER);
    let engine = engine_on(&paths).await;
    let project = engine
        .add_project(healer::project::ProjectInput {
            path: repo.display().to_string(),
            name: "greeter".to_string(),
            settings: healer::store::ProjectSettings {
                verify: vec![python_check()],
                ..healer::store::ProjectSettings::default()
            },
        })
        .expect("project");
    let t = engine
        .add_task(project.id, task("Greet properly"))
        .expect("task");
    // In progress by hand, untouched since: stuck after the default two hours.
    healer::tasklist::modify(&repo, |f| {
        f.update(&t.id, "2026-01-01T00:00:00Z", |task| {
            task.status = TaskStatus::InProgress
        })
    })
    .expect("a hand edit");
    let stuck_notes = |engine: &healer::Engine| {
        engine
            .store()
            .list_notifications()
            .expect("notifications")
            .items
            .into_iter()
            .filter(|n| n.title.contains("looks stuck"))
            .count()
    };
    let now = chrono::Utc::now();
    let report = engine.act_on_stuck(now).await.expect("scan");
    assert!(report.tasks.iter().any(|s| s.task_id == t.id), "{report:?}");
    assert_eq!(stuck_notes(&engine), 1);
    engine.act_on_stuck(now).await.expect("scan");
    assert_eq!(stuck_notes(&engine), 1, "told once");
    engine.shutdown().await;
    drop(engine);

    let engine = engine_on(&paths).await;
    let report = engine.act_on_stuck(now).await.expect("scan");
    assert!(
        report.tasks.iter().any(|s| s.task_id == t.id),
        "still stuck"
    );
    assert_eq!(stuck_notes(&engine), 1, "not told again after the restart");
    engine.shutdown().await;
}

/// The repository locked by another git program (its `index.lock` held in the task's worktree)
/// while the rewind waits for the person: the rewind still puts the files back and says the
/// staged state was left, the snapshot comes back byte for byte, and the other program's lock
/// is left where it was.
#[tokio::test]
async fn a_worktree_locked_by_another_git_program_is_still_rewound_and_its_lock_left_alone() {
    let pb = project_bed(false, |s| s.merge = MergePolicy::LeaveBranch).await;
    let engine = pb.engine();
    healer_on(engine, pb.project.id);
    let t = engine
        .add_task(pb.project.id, task("Greet properly"))
        .expect("task");
    wrong_change(&pb.bed.server);
    let session = engine
        .run_project_and_wait(pb.project.id, Some(&t.id))
        .await
        .expect("run");
    let checkpoint = eventually("the question", Duration::from_secs(30), || {
        engine
            .checkpoints()
            .expect("checkpoints")
            .pending
            .into_iter()
            .next()
    })
    .await;
    let worktree = std::path::PathBuf::from(&session.worktree);
    // Another git program takes the worktree's index lock (as `git add` does while it runs).
    let gitdir = git2::Repository::open(&worktree)
        .expect("worktree")
        .path()
        .to_path_buf();
    let lock = gitdir.join("index.lock");
    std::fs::write(&lock, b"held by another git program").expect("lock");

    engine
        .decide_checkpoint(checkpoint.id, Some(1), None)
        .await
        .expect("proceed");
    let inv = ended_invocations(engine, &t.id, 1).await.remove(0);
    assert_eq!(
        repairs_of(&inv),
        [
            ("rewind_uncommitted_changes", true),
            ("mark_task_blocked_with_followup", true)
        ],
        "{:?}",
        inv.spells
    );
    assert!(
        inv.spells[1].summary.contains("holds the worktree's index"),
        "{}",
        inv.spells[1].summary
    );
    let now = std::fs::read_to_string(worktree.join("greet.py")).expect("greet.py");
    assert!(now.contains("'Hi '"), "{now}");
    assert_eq!(
        std::fs::read(&lock).expect("the lock is still there"),
        b"held by another git program"
    );
    // The snapshot comes back byte for byte, the lock still held.
    let said = engine
        .restore_snapshot(inv.snapshot_id.expect("snapshot"))
        .await
        .expect("restore");
    assert!(said.contains("Restored"), "{said}");
    assert_eq!(
        std::fs::read(worktree.join("greet.py")).expect("greet.py"),
        WRONG.as_bytes()
    );
    assert!(lock.exists());
}

/// A task set in progress by hand, with no session of Healer's behind it, is noticed: at once
/// when its line gives no time, after the shipped ten minutes when it does — and the person is
/// told what to do, not an agent healed.
#[tokio::test]
async fn a_task_set_in_progress_by_hand_with_nobody_on_it_is_noticed() {
    let (tmp, paths) = crate::data_dir();
    let repo = tmp.path().join("greeter");
    git_repo(&repo, GREETER);
    let engine = engine_on(&paths).await;
    let project = engine
        .add_project(healer::project::ProjectInput {
            path: repo.display().to_string(),
            name: "greeter".to_string(),
            settings: healer::store::ProjectSettings {
                verify: vec![python_check()],
                ..healer::store::ProjectSettings::default()
            },
        })
        .expect("project");
    let stamped = engine.add_task(project.id, task("Stamped")).expect("task");
    let now = chrono::Utc::now();
    let at = now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    healer::tasklist::modify(&repo, |f| {
        f.update(&stamped.id, &at, |task| {
            task.status = TaskStatus::InProgress
        })
    })
    .expect("a hand edit with a time");
    // A line written by hand with no time at all.
    let file = repo.join(healer::tasklist::TASKS_FILE);
    let mut text = std::fs::read_to_string(&file).expect("list");
    text.push_str("{\"id\":\"h1\",\"title\":\"By hand\",\"status\":\"in_progress\"}\n");
    std::fs::write(&file, text).expect("written by hand");

    let kinds = |report: &healer::spells::StuckReport, id: &str| {
        report
            .tasks
            .iter()
            .filter(|s| s.task_id == id)
            .map(|s| (s.kind.clone(), s.detail.clone()))
            .collect::<Vec<_>>()
    };
    let report = engine.stuck_scan(now).expect("scan");
    let by_hand = kinds(&report, "h1");
    assert_eq!(by_hand.len(), 1, "{report:?}");
    assert_eq!(by_hand[0].0, healer::spells::StuckKind::Unattended);
    assert!(
        by_hand[0]
            .1
            .contains("no agent of Healer's is working on it"),
        "{}",
        by_hand[0].1
    );
    assert!(
        kinds(&report, &stamped.id).is_empty(),
        "within its ten minutes"
    );
    let later = now + healer::spells::UNATTENDED_GRACE + chrono::Duration::seconds(1);
    let report = engine.act_on_stuck(later).await.expect("scan");
    let stamped_found = kinds(&report, &stamped.id);
    assert_eq!(stamped_found.len(), 1, "{report:?}");
    assert!(
        stamped_found[0].1.contains("marked in progress 10 min ago"),
        "{}",
        stamped_found[0].1
    );
    let told = engine
        .store()
        .list_notifications()
        .expect("notifications")
        .items
        .into_iter()
        .filter(|n| n.title.contains("looks stuck"))
        .count();
    assert_eq!(told, 2);
    assert!(
        engine.heals(10).expect("heals").is_empty(),
        "no agent was healed"
    );
    engine.shutdown().await;
}

/// A check that cannot run here (its runner is not installed) is no verdict on the agent's
/// work: the task waits, saying what is missing; nothing is rewound, and nobody says the
/// agent's change failed.
#[tokio::test]
async fn a_check_that_cannot_run_here_blocks_the_task_with_what_is_missing_and_undoes_nothing() {
    let pb = project_bed(false, |s| {
        s.verify = vec![healer::store::VerifyCommand {
            name: "test".to_string(),
            command: "python3 -m healer_absent_test_runner -q".to_string(),
        }];
    })
    .await;
    let engine = pb.engine();
    aggressive(engine, pb.project.id, |_| {});
    let t = engine
        .add_task(pb.project.id, task("Greet properly"))
        .expect("task");
    wrong_change(&pb.bed.server);
    let session = engine
        .run_project_and_wait(pb.project.id, Some(&t.id))
        .await
        .expect("run");
    assert_eq!(session.status, SessionStatus::Failed);
    assert!(
        session
            .summary
            .contains("could not run on this computer: healer_absent_test_runner is not installed"),
        "{}",
        session.summary
    );
    let inv = ended_invocations(engine, &t.id, 1).await.remove(0);
    let spells: Vec<&str> = spells_of(&inv).into_iter().map(|(s, _)| s).collect();
    assert!(
        !spells.iter().any(|s| s.starts_with("rewind")),
        "nothing is undone: {spells:?}"
    );
    let worktree = std::path::PathBuf::from(&session.worktree);
    assert_eq!(
        std::fs::read(worktree.join("greet.py")).expect("greet.py"),
        WRONG.as_bytes(),
        "the agent's work is kept"
    );
    let file = read_file(&pb.repo_dir.join(TASKS_FILE)).expect("tasks");
    let waits = file.task(&t.id).expect("task");
    assert_eq!(waits.status, TaskStatus::Blocked);
    let note = format!("{:?} {:?}", waits.note, waits.closed_reason);
    assert!(!note.contains("did not pass verification"), "{note}");
}
