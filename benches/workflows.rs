//! Figures for the workflows issue, printed (not asserted):
//! 1. overhead of a Healer run over the bare interpreter, for a script doing ~100 ms of work;
//! 2. idle CPU of `healer daemon` with 100 scheduled workflows not yet due;
//! 3. p95 of the list and workflow-page queries with 1,000 workflows × 50 versions × 100,000 runs.
//!
//! `cargo bench --bench workflows` (or `make bench`; `HEALER_BENCH_QUICK=1`: a few rounds on a
//! small store).

#[path = "figures.rs"]
mod figures;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use figures::{Figures, Goal};
use healer::store::Store;
use healer::workflow::{RetryPolicy, Runtime, Schedule, WorkflowInput};
use healer::{Engine, Paths};

const BUSY_100MS: &str = "import time\nend = time.perf_counter() + 0.1\nn = 0\nwhile time.perf_counter() < end:\n    n += 1\n";

fn main() {
    let runtime = figures::runtime();
    let figures = Figures::new(
        "workflows",
        &[
            RATIO.to_string(),
            IDLE.to_string(),
            LIST.to_string(),
            PAGE.to_string(),
        ],
    );
    println!("Healer workflow figures (this machine: {} cores)", cores());
    runtime.block_on(overhead(&figures));
    idle_cpu(&figures);
    query_latency(&figures);
}

const RATIO: &str = "run through Healer ÷ bare python3";
const IDLE: &str = "daemon idle CPU, scheduled workflows not due";
const LIST: &str = "workflows list query, p95";
const PAGE: &str = "workflow page queries, p95";

fn input(title: &str, schedule: Schedule, code: &str) -> WorkflowInput {
    WorkflowInput {
        title: title.to_string(),
        runtime: Runtime::Python3,
        entry: None,
        schedule,
        env: vec![],
        timeout_secs: 60,
        retry: Some(RetryPolicy::default()),
        code: code.to_string(),
        summary: String::new(),
    }
}

async fn overhead(figures: &Figures) {
    let n = figures::size(20, 2);
    let dir = tempfile::tempdir().expect("tmp");
    let paths = Paths::new(dir.path().join("data"));
    let engine = Engine::start(paths.clone(), "bench").await.expect("engine");
    let w = engine
        .create_workflow(input("Busy", Schedule::Manual, BUSY_100MS))
        .expect("create");
    let file = dir.path().join("busy.py");
    std::fs::write(&file, BUSY_100MS).expect("write");

    // Warm both paths once (interpreter start-up caches, SQLite pages).
    let _ = Command::new("python3").arg(&file).status();
    let _ = engine.run_and_wait(w.id).await;

    let mut bare = Vec::new();
    let mut healer = Vec::new();
    for _ in 0..n {
        let t = Instant::now();
        let status = Command::new("python3")
            .arg(&file)
            .stdout(Stdio::piped())
            .status()
            .expect("python3");
        assert!(status.success());
        bare.push(t.elapsed());

        let t = Instant::now();
        let detail = engine.run_and_wait(w.id).await.expect("run");
        healer.push(t.elapsed());
        assert_eq!(detail.run.status, healer::workflow::RunStatus::Succeeded);
    }
    let (b, h) = (median(&mut bare), median(&mut healer));
    println!("\n1. Overhead per run (script doing ~100 ms of work, median of {n})");
    println!("   bare python3:        {:>7.1} ms", ms(b));
    println!(
        "   through Healer:      {:>7.1} ms (queue, process group, capture, SQLite writes, events)",
        ms(h)
    );
    figures.report(
        RATIO,
        h.as_secs_f64() / b.as_secs_f64(),
        "",
        Goal::AtMost(1.05),
    );
    engine.shutdown().await;
}

fn idle_cpu(figures: &Figures) {
    let workflows = figures::size(100, 5);
    let watch = Duration::from_secs(figures::size(10, 1) as u64);
    let dir = tempfile::tempdir().expect("tmp");
    let paths = Paths::new(dir.path().join("data"));
    {
        let runtime = tokio::runtime::Runtime::new().expect("rt");
        runtime.block_on(async {
            let engine = Engine::start(paths.clone(), "bench setup")
                .await
                .expect("engine");
            for i in 0..workflows {
                // Due once a year, on 1 January at 00:00.
                let yearly = Schedule::Cron {
                    expression: "0 0 1 1 *".to_string(),
                };
                engine
                    .create_workflow(input(&format!("Yearly {i}"), yearly, "print('hi')\n"))
                    .expect("create");
            }
            engine.shutdown().await;
        });
    }
    let mut daemon = Command::new(env!("CARGO_BIN_EXE_healer"))
        .arg("daemon")
        .env("HEALER_DATA_DIR", paths.data_dir())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("daemon");
    std::thread::sleep(Duration::from_secs(2)); // start-up is not idle time
    let pid = daemon.id();
    let before = cpu_ticks(pid);
    std::thread::sleep(watch);
    let after = cpu_ticks(pid);
    let _ = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
    let _ = daemon.wait();
    let ticks = after.saturating_sub(before);
    let seconds = ticks as f64 / clock_ticks_per_second();
    println!("\n2. Idle CPU of `healer daemon` with {workflows} scheduled workflows not yet due");
    println!("   CPU time over {} s:  {:.3} s", watch.as_secs(), seconds);
    // "About nothing": a tenth of a percent of one core is one clock tick in 10 s.
    figures.report(
        IDLE,
        100.0 * seconds / watch.as_secs_f64(),
        "% of one core",
        Goal::AtMost(0.1),
    );
}

fn query_latency(figures: &Figures) {
    let workflows = figures::size(1_000, 10) as i64;
    let versions = figures::size(50, 5) as i64;
    let run_count = figures::size(100_000, 1_000) as i64;
    let dir = tempfile::tempdir().expect("tmp");
    let paths = Paths::new(dir.path().join("data"));
    paths.ensure().expect("dir");
    let store = Store::open(&paths.db()).expect("store");
    drop(store);
    let t = Instant::now();
    {
        let mut conn = rusqlite::Connection::open(paths.db()).expect("raw");
        let tx = conn.transaction().expect("tx");
        let now = "2026-11-22T10:00:00.000Z";
        for w in 1..=workflows {
            tx.execute(
                "INSERT INTO workflows (id, name, title, runtime, entry, schedule, env, timeout_secs, retry, status, created_at, updated_at)
                 VALUES (?1, ?2, ?3, '{\"kind\":\"python3\"}', 'main.py', '{\"kind\":\"interval\",\"seconds\":3600}', '[]', 300, ?4, 'active', ?5, ?5)",
                rusqlite::params![w, format!("workflow-{w}"), format!("Workflow {w}"), serde_json::to_string(&RetryPolicy::default()).expect("json"), now],
            )
            .expect("workflow");
            for v in 1..=versions {
                tx.execute(
                    "INSERT INTO scripts (id, workflow_id, major, minor, code, change_comment, summary, author, created_at)
                     VALUES (?1, ?2, ?3, 0, ?4, 'change', 'summary', 'person', ?5)",
                    rusqlite::params![(w - 1) * versions + v, w, v, format!("print({v})\n").repeat(20), now],
                )
                .expect("script");
            }
            tx.execute(
                "UPDATE workflows SET active_script_id = ?2 WHERE id = ?1",
                rusqlite::params![w, w * versions],
            )
            .expect("active");
        }
        for r in 1..=run_count {
            let w = (r % workflows) + 1;
            tx.execute(
                "INSERT INTO runs (id, workflow_id, script_id, trigger, status, attempts, summary, queued_at, started_at, finished_at)
                 VALUES (?1, ?2, ?3, 'schedule', 'succeeded', 1, 'Succeeded in 0.1 s', ?4, ?4, ?4)",
                rusqlite::params![r, w, w * versions, now],
            )
            .expect("run");
            tx.execute(
                "INSERT INTO attempts (run_id, number, status, started_at, finished_at, duration_ms, exit_code, stdout)
                 VALUES (?1, 1, 'succeeded', ?2, ?2, 100, 0, 'ok')",
                rusqlite::params![r, now],
            )
            .expect("attempt");
        }
        tx.commit().expect("commit");
    }
    println!(
        "\n3. Queries with {workflows} workflows × {versions} versions × {run_count} runs (filled in {:.1} s)",
        t.elapsed().as_secs_f64()
    );
    let store = Store::open(&paths.db()).expect("store");
    let mut list = Vec::new();
    let mut page = Vec::new();
    for i in 0..figures::size(200, 5) as i64 {
        let t = Instant::now();
        let rows = store.list_workflow_summaries().expect("list");
        list.push(t.elapsed());
        assert_eq!(rows.len(), workflows as usize);

        let id = (i * 37) % workflows + 1;
        let t = Instant::now();
        let _w = store.workflow(id).expect("workflow");
        let _active = store.active_version(id).expect("active");
        let runs = store.list_runs(id, None, 50).expect("runs");
        let _detail = store.run_detail(runs[0].id).expect("run detail");
        let _versions = store.versions(id).expect("versions");
        page.push(t.elapsed());
    }
    println!(
        "   workflows list:  p50 {:>6.2} ms   p95 {:>6.2} ms",
        ms(pct(&mut list, 50)),
        ms(pct(&mut list, 95))
    );
    println!("   workflow page:   p50 {:>6.2} ms   p95 {:>6.2} ms   (workflow + active version + 50 runs + a run's attempts + 50 versions)", ms(pct(&mut page, 50)), ms(pct(&mut page, 95)));
    figures.report(LIST, ms(pct(&mut list, 95)), "ms", Goal::AtMost(20.0));
    figures.report(PAGE, ms(pct(&mut page, 95)), "ms", Goal::AtMost(20.0));
}

fn cpu_ticks(pid: u32) -> u64 {
    // Fields 14 and 15 of /proc/PID/stat: user and system time in clock ticks, all threads.
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after_name = stat.rsplit(')').next().unwrap_or_default();
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let field = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    field(11) + field(12)
}

fn clock_ticks_per_second() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100.0)
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn median(v: &mut [Duration]) -> Duration {
    pct(v, 50)
}

fn pct(v: &mut [Duration], p: usize) -> Duration {
    v.sort();
    let i = (v.len() * p / 100).min(v.len().saturating_sub(1));
    v.get(i).copied().unwrap_or_default()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
