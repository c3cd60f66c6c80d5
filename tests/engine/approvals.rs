//! The agent asks, the person decides (issue 38), with the real Claude Code and Codex offline
//! against the scripted model server, and the built-in agent: under the default preset a
//! download piped into a shell waits for the person before it runs (a counting server on
//! 127.0.0.1 sees nothing until then); a denial reaches the agent's next model request with the
//! person's reason and the session goes on; Allow once runs it once; Always allow lets the same
//! command run in a later session without a question; edits in the working copy and the
//! project's checks never ask; a question nobody answers is denied at the shipped 30 minutes
//! (a test clock); a daemon SIGKILLed while a question waits, and the next one killed while it
//! carries the answer out, leave it to the one after, which resumes the agent with it, once.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use healer::approval::{AgentRequest, ApprovalStatus, DEFAULT_APPROVAL_LIMIT_SECS};
use healer::checkpoint::{Checkpoint, CheckpointAction};
use healer::session::{AgentKind, SessionStatus};
use healer::store::{SessionRecord, VerifyCommand};
use healer::Engine;
use serde_json::json;

use crate::faults::{healer, Daemon};
use crate::maintainer::{KEY, KEY_VAR};
use crate::model_server::{anthropic, responses, TOKENS};
use crate::project_agent_fixtures::*;
use crate::project_fixtures::{eventually, project_bed};

/// A server on 127.0.0.1 that counts the requests it gets: what a download would reach.
pub(crate) struct Counter {
    port: u16,
    hits: Arc<AtomicUsize>,
}

impl Counter {
    pub(crate) fn start() -> Counter {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let hits = Arc::new(AtomicUsize::new(0));
        let counted = hits.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut buf = [0u8; 2048];
                let _ = stream.read(&mut buf);
                counted.fetch_add(1, Ordering::SeqCst);
                let body = "echo ran-from-the-download\n";
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        Counter { port, hits }
    }

    pub(crate) fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }

    pub(crate) fn command(&self) -> String {
        format!("curl -s http://127.0.0.1:{}/x | sh", self.port)
    }
}

/// A check that passes whatever the agent did: these stories are about what it may run.
pub(crate) fn passing_check() -> VerifyCommand {
    VerifyCommand {
        name: "test".to_string(),
        command: "python3 -c 'import greet'".to_string(),
    }
}

/// The question the agent's request raised, once it waits.
pub(crate) async fn question(engine: &Engine) -> Checkpoint {
    eventually("the agent's question", Duration::from_secs(60), || {
        engine
            .checkpoints()
            .ok()?
            .pending
            .into_iter()
            .find(|c| c.agent_request.is_some())
    })
    .await
}

pub(crate) async fn ended(engine: &Engine, id: i64) -> SessionRecord {
    tokio::time::timeout(Duration::from_secs(90), engine.wait_session(id))
        .await
        .expect("the session ended in time")
        .expect("session")
}

pub(crate) fn option(checkpoint: &Checkpoint, action: CheckpointAction) -> u32 {
    let at = checkpoint
        .options
        .iter()
        .position(|o| o.action == action)
        .expect("the option");
    u32::try_from(at + 1).expect("n")
}

/// The chat requests' bodies, as text.
pub(crate) fn requests(bed: &AgentBed) -> Vec<String> {
    bed.server
        .chats()
        .iter()
        .map(|s| s.body.to_string())
        .collect()
}

/// Claude Code's turn: the download piped into a shell, then a last word.
fn claude_runs(command: &str, id: &str) -> Vec<crate::model_server::Reply> {
    vec![
        anthropic::tool_calls(
            "Let me install the helper.",
            &[(id, "Bash", &json!({ "command": command }).to_string())],
            TOKENS,
        ),
        anthropic::text("Done.", TOKENS),
    ]
}

#[tokio::test]
async fn claude_code_asks_before_a_download_piped_into_sh_and_a_denial_reaches_it_with_the_reason()
{
    let counter = Counter::start();
    let bed = agent_bed(AgentKind::ClaudeCode, |s| s.verify = vec![passing_check()]).await;
    let engine = &bed.engine;
    let t = bed.task("Install the helper");
    bed.server
        .script(claude_runs(&counter.command(), "toolu_dl"));
    let session = engine
        .run_project(bed.project.id, Some(&t.id))
        .expect("started");

    // The dialog shows the command as it will run, why it asks and what Healer recommends,
    // while the command has not run.
    let asked = question(engine).await;
    let ask = asked.agent_request.clone().expect("an agent's question");
    let AgentRequest::Command { command, .. } = &ask.request else {
        panic!("a command: {:?}", ask.request);
    };
    assert_eq!(command, &counter.command());
    assert!(
        ask.why.contains("it reaches the network (curl)"),
        "{}",
        ask.why
    );
    assert_eq!(ask.agent, "claude-code");
    assert_eq!(asked.title, "Claude Code asks to run a command");
    assert!(
        asked
            .recommendation
            .starts_with("Deny and tell the agent why — "),
        "{}",
        asked.recommendation
    );
    assert_eq!(
        asked.project_task.as_ref().map(|p| p.task_title.as_str()),
        Some("Install the helper")
    );
    assert_eq!(counter.hits(), 0, "nothing ran before the answer");
    assert!(engine
        .store()
        .session_waits_for_you(session.id)
        .expect("waits"));

    let reason = "do not pipe downloads into a shell on my machine";
    let decided = engine
        .decide_checkpoint(
            asked.id,
            Some(option(&asked, CheckpointAction::Deny)),
            Some(reason),
        )
        .await
        .expect("denied");
    let outcome = decided.decision.expect("decided").outcome;
    assert!(outcome.starts_with("You denied it"), "{outcome}");

    let done = ended(engine, session.id).await;
    assert_eq!(done.status, SessionStatus::Finished, "{}", done.summary);
    assert_eq!(counter.hits(), 0, "the denied command never ran");
    // The agent's next request carries the person's reason, and the session went on.
    let after: Vec<String> = requests(&bed)
        .into_iter()
        .filter(|r| r.contains("toolu_dl") && r.contains("tool_result"))
        .collect();
    assert!(
        after.iter().any(|r| r.contains(reason)),
        "the reason reached the model: {after:?}"
    );
    let steps = engine.store().session_steps(session.id, 0).expect("steps");
    let said: Vec<&str> = steps.iter().map(|s| s.step.text.as_str()).collect();
    assert!(said
        .iter()
        .any(|t| t.starts_with("Waiting for your answer: Claude Code wants to run")));
    assert!(said.iter().any(|t| t.starts_with("You denied it")));
    let questions = engine.session_questions(session.id).expect("questions");
    assert_eq!(questions[0].status, ApprovalStatus::Denied);
    assert_eq!(questions[0].reason.as_deref(), Some(reason));
}

#[tokio::test]
async fn allow_once_runs_it_once_and_always_allow_lets_a_later_session_run_it_without_asking() {
    let counter = Counter::start();
    let bed = agent_bed(AgentKind::ClaudeCode, |s| s.verify = vec![passing_check()]).await;
    let engine = &bed.engine;

    // Allowed once: it runs, once.
    let first = bed.task("Install the helper");
    bed.server
        .script(claude_runs(&counter.command(), "toolu_a"));
    let session = engine
        .run_project(bed.project.id, Some(&first.id))
        .expect("started");
    let asked = question(engine).await;
    assert_eq!(counter.hits(), 0);
    engine
        .decide_checkpoint(
            asked.id,
            Some(option(&asked, CheckpointAction::AllowOnce)),
            None,
        )
        .await
        .expect("allowed");
    assert_eq!(
        ended(engine, session.id).await.status,
        SessionStatus::Finished
    );
    assert_eq!(counter.hits(), 1, "allowed once: it ran once");

    // The same command in another task asks again, recommending what the person chose.
    let second = bed.task("Install it again");
    bed.server
        .script(claude_runs(&counter.command(), "toolu_b"));
    let session = engine
        .run_project(bed.project.id, Some(&second.id))
        .expect("started");
    let asked = question(engine).await;
    assert_eq!(
        asked.recommendation,
        "Allow once — you chose it the last time for this kind of request in this project"
    );
    assert_eq!(counter.hits(), 1);
    engine
        .decide_checkpoint(
            asked.id,
            Some(option(&asked, CheckpointAction::AllowAlways)),
            None,
        )
        .await
        .expect("always");
    assert_eq!(
        ended(engine, session.id).await.status,
        SessionStatus::Finished
    );
    assert_eq!(counter.hits(), 2);
    let rules = engine.approval_rules(bed.project.id).expect("rules");
    assert_eq!(rules.len(), 1);
    assert_eq!(rules[0].rule, counter.command());
    assert_eq!(rules[0].task_id, None);

    // Always allowed: a later session runs it without a question.
    let third = bed.task("And once more");
    bed.server
        .script(claude_runs(&counter.command(), "toolu_c"));
    let session = engine
        .run_project_and_wait(bed.project.id, Some(&third.id))
        .await
        .expect("ran");
    assert_eq!(
        session.status,
        SessionStatus::Finished,
        "{}",
        session.summary
    );
    assert_eq!(counter.hits(), 3);
    assert!(engine.session_questions(session.id).expect("q").is_empty());
    assert!(engine.checkpoints().expect("c").pending.is_empty());
}

#[tokio::test]
async fn edits_in_the_working_copy_and_the_projects_check_never_ask_under_the_default() {
    let bed = agent_bed(AgentKind::ClaudeCode, |_| {}).await;
    let engine = &bed.engine;
    let t = bed.task("Greet properly");
    let check = crate::project_fixtures::python_check().command;
    let greet = bed.first_worktree().join("greet.py");
    bed.server.script([
        anthropic::tool_calls(
            "",
            &[(
                "toolu_1",
                "Write",
                &json!({"file_path": greet, "content": "def greet(name):\n    return 'Hello, ' + name + '!'\n"})
                    .to_string(),
            )],
            TOKENS,
        ),
        anthropic::tool_calls(
            "",
            &[
                ("toolu_2", "Bash", &json!({ "command": check }).to_string()),
                ("toolu_3", "Bash", &json!({"command": "ls -la && git diff --stat"}).to_string()),
                ("toolu_4", "Read", &json!({"file_path": greet}).to_string()),
            ],
            TOKENS,
        ),
        anthropic::text("greet() says Hello, Ada!", TOKENS),
    ]);
    let session = engine
        .run_project_and_wait(bed.project.id, Some(&t.id))
        .await
        .expect("ran");
    assert_eq!(
        session.status,
        SessionStatus::Finished,
        "{}",
        session.summary
    );
    assert!(session.commit_id.is_some(), "its work was committed");
    assert!(engine.session_questions(session.id).expect("q").is_empty());
    assert!(engine.checkpoints().expect("c").pending.is_empty());
}

#[tokio::test]
async fn codex_asks_through_its_hook_a_denial_carries_the_reason_and_allow_once_reaches_the_network(
) {
    let counter = Counter::start();
    let bed = agent_bed(AgentKind::Codex, |s| s.verify = vec![passing_check()]).await;
    let engine = &bed.engine;

    let first = bed.task("Install the helper");
    bed.server.script([
        responses::reply(&[responses::exec("c1", &counter.command())], TOKENS),
        responses::reply(&[responses::text("Done without it.")], TOKENS),
    ]);
    let session = engine
        .run_project(bed.project.id, Some(&first.id))
        .expect("started");
    let asked = question(engine).await;
    assert_eq!(asked.title, "Codex asks to run a command");
    assert_eq!(counter.hits(), 0);
    let reason = "use the copy in vendor/ instead";
    engine
        .decide_checkpoint(
            asked.id,
            Some(option(&asked, CheckpointAction::Deny)),
            Some(reason),
        )
        .await
        .expect("denied");
    assert_eq!(
        ended(engine, session.id).await.status,
        SessionStatus::Finished
    );
    assert_eq!(counter.hits(), 0);
    assert!(
        requests(&bed)
            .iter()
            .any(|r| r.contains("function_call_output") && r.contains(reason)),
        "the reason reached Codex's model"
    );

    let second = bed.task("Install it after all");
    bed.server.script([
        responses::reply(&[responses::exec("c2", &counter.command())], TOKENS),
        responses::reply(&[responses::text("Installed.")], TOKENS),
    ]);
    let session = engine
        .run_project(bed.project.id, Some(&second.id))
        .expect("started");
    let asked = question(engine).await;
    engine
        .decide_checkpoint(
            asked.id,
            Some(option(&asked, CheckpointAction::AllowOnce)),
            None,
        )
        .await
        .expect("allowed");
    assert_eq!(
        ended(engine, session.id).await.status,
        SessionStatus::Finished
    );
    assert_eq!(
        counter.hits(),
        1,
        "allowed once, it reached the network once"
    );
}

#[tokio::test]
async fn a_question_nobody_answers_is_denied_at_the_shipped_thirty_minutes_never_allowed() {
    let counter = Counter::start();
    let pb = project_bed(false, |_| {}).await;
    let engine = pb.engine();
    let t = engine
        .add_task(
            pb.project.id,
            healer::project::TaskEdit {
                title: "Fetch the data".to_string(),
                ..Default::default()
            },
        )
        .expect("task");
    let fetch = format!("curl -s http://127.0.0.1:{}/data", counter.port);
    pb.bed.server.script([
        crate::project_fixtures::call("c1", "run_command", json!({ "command": fetch })),
        crate::project_fixtures::call("c2", "finish", json!({"summary": "could not fetch it"})),
    ]);
    let session = engine
        .run_project(pb.project.id, Some(&t.id))
        .expect("started");
    let asked = question(engine).await;
    let ask = asked.agent_request.clone().expect("ask");
    assert_eq!(DEFAULT_APPROVAL_LIMIT_SECS, 30 * 60);
    let created = chrono::DateTime::parse_from_rfc3339(&ask.created_at)
        .expect("time")
        .with_timezone(&chrono::Utc);
    let deadline = chrono::DateTime::parse_from_rfc3339(&ask.deadline_at)
        .expect("time")
        .with_timezone(&chrono::Utc);
    assert_eq!(
        (deadline - created).num_seconds(),
        30 * 60,
        "the shipped limit"
    );

    // A second before the limit, it still waits.
    let denied = engine
        .expire_questions(deadline - chrono::Duration::seconds(1))
        .await
        .expect("look");
    assert!(denied.is_empty());
    assert!(engine
        .store()
        .session_waits_for_you(session.id)
        .expect("waits"));
    // At the limit: denied, never allowed, and the agent is told why.
    let denied = engine.expire_questions(deadline).await.expect("look");
    assert_eq!(denied, vec![ask.id]);
    let done = ended(engine, session.id).await;
    assert_eq!(counter.hits(), 0);
    assert_ne!(done.status, SessionStatus::Running);
    let questions = engine.session_questions(session.id).expect("q");
    assert_eq!(questions[0].status, ApprovalStatus::Expired);
    let told = pb
        .bed
        .server
        .chats()
        .last()
        .map(|s| s.body.to_string())
        .unwrap_or_default();
    assert!(told.contains("nobody answered within 30 minutes"), "{told}");
    // The question shows as denied, but is not learnt as the person's choice.
    let closed = engine.checkpoint(asked.id).expect("checkpoint");
    let decision = closed.decision.expect("closed");
    assert_eq!(
        closed.options[decision.option as usize - 1].action,
        CheckpointAction::Deny
    );
    assert!(
        decision
            .outcome
            .contains("nobody answered within 30 minutes"),
        "{}",
        decision.outcome
    );
}

#[tokio::test]
async fn a_daemon_killed_while_a_question_waits_carries_the_answer_out_after_its_restart() {
    killed_while_it_asks(AgentKind::ClaudeCode, |counter| {
        vec![
            anthropic::tool_calls(
                "",
                &[(
                    "toolu_1",
                    "Bash",
                    &json!({ "command": counter.command() }).to_string(),
                )],
                TOKENS,
            ),
            anthropic::tool_calls(
                "I was told it is allowed now.",
                &[(
                    "toolu_2",
                    "Bash",
                    &json!({ "command": counter.command() }).to_string(),
                )],
                TOKENS,
            ),
            anthropic::text("Installed.", TOKENS),
        ]
    })
    .await;
}

/// The story of a daemon SIGKILLed while `kind`'s question waits, and the next one killed
/// while it carries the answer out: the one after resumes the agent with it, once. `script`:
/// the agent's turns — the first session asks; the resumed one asks for the same command
/// again and goes on.
pub(crate) async fn killed_while_it_asks(
    kind: AgentKind,
    script: impl FnOnce(&Counter) -> Vec<crate::model_server::Reply>,
) {
    let counter = Counter::start();
    let bed = agent_bed(kind, |s| s.verify = vec![passing_check()]).await;
    let t = bed.task("Install the helper");
    let project = bed.project.name.clone();
    bed.server.script(script(&counter));
    let AgentBed {
        tmp,
        paths,
        engine,
        server,
        ..
    } = bed;
    engine.shutdown().await;
    drop(engine);
    let daemon_cmd = || {
        let mut cmd: Command = healer(&paths);
        cmd.env(KEY_VAR, KEY).arg("daemon");
        cmd
    };
    let mut daemon = Daemon::start(daemon_cmd(), tmp.path().join("daemon.log"));
    let out = healer(&paths)
        .env(KEY_VAR, KEY)
        .args(["project", "run", &project, "--task", &t.id])
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let store = healer::store::Store::open(&paths.db()).expect("store");
    let asked = eventually("the agent's question", Duration::from_secs(60), || {
        store
            .pending_checkpoints()
            .ok()?
            .into_iter()
            .find(|c| c.agent_request.is_some())
    })
    .await;
    assert_eq!(counter.hits(), 0);

    // SIGKILL: the question is all that is left, in the store.
    daemon.child.kill().expect("killed");
    daemon.child.wait().expect("reaped");
    drop(daemon);
    // The next engine is killed again while it carries out the answer (after recording it).
    let mut crashing = daemon_cmd();
    crashing.env("HEALER_FAILPOINT", "approval.answered");
    let mut daemon = Daemon::start(crashing, tmp.path().join("daemon2.log"));
    let first = store
        .session(asked.agent_request.as_ref().expect("ask").session_id)
        .expect("session");
    assert_eq!(first.status, SessionStatus::Interrupted);
    assert!(
        first.summary.contains("waited for your answer"),
        "{}",
        first.summary
    );
    let file = healer::tasklist::read_file(&bed_repo(&tmp).join(healer::tasklist::TASKS_FILE))
        .expect("tasks");
    assert_eq!(
        file.task(&t.id).map(|t| t.status),
        Some(healer::tasklist::TaskStatus::InProgress),
        "the task waits for the answer, not back to open"
    );
    assert_eq!(counter.hits(), 0);

    let allow = option(&asked, CheckpointAction::AllowOnce).to_string();
    let out = healer(&paths)
        .args(["checkpoint", "decide", &asked.id.to_string(), &allow])
        .output()
        .expect("decide");
    assert!(!out.status.success(), "the engine died mid-act");
    daemon.child.wait().expect("it aborted");
    drop(daemon);
    let answered = store
        .approval_of_checkpoint(asked.id)
        .expect("q")
        .expect("q");
    assert_eq!(answered.ask.status, ApprovalStatus::Allowed);
    assert_eq!(counter.hits(), 0);
    // The next engine carries the answer out, once.
    let _daemon = Daemon::start(daemon_cmd(), tmp.path().join("daemon3.log"));
    let resumed = eventually("the resumed session's end", Duration::from_secs(90), || {
        store
            .list_sessions(first.project_id, Some(&t.id), 10)
            .ok()?
            .into_iter()
            .find(|s| s.resumed_from == Some(first.id) && s.status != SessionStatus::Running)
    })
    .await;
    assert_eq!(
        resumed.status,
        SessionStatus::Finished,
        "{}",
        resumed.summary
    );
    assert_eq!(
        counter.hits(),
        1,
        "the answer acted once, after the restart"
    );
    let resume_request = server
        .chats()
        .iter()
        .map(|s| s.body.to_string())
        .find(|b| b.contains("Healer stopped while you waited for the person's answer"))
        .expect("the agent was told the answer");
    assert!(resume_request.contains("allowed"), "{resume_request}");
    let decided = store
        .checkpoint(asked.id)
        .expect("c")
        .decision
        .expect("decided");
    assert_eq!(decided.option, option(&asked, CheckpointAction::AllowOnce));
}

/// The greeter repository of an agent bed, by its temp folder.
fn bed_repo(tmp: &tempfile::TempDir) -> std::path::PathBuf {
    tmp.path().join("greeter")
}

#[tokio::test]
async fn the_judges_fifteen_minutes_do_not_count_the_wait_for_the_person() {
    let counter = Counter::start();
    let pb = project_bed(false, |_| {}).await;
    let engine = pb.engine();
    let t = engine
        .add_task(
            pb.project.id,
            healer::project::TaskEdit {
                title: "Fetch the data".to_string(),
                ..Default::default()
            },
        )
        .expect("task");
    pb.bed.server.script([crate::project_fixtures::call(
        "c1",
        "run_command",
        json!({ "command": format!("curl -s http://127.0.0.1:{}/data", counter.port) }),
    )]);
    let session = engine
        .run_project(pb.project.id, Some(&t.id))
        .expect("started");
    let asked = question(engine).await;
    let started = chrono::DateTime::parse_from_rfc3339(&session.started_at)
        .expect("time")
        .with_timezone(&chrono::Utc);
    // At the judge's shipped interval (and well past it) the session waits for the person:
    // the judge does not look at it, and asks the model nothing.
    let before = pb.bed.server.chats().len();
    let judged = engine
        .judge_tasks(started + chrono::Duration::minutes(20))
        .await
        .expect("judge");
    assert!(judged.is_empty(), "{judged:?}");
    assert_eq!(pb.bed.server.chats().len(), before);
    assert!(asked.agent_request.is_some());
    engine.stop_session(session.id).expect("stop");
    let _ = ended(engine, session.id).await;
}
