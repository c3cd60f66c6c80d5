//! The schedule under load (issue 36): many workflows due at the same moment under
//! `healer daemon`, a fifth of them failing once with a connection refused and retried after a
//! backoff, the daemon SIGKILLed part-way and started again. Printed: how late runs start after
//! their due time (p50, p99), runs interrupted, runs doubled in one due time.
//!
//! `cargo bench --bench schedule_soak` (150 workflows every minute for six minutes, the kill at
//! minute four); `HEALER_BENCH_QUICK=1`: 20 workflows every ten seconds for 40 s.

#[path = "figures.rs"]
mod figures;

use std::collections::HashMap;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use figures::{Figures, Goal};
use healer::store::Store;
use healer::workflow::{RetryPolicy, RunStatus, RunTrigger, Runtime, Schedule, WorkflowInput};
use healer::{Engine, Paths};

const P50: &str = "a scheduled run's start after its due time, p50";
const P99: &str = "a scheduled run's start after its due time, p99";
const INTERRUPTED: &str = "runs interrupted (an attempt running at the kill)";
const DOUBLED: &str = "runs doubled in one due time";

/// Refused on every other run (transient: retried after the backoff), fine otherwise.
const FLAKY: &str = "n=$(cat ../count 2>/dev/null || echo 0)\necho $((n+1)) > ../count\nif [ $((n % 2)) = 0 ]; then echo 'curl: (7) Failed to connect to 127.0.0.1 port 9: Connection refused' >&2; exit 7; fi\necho fine\n";

fn daemon(paths: &Paths) -> Child {
    Command::new(env!("CARGO_BIN_EXE_healer"))
        .arg("daemon")
        .env("HEALER_DATA_DIR", paths.data_dir())
        .env("HEALER_KEYRING", "off")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("daemon")
}

fn main() {
    let figures = Figures::new(
        "schedule_soak",
        &[
            P50.to_string(),
            P99.to_string(),
            INTERRUPTED.to_string(),
            DOUBLED.to_string(),
        ],
    );
    let quick = figures::quick();
    let count = figures::size(150, 20);
    let (period, cron) = if quick {
        (10, "*/10 * * * * *")
    } else {
        (60, "0 * * * * *")
    };
    let soak = Duration::from_secs(if quick { 40 } else { 6 * 60 });
    let kill_at = Duration::from_secs(if quick { 25 } else { 4 * 60 });
    let backoff_ms = if quick { 3_000 } else { 20_000 };

    let dir = tempfile::tempdir().expect("tmp");
    let paths = Paths::new(dir.path().join("data"));
    figures::runtime().block_on(async {
        let engine = Engine::start(paths.clone(), "bench setup")
            .await
            .expect("engine");
        for i in 0..count {
            let flaky = i % 5 == 0;
            engine
                .create_workflow(WorkflowInput {
                    title: format!("Soak {i}"),
                    runtime: Runtime::Bash,
                    entry: None,
                    schedule: Schedule::Cron {
                        expression: cron.to_string(),
                    },
                    env: vec![],
                    timeout_secs: 60,
                    retry: Some(RetryPolicy {
                        initial_ms: backoff_ms,
                        max_interval_ms: backoff_ms,
                        jitter: false,
                        ..RetryPolicy::default()
                    }),
                    code: if flaky { FLAKY } else { "echo fine\n" }.to_string(),
                    summary: String::new(),
                })
                .expect("create");
        }
        engine.shutdown().await;
    });

    let started = Instant::now();
    let mut running = daemon(&paths);
    std::thread::sleep(kill_at);
    let _ = running.kill(); // SIGKILL: nothing said or saved
    let _ = running.wait();
    running = daemon(&paths);
    std::thread::sleep(soak.saturating_sub(started.elapsed()));
    let _ = Command::new("kill")
        .args(["-TERM", &running.id().to_string()])
        .status();
    let _ = running.wait();

    let store = Store::open(&paths.db()).expect("store");
    let mut late = Vec::new();
    let mut interrupted = 0;
    let mut doubled = 0;
    for w in store.list_workflow_summaries().expect("workflows") {
        let mut per_due: HashMap<i64, u32> = HashMap::new();
        for run in store.list_runs(w.id, None, 1000).expect("runs") {
            if run.status == RunStatus::Interrupted {
                interrupted += 1;
            }
            if !matches!(run.trigger, RunTrigger::Schedule | RunTrigger::CatchUp) {
                continue;
            }
            let Some(at) = run
                .started_at
                .as_deref()
                .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
            else {
                continue;
            };
            let at = at.with_timezone(&Utc);
            let ms = at.timestamp_millis();
            let due = ms - ms.rem_euclid(period * 1000);
            late.push((ms - due) as f64 / 1000.0);
            *per_due.entry(due).or_default() += 1;
        }
        doubled += per_due.values().filter(|n| **n > 1).count();
    }
    late.sort_by(f64::total_cmp);
    let at = |q: f64| {
        late.get(((late.len() as f64 - 1.0) * q).round() as usize)
            .copied()
            .unwrap_or(0.0)
    };
    println!(
        "\nSchedule soak: {count} workflows due every {period} s for {} s under `healer daemon`, \
         a fifth failing every other run and retried after {} s, SIGKILLed at {} s; {} scheduled runs",
        soak.as_secs(),
        backoff_ms / 1000,
        kill_at.as_secs(),
        late.len()
    );
    figures.report(P50, at(0.5), "s", Goal::Shown);
    figures.report(P99, at(0.99), "s", Goal::Shown);
    figures.report(INTERRUPTED, f64::from(interrupted), "", Goal::Shown);
    figures.report(DOUBLED, doubled as f64, "", Goal::AtMost(0.0));
}
