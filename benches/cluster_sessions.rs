//! Figures for coding agents on the cluster (issue 42), printed (not asserted), with a real
//! Temporal dev server and a real `healer worker` on this machine, and the real Claude Code
//! offline against the scripted provider (reached from the worker through the control room's
//! model gateway):
//! 1. the time from Run to the agent's first model request, a session here and one on a worker
//!    (the worker clones the repository from its remote on disk first);
//! 2. steps-to-window latency: from the moment the agent's step happened on the worker to the
//!    moment the control room announces it to the window (p50, target ≤ 1 s; p90 shown).
//!
//! `cargo bench --bench cluster_sessions` (or `make bench`; `HEALER_BENCH_QUICK=1`: a few).

#![allow(dead_code)]

#[path = "figures.rs"]
mod figures;

#[path = "../tests/engine/cluster_bed.rs"]
mod cluster_bed;

#[path = "../tests/engine/model_server.rs"]
mod model_server;

#[path = "../tests/engine/agent_fixtures.rs"]
mod agent_fixtures;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use cluster_bed::{free_port, start_engine, write_key, TemporalDev, Worker};
use figures::{Figures, Goal};
use healer::llm::{ProviderInput, ProviderKind};
use healer::project::{ProjectInput, TaskEdit};
use healer::session::{AgentKind, StepSource};
use healer::store::{ProjectSettings, RunsOn, VerifyCommand};
use healer::Paths;
use model_server::{anthropic, ModelServer, TOKENS};
use serde_json::json;

const KEY_VAR: &str = "HEALER_BENCH_KEY";
const KEY: &str = "sk-bench";
const QUEUE: &str = "bench-agents";

const FIRST_HERE: &str = "Run to the agent's first model request, a session here, median";
const FIRST_AWAY: &str = "Run to the agent's first model request, a session on a worker, median";
const STEPS_P50: &str = "steps-to-window latency from a worker, p50";
const STEPS_P90: &str = "steps-to-window latency from a worker, p90";

/// A fresh data folder (what `cluster_bed` expects of its crate).
pub fn data_dir() -> (tempfile::TempDir, Paths) {
    let dir = tempfile::tempdir().expect("temp dir");
    let paths = Paths::new(dir.path().join("data"));
    paths.ensure().expect("data dir");
    (dir, paths)
}

fn main() {
    // Before any thread exists: the provider's key is read from here.
    std::env::set_var(KEY_VAR, KEY);
    std::env::set_var(healer::project::HOOK_CLI_VAR, env!("CARGO_BIN_EXE_healer"));
    let runtime = figures::runtime();
    let figures = Figures::new(
        "cluster_sessions",
        &[
            FIRST_HERE.to_string(),
            FIRST_AWAY.to_string(),
            STEPS_P50.to_string(),
            STEPS_P90.to_string(),
        ],
    );
    println!(
        "Coding agents on a Temporal cluster (dev server on 127.0.0.1, one worker, Claude Code)"
    );
    runtime.block_on(bench(&figures));
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(["-c", "user.name=b", "-c", "user.email=b@b"])
        .args(args)
        .current_dir(dir)
        .status()
        .expect("git");
    assert!(status.success(), "git {args:?}");
}

/// A small repository with a remote on disk, as a project of `place`.
fn repository(dir: &Path, name: &str) -> std::path::PathBuf {
    let repo = dir.join(name);
    std::fs::create_dir_all(&repo).expect("folder");
    std::fs::write(repo.join("README.md"), "a project\n").expect("file");
    git(&repo, &["init", "--quiet", "--initial-branch=main"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "--quiet", "-m", "first"]);
    let remote = format!("{name}.git");
    git(dir, &["clone", "--quiet", "--bare", name, &remote]);
    git(
        &repo,
        &[
            "remote",
            "add",
            "origin",
            &dir.join(&remote).display().to_string(),
        ],
    );
    repo
}

async fn bench(figures: &Figures) {
    let server = TemporalDev::start();
    let (tmp, paths) = data_dir();
    let engine = start_engine(&paths).await;
    let model = ModelServer::start(Some(KEY));
    engine
        .save_provider(ProviderInput {
            name: "scripted-anthropic".to_string(),
            title: None,
            kind: ProviderKind::Anthropic,
            base_url: Some(model.url.clone()),
            key_env: Some(KEY_VAR.to_string()),
            prices: vec![],
        })
        .expect("provider");
    engine
        .connect_cluster(server.settings(QUEUE))
        .await
        .expect("connected");
    let listen = format!("127.0.0.1:{}", free_port());
    healer::cluster::gateway_access::open_to_workers(engine.store(), &listen).expect("gateway");
    let token =
        healer::cluster::gateway_access::make_worker_token(engine.store(), "bench").expect("token");
    let key_file = write_key(&paths, tmp.path());
    let claude = agent_fixtures::claude();
    let path = format!(
        "{}:{}",
        claude.parent().expect("folder").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let _worker = Worker::start_env(
        &server,
        QUEUE,
        "bench",
        &key_file,
        tmp.path(),
        &["--gateway", &format!("http://{listen}")],
        &[
            ("PATH", path),
            ("HEALER_GATEWAY_TOKEN", token),
            (
                "HEALER_CLUSTER_KEY",
                std::fs::read_to_string(&key_file).expect("key"),
            ),
        ],
    );
    let settings = |runs_on: RunsOn| ProjectSettings {
        agent: AgentKind::ClaudeCode,
        agent_program: Some(claude.display().to_string()),
        agent_provider: Some("scripted-anthropic".to_string()),
        verify: vec![VerifyCommand {
            name: "check".to_string(),
            command: "true".to_string(),
        }],
        approvals: healer::approval::ApprovalSettings {
            preset: healer::approval::Preset::NeverAsk,
            ..Default::default()
        },
        runs_on,
        ..ProjectSettings::default()
    };
    let mut ids = Vec::new();
    for (name, runs_on) in [
        ("here", RunsOn::Local),
        (
            "away",
            RunsOn::Cluster {
                queue: String::new(),
            },
        ),
    ] {
        let repo = repository(tmp.path(), name);
        let project = engine
            .add_project(ProjectInput {
                path: repo.display().to_string(),
                name: name.to_string(),
                settings: settings(runs_on),
            })
            .expect("project");
        ids.push(project.id);
    }
    let rounds = figures::size(8, 2);
    let mut here = Vec::new();
    let mut away = Vec::new();
    for round in 0..rounds {
        for (i, project) in ids.iter().enumerate() {
            engine
                .add_task(
                    *project,
                    TaskEdit {
                        title: format!("Look around {round}"),
                        ..TaskEdit::default()
                    },
                )
                .expect("task");
            model.script([anthropic::text("Nothing to change.", TOKENS)]);
            let before = model.chats().len();
            let started = Instant::now();
            let session = engine.run_project(*project, None).expect("run");
            let first = loop {
                if let Some(seen) = model.chats().get(before) {
                    break seen.at.duration_since(started);
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            };
            let _ = engine.wait_session(session.id).await;
            if round > 0 || rounds == 1 {
                // The first round warms both paths (the worker's first workflow task).
                if i == 0 {
                    here.push(first)
                } else {
                    away.push(first)
                }
            }
        }
    }
    println!(
        "\n1. Run to the agent's first model request (median of {})",
        here.len()
    );
    figures.report(FIRST_HERE, ms(median(&mut here)), "ms", Goal::Shown);
    figures.report(FIRST_AWAY, ms(median(&mut away)), "ms", Goal::Shown);

    // 2. A session on the worker with many steps, each timed from when it happened there to
    //    when the control room announced it.
    let steps = figures::size(40, 6);
    let mut script: Vec<_> = (0..steps)
        .map(|n| {
            anthropic::tool_calls(
                "",
                &[(
                    &format!("toolu_{n}"),
                    "Bash",
                    &json!({"command": format!("echo step {n}; sleep 0.2")}).to_string(),
                )],
                TOKENS,
            )
        })
        .collect();
    script.push(anthropic::text("Done.", TOKENS));
    model.script(script);
    engine
        .add_task(
            ids[1],
            TaskEdit {
                title: "Many steps".to_string(),
                ..TaskEdit::default()
            },
        )
        .expect("task");
    let mut live = engine.subscribe_session_steps();
    let session = engine.run_project(ids[1], None).expect("run");
    let mut latencies = Vec::new();
    let waited = tokio::time::timeout(Duration::from_secs(300), async {
        while let Ok(stored) = live.recv().await {
            if stored.session_id != session.id || stored.step.source != StepSource::Agent {
                continue;
            }
            let happened = DateTime::parse_from_rfc3339(&stored.step.at)
                .map(|t| t.with_timezone(&Utc))
                .expect("a time");
            let late = (Utc::now() - happened).to_std().unwrap_or_default();
            latencies.push(late);
            if latencies.len() >= steps * 2 {
                break;
            }
        }
    })
    .await;
    if waited.is_err() {
        println!(
            "   (the session's steps stopped coming; {} measured)",
            latencies.len()
        );
    }
    let _ = engine.wait_session(session.id).await;
    latencies.sort();
    let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q) as usize];
    println!(
        "\n2. Steps-to-window latency over {} agent steps",
        latencies.len()
    );
    figures.report(STEPS_P50, ms(at(0.5)), "ms", Goal::AtMost(1000.0));
    figures.report(STEPS_P90, ms(at(0.9)), "ms", Goal::Shown);
    engine.shutdown().await;
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
