//! A project's task run end to end in the engine: a real git repository, the real runner and
//! worktree, the built-in agent's real tool loop against the scripted model server (OpenAI
//! wire format), real verification processes, real commits.

use std::time::Duration;

use healer::failure::{FailureSource, ProjectScenario};
use healer::project::TaskEdit;
use healer::session::{SessionStatus, StepKind};
use healer::store::MergePolicy;
use healer::tasklist::{read_file, TaskStatus, PROGRESS_FILE, TASKS_FILE};
use serde_json::{json, Value};

use crate::model_server::openai;
use crate::project_fixtures::*;

fn task(title: &str) -> TaskEdit {
    TaskEdit {
        title: title.to_string(),
        description: "greet() must say Hello, with a comma and an exclamation mark.".to_string(),
        acceptance: vec!["greet('Ada') returns 'Hello, Ada!'".to_string()],
        ..TaskEdit::default()
    }
}

/// The model reads the file, edits it, runs the check, and finishes.
fn fixing_script(server: &crate::model_server::ModelServer) {
    server.script([
        call("c1", "read_file", json!({"path": "greet.py"})),
        call(
            "c2",
            "edit_file",
            json!({"path": "greet.py", "search": "'Hi ' + name", "replace": "'Hello, ' + name + '!'"}),
        ),
        call("c3", "run_command", json!({"command": "python3 -c 'import greet; print(greet.greet(\"Ada\"))'"})),
        call("c4", "finish", json!({"summary": "greet() now says Hello, Ada!"})),
    ]);
}

#[tokio::test]
async fn the_built_in_agent_edits_a_file_passes_verification_commits_and_closes_the_task() {
    let pb = project_bed(false, |_| {}).await;
    let engine = pb.engine();
    let t = engine
        .add_task(pb.project.id, task("Greet properly"))
        .expect("task");
    fixing_script(&pb.bed.server);

    let session = engine
        .run_project_and_wait(pb.project.id, None)
        .await
        .expect("run");
    assert_eq!(
        session.status,
        SessionStatus::Finished,
        "{}",
        session.summary
    );
    assert_eq!(session.task_id, t.id);
    let commit = session.commit_id.clone().expect("a commit");
    assert!(session.merged, "fast-forwarded into main");

    // The commit is on the branch, by Healer agent, and main moved to it (with its files).
    let repo = git2::Repository::open(&pb.repo_dir).expect("repo");
    let c = repo
        .find_commit(git2::Oid::from_str(&commit).expect("oid"))
        .expect("commit");
    assert_eq!(c.author().name(), Ok("Healer agent"));
    assert!(c
        .message()
        .unwrap_or_default()
        .starts_with("Greet properly"));
    assert!(file_at(&pb.repo_dir, "healer/t1", "greet.py").contains("'Hello, ' + name + '!'"));
    assert!(file_at(&pb.repo_dir, "main", "greet.py").contains("'Hello, ' + name + '!'"));
    let on_disk = std::fs::read_to_string(pb.repo_dir.join("greet.py")).expect("greet.py");
    assert!(
        on_disk.contains("Hello, "),
        "the checked-out main follows: {on_disk}"
    );

    // The task is closed with the commit, and the log says so.
    let file = read_file(&pb.repo_dir.join(TASKS_FILE)).expect("tasks");
    let closed = file.task(&t.id).expect("task");
    assert_eq!(closed.status, TaskStatus::Closed);
    assert_eq!(closed.commit.as_deref(), Some(commit.as_str()));
    assert!(closed
        .closed_reason
        .as_deref()
        .unwrap_or_default()
        .contains(&commit[..7]));
    let progress = std::fs::read_to_string(pb.repo_dir.join(PROGRESS_FILE)).expect("progress");
    assert!(
        progress.contains("Greet properly") && progress.contains(&commit[..7]),
        "{progress}"
    );

    // Every step was stored: the prompt, each tool call and result, Healer's notes.
    let steps = engine.store().session_steps(session.id, 0).expect("steps");
    let calls: Vec<&str> = steps
        .iter()
        .filter(|s| s.step.kind == StepKind::ToolCall)
        .filter_map(|s| s.step.tool.as_deref())
        .collect();
    assert_eq!(calls, ["read_file", "edit_file", "run_command", "finish"]);
    let prompt = steps
        .iter()
        .find(|s| s.step.text.contains("Your task: Greet properly"))
        .expect("the prompt");
    assert!(prompt.step.text.contains("Hello, Ada!"));
    let ran = steps
        .iter()
        .find(|s| {
            s.step.kind == StepKind::ToolResult && s.step.tool.as_deref() == Some("run_command")
        })
        .expect("the command's result");
    assert!(ran.step.text.contains("Hello, Ada!"), "{}", ran.step.text);
    assert!(steps
        .iter()
        .any(|s| s.step.text.starts_with("test: passed")));

    // The model was asked with the built-in agent's tools only.
    let first = pb.bed.server.chats().into_iter().next().expect("a request");
    let mut tools: Vec<String> = first.body["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect();
    tools.sort();
    assert_eq!(
        tools,
        [
            "edit_file",
            "finish",
            "list_files",
            "read_file",
            "run_command",
            "search",
            "write_file"
        ]
    );

    // The branch stays; the worktree stays too, free for the next task, which switches it
    // over to its own branch at main's new commit instead of checking everything out again.
    assert!(repo
        .find_branch("healer/t1", git2::BranchType::Local)
        .is_ok());
    let wave = engine
        .add_task(pb.project.id, task("Wave"))
        .expect("second task");
    pb.bed.server.script([call(
        "w1",
        "finish",
        json!({"summary": "nothing to change"}),
    )]);
    let second = engine
        .run_project_and_wait(pb.project.id, Some(&wave.id))
        .await
        .expect("second run");
    assert_eq!(second.status, SessionStatus::Finished, "{}", second.summary);
    assert_eq!(second.worktree, session.worktree, "the same slot");
    let notes = engine.store().session_steps(second.id, 0).expect("steps");
    assert!(
        notes[0].step.text.contains("new branch healer/t2"),
        "{}",
        notes[0].step.text
    );
    let there = std::fs::read_to_string(std::path::Path::new(&second.worktree).join("greet.py"))
        .expect("file");
    assert!(there.contains("Hello, "), "main's new commit: {there}");
    // The agent said it was done without changing a file: nothing is done, the task is open
    // again with a note for the person — never "Done".
    assert!(
        second.summary.starts_with("No change made"),
        "{}",
        second.summary
    );
    let tasks = read_file(&pb.repo_dir.join(TASKS_FILE)).expect("tasks");
    let waved = tasks.task(&wave.id).expect("task");
    assert_eq!(waved.status, TaskStatus::Open);
    assert!(
        waved
            .note
            .as_deref()
            .is_some_and(|n| n.contains("without changing any file")),
        "{:?}",
        waved.note
    );
    assert_eq!(waved.closed_reason, None);
    let progress = std::fs::read_to_string(pb.repo_dir.join(PROGRESS_FILE)).expect("progress.md");
    assert!(progress.contains("No change made"), "{progress}");
    // It is not a failure: nothing was handed to the healer service.
    assert!(engine
        .healer_invocations(None, Some(&wave.id), 5)
        .expect("invocations")
        .is_empty());

    // The session exports as an ATIF trajectory.
    let atif: Value =
        serde_json::from_str(&engine.export_session_atif(session.id).expect("atif")).expect("json");
    assert_eq!(atif["schema_version"], "ATIF-v1.7");
    let steps = atif["steps"].as_array().expect("steps");
    let with_calls: Vec<&Value> = steps
        .iter()
        .filter(|s| s["tool_calls"].is_array())
        .collect();
    assert_eq!(with_calls.len(), 4);
    assert_eq!(with_calls[1]["tool_calls"][0]["function_name"], "edit_file");
    assert!(with_calls[1]["observation"]["results"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .contains("1 place changed"));
    assert_eq!(
        atif["final_metrics"]["total_prompt_tokens"],
        json!(pb.bed.server.turn_usage()[..4]
            .iter()
            .map(|t| t.prompt)
            .sum::<u64>())
    );
}

#[tokio::test]
async fn a_red_verification_is_one_verification_failed_failure_in_the_pipeline() {
    let pb = project_bed(false, |s| s.merge = MergePolicy::LeaveBranch).await;
    let engine = pb.engine();
    let t = engine
        .add_task(pb.project.id, task("Greet properly"))
        .expect("task");
    // The agent changes the wrong thing and says it is done.
    pb.bed.server.script([
        call(
            "c1",
            "write_file",
            json!({"path": "greet.py", "content": "def greet(name):\n    return 'Hey ' + name\n"}),
        ),
        call("c2", "finish", json!({"summary": "done"})),
    ]);
    let session = engine
        .run_project_and_wait(pb.project.id, Some(&t.id))
        .await
        .expect("run");
    assert_eq!(session.status, SessionStatus::Failed);
    assert!(
        session.summary.contains("Verification failed: test"),
        "{}",
        session.summary
    );
    assert!(session.commit_id.is_none());

    let heals = engine.heals(10).expect("heals");
    assert_eq!(heals.len(), 1, "one failure into the one pipeline");
    let heal = &heals[0];
    assert_eq!(heal.scenario, ProjectScenario::VerificationFailed.as_str());
    assert_eq!(
        heal.source,
        FailureSource::ProjectTask {
            project_id: pb.project.id,
            task_id: t.id.clone(),
            session_id: session.id
        }
    );
    let notes = engine.notifications().expect("notifications");
    assert!(
        notes.items.iter().any(|n| n.title.contains("greeter")),
        "the person is told"
    );

    // The task is open again with a note; its worktree (with the wrong change) is kept.
    let file = read_file(&pb.repo_dir.join(TASKS_FILE)).expect("tasks");
    let reopened = file.task(&t.id).expect("task");
    assert_eq!(reopened.status, TaskStatus::Open);
    assert!(reopened
        .note
        .as_deref()
        .unwrap_or_default()
        .contains("worktree is kept"));
    let kept = std::fs::read_to_string(std::path::Path::new(&session.worktree).join("greet.py"))
        .expect("kept");
    assert!(kept.contains("Hey "));
    // main was not touched.
    assert!(file_at(&pb.repo_dir, "main", "greet.py").contains("'Hi '"));

    // A second run continues in the kept worktree.
    fixing_script_from_hey(&pb.bed.server);
    let again = engine
        .run_project_and_wait(pb.project.id, Some(&t.id))
        .await
        .expect("run again");
    assert_eq!(again.status, SessionStatus::Finished, "{}", again.summary);
    assert!(!again.merged, "left on the branch, as the settings say");
    let steps = engine.store().session_steps(again.id, 0).expect("steps");
    assert!(
        steps[0]
            .step
            .text
            .contains("Continuing in the kept worktree"),
        "{}",
        steps[0].step.text
    );
    assert!(file_at(&pb.repo_dir, "healer/t1", "greet.py").contains("Hello, "));
    assert!(file_at(&pb.repo_dir, "main", "greet.py").contains("'Hi '"));
}

fn fixing_script_from_hey(server: &crate::model_server::ModelServer) {
    server.script([
        call("d1", "edit_file", json!({"path": "greet.py", "search": "'Hey ' + name", "replace": "'Hello, ' + name + '!'"})),
        call("d2", "finish", json!({"summary": "fixed the greeting"})),
    ]);
}

#[tokio::test]
async fn stop_mid_run_ends_the_agents_processes_and_keeps_the_worktree() {
    let pb = project_bed(false, |_| {}).await;
    let engine = pb.engine();
    let t = engine
        .add_task(pb.project.id, task("Wait a long time"))
        .expect("task");
    pb.bed.server.script([call(
        "c1",
        "run_command",
        json!({"command": "sleep 300 & sleep 300; echo never", "timeout_secs": 600}),
    )]);
    let mut live = engine.subscribe_session_steps();
    let session = engine
        .run_project(pb.project.id, Some(&t.id))
        .expect("started");
    let marker = marker_of(engine, session.id);
    // The command runs: its processes carry the session's marker.
    eventually("the sleeping command", Duration::from_secs(30), || {
        (marked_processes(&marker).len() >= 2).then_some(())
    })
    .await;
    // Its steps streamed live as they were stored.
    let first = tokio::time::timeout(Duration::from_secs(5), live.recv())
        .await
        .expect("a live step")
        .expect("step");
    assert_eq!(first.session_id, session.id);

    engine.stop_session(session.id).expect("stop");
    let ended = finished(engine, session.id).await;
    assert_eq!(ended.status, SessionStatus::Stopped);
    assert!(
        marked_processes(&marker).is_empty(),
        "no process of the session is left"
    );
    assert!(
        std::path::Path::new(&ended.worktree)
            .join("greet.py")
            .exists(),
        "the worktree is kept"
    );
    let file = read_file(&pb.repo_dir.join(TASKS_FILE)).expect("tasks");
    let task = file.task(&t.id).expect("task");
    assert_eq!(task.status, TaskStatus::Open);
    assert!(task
        .note
        .as_deref()
        .unwrap_or_default()
        .starts_with("Stopped by you"));
    assert!(
        engine.heals(10).expect("heals").is_empty(),
        "a stop is not a failure"
    );
}

#[tokio::test]
async fn the_desktop_shell_starts_a_run_from_a_thread_outside_the_runtime() {
    let pb = project_bed(false, |_| {}).await;
    let engine = pb.engine();
    let t = engine
        .add_task(pb.project.id, task("Greet properly"))
        .expect("task");
    fixing_script(&pb.bed.server);
    // Tauri runs sync commands on its main thread, where no tokio runtime is entered.
    let handle: healer::engine::Handle = (**engine).clone();
    let project_id = pb.project.id;
    let started = std::thread::spawn(move || handle.run_project(project_id, None))
        .join()
        .expect("no panic")
        .expect("started");
    assert_eq!(started.task_id, t.id);
    let ended = finished(engine, started.id).await;
    assert_eq!(ended.status, SessionStatus::Finished, "{}", ended.summary);
}

#[tokio::test]
async fn the_next_ready_task_runs_first_and_a_second_at_once_is_refused() {
    let pb = project_bed(false, |_| {}).await;
    let engine = pb.engine();
    let later = engine.add_task(pb.project.id, task("Later")).expect("t1");
    let blocked = engine
        .add_task(
            pb.project.id,
            TaskEdit {
                priority: Some(0),
                deps: vec![later.id.clone()],
                ..task("Needs the first")
            },
        )
        .expect("t2");
    let urgent = engine
        .add_task(
            pb.project.id,
            TaskEdit {
                priority: Some(1),
                ..task("Urgent")
            },
        )
        .expect("t3");
    let not_ready = engine.run_project(pb.project.id, Some(&blocked.id));
    let why = not_ready.expect_err("t2 waits").to_string();
    assert!(why.contains("waits for \u{201c}Later\u{201d}"), "{why}");
    pb.bed
        .server
        .script([call("c1", "run_command", json!({"command": "sleep 30"}))]);
    let session = engine.run_project(pb.project.id, None).expect("started");
    assert_eq!(
        session.task_id, urgent.id,
        "priority 1 before 2; t2 waits for t1"
    );
    let refused = engine
        .run_project(pb.project.id, None)
        .expect_err("one at a time by default");
    assert!(
        refused.to_string().contains("already runs 1 task"),
        "{refused}"
    );
    engine.stop_session(session.id).expect("stop");
    finished(engine, session.id).await;
}

#[tokio::test]
async fn a_model_that_cannot_be_reached_is_a_runtime_error() {
    let pb = project_bed(false, |_| {}).await;
    let engine = pb.engine();
    let t = engine
        .add_task(pb.project.id, task("Anything"))
        .expect("task");
    pb.bed.server.script([openai::error(401, "bad key", &[])]);
    let session = engine
        .run_project_and_wait(pb.project.id, Some(&t.id))
        .await
        .expect("run");
    assert_eq!(session.status, SessionStatus::Failed);
    assert!(
        session.summary.contains("could not run"),
        "{}",
        session.summary
    );
    let heals = engine.heals(10).expect("heals");
    assert_eq!(heals[0].scenario, ProjectScenario::RuntimeError.as_str());
}

#[tokio::test]
async fn an_agent_that_never_ends_is_ended_at_its_time_limit() {
    let pb = project_bed(false, |_| {}).await;
    let engine = pb.engine();
    // The shipped limit is an hour; the setting is what is driven here.
    let mut settings = pb.project.settings.clone();
    assert_eq!(settings.agent_time_limit_secs, 3600);
    settings.agent_time_limit_secs = 2;
    engine
        .store()
        .update_project(pb.project.id, "greeter", &settings)
        .expect("settings");
    let t = engine
        .add_task(pb.project.id, task("Forever"))
        .expect("task");
    pb.bed.server.script([call(
        "c1",
        "run_command",
        json!({"command": "sleep 120", "timeout_secs": 300}),
    )]);
    let session = engine
        .run_project_and_wait(pb.project.id, Some(&t.id))
        .await
        .expect("run");
    assert_eq!(
        session.status,
        SessionStatus::TimedOut,
        "{}",
        session.summary
    );
    assert!(marked_processes(&marker_of(engine, session.id)).is_empty());
    let heal = &engine.heals(10).expect("heals")[0];
    assert_eq!(heal.scenario, ProjectScenario::RuntimeError.as_str());
    assert_eq!(heal.class, healer::failure::FailureClass::Timeout);
}

/// The `i`-th of a run of different calls (the loop detector sees no repetition): a note of
/// its own, `usage` tokens each.
fn note_call(i: usize, usage: crate::model_server::Tokens) -> crate::model_server::Reply {
    openai::tool_calls(
        &[(
            &format!("n{i}"),
            "write_file",
            &json!({"path": format!("notes/{i}.txt"), "content": format!("note {i}\n")})
                .to_string(),
        )],
        usage,
    )
}

/// A task the built-in agent works on with more different calls than any limit allows (each
/// measured as a provider counts it: the whole prompt, sent again every step); its first
/// session, and the model calls it made.
async fn busy_session(pb: &ProjectBed) -> (healer::project::SessionRecord, usize) {
    let engine = pb.engine();
    let t = engine.add_task(pb.project.id, task("Busy")).expect("task");
    pb.bed
        .server
        .script((0..70).map(|i| note_call(i, crate::model_server::TOKENS)));
    engine
        .run_project_and_wait(pb.project.id, Some(&t.id))
        .await
        .expect("run");
    let store = engine.store();
    let sessions = store
        .list_sessions(pb.project.id, Some(&t.id), 10)
        .expect("sessions");
    let first = sessions.last().expect("a session").clone();
    let calls = store
        .session_steps(first.id, 0)
        .expect("steps")
        .iter()
        .filter(|s| s.step.kind == StepKind::ToolCall)
        .count();
    (first, calls)
}

#[tokio::test]
async fn the_built_in_agent_stops_at_the_shipped_token_budget_of_fifty_thousand() {
    let pb = project_bed(false, |_| {}).await;
    assert_eq!(
        pb.project.settings.token_budget, 50_000,
        "the shipped default"
    );
    let (session, calls) = busy_session(&pb).await;
    assert_eq!(session.status, SessionStatus::Failed, "{}", session.summary);
    assert!(
        session.summary.starts_with(
            "The built-in agent stopped at its token budget (50000 tokens, the project's setting)"
        ),
        "a clean stop at the project's budget, not a refused call: {}",
        session.summary
    );
    // What the calls of that session used, as the provider reported it: within the budget.
    let used: u64 = pb.bed.server.turn_usage()[..calls]
        .iter()
        .map(crate::model_server::Tokens::total)
        .sum();
    assert!(used <= 50_000, "used {used}");
    assert!(used > 40_000, "the budget was used, not cut early: {used}");
    assert!((5..60).contains(&calls), "{calls} calls");
}

#[tokio::test]
async fn the_built_in_agent_stops_at_the_shipped_limit_of_sixty_steps() {
    // At the default budget the tokens end a session first (the test above); with room for
    // more, the step limit, at its shipped value, ends it.
    let pb = project_bed(false, |_| {}).await;
    let engine = pb.engine();
    assert_eq!(pb.project.settings.max_steps, 60, "the shipped default");
    engine
        .set_llm_budgets(healer::llm::Budgets {
            per_task_tokens: 5_000_000,
            per_day_tokens: 10_000_000,
            ..healer::llm::Budgets::default()
        })
        .expect("budgets");
    let mut settings = pb.project.settings.clone();
    settings.token_budget = 5_000_000;
    engine
        .store()
        .update_project(pb.project.id, "greeter", &settings)
        .expect("settings");
    let (session, calls) = busy_session(&pb).await;
    assert_eq!(session.status, SessionStatus::Failed, "{}", session.summary);
    assert!(
        session.summary.contains("stopped at the step limit"),
        "{}",
        session.summary
    );
    assert_eq!(calls, 60, "sixty model calls, no more");
}

#[tokio::test]
async fn a_failing_init_script_is_a_failure_of_its_kind_before_any_agent_runs() {
    let pb = project_bed(false, |s| {
        s.init_script = Some(
            "echo \"src/a.ts(3,1): error TS2322: Type 'string' is not assignable\" >&2; exit 2"
                .to_string(),
        );
    })
    .await;
    let engine = pb.engine();
    let t = engine
        .add_task(pb.project.id, task("Anything"))
        .expect("task");
    let session = engine
        .run_project_and_wait(pb.project.id, Some(&t.id))
        .await
        .expect("run");
    assert_eq!(session.status, SessionStatus::Failed);
    assert!(
        session
            .summary
            .starts_with("The init script failed with exit code 2"),
        "{}",
        session.summary
    );
    assert!(pb.bed.server.chats().is_empty(), "no model was asked");
    let heal = &engine.heals(10).expect("heals")[0];
    assert_eq!(
        heal.scenario,
        ProjectScenario::InitScriptTypecheckFailure.as_str()
    );
    let told = &engine.notifications().expect("notifications").items[0];
    assert!(
        told.body.contains("type check") && told.body.contains("error TS2322"),
        "{}",
        told.body
    );
}
