//! Figures for running on a Temporal cluster (issue 26), printed (not asserted), against a real
//! Temporal dev server on 127.0.0.1 and real `healer worker` processes:
//! 1. the time a cluster attempt adds over a local one (median run, a script that does nothing,
//!    runs one at a time as a person's come, Temporal's SQLite kept as Healer keeps its own;
//!    shown beside it: the same runs back to back, and on the dev server's own SQLite settings);
//! 2. attempts per second with two workers for a 100 ms script.
//!
//! `cargo bench --bench cluster` (or `make bench`; `HEALER_BENCH_QUICK=1`: a few rounds).

#![allow(dead_code)]

#[path = "figures.rs"]
mod figures;

#[path = "../tests/engine/cluster_bed.rs"]
mod cluster_bed;

use std::time::{Duration, Instant};

use cluster_bed::{room, Room, TemporalDev, HEALERS_SQLITE};
use figures::{Figures, Goal};
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
const BACK_TO_BACK: &str = "cluster run back to back, median";
const AS_SHIPPED: &str = "cluster run, dev server syncing every commit, median";
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
            BACK_TO_BACK.to_string(),
            RATE.to_string(),
            AS_SHIPPED.to_string(),
        ],
    );
    println!("Healer on a Temporal cluster (dev server on 127.0.0.1, two workers)");
    runtime.block_on(async {
        // Temporal's SQLite kept as Healer keeps its own, so that the two sides pay the same
        // for durability and the difference is what the cluster adds.
        let server = TemporalDev::start_with(HEALERS_SQLITE);
        let tuned = room(&server, "bench").await;
        let workers = [
            tuned.worker(&server, "bench-one"),
            tuned.worker(&server, "bench-two"),
        ];
        let (local, remote) = two_workflows(&tuned).await;
        added(&figures, &tuned.engine, local, remote).await;
        back_to_back(&figures, &tuned.engine, remote).await;
        rate(&figures, &tuned).await;
        tuned.engine.shutdown().await;
        drop(workers);
        drop(server);

        // The same runs on the dev server as it comes, whose SQLite syncs at every commit.
        let server = TemporalDev::start();
        let plain = room(&server, "bench").await;
        let _worker = plain.worker(&server, "bench-one");
        let (_, remote) = two_workflows(&plain).await;
        let mut times = spaced(&plain.engine, remote, figures::size(20, 2)).await;
        println!("\n3. The cluster run again, on the dev server's own SQLite settings");
        figures.report(AS_SHIPPED, ms(median(&mut times)), "ms", Goal::Shown);
        plain.engine.shutdown().await;
    });
}

/// Time between one run and the next when runs come one at a time, as a person's do (a schedule,
/// Run now): long enough that a run never waits on what the previous one left Temporal to do.
const APART: Duration = Duration::from_millis(300);

/// A workflow that runs here and one that runs on the cluster, both a script that does
/// nothing, each run once to warm its path (the worker's first workflow task, SQLite pages).
async fn two_workflows(room: &Room) -> (i64, i64) {
    let local = room
        .engine
        .create_workflow(input("Local", "true\n"))
        .expect("local")
        .id;
    let remote = room.workflow_on_cluster(input("Remote", "true\n"));
    for w in [local, remote] {
        let _ = room.engine.run_and_wait(w).await;
    }
    (local, remote)
}

async fn added(figures: &Figures, engine: &healer::Engine, local: i64, remote: i64) {
    let n = figures::size(40, 3);
    let (mut at_home, mut away) = (Vec::new(), Vec::new());
    for _ in 0..n {
        at_home.extend(spaced(engine, local, 1).await);
        away.extend(spaced(engine, remote, 1).await);
    }
    let (l, c) = (median(&mut at_home), median(&mut away));
    println!(
        "\n1. One run of a script that does nothing, runs {} ms apart (median of {n})",
        APART.as_millis()
    );
    figures.report(LOCAL, ms(l), "ms", Goal::Shown);
    figures.report(CLUSTER, ms(c), "ms", Goal::Shown);
    figures.report(ADDED, ms(c.saturating_sub(l)), "ms", Goal::AtMost(50.0));
}

/// The cluster's runs with no pause between them. The dev server keeps its history in one
/// shard and reads that shard's task queue at most 20 times a second (Temporal's default
/// history.transferProcessorMaxPollRPS, per shard); a run needs a few such reads, so runs back
/// to back soon wait on the limit, where a cluster with many shards spreads them.
async fn back_to_back(figures: &Figures, engine: &healer::Engine, remote: i64) {
    let mut times = Vec::new();
    for _ in 0..figures::size(40, 3) {
        times.push(timed_run(engine, remote).await);
    }
    println!("\n   The cluster run again, back to back on the dev server's one shard");
    figures.report(BACK_TO_BACK, ms(median(&mut times)), "ms", Goal::Shown);
}

/// `n` runs of `workflow`, each after a pause of [`APART`], timed.
async fn spaced(engine: &healer::Engine, workflow: i64, n: usize) -> Vec<Duration> {
    let mut times = Vec::new();
    for _ in 0..n {
        tokio::time::sleep(APART).await;
        times.push(timed_run(engine, workflow).await);
    }
    times
}

async fn timed_run(engine: &healer::Engine, workflow: i64) -> Duration {
    let t = Instant::now();
    let detail = engine.run_and_wait(workflow).await.expect("run");
    let took = t.elapsed();
    assert_eq!(detail.run.status, RunStatus::Succeeded, "{detail:?}");
    took
}

async fn rate(figures: &Figures, room: &Room) {
    let engine = &room.engine;
    let workflows = figures::size(24, 2);
    let each = figures::size(5, 1);
    let ids: Vec<i64> = (0..workflows)
        .map(|i| room.workflow_on_cluster(input(&format!("Tenth of a second {i}"), "sleep 0.1\n")))
        .collect();
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
