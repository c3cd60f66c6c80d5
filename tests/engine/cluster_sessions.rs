//! Coding agents on the cluster (issue 42), with a real Temporal dev server, real `healer
//! worker` processes, a git remote on disk, and the real Claude Code offline against the
//! scripted provider, reached from the worker only through the control room's model gateway.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use healer::project::ProjectInput;
use healer::session::{AgentKind, SessionStatus, StepSource};
use healer::store::RunsOn;
use healer::tasklist::TaskStatus;
use healer::{Engine, Paths};

use crate::agent_fixtures::claude;
use crate::cluster_bed::{carrying, free_port, start_engine, write_key, TemporalDev, Worker};
use crate::maintainer::KEY;
use crate::model_server::{anthropic, ModelServer, TOKENS};
use crate::project_agent_fixtures::{agent_settings, configure_providers};
use crate::project_fixtures::{git_repo, GREETER};

const QUEUE: &str = "agents";

struct Bed {
    server: TemporalDev,
    tmp: tempfile::TempDir,
    paths: Paths,
    engine: Engine,
    model: ModelServer,
    repo: PathBuf,
    remote: PathBuf,
    key_file: PathBuf,
    gateway: String,
    project: i64,
}

/// A commit of NOTES.md saying `text` on the branch checked out in `repo`, as a person makes it.
fn commit_notes(repo: &Path, text: &str) {
    std::fs::write(repo.join("NOTES.md"), format!("{text}\n")).expect("notes");
    git(repo, &["add", "NOTES.md"]);
    git(
        repo,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "--quiet",
            "-m",
            text,
        ],
    );
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

async fn bed() -> Bed {
    bed_with(|_| {}).await
}

async fn bed_with(change: impl FnOnce(&mut healer::store::ProjectSettings)) -> Bed {
    crate::project_agent_fixtures::hooks_program();
    let server = TemporalDev::start();
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tmp");
    let paths = Paths::new(tmp.path().join("data"));
    paths.ensure().expect("data");
    let engine = start_engine(&paths).await;
    let model = ModelServer::start(Some(KEY));
    configure_providers(&engine, &model);
    engine
        .connect_cluster(server.settings(QUEUE))
        .await
        .expect("connected");
    let repo = tmp.path().join("greeter");
    git_repo(&repo, GREETER);
    let remote = tmp.path().join("remote.git");
    git(
        tmp.path(),
        &["clone", "--quiet", "--bare", "greeter", "remote.git"],
    );
    git(
        &repo,
        &["remote", "add", "origin", &remote.display().to_string()],
    );
    let listen = format!("127.0.0.1:{}", free_port());
    healer::cluster::gateway_access::open_to_workers(engine.store(), &listen).expect("gateway");
    let key_file = write_key(&paths, tmp.path());
    let mut settings = agent_settings(AgentKind::ClaudeCode);
    settings.runs_on = RunsOn::Cluster {
        queue: String::new(),
    };
    change(&mut settings);
    let project = engine
        .add_project(ProjectInput {
            path: repo.display().to_string(),
            name: "greeter".to_string(),
            settings,
        })
        .expect("a project on the cluster")
        .id;
    Bed {
        server,
        paths,
        engine,
        model,
        repo,
        remote,
        key_file,
        gateway: format!("http://{listen}"),
        project,
        tmp,
    }
}

impl Bed {
    /// A worker with Claude Code on its PATH and a gateway token of its own.
    fn worker(&self, name: &str) -> Worker {
        let token = healer::cluster::gateway_access::make_worker_token(self.engine.store(), name)
            .expect("token");
        let agents = claude().parent().expect("folder").display().to_string();
        let path = format!("{agents}:{}", std::env::var("PATH").unwrap_or_default());
        Worker::start_env(
            &self.server,
            QUEUE,
            name,
            &self.key_file,
            self.tmp.path(),
            &["--gateway", &self.gateway],
            &[
                ("PATH", path),
                ("HEALER_GATEWAY_TOKEN", token),
                // In its environment, not a file the agent could read.
                (
                    "HEALER_CLUSTER_KEY",
                    std::fs::read_to_string(&self.key_file).expect("key"),
                ),
                (healer::project::HOOK_CLI_VAR, String::new()),
            ],
        )
    }

    fn task(&self, title: &str, description: &str) {
        self.engine
            .add_task(
                self.project,
                healer::project::TaskEdit {
                    title: title.to_string(),
                    description: description.to_string(),
                    ..Default::default()
                },
            )
            .expect("task");
    }

    fn steps_text(&self, session: i64) -> String {
        self.engine
            .store()
            .session_steps(session, 0)
            .expect("steps")
            .iter()
            .map(|s| {
                format!(
                    "{} {}",
                    s.step.text,
                    s.step.arguments.clone().unwrap_or_default()
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn task_status(&self) -> TaskStatus {
        let file = healer::tasklist::read_file(&self.repo.join(healer::tasklist::TASKS_FILE))
            .expect("tasks");
        file.task("t1").expect("t1").status
    }

    fn remote_branch(&self) -> Option<String> {
        let out = Command::new("git")
            .args(["rev-parse", "--verify", "--quiet", "refs/heads/healer/t1"])
            .current_dir(&self.remote)
            .output()
            .expect("git");
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    }
}

/// The Python that fixes the greeting (a command the project lets run without asking).
const FIX: &str = "python3 -c \"import pathlib; p = pathlib.Path('greet.py'); p.write_text(p.read_text().replace(\\\"'Hi ' + name\\\", \\\"'Hello, ' + name + '!'\\\"))\"";

fn call(id: &str, command: &str) -> crate::model_server::Reply {
    anthropic::tool_calls(
        "",
        &[(id, "Bash", &json!({"command": command}).to_string())],
        TOKENS,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_task_runs_on_a_worker_through_the_gateway_its_branch_is_pushed_and_accepted_and_no_key_or_canary_leaves_home(
) {
    let bed = bed().await;
    let canary = format!("canary-{}", uuid::Uuid::new_v4());
    bed.task(
        "Greet properly",
        &format!("greet() must say Hello, with a comma. ({canary})"),
    );
    bed.model.script([
        // Something that would ask the person at home is refused on a worker, with a sentence.
        call("toolu_1", "curl -s https://example.com"),
        call("toolu_2", &format!("{FIX}; echo {canary}")),
        anthropic::text(&format!("greet() now says Hello, Ada! {canary}"), TOKENS),
    ]);
    let mut worker = bed.worker("rack-1");
    let session = bed
        .engine
        .run_project_and_wait(bed.project, None)
        .await
        .expect("run");
    let said = bed.steps_text(session.id);
    assert_eq!(session.status, SessionStatus::Finished, "{said}");
    assert_eq!(bed.task_status(), TaskStatus::Closed, "{said}");
    assert!(said.contains("On the worker rack-1"), "{said}");
    assert!(said.contains("from where Healer cannot ask yet"), "{said}");
    // The agent's own steps came back, in the session as for a local agent.
    let steps = bed
        .engine
        .store()
        .session_steps(session.id, 0)
        .expect("steps");
    assert!(
        steps
            .iter()
            .any(|s| s.step.source == StepSource::Agent && s.step.tool.as_deref() == Some("Bash")),
        "{said}"
    );
    // Pushed from the worker, brought into the control room and accepted into main.
    let pushed = bed.remote_branch().expect("the branch was pushed");
    assert_eq!(git(&bed.repo, &["rev-parse", "refs/heads/main"]), pushed);
    let greet = git(&bed.remote, &["show", &format!("{pushed}:greet.py")]);
    assert!(greet.contains("'Hello, ' + name + '!'"), "{greet}");
    // The provider got the real key from the gateway; the agent only its pass.
    let chats = bed.model.chats();
    assert!(chats.len() >= 3, "{}", chats.len());
    assert!(chats.iter().all(|c| c.header("x-api-key") == Some(KEY)));
    // No key on the worker: not in its environment, its command line, or its files.
    let pid = worker.child.id();
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    for bytes in [&environ, &cmdline] {
        assert!(!contains(bytes, KEY.as_bytes()), "the key is on the worker");
    }
    for file in crate::faults::files_under(&bed.tmp.path().join("rack-1-cache")) {
        let bytes = std::fs::read(&file).unwrap_or_default();
        assert!(!contains(&bytes, KEY.as_bytes()), "{}", file.display());
    }
    // The canary went through the session's steps and the prompt, sealed: Temporal has it in
    // no byte of its database.
    assert!(said.contains(&canary), "{said}");
    worker.kill();
    let stored = bed.server.stored_bytes();
    assert!(stored.len() > 10_000, "Temporal's database was read");
    assert!(
        !contains(&stored, canary.as_bytes()),
        "the canary is in Temporal's database"
    );
    assert!(!contains(&stored, b"Greet properly"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_looping_session_on_a_worker_is_steered_a_message_reaches_it_and_stop_ends_it_within_five_seconds(
) {
    let bed = bed().await;
    bed.task("Greet properly", "greet() must say Hello.");
    let same = |n: usize| call(&format!("toolu_{n}"), "cat greet.py");
    let mut script: Vec<_> = (0..5).map(same).collect();
    // Then it waits in a long command, where the person's message and the Stop find it.
    for n in 5..40 {
        script.push(call(&format!("toolu_{n}"), "sleep 3; cat greet.py"));
    }
    bed.model.script(script);
    let _worker = bed.worker("rack-1");
    let session = bed.engine.run_project(bed.project, None).expect("started");
    // The loop is caught here, from the steps the worker sent, and told to the agent there.
    let told = wait_for(Duration::from_secs(60), || {
        bed.model.chats().iter().any(|c| {
            c.body
                .to_string()
                .contains("Healer, which watches this session")
        })
    })
    .await;
    assert!(
        told,
        "the loop's message never reached the agent: {}",
        bed.steps_text(session.id)
    );
    let timeline = bed
        .engine
        .store()
        .steering_timeline(bed.project, "t1")
        .expect("timeline");
    assert!(timeline
        .iter()
        .any(|e| e.kind == healer::store::SteeringKind::Loop));
    // The person's message.
    bed.engine
        .say_to_session(session.id, "Please also keep the name as it is given.")
        .expect("said");
    let heard = wait_for(Duration::from_secs(30), || {
        bed.model
            .chats()
            .iter()
            .any(|c| c.body.to_string().contains("keep the name as it is given"))
    })
    .await;
    assert!(heard, "the person's message never reached the agent");
    // Stop: ended within 5 s, nothing of the session left running on the worker.
    let stopped_at = Instant::now();
    bed.engine.stop_session(session.id).expect("stop");
    let ended = bed.engine.wait_session(session.id).await.expect("ended");
    assert_eq!(ended.status, SessionStatus::Stopped);
    assert!(
        stopped_at.elapsed() < Duration::from_secs(5),
        "stopped in {:?}",
        stopped_at.elapsed()
    );
    let left = || left_running(&bed.paths, session.id);
    let gone = wait_for(Duration::from_secs(2), || left().is_empty()).await;
    assert!(gone, "left running: {:?}", left());
    assert_eq!(bed.task_status(), TaskStatus::Open);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_worker_killed_mid_session_reopens_the_task_within_the_heartbeat_timeout_and_another_worker_continues_the_pushed_branch(
) {
    let bed = bed().await;
    bed.task("Greet properly", "greet() must say Hello.");
    // Work pushed earlier on the task's branch (by an earlier session).
    git(&bed.repo, &["checkout", "--quiet", "-b", "healer/t1"]);
    commit_notes(&bed.repo, "earlier work");
    git(&bed.repo, &["push", "--quiet", "origin", "healer/t1"]);
    git(&bed.repo, &["checkout", "--quiet", "main"]);
    git(&bed.repo, &["branch", "--quiet", "-D", "healer/t1"]);
    let earlier = bed.remote_branch().expect("pushed");
    bed.model
        .script([call("toolu_1", "python3 -c 'import time; time.sleep(120)'")]);
    let mut first = bed.worker("rack-1");
    let session = bed.engine.run_project(bed.project, None).expect("started");
    let running = wait_for(Duration::from_secs(60), || {
        bed.steps_text(session.id).contains("time.sleep(120)")
    })
    .await;
    assert!(running, "{}", bed.steps_text(session.id));
    // A second worker polls the queue: it runs the session's workflow on, and the next session.
    let _second = bed.worker("rack-2");
    let killed_at = Instant::now();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(first.child.id()).expect("pid")),
        nix::sys::signal::Signal::SIGKILL,
    )
    .expect("SIGKILL");
    let _ = first.child.wait();
    let ended = bed.engine.wait_session(session.id).await.expect("ended");
    let within = healer::cluster::session_flow::SESSION_HEARTBEAT_TIMEOUT + Duration::from_secs(60);
    assert!(
        killed_at.elapsed() < within,
        "noticed after {:?}",
        killed_at.elapsed()
    );
    assert_eq!(ended.status, SessionStatus::Interrupted);
    assert!(ended.summary.contains("was lost"), "{}", ended.summary);
    assert_eq!(bed.task_status(), TaskStatus::Open);
    assert_eq!(
        bed.remote_branch().as_deref(),
        Some(earlier.as_str()),
        "what was pushed is kept"
    );
    // Nothing of the killed worker's session is left running (the agent, its command).
    drop(first);
    let left = || left_running(&bed.paths, session.id);
    let gone = wait_for(Duration::from_secs(10), || left().is_empty()).await;
    assert!(gone, "left running: {:?}", left());
    // A second worker takes the next session, from the pushed branch.
    bed.model.script([
        call("toolu_2", FIX),
        anthropic::text("greet() now says Hello, Ada!", TOKENS),
    ]);
    let next = bed
        .engine
        .run_project_and_wait(bed.project, None)
        .await
        .expect("next");
    let said = bed.steps_text(next.id);
    assert_eq!(next.status, SessionStatus::Finished, "{said}");
    assert!(said.contains("On the worker rack-2"), "{said}");
    assert!(
        said.contains(&format!("where it was pushed ({})", &earlier[..7])),
        "{said}"
    );
    let pushed = bed.remote_branch().expect("pushed");
    assert_eq!(
        git(
            &bed.remote,
            &["merge-base", "--is-ancestor", &earlier, &pushed]
        ),
        ""
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn work_pushed_from_a_worker_is_reviewed_here_and_accepted_after_main_moved_with_its_checks_run_again(
) {
    let bed = bed_with(|s| s.merge = healer::store::MergePolicy::LeaveBranch).await;
    bed.task("Greet properly", "greet() must say Hello, with a comma.");
    bed.model.script([
        call("toolu_1", FIX),
        anthropic::text("greet() now says Hello, Ada!", TOKENS),
    ]);
    let _worker = bed.worker("rack-1");
    let session = bed
        .engine
        .run_project_and_wait(bed.project, None)
        .await
        .expect("run");
    assert_eq!(
        session.status,
        SessionStatus::Finished,
        "{}",
        bed.steps_text(session.id)
    );
    let pushed = bed.remote_branch().expect("pushed");
    // Left on its branch: main is untouched, the work is reviewed here.
    let main_before = git(&bed.repo, &["rev-parse", "refs/heads/main"]);
    assert_ne!(main_before, pushed);
    let review = bed
        .engine
        .review_task(bed.project, "t1")
        .await
        .expect("review");
    assert!(
        review
            .files
            .iter()
            .any(|f| f.path == "greet.py" && f.how == "modified"),
        "{review:?}"
    );
    // The person's main moves on meanwhile; accepting brings it in and runs the checks again.
    commit_notes(&bed.repo, "a note");
    let accepted = bed
        .engine
        .accept_task(bed.project, "t1", None)
        .await
        .expect("accept");
    let healer::engine::Acceptance::Accepted { said, .. } = &accepted else {
        panic!("{accepted:?}")
    };
    assert!(said.contains("checks passed again"), "{said}");
    let greet = git(&bed.repo, &["show", "main:greet.py"]);
    assert!(greet.contains("'Hello, ' + name + '!'"), "{greet}");
    assert!(git(&bed.repo, &["show", "main:NOTES.md"]).contains("a note"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_worker_that_keeps_its_cluster_key_in_a_file_runs_no_agent_and_says_why() {
    let bed = bed().await;
    bed.task("Greet properly", "greet() must say Hello.");
    let token = healer::cluster::gateway_access::make_worker_token(bed.engine.store(), "filed")
        .expect("token");
    let _worker = Worker::start_env(
        &bed.server,
        QUEUE,
        "filed",
        &bed.key_file,
        bed.tmp.path(),
        &["--gateway", &bed.gateway],
        &[("HEALER_GATEWAY_TOKEN", token)],
    );
    let session = bed
        .engine
        .run_project_and_wait(bed.project, None)
        .await
        .expect("run");
    assert_eq!(session.status, SessionStatus::Failed);
    assert!(
        session.summary.contains("keeps its cluster key in a file"),
        "{}",
        session.summary
    );
    assert!(bed.model.chats().is_empty(), "no agent ran");
    assert_eq!(bed.remote_branch(), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_control_room_killed_mid_session_cancels_the_session_on_the_cluster_at_its_next_start() {
    let bed = bed().await;
    bed.task("Greet properly", "greet() must say Hello.");
    bed.model
        .script([call("toolu_1", "python3 -c 'import time; time.sleep(120)'")]);
    let _worker = bed.worker("rack-1");
    let Bed {
        engine,
        paths,
        model,
        repo,
        tmp,
        ..
    } = bed;
    engine.shutdown().await;
    drop(engine);
    // The control room as a person runs it: `healer daemon`, killed with SIGKILL mid-session.
    let daemon = |log: &str| {
        let log = tmp.path().join(log);
        let file = std::fs::File::create(&log).expect("log");
        let child = Command::new(env!("CARGO_BIN_EXE_healer"))
            .arg("daemon")
            .env("HEALER_DATA_DIR", paths.data_dir())
            .env("HEALER_KEYRING", "off")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(file)
            .spawn()
            .expect("daemon");
        (child, log)
    };
    let (mut first, log) = daemon("first.log");
    let ready = wait_for(Duration::from_secs(30), || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("Press Ctrl-C to stop")
    })
    .await;
    assert!(
        ready,
        "{}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    let out = Command::new(env!("CARGO_BIN_EXE_healer"))
        .args(["project", "run", "greeter"])
        .env("HEALER_DATA_DIR", paths.data_dir())
        .env("HEALER_KEYRING", "off")
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let left = || left_running(&paths, 1);
    let waiting = wait_for(Duration::from_secs(60), || {
        !model.chats().is_empty() && !left().is_empty()
    })
    .await;
    assert!(waiting, "the agent never started on the worker");
    first.kill().expect("SIGKILL");
    let _ = first.wait();
    // The agent goes on on the worker while no control room is there…
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(!left().is_empty(), "the worker's session ended by itself");
    // …until the control room starts again: the session is cancelled there.
    let (mut second, log) = daemon("second.log");
    let gone = wait_for(Duration::from_secs(45), || left().is_empty()).await;
    let said = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = second.kill();
    let _ = second.wait();
    assert!(gone, "left running on the worker: {:?}\n{said}", left());
    let file =
        healer::tasklist::read_file(&repo.join(healer::tasklist::TASKS_FILE)).expect("tasks");
    assert_eq!(file.task("t1").expect("t1").status, TaskStatus::Open);
}

/// A red check on a worker heals as a red check here: what the agent left comes back as
/// changes not committed, the healer service's rewind (asked first, at the defaults) is carried
/// to the pushed branch — its tip pinned on the remote, then the branch put back — and the
/// follow-up task's session goes to the cluster and passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_red_check_on_a_worker_is_rewound_on_the_pushed_branch_and_a_follow_up_on_the_cluster_passes(
) {
    let bed = bed().await;
    crate::healer_service::healer_on(&bed.engine, bed.project);
    bed.task("Greet properly", "greet() must say Hello, with a comma.");
    const WRONG: &str = "python3 -c \"import pathlib; p = pathlib.Path('greet.py'); p.write_text(p.read_text().replace(\\\"'Hi '\\\", \\\"'Hey '\\\"))\"";
    bed.model.script([
        call("toolu_1", WRONG),
        anthropic::text("greet() now says Hey.", TOKENS),
    ]);
    let _worker = bed.worker("rack-1");
    let base = git(&bed.repo, &["rev-parse", "refs/heads/main"]);
    let session = bed
        .engine
        .run_project_and_wait(bed.project, None)
        .await
        .expect("run");
    let said = bed.steps_text(session.id);
    assert_eq!(session.status, SessionStatus::Failed, "{said}");
    // The worker kept the red work on the branch; here it is what a local session leaves.
    let red = bed.remote_branch().expect("the red work was pushed");
    assert_ne!(red, base);
    assert!(said.contains("as changes not yet committed"), "{said}");
    let worktree = PathBuf::from(&session.worktree);
    assert_eq!(git(&worktree, &["rev-parse", "HEAD"]), base);
    assert!(std::fs::read_to_string(worktree.join("greet.py"))
        .expect("greet.py")
        .contains("'Hey '"));

    // At the defaults Healer asks before undoing; the person says go ahead.
    let checkpoint =
        crate::project_fixtures::eventually("the question", Duration::from_secs(60), || {
            bed.engine
                .checkpoints()
                .expect("checkpoints")
                .pending
                .into_iter()
                .next()
        })
        .await;
    assert_eq!(
        bed.remote_branch().as_deref(),
        Some(red.as_str()),
        "not before the answer"
    );
    bed.engine
        .decide_checkpoint(checkpoint.id, Some(1), None)
        .await
        .expect("proceed");
    let inv = crate::healer_service::ended_invocations(&bed.engine, "t1", 1)
        .await
        .remove(0);
    assert_eq!(
        crate::healer_service::repairs_of(&inv),
        [
            ("rewind_uncommitted_changes", true),
            ("mark_task_blocked_with_followup", true)
        ],
        "{:?}",
        inv.spells
    );
    assert!(
        inv.spells[1]
            .summary
            .contains("on the repository's remote too"),
        "{}",
        inv.spells[1].summary
    );
    // On the remote: the tip pinned first, then the branch put back where it started.
    let snap = bed
        .engine
        .snapshots(Some(bed.project), Some("t1"))
        .expect("snapshots")
        .remove(0);
    let pin = healer::project::push::pin_name("t1", snap.seq);
    assert_eq!(git(&bed.remote, &["rev-parse", &pin]), red);
    assert_eq!(bed.remote_branch().as_deref(), Some(base.as_str()));
    // Here: the worktree at its last commit, clean.
    assert_eq!(git(&worktree, &["status", "--porcelain"]), "");
    assert!(std::fs::read_to_string(worktree.join("greet.py"))
        .expect("greet.py")
        .contains("'Hi '"));
    assert_eq!(bed.task_status(), TaskStatus::Blocked);

    // The follow-up task's session goes to the cluster too, and passes.
    let followup = inv.followup_task.clone().expect("a follow-up task");
    bed.model.script([
        call("toolu_2", FIX),
        anthropic::text("greet() now says Hello, Ada!", TOKENS),
    ]);
    let next = bed
        .engine
        .run_project_and_wait(bed.project, Some(&followup))
        .await
        .expect("the follow-up");
    let said = bed.steps_text(next.id);
    assert_eq!(next.status, SessionStatus::Finished, "{said}");
    assert!(said.contains("On the worker rack-1"), "{said}");
    let greet = git(&bed.repo, &["show", "main:greet.py"]);
    assert!(greet.contains("'Hello, ' + name + '!'"), "{greet}");
    // The red work is in no branch of the remote: only the pin holds it.
    let holding = git(&bed.remote, &["branch", "--contains", &red]);
    assert_eq!(holding, "", "{holding}");
}

/// Someone pushes to the task's branch while a worker works on it: the worker's push is
/// refused (theirs is never written over) and its work is kept on the remote beside the
/// branch, said in the session.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn work_whose_branch_moved_on_the_remote_meanwhile_is_kept_beside_it_not_lost() {
    let bed = bed().await;
    bed.task("Greet properly", "greet() must say Hello, with a comma.");
    // "Someone else" pushes to healer/t1 from the worker's clone, then the clone goes back.
    const SOMEONE: &str = r#"python3 -c "import subprocess as s; r = lambda *a: s.run(a, check=True); r('git', '-c', 'user.name=x', '-c', 'user.email=x@x', 'commit', '--allow-empty', '-qm', 'someone else'); r('git', 'push', '-q', 'origin', 'HEAD:refs/heads/healer/t1'); r('git', 'reset', '-q', '--hard', 'HEAD~1')""#;
    bed.model.script([
        call("toolu_1", SOMEONE),
        call("toolu_2", FIX),
        anthropic::text("greet() now says Hello, Ada!", TOKENS),
        // The healer service's retry, given only the failure: on the cluster too.
        call("toolu_3", FIX),
        anthropic::text("greet() says Hello, Ada! again.", TOKENS),
    ]);
    let _worker = bed.worker("rack-1");
    let session = bed
        .engine
        .run_project_and_wait(bed.project, None)
        .await
        .expect("run");
    let said = bed.steps_text(session.id);
    assert_eq!(session.status, SessionStatus::Failed, "{said}");
    // Theirs is on the branch, not written over (Healer's repair below builds on it).
    let theirs = git(&bed.remote, &["rev-parse", "healer/t1^{/someone else}"]);
    // The worker's work is beside it, and the session says where.
    let aside = format!("refs/healer/kept/t1/{}", session.id);
    assert!(said.contains(&aside), "{said}");
    let greet = git(&bed.remote, &["show", &format!("{aside}:greet.py")]);
    assert!(greet.contains("'Hello, ' + name + '!'"), "{greet}");
    // The repair Healer starts goes to the cluster with the project's own agent (Healer's
    // works only here), continues from their commit, and passes.
    let inv = crate::healer_service::ended_invocations(&bed.engine, "t1", 1)
        .await
        .remove(0);
    let retry = inv
        .spells
        .iter()
        .find(|s| s.spell == "retry_with_minimal_subagent")
        .unwrap_or_else(|| panic!("{:?}", inv.spells));
    assert!(retry.success, "{}", retry.summary);
    assert!(
        retry
            .summary
            .starts_with("Claude Code on the cluster retried"),
        "{}",
        retry.summary
    );
    let repaired = bed
        .engine
        .store()
        .session(retry.session_id.expect("its session"))
        .expect("session");
    assert_eq!(repaired.agent, AgentKind::ClaudeCode);
    let said = bed.steps_text(repaired.id);
    assert!(said.contains("On the worker rack-1"), "{said}");
    let pushed = bed.remote_branch().expect("pushed");
    git(
        &bed.remote,
        &["merge-base", "--is-ancestor", &theirs, &pushed],
    );
}

#[tokio::test]
async fn a_project_cannot_move_to_the_cluster_without_a_connection_or_a_remote() {
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tmp");
    let paths = Paths::new(tmp.path().join("data"));
    paths.ensure().expect("data");
    let engine = start_engine(&paths).await;
    let model = ModelServer::start(Some(KEY));
    configure_providers(&engine, &model);
    let repo = tmp.path().join("greeter");
    git_repo(&repo, GREETER);
    let mut settings = agent_settings(AgentKind::ClaudeCode);
    let project = engine
        .add_project(ProjectInput {
            path: repo.display().to_string(),
            name: "greeter".to_string(),
            settings: settings.clone(),
        })
        .expect("project");
    settings.runs_on = RunsOn::Cluster {
        queue: String::new(),
    };
    let input = ProjectInput {
        path: repo.display().to_string(),
        name: "greeter".to_string(),
        settings: settings.clone(),
    };
    let refused = engine
        .update_project(project.id, input.clone())
        .expect_err("no connection");
    assert!(refused.to_string().contains("not connected"), "{refused}");
    // Through the command line too, and nothing is saved.
    let out = Command::new(env!("CARGO_BIN_EXE_healer"))
        .args(["project", "runs-on", "greeter", "cluster"])
        .env("HEALER_DATA_DIR", paths.data_dir())
        .output()
        .expect("healer");
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("not connected"), "{said}");
    assert_eq!(
        engine
            .store()
            .project(project.id)
            .expect("p")
            .settings
            .runs_on,
        RunsOn::Local
    );
    // Connected, but the repository has no remote.
    let server = TemporalDev::start();
    engine
        .connect_cluster(server.settings(QUEUE))
        .await
        .expect("connected");
    let refused = engine
        .update_project(project.id, input)
        .expect_err("no remote");
    assert!(refused.to_string().contains("has no remote"), "{refused}");
}

/// The processes of session `session` of this Healer still running (their environment carries
/// both marks: other tests' sessions have numbers of their own).
fn left_running(paths: &Paths, session: i64) -> Vec<i32> {
    let ours = format!("HEALER_INSTANCE={}", paths.instance_mark());
    carrying(&format!("HEALER_AGENT_SESSION={session}"))
        .into_iter()
        .filter(|pid| carrying(&ours).contains(pid))
        .collect()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

async fn wait_for(patience: Duration, mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + patience;
    while Instant::now() < deadline {
        if f() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    f()
}
