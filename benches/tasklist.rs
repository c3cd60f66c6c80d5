//! Figures for a huge task list (issue 23, item 6): a project whose `.healer/tasks.jsonl` holds
//! 10,000 and then 100,000 tasks — a third waiting for an earlier one, some closed, labels and
//! acceptance criteria — read, checked (ids, dependencies, cycles) and shown as the board
//! (`Engine::project_detail`, what the window asks for). Targets: 10,000 in ≤ 200 ms,
//! 100,000 in ≤ 2 s, so the time grows in step with the list.
//!
//! `cargo bench -p healer --bench tasklist` (or `make bench`; `HEALER_BENCH_QUICK=1`: 1,000
//! and 10,000 tasks).

#[path = "figures.rs"]
mod figures;

use std::time::{Duration, Instant};

use figures::{Figures, Goal};
use healer::engine::EngineOptions;
use healer::lease::Lease;
use healer::project::ProjectInput;
use healer::store::ProjectSettings;
use healer::{Engine, Paths};

const ROUNDS: usize = 5;

fn main() {
    let runtime = figures::runtime();
    runtime.block_on(bench());
}

fn sizes() -> [(usize, f64); 2] {
    if figures::quick() {
        [(1_000, 200.0), (10_000, 2_000.0)]
    } else {
        [(10_000, 200.0), (100_000, 2_000.0)]
    }
}

fn name(size: usize) -> String {
    format!("{size} tasks read, checked and shown")
}

fn task_list(size: usize) -> String {
    let mut text = String::with_capacity(size * 200);
    for i in 0..size {
        let status = if i % 5 == 0 { "closed" } else { "open" };
        let deps = if i % 3 == 0 && i > 0 {
            format!("[\"t{}\"]", i / 2)
        } else {
            "[]".to_string()
        };
        text.push_str(&format!(
            "{{\"id\":\"t{i}\",\"title\":\"Task number {i} of the big list\",\"description\":\"Make part {i} do what the spec says.\",\"acceptance\":[\"part {i} passes its test\"],\"status\":\"{status}\",\"priority\":{},\"deps\":{deps},\"labels\":[\"area-{}\"],\"created_at\":\"2026-11-28T10:00:00Z\",\"updated_at\":\"2026-11-28T10:00:00Z\"}}\n",
            i % 10,
            i % 7
        ));
    }
    text
}

async fn bench() {
    let figures = Figures::new("tasklist", &sizes().map(|(size, _)| name(size)));
    let dir = tempfile::tempdir().expect("tmp");
    let paths = Paths::new(dir.path().join("data"));
    paths.ensure().expect("data dir");
    let lease = Lease::acquire(&paths, "bench").expect("lease");
    let options = EngineOptions {
        scheduler: false,
        ..EngineOptions::default()
    };
    let engine = Engine::start_with_lease(paths.clone(), "bench", lease, options)
        .await
        .expect("engine");
    for (size, target) in sizes() {
        let repo = dir.path().join(format!("repo-{size}"));
        std::fs::create_dir_all(repo.join(".healer")).expect("repo");
        std::fs::write(repo.join("README.md"), "big\n").expect("readme");
        for args in [
            &["init", "-q", "-b", "main"][..],
            &["add", "README.md"],
            &["commit", "-q", "-m", "first"],
        ] {
            let status = std::process::Command::new("git")
                .args(args)
                .current_dir(&repo)
                .env("GIT_AUTHOR_NAME", "b")
                .env("GIT_AUTHOR_EMAIL", "b@b")
                .env("GIT_COMMITTER_NAME", "b")
                .env("GIT_COMMITTER_EMAIL", "b@b")
                .status()
                .expect("git");
            assert!(status.success(), "git {args:?}");
        }
        std::fs::write(repo.join(".healer/tasks.jsonl"), task_list(size)).expect("tasks");
        let project = engine
            .add_project(ProjectInput {
                path: repo.display().to_string(),
                name: format!("big {size}"),
                settings: ProjectSettings {
                    commit_without_checks: true,
                    ..ProjectSettings::default()
                },
            })
            .expect("project");
        let mut times: Vec<Duration> = (0..figures::size(ROUNDS, 1))
            .map(|_| {
                let start = Instant::now();
                let detail = engine.project_detail(project.id).expect("the board");
                let took = start.elapsed();
                assert_eq!(detail.tasks.len(), size);
                took
            })
            .collect();
        times.sort();
        let median = times.get(times.len() / 2).copied().unwrap_or_default();
        println!(
            "{size} tasks: median of {} rounds {:.0} ms",
            times.len(),
            median.as_secs_f64() * 1e3
        );
        figures.report(
            &name(size),
            median.as_secs_f64() * 1e3,
            "ms",
            Goal::AtMost(target),
        );
    }
    engine.shutdown().await;
}
