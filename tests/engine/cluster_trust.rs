//! What a worker and a control room believe, against a real Temporal dev server and real
//! `healer worker` processes, tried as someone who can reach the namespace but holds no key
//! would try it: a `HealerRun` started with plain input, one sealed with another key, a sealed
//! input replayed under another id, an entry name that climbs out of the scratch folder, an
//! answer copied from another run, a run started first under the id the next run would have
//! had; a script reading the worker's key file; a worker killed with its script running; and the
//! documented ways of handing keys in through the environment.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use healer::cluster::codec::SealCodec;
use healer::cluster::connection::control_key;
use healer::cluster::flow::{RunInput, RunOutcome, SealedFor};
use healer::cluster::{ClusterKey, HealerRun};
use healer::workflow::{EnvVar, RetryPolicy, RunStatus, Runtime};
use temporalio_client::{Client, WorkflowStartOptions};

use crate::cluster_bed::{carrying, eventually, keep, room, temporal_cli, TemporalDev};
use crate::workflows::input;

/// A run's input as someone would write it by hand: a bash script that leaves `marker`.
fn forged(sealed_for: SealedFor, entry: &str, marker: &Path) -> RunInput {
    RunInput {
        sealed_for,
        instance: "someone".to_string(),
        workflow_id: 1,
        run_id: 1,
        title: "Forged".to_string(),
        version: "1.0".to_string(),
        runtime: Runtime::Bash,
        entry: entry.to_string(),
        code: format!("echo ran > {}\n", marker.display()),
        requirements: Vec::new(),
        env: Vec::new(),
        secrets: Vec::new(),
        timeout_secs: 30,
        retry: RetryPolicy::default(),
        hint: None,
    }
}

/// A client of the dev server whose payloads are sealed with `key`.
async fn client_with(server: &TemporalDev, queue: &str, key: &ClusterKey) -> Client {
    healer::cluster::connect(&server.settings(queue), key, "someone else")
        .await
        .expect("a client")
}

/// Waits long enough for a worker to have run what it was going to run (it took under 4 s).
async fn a_worker_had_its_chance() {
    tokio::time::sleep(Duration::from_secs(8)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_started_with_plain_input_or_another_key_is_refused_and_nothing_runs() {
    let server = TemporalDev::start();
    let room = room(&server, "unsealed").await;
    let worker = room.worker(&server, "worker-one");
    let dir = room.tmp.path();

    // With the Temporal CLI, plain JSON, as anyone who can reach the namespace can.
    let plain_marker = dir.join("plain-ran");
    let input_file = dir.join("input.json");
    let input = forged(
        SealedFor::Run("forged-plain".to_string()),
        "run.sh",
        &plain_marker,
    );
    std::fs::write(&input_file, serde_json::to_vec(&input).expect("json")).expect("input");
    let started = Command::new(temporal_cli())
        .args(["workflow", "start", "--type", "HealerRun"])
        .args(["--task-queue", "unsealed", "--workflow-id", "forged-plain"])
        .args(["--address", &server.address()])
        .arg("--input-file")
        .arg(&input_file)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .expect("temporal");
    assert!(
        started.status.success(),
        "{}",
        String::from_utf8_lossy(&started.stderr)
    );

    // Through the SDK, sealed with a key of its own.
    let other_marker = dir.join("other-key-ran");
    let other = client_with(&server, "unsealed", &ClusterKey::generate()).await;
    let input = forged(
        SealedFor::Run("forged-other-key".to_string()),
        "run.sh",
        &other_marker,
    );
    other
        .start_workflow(
            HealerRun::run,
            input,
            WorkflowStartOptions::new("unsealed", "forged-other-key").build(),
        )
        .await
        .expect("started");

    a_worker_had_its_chance().await;
    assert!(!plain_marker.exists(), "a plain input ran");
    assert!(
        !other_marker.exists(),
        "an input sealed with another key ran"
    );
    let said = worker.said();
    assert!(
        said.contains("refused a payload that is not sealed with the cluster key"),
        "{said}"
    );
    assert!(
        said.contains("refused a payload sealed with another cluster key"),
        "{said}"
    );
    // The worker still runs what its control room sealed.
    let w = room.workflow_on_cluster(input_of("Still works", "print('ok')\n"));
    let detail = room.engine.run_and_wait(w).await.expect("run");
    assert_eq!(detail.run.status, RunStatus::Succeeded, "{detail:?}");
    room.engine.shutdown().await;
}

fn input_of(title: &str, code: &str) -> healer::workflow::WorkflowInput {
    input(title, Runtime::Python3, code)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sealed_input_replayed_under_another_id_or_naming_a_path_is_refused() {
    let server = TemporalDev::start();
    let room = room(&server, "replayed").await;
    let _worker = room.worker(&server, "worker-one");
    let dir = room.tmp.path();
    let paths = &room.paths;
    // The room's own key: what a copy out of Temporal's history is sealed with.
    let key = control_key(&keep(paths), &paths.instance_mark()).expect("key");
    let client = client_with(&server, "replayed", &key).await;

    let replay_marker = dir.join("replayed-ran");
    let input = forged(
        SealedFor::Run("healer-a-w1-run1-0000000000000001".to_string()),
        "run.sh",
        &replay_marker,
    );
    let handle = client
        .start_workflow(
            HealerRun::run,
            input,
            WorkflowStartOptions::new("replayed", "healer-a-w1-run1-0000000000000002").build(),
        )
        .await
        .expect("started");
    let failed = tokio::time::timeout(
        Duration::from_secs(30),
        handle.get_result(Default::default()),
    )
    .await
    .expect("the run ended");
    let why = format!("{:?}", failed.expect_err("refused"));
    assert!(why.contains("sealed for another run"), "{why}");

    let outside = tempfile::tempdir().expect("tmp");
    let escaped = outside.path().join("written-outside.sh");
    let escape_marker = dir.join("escaped-ran");
    let id = "healer-a-w1-run2-0000000000000003";
    let input = forged(
        SealedFor::Run(id.to_string()),
        &escaped.to_string_lossy(),
        &escape_marker,
    );
    let handle = client
        .start_workflow(
            HealerRun::run,
            input,
            WorkflowStartOptions::new("replayed", id).build(),
        )
        .await
        .expect("started");
    let failed = tokio::time::timeout(
        Duration::from_secs(30),
        handle.get_result(Default::default()),
    )
    .await
    .expect("the run ended");
    let why = format!("{:?}", failed.expect_err("refused"));
    assert!(why.contains("not a plain file name"), "{why}");
    assert!(
        !escaped.exists(),
        "the script was written outside its folder"
    );
    assert!(!replay_marker.exists() && !escape_marker.exists());
    room.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_copied_from_another_run_or_a_run_started_under_a_guessed_id_is_not_stored() {
    use temporalio_client::tonic;
    use temporalio_common::protos::temporal::api::command::v1::{
        command, Command as TemporalCommand, CompleteWorkflowExecutionCommandAttributes,
    };
    use temporalio_common::protos::temporal::api::common::v1::{Payload, Payloads};
    use temporalio_common::protos::temporal::api::enums::v1::CommandType;
    use temporalio_common::protos::temporal::api::taskqueue::v1::TaskQueue;
    use temporalio_common::protos::temporal::api::workflowservice::v1::{
        PollWorkflowTaskQueueRequest, RespondWorkflowTaskCompletedRequest,
    };

    let server = TemporalDev::start();
    // No worker of the room's polls this queue: the one answering is someone else.
    let room = room(&server, "answered").await;
    let dir = room.tmp.path();
    let paths = &room.paths;
    let key = control_key(&keep(paths), &paths.instance_mark()).expect("key");

    // A run started first under the id the old, readable pattern gave the room's next run.
    let w = room.workflow_on_cluster(input_of("Answered", "print('real')\n"));
    let guessed = format!("healer-{}-w{w}-run1", paths.instance_mark());
    let plain_marker = dir.join("guessed-ran");
    let stranger = client_with(&server, "answered", &ClusterKey::generate()).await;
    stranger
        .start_workflow(
            HealerRun::run,
            forged(SealedFor::Run(guessed.clone()), "run.sh", &plain_marker),
            WorkflowStartOptions::new("answered", guessed.as_str()).build(),
        )
        .await
        .expect("started");

    let run = room.run_in_background(w);
    // Someone polls the room's queue and answers for its run with a sealed outcome copied
    // from another run (sealed with the room's key: it came out of Temporal's history).
    let codec = SealCodec::new(&key);
    let copied = RunOutcome {
        ran_as: "healer-x-w1-run7-00000000000000aa".to_string(),
        instance: paths.instance_mark(),
        workflow_id: w,
        version: "1.0".to_string(),
        attempts: Vec::new(),
        stopped: false,
    };
    let payload = codec
        .seal(Payload {
            metadata: [("encoding".to_string(), b"json/plain".to_vec())].into(),
            data: serde_json::to_vec(&copied).expect("json"),
            ..Payload::default()
        })
        .expect("sealed");
    let mut service = stranger.connection().workflow_service();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut answered = 0;
    while answered < 2 && Instant::now() < deadline {
        let task = service
            .poll_workflow_task_queue(tonic::Request::new(PollWorkflowTaskQueueRequest {
                namespace: "default".to_string(),
                task_queue: Some(TaskQueue {
                    name: "answered".to_string(),
                    ..TaskQueue::default()
                }),
                identity: "someone else".to_string(),
                ..PollWorkflowTaskQueueRequest::default()
            }))
            .await
            .expect("polled")
            .into_inner();
        if task.task_token.is_empty() {
            continue;
        }
        let id = task
            .workflow_execution
            .as_ref()
            .map(|e| e.workflow_id.clone())
            .unwrap_or_default();
        if id == guessed {
            continue; // the stranger's own run: left to fail
        }
        service
            .respond_workflow_task_completed(tonic::Request::new(
                RespondWorkflowTaskCompletedRequest {
                    task_token: task.task_token,
                    namespace: "default".to_string(),
                    identity: "someone else".to_string(),
                    commands: vec![TemporalCommand {
                        command_type: CommandType::CompleteWorkflowExecution as i32,
                        attributes: Some(
                            command::Attributes::CompleteWorkflowExecutionCommandAttributes(
                                CompleteWorkflowExecutionCommandAttributes {
                                    result: Some(Payloads {
                                        payloads: vec![payload.clone()],
                                    }),
                                },
                            ),
                        ),
                        ..TemporalCommand::default()
                    }],
                    ..RespondWorkflowTaskCompletedRequest::default()
                },
            ))
            .await
            .expect("answered");
        answered += 1;
        break;
    }
    assert_eq!(answered, 1, "the room's run was never polled");
    let detail = run.await.expect("joined").expect("run");
    assert_eq!(detail.run.status, RunStatus::Interrupted, "{detail:?}");
    assert!(
        detail.run.summary.contains("was not stored"),
        "{}",
        detail.run.summary
    );
    assert!(detail.attempts.is_empty(), "{:?}", detail.attempts);
    // The room's run was not the stranger's.
    let ids = room.engine.store().cluster_run_ids(w).expect("ids");
    assert!(!ids.contains(&guessed), "{ids:?}");
    assert!(!plain_marker.exists());
    room.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_script_cannot_read_the_workers_key_file_nor_see_the_workers_command_line() {
    let server = TemporalDev::start();
    let room = room(&server, "keyfile").await;
    let _worker = room.worker(&server, "worker-one");
    let key_text = std::fs::read_to_string(&room.key_file).expect("key");
    let key_path = std::fs::canonicalize(&room.key_file).expect("path");
    let code = format!(
        "echo \"file:$(cat {} 2>&1)\"\nfor f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f; echo; done\n",
        key_path.display()
    );
    let w = room.workflow_on_cluster(input("Curious", Runtime::Bash, &code));
    let detail = room.engine.run_and_wait(w).await.expect("run");
    assert_eq!(detail.run.status, RunStatus::Succeeded, "{detail:?}");
    let out = &detail.attempts[0].stdout;
    assert!(out.contains("file:"), "{out}");
    assert!(
        !out.contains(key_text.trim()),
        "the script read the key: {out}"
    );
    assert!(
        !out.contains("healer worker") && !out.contains("--key-file"),
        "the script saw the worker's command line: {out}"
    );
    room.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_script_dies_with_its_killed_worker_and_a_new_worker_ends_what_an_old_one_left() {
    let server = TemporalDev::start();
    let room = room(&server, "orphans").await;
    let mut worker = room.worker(&server, "worker-one");
    let mark = format!("ORPHAN_MARK={}", std::process::id());
    let mut long = input(
        "Long",
        Runtime::Bash,
        "sleep 300 &\nsetsid sleep 300 &\necho started\nwait\n",
    );
    long.timeout_secs = 600;
    long.env = vec![EnvVar {
        name: "ORPHAN_MARK".to_string(),
        value: std::process::id().to_string(),
    }];
    let w = room.workflow_on_cluster(long);
    let _run = room.run_in_background(w);
    eventually("the script runs", Duration::from_secs(30), || {
        carrying(&mark).len() >= 3
    });
    worker.kill();
    eventually(
        "the script's processes die with their worker",
        Duration::from_secs(5),
        || carrying(&mark).is_empty(),
    );

    // What a worker without namespaces of its own would leave: a script in its control group
    // after the worker is gone. The next worker on the machine ends it before it polls.
    let cache = room.tmp.path().join("worker-two-cache");
    let registry = cache.join("groups");
    let group = healer::contain::GroupSpec {
        registry: registry.clone(),
        name: "left-behind".to_string(),
    }
    .create();
    if !group.holding.ends_all {
        eprintln!("skipped: no writable cgroup here to leave a script in");
        room.engine.shutdown().await;
        return;
    }
    let mut cmd = tokio::process::Command::new("sleep");
    cmd.arg("300").env("ORPHAN_MARK", "left-behind");
    group.install(&mut cmd);
    let mut left = cmd.spawn().expect("sleep");
    std::mem::forget(group);
    assert_eq!(carrying("ORPHAN_MARK=left-behind").len(), 1);
    let _two = room.worker(&server, "worker-two");
    let _ = tokio::time::timeout(Duration::from_secs(5), left.wait()).await;
    assert!(
        carrying("ORPHAN_MARK=left-behind").is_empty(),
        "what the earlier worker left still runs"
    );
    room.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_documented_recipes_hand_keys_in_through_the_environment() {
    let server = TemporalDev::start();
    let (tmp, paths) = crate::data_dir();
    let healer = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_healer"))
            .args(args)
            .env("HEALER_DATA_DIR", paths.data_dir())
            .env("HEALER_KEYRING", "off")
            .env("TEMPORAL_API_KEY", "tmprl-test-key-0123456789")
            .stdin(Stdio::null())
            .output()
            .expect("healer")
    };
    assert!(healer(&["secret", "use-file", "--yes"]).status.success());
    // docs/cluster.md: `healer cluster connect … --api-key-env TEMPORAL_API_KEY`.
    let connect = healer(&[
        "cluster",
        "connect",
        &server.address(),
        "--queue",
        "recipes",
        "--api-key-env",
        "TEMPORAL_API_KEY",
    ]);
    assert!(
        connect.status.success(),
        "{}{}",
        String::from_utf8_lossy(&connect.stdout),
        String::from_utf8_lossy(&connect.stderr)
    );
    drop(tmp);

    let room = room(&server, "recipes").await;
    let key_text = std::fs::read_to_string(&room.key_file).expect("key");
    // docs/cluster.md: a container's worker gets its key as HEALER_CLUSTER_KEY.
    let log = room.tmp.path().join("env-worker.log");
    let mut child = Command::new(env!("CARGO_BIN_EXE_healer"))
        .args(["worker", "--temporal", &server.address()])
        .args(["--queue", "recipes", "--name", "from-env"])
        .args(["--api-key-env", "TEMPORAL_API_KEY"])
        .arg("--cache")
        .arg(room.tmp.path().join("env-cache"))
        .env_remove("HEALER_DATA_DIR")
        .env("HEALER_CLUSTER_KEY", key_text.trim())
        .env("TEMPORAL_API_KEY", "tmprl-test-key-0123456789")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).expect("log"))
        .spawn()
        .expect("worker");
    eventually("the worker polls", Duration::from_secs(30), || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("is polling queue")
            || matches!(child.try_wait(), Ok(Some(_)))
    });
    let w = room.workflow_on_cluster(input(
        "From the environment",
        Runtime::Bash,
        "env\ncat /proc/1/environ | tr '\\0' '\\n'\n",
    ));
    let detail = room.engine.run_and_wait(w).await.expect("run");
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(
        detail.run.status,
        RunStatus::Succeeded,
        "{detail:?} {}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    let out = &detail.attempts[0].stdout;
    assert_eq!(detail.attempts[0].worker.as_deref(), Some("from-env"));
    assert!(!out.contains(key_text.trim()), "{out}");
    assert!(!out.contains("tmprl-test-key"), "{out}");
    room.engine.shutdown().await;
}
