//! Runs on a Temporal cluster, against a real Temporal dev server and real `healer worker`
//! processes: runs spread over workers, a worker killed mid-attempt, the control room killed
//! with runs in flight, schedules that fire while it is stopped, and nothing readable in
//! Temporal's database.

use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use healer::cluster::RunsOn;
use healer::store::Store;
use healer::workflow::{AttemptStatus, EnvVar, RunStatus, Runtime, Schedule};
use healer::Paths;

use crate::cli::{run as cli, text};
use crate::cluster_bed::{
    carrying, eventually, free_port, room, start_engine, write_key, TemporalDev, Worker,
};
use crate::workflows::input;

fn on_cluster() -> RunsOn {
    RunsOn::Cluster {
        queue: String::new(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forty_runs_all_succeed_on_two_workers_and_each_attempt_names_its_worker() {
    let server = TemporalDev::start();
    let room = room(&server, "forty").await;
    let _one = room.worker(&server, "worker-one");
    let _two = room.worker(&server, "worker-two");
    let mut ids = Vec::new();
    for n in 0..4 {
        ids.push(room.workflow_on_cluster(input(
            &format!("Forty {n}"),
            Runtime::Python3,
            "print('counted')\n",
        )));
    }
    // Four workflows, ten runs each, the four at once.
    let runs = ids.iter().map(|id| {
        let engine = &room.engine;
        async move {
            let mut details = Vec::new();
            for _ in 0..10 {
                details.push(engine.run_and_wait(*id).await.expect("run"));
            }
            details
        }
    });
    let details: Vec<_> = futures::future::join_all(runs)
        .await
        .into_iter()
        .flatten()
        .collect();
    assert_eq!(details.len(), 40);
    let mut by_worker: HashMap<String, u32> = HashMap::new();
    for detail in &details {
        assert_eq!(detail.run.status, RunStatus::Succeeded, "{detail:?}");
        assert_eq!(detail.attempts.len(), 1, "{detail:?}");
        let attempt = &detail.attempts[0];
        assert_eq!(attempt.stdout.trim(), "counted");
        let worker = attempt
            .worker
            .clone()
            .expect("the attempt names its worker");
        *by_worker.entry(worker).or_default() += 1;
    }
    assert_eq!(by_worker.len(), 2, "both workers ran some: {by_worker:?}");
    assert!(by_worker
        .keys()
        .all(|w| w == "worker-one" || w == "worker-two"));
    room.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_killed_during_a_20_second_attempt_is_replaced_and_the_run_succeeds_once() {
    let server = TemporalDev::start();
    let room = room(&server, "killed").await;
    let mut workers = [
        room.worker(&server, "worker-one"),
        room.worker(&server, "worker-two"),
    ];
    let code = "import time\nprint('working', flush=True)\ntime.sleep(20)\nprint('done')\n";
    let mut long = input("Twenty seconds", Runtime::Python3, code);
    long.timeout_secs = 120;
    let w = room.workflow_on_cluster(long);
    let run = room.run_in_background(w);
    let deadline = Instant::now() + Duration::from_secs(30);
    let taken = loop {
        if let Some(i) = workers
            .iter()
            .position(|w| w.said().contains("attempt 1 of"))
        {
            break i;
        }
        assert!(Instant::now() < deadline, "no worker took the attempt");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    // Killed a few seconds into the attempt, without a chance to say anything.
    tokio::time::sleep(Duration::from_secs(3)).await;
    workers[taken].kill();
    let killed_at = Instant::now();
    let other = workers[1 - taken].name.clone();
    let detail = run.await.expect("joined").expect("run");
    let took = killed_at.elapsed();
    assert_eq!(detail.run.status, RunStatus::Succeeded, "{detail:?}");
    // Temporal notices the silence after its heartbeat timeout (30 s); the attempt then runs
    // again whole (20 s) on the other worker.
    assert!(
        took < Duration::from_secs(30 + 20 + 15),
        "the run took {took:?} after the kill"
    );
    let succeeded: Vec<_> = detail
        .attempts
        .iter()
        .filter(|a| a.status == AttemptStatus::Succeeded)
        .collect();
    assert_eq!(succeeded.len(), 1, "{:?}", detail.attempts);
    assert_eq!(succeeded[0].worker.as_deref(), Some(other.as_str()));
    assert!(succeeded[0].stdout.contains("done"));
    let lost = &detail.attempts[0];
    assert_eq!(lost.status, AttemptStatus::Failed);
    assert!(
        lost.note
            .as_deref()
            .is_some_and(|n| n.contains("The worker running it was lost")),
        "{lost:?}"
    );
    room.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_canary_in_a_scripts_environment_output_and_schedule_is_nowhere_in_temporals_database() {
    let server = TemporalDev::start();
    let room = room(&server, "canary").await;
    let _worker = room.worker(&server, "worker-one");
    let canary = format!("CANARY-{}", uuid_like());
    let hidden = format!("HIDDEN-{}", uuid_like());
    let in_code = format!("CODE-{}", uuid_like());
    let code = format!(
        "import os\n# {in_code}\nprint('the canary is', os.environ['CANARY'])\nprint('token', os.environ['TOKEN'])\n"
    );
    let mut canary_input = input("Canary", Runtime::Python3, &code);
    canary_input.env = vec![EnvVar {
        name: "CANARY".to_string(),
        value: canary.clone(),
    }];
    // A schedule on the cluster holds the run's input too (and is changed after it is made).
    canary_input.schedule = Schedule::Interval { seconds: 3600 };
    let w = room.engine.create_workflow(canary_input).expect("workflow");
    room.engine
        .set_workflow_secret(w.id, "TOKEN".to_string(), hidden.clone())
        .await
        .expect("secret");
    room.engine
        .set_runs_on(w.id, on_cluster())
        .expect("on the cluster");
    let detail = room.engine.run_and_wait(w.id).await.expect("run");
    assert_eq!(detail.run.status, RunStatus::Succeeded, "{detail:?}");
    let store = room.engine.store().clone();
    eventually(
        "the schedule is on the cluster",
        Duration::from_secs(20),
        || {
            store
                .cluster_schedules()
                .map(|s| s.len() == 1)
                .unwrap_or(false)
        },
    );
    let stdout = &detail.attempts[0].stdout;
    // Shown in Healer as usual: the variable's value, and the secret redacted.
    assert!(
        stdout.contains(&format!("the canary is {canary}")),
        "{stdout}"
    );
    assert!(!stdout.contains(&hidden), "{stdout}");
    room.engine.shutdown().await;
    let stored = server.stored_bytes();
    assert!(
        stored.len() > 10_000,
        "Temporal's database is where expected"
    );
    for needle in [&canary, &hidden, &in_code] {
        assert!(
            !contains(&stored, needle.as_bytes()),
            "{needle} is readable in Temporal's database"
        );
    }
    // The run is there all the same, under its name.
    assert!(contains(&stored, b"HealerRun"));
}

#[test]
fn choosing_the_cluster_without_a_connection_is_refused_and_nothing_is_saved() {
    let (tmp, paths) = crate::data_dir();
    let script = tmp.path().join("s.py");
    std::fs::write(&script, "print('hi')\n").expect("script");
    let out = cli(
        &paths,
        &[
            "workflow",
            "create",
            "--title",
            "Nowhere",
            "--runtime",
            "python3",
            "--file",
            script.to_str().expect("path"),
            "--runs-on",
            "cluster",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let said = text(&out.stderr);
    assert!(
        said.contains("“Nowhere” cannot run on the cluster: this Healer is not connected to one"),
        "{said}"
    );
    let store = Store::open(&paths.db()).expect("store");
    assert!(store.list_workflow_summaries().expect("list").is_empty());
    // And an existing workflow is refused the same way.
    let made = cli(
        &paths,
        &[
            "workflow",
            "create",
            "--title",
            "Here",
            "--runtime",
            "python3",
            "--file",
            script.to_str().expect("path"),
        ],
    );
    assert!(made.status.success(), "{}", text(&made.stderr));
    let out = cli(&paths, &["workflow", "runs-on", "here", "cluster"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("not connected"));
    let w = store.workflow_by_name("here").expect("workflow");
    assert_eq!(store.cluster_queue(w.id).expect("queue"), None);
}

/// A command as a person runs it, with no keyring (the secrets file is chosen).
fn command(paths: &Paths) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_healer"));
    cmd.env("HEALER_DATA_DIR", paths.data_dir())
        .env("HEALER_KEYRING", "off")
        .env_remove("HEALER_LOG")
        .stdin(Stdio::null());
    cmd
}

fn ok(paths: &Paths, args: &[&str]) -> String {
    let out = command(paths).args(args).output().expect("healer runs");
    assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    text(&out.stdout)
}

/// A `healer daemon`, killed when dropped (a failing test leaves none behind).
struct RoomProcess(std::process::Child);

impl RoomProcess {
    fn start(paths: &Paths, log: &std::path::Path) -> RoomProcess {
        let file = std::fs::File::create(log).expect("log");
        let child = command(paths)
            .arg("daemon")
            .stdout(Stdio::null())
            .stderr(file)
            .spawn()
            .expect("daemon");
        let room = RoomProcess(child);
        eventually("the daemon is ready", Duration::from_secs(30), || {
            std::fs::read_to_string(log)
                .unwrap_or_default()
                .contains("Press Ctrl-C to stop")
        });
        room
    }

    /// SIGKILL: no chance to say or save anything.
    fn kill(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for RoomProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A data folder connected to `server` as a person does it, with the commands; the key
/// file the workers get.
fn connected_by_hand(
    server: &TemporalDev,
    queue: &str,
) -> (tempfile::TempDir, Paths, std::path::PathBuf) {
    let (tmp, paths) = crate::data_dir();
    ok(&paths, &["secret", "use-file", "--yes"]);
    ok(
        &paths,
        &["cluster", "connect", &server.address(), "--queue", queue],
    );
    let key = tmp.path().join("cluster.key");
    ok(
        &paths,
        &["cluster", "key", "--out", key.to_str().expect("path")],
    );
    (tmp, paths, key)
}

#[test]
fn a_workflows_packages_are_installed_on_the_worker_once_and_kept_for_its_next_runs() {
    let server = TemporalDev::start();
    let (tmp, paths, key) = connected_by_hand(&server, "packages");
    let worker = Worker::start(&server, "packages", "worker-one", &key, tmp.path());
    let script = tmp.path().join("s.py");
    std::fs::write(
        &script,
        "import tomli\nfrom importlib.metadata import version\nprint('tomli', version('tomli'), tomli.loads('a = 1'))\n",
    )
    .expect("script");
    ok(
        &paths,
        &[
            "workflow",
            "create",
            "--title",
            "Reads TOML",
            "--runtime",
            "python3",
            "--file",
            script.to_str().expect("path"),
            "--package",
            "tomli==2.0.1",
            "--runs-on",
            "cluster",
        ],
    );
    for _ in 0..2 {
        let out = command(&paths)
            .args(["workflow", "run", "reads-toml"])
            .output()
            .expect("healer runs");
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let store = Store::open(&paths.db()).expect("store");
    let w = store.workflow_by_name("reads-toml").expect("workflow");
    let runs = store.list_runs(w.id, None, 10).expect("runs");
    assert_eq!(runs.len(), 2);
    for run in runs {
        let detail = store.run_detail(run.id).expect("detail");
        assert_eq!(detail.run.status, RunStatus::Succeeded, "{detail:?}");
        assert_eq!(
            detail.attempts[0].stdout.trim(),
            "tomli 2.0.1 {'a': 1}",
            "{detail:?}"
        );
        assert_eq!(detail.attempts[0].worker.as_deref(), Some("worker-one"));
    }
    // Installed once, into the worker's own environment (the deps tests check that this
    // machine's Python has no tomli of its own).
    assert_eq!(
        worker.said().matches("installing tomli==2.0.1").count(),
        1,
        "{}",
        worker.said()
    );
    let environments = std::fs::read_dir(tmp.path().join("worker-one-cache/environments"))
        .expect("the worker's environments")
        .count();
    assert_eq!(environments, 1);
}

#[test]
fn the_control_room_killed_with_ten_runs_in_flight_stores_each_once_after_its_restart() {
    let server = TemporalDev::start();
    let (tmp, paths, key) = connected_by_hand(&server, "ten");
    let _one = Worker::start(&server, "ten", "worker-one", &key, tmp.path());
    let _two = Worker::start(&server, "ten", "worker-two", &key, tmp.path());
    let script = tmp.path().join("s.py");
    std::fs::write(&script, "import time\ntime.sleep(15)\nprint('finished')\n").expect("script");
    for n in 0..10 {
        ok(
            &paths,
            &[
                "workflow",
                "create",
                "--title",
                &format!("Flight {n}"),
                "--runtime",
                "python3",
                "--file",
                script.to_str().expect("path"),
                "--runs-on",
                "cluster",
            ],
        );
    }
    let mut daemon = RoomProcess::start(&paths, &tmp.path().join("daemon1.log"));
    let mut asking: Vec<_> = (0..10)
        .map(|n| {
            command(&paths)
                .args(["workflow", "run", &format!("flight-{n}")])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("run asked")
        })
        .collect();
    let store = Store::open(&paths.db()).expect("store");
    // Generous: the whole test suite runs beside it on two cores.
    eventually(
        "ten runs are on the cluster",
        Duration::from_secs(90),
        || {
            (0..10).all(|n| {
                store
                    .workflow_by_name(&format!("flight-{n}"))
                    .and_then(|w| store.cluster_run_ids(w.id))
                    .is_ok_and(|ids| !ids.is_empty())
            })
        },
    );
    // The control room dies with all ten in flight.
    daemon.kill();
    for child in &mut asking {
        let _ = child.kill();
        let _ = child.wait();
    }
    let _daemon = RoomProcess::start(&paths, &tmp.path().join("daemon2.log"));
    eventually("every run is stored", Duration::from_secs(120), || {
        store
            .open_cluster_runs()
            .map(|r| r.is_empty())
            .unwrap_or(false)
    });
    let workflows = store.list_workflow_summaries().expect("list");
    assert_eq!(workflows.len(), 10);
    for w in workflows {
        let runs = store.list_runs(w.id, None, 50).expect("runs");
        assert_eq!(runs.len(), 1, "{runs:?}");
        let detail = store.run_detail(runs[0].id).expect("detail");
        assert_eq!(detail.run.status, RunStatus::Succeeded, "{detail:?}");
        assert_eq!(
            detail.attempts.len(),
            1,
            "stored once: {:?}",
            detail.attempts
        );
        assert_eq!(detail.attempts[0].stdout.trim(), "finished");
    }
}

/// Fails with a logic error on its second run only (a counter in a file both runs see).
const SECOND_RUN_FAILS: &str = "import os\np = os.environ['COUNTER']\nn = int(open(p).read()) if os.path.exists(p) else 0\nopen(p, 'w').write(str(n + 1))\ndata = {'totl': 3}\nif n == 1:\n    print(data['total'])\nprint('run', n)\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schedule_fires_while_the_control_room_is_stopped_and_its_runs_are_brought_in_and_healed()
{
    use crate::maintainer::{configure_model, tool, KEY};
    use crate::model_server::{openai, ModelServer, TOKENS};
    let server = TemporalDev::start();
    let model = ModelServer::start(Some(KEY));
    let (tmp, paths) = crate::data_dir();
    let engine = start_engine(&paths).await;
    configure_model(&engine, &model);
    engine
        .connect_cluster(server.settings("scheduled"))
        .await
        .expect("connected");
    let key = write_key(&paths, tmp.path());
    let _worker = Worker::start(&server, "scheduled", "worker-one", &key, tmp.path());
    let counter = tmp.path().join("counter");
    let mut scheduled = input("Every ten seconds", Runtime::Python3, SECOND_RUN_FAILS);
    scheduled.schedule = Schedule::Interval { seconds: 10 };
    scheduled.env = vec![EnvVar {
        name: "COUNTER".to_string(),
        value: counter.to_string_lossy().into_owned(),
    }];
    let w = engine.create_workflow(scheduled).expect("workflow");
    engine
        .set_runs_on(w.id, on_cluster())
        .expect("on the cluster");
    let store = engine.store().clone();
    eventually(
        "the schedule is on the cluster",
        Duration::from_secs(20),
        || {
            store
                .cluster_schedules()
                .map(|s| s.len() == 1)
                .unwrap_or(false)
        },
    );
    engine.shutdown().await;
    drop(engine);
    // Closed: the cluster goes on without it.
    let runs_done = || {
        std::fs::read_to_string(&counter)
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok())
            .unwrap_or(0)
    };
    eventually(
        "the schedule fired three times",
        Duration::from_secs(45),
        || runs_done() >= 3,
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(store.list_runs(w.id, None, 50).expect("runs").is_empty());

    let fixed = SECOND_RUN_FAILS.replace("data['total']", "data['totl']");
    model.script([
        tool(
            "fix",
            serde_json::json!({"code": fixed, "comment": "Read totl"}),
        ),
        openai::text("Fixed.", TOKENS),
    ]);
    let engine = start_engine(&paths).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let runs = store.list_runs(w.id, None, 50).expect("runs");
        let brought_in = runs
            .iter()
            .filter(|r| r.trigger == healer::workflow::RunTrigger::Schedule)
            .count();
        let heals = engine.heals(10).expect("heals");
        let version = store.active_version(w.id).expect("version").version;
        if brought_in >= 3 && !heals.is_empty() && version.minor == 1 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "runs {runs:?}, heals {heals:?}, version {version}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let runs = store.list_runs(w.id, None, 50).expect("runs");
    let failed: Vec<_> = runs
        .iter()
        .filter(|r| r.status == RunStatus::Failed)
        .collect();
    assert_eq!(failed.len(), 1, "{runs:?}");
    assert!(failed[0].summary.contains("KeyError"), "{:?}", failed[0]);
    // Each run the schedule started is stored once.
    let mut temporal_ids = store.cluster_run_ids(w.id).expect("ids");
    let all = temporal_ids.len();
    temporal_ids.dedup();
    assert_eq!(all, temporal_ids.len());
    engine.shutdown().await;
}

/// Fails with the same logic error on every run, counting its runs in a file.
const ALWAYS_FAILS: &str = "import os\np = os.environ['COUNTER']\nn = int(open(p).read()) if os.path.exists(p) else 0\nopen(p, 'w').write(str(n + 1))\ndata = {'totl': 3}\nprint(data['total'])\n";

/// A control room with a scripted model, a worker, and `code` on a 10-second schedule on the
/// cluster; stopped once the schedule is there, then left until the schedule ran `runs` times.
async fn scheduled_while_away(
    server: &TemporalDev,
    model: &crate::model_server::ModelServer,
    queue: &str,
    runs: u32,
) -> (tempfile::TempDir, Paths, Worker, i64) {
    let (tmp, paths) = crate::data_dir();
    let engine = start_engine(&paths).await;
    crate::maintainer::configure_model(&engine, model);
    engine
        .connect_cluster(server.settings(queue))
        .await
        .expect("connected");
    let key = write_key(&paths, tmp.path());
    let worker = Worker::start(server, queue, "worker-one", &key, tmp.path());
    let counter = tmp.path().join("counter");
    let mut scheduled = input("Every ten seconds", Runtime::Python3, ALWAYS_FAILS);
    scheduled.schedule = Schedule::Interval { seconds: 10 };
    scheduled.env = vec![EnvVar {
        name: "COUNTER".to_string(),
        value: counter.to_string_lossy().into_owned(),
    }];
    let w = engine.create_workflow(scheduled).expect("workflow");
    engine
        .set_runs_on(w.id, on_cluster())
        .expect("on the cluster");
    let store = engine.store().clone();
    eventually(
        "the schedule is on the cluster",
        Duration::from_secs(20),
        || {
            store
                .cluster_schedules()
                .map(|s| s.len() == 1)
                .unwrap_or(false)
        },
    );
    engine.shutdown().await;
    drop(engine);
    let deadline = Instant::now() + Duration::from_secs(15 * u64::from(runs) + 15);
    while std::fs::read_to_string(&counter)
        .ok()
        .and_then(|t| t.trim().parse::<u32>().ok())
        .unwrap_or(0)
        < runs
    {
        assert!(
            Instant::now() < deadline,
            "the schedule did not run {runs} times while the room was away; the worker said: {}",
            worker.said()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // The last one's answer is in before the room comes back.
    tokio::time::sleep(Duration::from_secs(3)).await;
    (tmp, paths, worker, w.id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_failures_brought_in_at_once_start_one_repair() {
    use crate::maintainer::tool;
    use crate::model_server::{openai, ModelServer, TOKENS};
    let server = TemporalDev::start();
    let model = ModelServer::start(Some(crate::maintainer::KEY));
    let (_tmp, paths, _worker, w) = scheduled_while_away(&server, &model, "several", 3).await;
    let fixed = ALWAYS_FAILS.replace("data['total']", "data['totl']");
    model.script([
        tool(
            "fix",
            serde_json::json!({"code": fixed, "comment": "Read totl"}),
        ),
        openai::text("Fixed.", TOKENS),
    ]);
    let engine = start_engine(&paths).await;
    let store = engine.store().clone();
    eventually(
        "the failures are brought in and repaired",
        Duration::from_secs(60),
        || {
            let failed = store
                .list_runs(w, None, 50)
                .map(|runs| {
                    runs.iter()
                        .filter(|r| r.status == RunStatus::Failed)
                        .count()
                })
                .unwrap_or(0);
            let version = store.active_version(w).map(|v| v.version.minor);
            failed >= 3 && version.ok() == Some(1)
        },
    );
    // Let whatever else would start, start.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let repairs: Vec<_> = store
        .list_tasks(100)
        .expect("tasks")
        .into_iter()
        .filter(|t| t.workflow_id == Some(w) && t.kind == healer::llm::TaskKind::Maintainer)
        .collect();
    assert_eq!(repairs.len(), 1, "one repair for one error: {repairs:?}");
    let notices = store.list_notifications().expect("notifications");
    let said: Vec<&str> = notices.items.iter().map(|n| n.body.as_str()).collect();
    assert!(
        !said.iter().any(|b| b.contains("times in a row")),
        "{said:?}"
    );
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_brought_in_is_stored_under_the_version_that_ran() {
    use crate::model_server::ModelServer;
    let server = TemporalDev::start();
    let model = ModelServer::start(Some(crate::maintainer::KEY));
    let (_tmp, paths, _worker, w) = scheduled_while_away(&server, &model, "versions", 1).await;
    // While the room is away, the person saves a 2.0 that works.
    let store = Store::open(&paths.db()).expect("store");
    store
        .save_major(
            w,
            "print('2.0 works')\n",
            "rewritten",
            None,
            &healer::workflow::Author::Person,
        )
        .expect("2.0");
    drop(store);
    let engine = start_engine(&paths).await;
    let store = engine.store().clone();
    eventually("the run is brought in", Duration::from_secs(30), || {
        store
            .list_runs(w, None, 50)
            .map(|runs| runs.iter().any(|r| r.status == RunStatus::Failed))
            .unwrap_or(false)
    });
    let runs = store.list_runs(w, None, 50).expect("runs");
    let failed: Vec<_> = runs
        .iter()
        .filter(|r| r.status == RunStatus::Failed)
        .collect();
    for run in &failed {
        assert_eq!(run.version.to_string(), "1.0", "{run:?}");
    }
    // 2.0 replaced what failed: nothing repairs 1.0.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let repairs = store
        .list_tasks(100)
        .expect("tasks")
        .into_iter()
        .filter(|t| t.workflow_id == Some(w) && t.kind == healer::llm::TaskKind::Maintainer)
        .count();
    assert_eq!(repairs, 0);
    engine.shutdown().await;
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn uuid_like() -> String {
    format!(
        "{:x}{:x}",
        std::process::id(),
        Instant::now().elapsed().as_nanos() ^ 0x5eed_1234_abcd
    )
}

/// Waits until one of `workers` says it started attempt `number`; which one.
async fn taken_by(workers: &[Worker], number: u32) -> usize {
    let said = format!("attempt {number} of");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(i) = workers.iter().position(|w| w.said().contains(&said)) {
            return i;
        }
        assert!(Instant::now() < deadline, "no worker took attempt {number}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_on_a_run_on_the_cluster_ends_the_scripts_processes_on_the_worker() {
    let server = TemporalDev::start();
    let room = room(&server, "stop").await;
    let workers = [room.worker(&server, "worker-one")];
    // A script that leaves a child of its own running: the whole group must end. (The script
    // sees its own process numbers only: its processes are found by a mark they carry.)
    let mark = format!("STOP_MARK={}", std::process::id());
    let mut long = input("Stoppable", Runtime::Bash, "sleep 300 &\nwait\n");
    long.timeout_secs = 600;
    long.env = vec![EnvVar {
        name: "STOP_MARK".to_string(),
        value: std::process::id().to_string(),
    }];
    let w = room.workflow_on_cluster(long);
    let run = room.run_in_background(w);
    taken_by(&workers, 1).await;
    eventually(
        "the script starts its child",
        Duration::from_secs(20),
        || carrying(&mark).len() >= 2,
    );
    let store = room.engine.store().clone();
    let run_id = store.open_cluster_runs().expect("open")[0].0;
    let asked = Instant::now();
    room.engine.stop_run(run_id).await.expect("stopped");
    let detail = run.await.expect("joined").expect("run");
    assert_eq!(detail.run.status, RunStatus::Interrupted, "{detail:?}");
    assert_eq!(detail.run.summary, "Stopped by you");
    assert!(
        asked.elapsed() < Duration::from_secs(20),
        "the stop took {:?}",
        asked.elapsed()
    );
    // The script's own child is gone too.
    eventually(
        "the script's child ends with it",
        Duration::from_secs(10),
        || carrying(&mark).is_empty(),
    );
    room.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopping_worker_lets_its_attempt_finish_or_hands_it_back_when_the_drain_time_passes() {
    let server = TemporalDev::start();
    let room = room(&server, "drain").await;
    let dir = room.tmp.path();
    let mut patient = [room.worker(&server, "patient")];
    let mut six = input("Six seconds", Runtime::Bash, "sleep 6\necho finished\n");
    six.timeout_secs = 60;
    let w = room.workflow_on_cluster(six);
    // SIGTERM a second into the attempt: within the drain time (60 s) it finishes there; the
    // run's last step goes to a worker still taking work.
    let run = room.run_in_background(w);
    taken_by(&patient, 1).await;
    let mut steady = room.worker(&server, "steady");
    tokio::time::sleep(Duration::from_secs(1)).await;
    patient[0].terminate();
    let detail = run.await.expect("joined").expect("run");
    assert_eq!(detail.run.status, RunStatus::Succeeded, "{detail:?}");
    assert_eq!(detail.attempts.len(), 1);
    assert_eq!(detail.attempts[0].worker.as_deref(), Some("patient"));
    assert!(detail.attempts[0].stdout.contains("finished"));
    assert!(
        patient[0].exited_within(Duration::from_secs(20)),
        "the worker did not stop"
    );
    steady.kill();

    // A worker with two seconds to drain hands a longer attempt back; another takes it.
    let hasty = [Worker::start_with(
        &server,
        "drain",
        "hasty",
        &room.key_file,
        dir,
        &["--drain", "2"],
    )];
    let run = room.run_in_background(w);
    taken_by(&hasty, 1).await;
    let _other = room.worker(&server, "other");
    tokio::time::sleep(Duration::from_secs(1)).await;
    hasty[0].terminate();
    let detail = run.await.expect("joined").expect("run");
    assert_eq!(detail.run.status, RunStatus::Succeeded, "{detail:?}");
    let ran: Vec<_> = detail
        .attempts
        .iter()
        .map(|a| (a.status, a.worker.clone()))
        .collect();
    assert_eq!(
        ran,
        [
            (AttemptStatus::Failed, None),
            (AttemptStatus::Succeeded, Some("other".to_string()))
        ],
        "{:?}",
        detail.attempts
    );
    assert!(
        detail.attempts[0]
            .evidence
            .as_ref()
            .is_some_and(|e| e.message.contains("handed back")),
        "{:?}",
        detail.attempts[0]
    );
    room.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_attempts_lost_in_a_row_end_the_run_and_no_fourth_is_tried() {
    let server = TemporalDev::start();
    let room = room(&server, "lost").await;
    let mut long = input("Never finishes", Runtime::Bash, "sleep 120\n");
    long.timeout_secs = 300;
    let w = room.workflow_on_cluster(long);
    let run = room.run_in_background(w);
    // Each attempt on a worker of its own that stops with a second to drain: handed back, lost.
    // The shipped limit (flow::MAX_LOST) is three.
    for number in 1..=3 {
        let mut hasty = [Worker::start_with(
            &server,
            "lost",
            &format!("hasty-{number}"),
            &room.key_file,
            room.tmp.path(),
            &["--drain", "1"],
        )];
        taken_by(&hasty, number).await;
        hasty[0].terminate();
        assert!(
            hasty[0].exited_within(Duration::from_secs(20)),
            "worker {number} did not stop"
        );
    }
    // A worker that would run a fourth attempt, were one tried.
    let spare = [room.worker(&server, "spare")];
    let detail = tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("the run ended after its third lost attempt")
        .expect("joined")
        .expect("run");
    assert_eq!(detail.run.status, RunStatus::Failed, "{detail:?}");
    assert_eq!(detail.attempts.len(), 3, "{:?}", detail.attempts);
    for attempt in &detail.attempts {
        assert_eq!(attempt.status, AttemptStatus::Failed, "{attempt:?}");
        assert_eq!(attempt.worker, None, "{attempt:?}");
        assert!(
            attempt
                .evidence
                .as_ref()
                .is_some_and(|e| e.message.contains(healer::cluster::flow::LOST)),
            "{attempt:?}"
        );
    }
    assert!(!spare[0].said().contains("attempt 4 of"));
    room.engine.shutdown().await;
}

#[test]
fn a_control_room_that_died_before_starting_a_run_or_while_storing_it_finishes_each_once_when_it_comes_back(
) {
    let server = TemporalDev::start();
    let (tmp, paths, key) = connected_by_hand(&server, "marked");
    let _worker = Worker::start(&server, "marked", "worker-one", &key, tmp.path());
    let script = tmp.path().join("s.sh");
    std::fs::write(&script, "echo once\n").expect("script");
    ok(
        &paths,
        &[
            "workflow",
            "create",
            "--title",
            "Once",
            "--runtime",
            "bash",
            "--file",
            script.to_str().expect("path"),
            "--runs-on",
            "cluster",
        ],
    );
    // The command's own engine dies right after the run is marked as on the cluster.
    let out = command(&paths)
        .env("HEALER_FAILPOINT", "cluster.run_marked")
        .args(["workflow", "run", "once"])
        .output()
        .expect("healer runs");
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("aborting at failpoint cluster.run_marked"));
    let store = Store::open(&paths.db()).expect("store");
    assert_eq!(store.open_cluster_runs().expect("open").len(), 1);

    {
        let _room = RoomProcess::start(&paths, &tmp.path().join("daemon1.log"));
        eventually("the run is stored", Duration::from_secs(30), || {
            store
                .open_cluster_runs()
                .map(|r| r.is_empty())
                .unwrap_or(false)
        });
    }

    // And another whose engine dies half-way through storing its result.
    let out = command(&paths)
        .env("HEALER_FAILPOINT", "cluster.attempt_stored")
        .args(["workflow", "run", "once"])
        .output()
        .expect("healer runs");
    assert!(text(&out.stderr).contains("aborting at failpoint cluster.attempt_stored"));
    assert_eq!(store.open_cluster_runs().expect("open").len(), 1);
    let w = store.workflow_by_name("once").expect("workflow");
    let half = store.list_runs(w.id, None, 10).expect("runs")[0].id;
    assert_eq!(
        store.run_detail(half).expect("detail").attempts.len(),
        1,
        "stored half-way"
    );

    let _room = RoomProcess::start(&paths, &tmp.path().join("daemon2.log"));
    eventually("the runs are stored", Duration::from_secs(30), || {
        store
            .open_cluster_runs()
            .map(|r| r.is_empty())
            .unwrap_or(false)
    });
    let runs = store.list_runs(w.id, None, 10).expect("runs");
    assert_eq!(runs.len(), 2);
    for run in runs {
        let detail = store.run_detail(run.id).expect("detail");
        assert_eq!(detail.run.status, RunStatus::Succeeded, "{detail:?}");
        assert_eq!(detail.attempts.len(), 1, "{:?}", detail.attempts);
        assert_eq!(detail.attempts[0].stdout.trim(), "once");
    }
}

/// On a computer with no keyring, before the person chose Healer's secrets file: Test tells a
/// cluster that answers from an address where none does (it needs no key), Connect tests the
/// address first and then says the key needs a place, nothing saved; once the file is chosen,
/// Connect keeps the key and connects.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_place_for_the_key_test_still_tells_a_cluster_that_answers_from_a_wrong_address()
{
    let server = TemporalDev::start();
    let (_tmp, paths) = crate::data_dir();
    let lease = healer::lease::Lease::acquire(&paths, "test").expect("lease");
    let options = healer::engine::EngineOptions {
        keys: Some(healer::llm::Keys::with(healer::secrets::Keep::file_only(
            paths.data_dir(),
        ))),
        ..healer::engine::EngineOptions::default()
    };
    let engine = healer::Engine::start_with_lease(paths.clone(), "test", lease, options)
        .await
        .expect("engine");
    assert!(engine
        .keep_status()
        .await
        .expect("status")
        .new_values_go_to
        .is_none());

    let answers = engine
        .test_cluster(server.settings("room"))
        .await
        .expect("a cluster that is up answers the test");
    assert!(answers.workers.is_empty());
    let mut wrong = server.settings("room");
    wrong.address = format!("127.0.0.1:{}", free_port());
    let refused = engine
        .test_cluster(wrong.clone())
        .await
        .expect_err("nobody there");
    assert_eq!(refused.code(), healer::ErrorCode::Cluster, "{refused}");
    let refused = engine
        .connect_cluster(wrong)
        .await
        .expect_err("nobody there");
    assert_eq!(refused.code(), healer::ErrorCode::Cluster, "{refused}");

    let no_place = engine
        .connect_cluster(server.settings("room"))
        .await
        .expect_err("the key has no place yet");
    assert_eq!(no_place.code(), healer::ErrorCode::NoKeyring, "{no_place}");
    assert!(
        !no_place.to_string().contains("Settings"),
        "the window asks right there: {no_place}"
    );
    assert!(engine
        .cluster_status()
        .await
        .expect("status")
        .settings
        .is_none());

    engine.choose_secrets_file().await.expect("file chosen");
    let status = engine
        .connect_cluster(server.settings("room"))
        .await
        .expect("connected");
    assert!(status.reachable, "{status:?}");
}
