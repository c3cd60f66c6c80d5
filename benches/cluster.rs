//! Figures for running on a Temporal cluster (issue 26), printed (not asserted), against a real
//! Temporal dev server on 127.0.0.1 and real `healer worker` processes:
//! 1. the time a cluster attempt adds over a local one (median run, a script that does nothing);
//! 2. attempts per second with two workers for a 100 ms script.
//!
//! `cargo bench --bench cluster` (or `make bench`; `HEALER_BENCH_QUICK=1`: a few rounds).

#![allow(dead_code)]

#[path = "figures.rs"]
mod figures;

#[path = "../tests/engine/cluster_bed.rs"]
mod cluster_bed;

use std::time::{Duration, Instant};

use cluster_bed::{room, TemporalDev};
use figures::{Figures, Goal};
use healer::cluster::RunsOn;
use healer::workflow::{RetryPolicy, RunStatus, Runtime, Schedule, WorkflowInput};
use healer::Paths;

/// A fresh data folder (what `cluster_bed` expects of its crate).
pub fn data_dir() -> (tempfile::TempDir, Paths) {
    let dir = tempfile::tempdir().expect("temp dir");
    let paths = Paths::new(dir.path().join("data"));
    paths.ensure().expect("data dir");
    (dir, paths)
}

const ADDED: &str = "time a cluster attempt adds over a local one, median";
const LOCAL: &str = "local run, median";
const CLUSTER: &str = "cluster run, median";
const RATE: &str = "attempts per second, two workers, 100 ms script";

fn input(title: &str, code: &str) -> WorkflowInput {
    WorkflowInput {
        title: title.to_string(),
        runtime: Runtime::Bash,
        entry: None,
        schedule: Schedule::Manual,
        env: vec![],
        timeout_secs: 60,
        retry: Some(RetryPolicy::default()),
        code: code.to_string(),
        summary: String::new(),
    }
}

fn main() {
    let runtime = figures::runtime();
    let figures = Figures::new(
        "cluster",
        &[
            LOCAL.to_string(),
            CLUSTER.to_string(),
            ADDED.to_string(),
            RATE.to_string(),
        ],
    );
    println!("Healer on a Temporal cluster (dev server on 127.0.0.1, two workers)");
    runtime.block_on(async {
        let server = TemporalDev::start();
        let room = room(&server, "bench").await;
        let workers = [
            room.worker(&server, "bench-one"),
            room.worker(&server, "bench-two"),
        ];
        added(&figures, &room.engine).await;
        rate(&figures, &room.engine).await;
        room.engine.shutdown().await;
        drop(workers);
    });
}

async fn added(figures: &Figures, engine: &healer::Engine) {
    let n = figures::size(40, 3);
    let local = engine
        .create_workflow(input("Local", "true\n"))
        .expect("local");
    let remote = engine
        .create_workflow(input("Remote", "true\n"))
        .expect("remote");
    engine
        .set_runs_on(
            remote.id,
            RunsOn::Cluster {
                queue: String::new(),
            },
        )
        .expect("on the cluster");
    // Warm both paths (the worker's first workflow task, SQLite pages).
    for w in [local.id, remote.id] {
        let _ = engine.run_and_wait(w).await;
    }
    let (mut at_home, mut away) = (Vec::new(), Vec::new());
    for _ in 0..n {
        for (w, times) in [(local.id, &mut at_home), (remote.id, &mut away)] {
            let t = Instant::now();
            let detail = engine.run_and_wait(w).await.expect("run");
            times.push(t.elapsed());
            assert_eq!(detail.run.status, RunStatus::Succeeded, "{detail:?}");
        }
    }
    let (l, c) = (median(&mut at_home), median(&mut away));
    println!("\n1. One run of a script that does nothing (median of {n})");
    figures.report(LOCAL, ms(l), "ms", Goal::Shown);
    figures.report(CLUSTER, ms(c), "ms", Goal::Shown);
    figures.report(ADDED, ms(c.saturating_sub(l)), "ms", Goal::AtMost(50.0));
}

async fn rate(figures: &Figures, engine: &healer::Engine) {
    let workflows = figures::size(24, 2);
    let each = figures::size(5, 1);
    let mut ids = Vec::new();
    for i in 0..workflows {
        let w = engine
            .create_workflow(input(&format!("Tenth of a second {i}"), "sleep 0.1\n"))
            .expect("workflow");
        engine
            .set_runs_on(
                w.id,
                RunsOn::Cluster {
                    queue: String::new(),
                },
            )
            .expect("on the cluster");
        ids.push(w.id);
    }
    let started = Instant::now();
    let runs = ids.iter().map(|id| async move {
        for _ in 0..each {
            let detail = engine.run_and_wait(*id).await.expect("run");
            assert_eq!(detail.run.status, RunStatus::Succeeded, "{detail:?}");
        }
    });
    futures::future::join_all(runs).await;
    let took = started.elapsed();
    let attempts = workflows * each;
    println!(
        "\n2. {attempts} attempts of a 100 ms script, {workflows} workflows at once, two workers"
    );
    figures.report(
        RATE,
        attempts as f64 / took.as_secs_f64(),
        "/s",
        Goal::AtLeast(10.0),
    );
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
