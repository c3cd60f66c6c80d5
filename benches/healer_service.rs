//! Figure for the healer service (printed, not asserted): from a project failure reaching the
//! pipeline to its spell plan chosen and its first spell started, target ≤ 50 ms. Measured on
//! the real engine: a stuck task (the stuck scan's `SubtaskStuck` failure) goes through the
//! pipeline, the `healer_service` remedy's policy, the hand-over, the context (git status of a
//! real worktree, the session's steps, progress.md), the rule planner and the first spell.
//! Times come from the store: the `heal_started` event and the first spell's `started_at`.
//!
//! `cargo bench -p healer --bench healer_service` (or `make bench`; `HEALER_BENCH_QUICK=1`: one
//! failure).

#[path = "figures.rs"]
mod figures;

use std::time::{Duration, Instant};

use figures::{Figures, Goal};
use healer::engine::EngineOptions;
use healer::lease::Lease;
use healer::llm::Keys;
use healer::project::{ProjectInput, TaskEdit};
use healer::store::{HealerConfig, HealerMode, NewSession, ProjectSettings};
use healer::tasklist::TaskStatus;
use healer::{Engine, Paths};

const FIGURE: &str = "failure → plan → first spell started, p95";

fn main() {
    let runtime = figures::runtime();
    runtime.block_on(bench());
}

fn git(dir: &std::path::Path, args: &[&str]) {
    let ok = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "b")
        .env("GIT_AUTHOR_EMAIL", "b@b")
        .env("GIT_COMMITTER_NAME", "b")
        .env("GIT_COMMITTER_EMAIL", "b@b")
        .status()
        .expect("git")
        .success();
    assert!(ok, "git {args:?}");
}

fn ms(at: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(at)
        .expect("time")
        .timestamp_millis()
}

async fn bench() {
    let report = Figures::new("healer_service", &[FIGURE.to_string()]);
    let rounds = figures::size(30, 1);
    let dir = tempfile::tempdir().expect("tmp");
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).expect("repo");
    for i in 0..200 {
        std::fs::write(repo.join(format!("f{i}.txt")), format!("file {i}\n")).expect("file");
    }
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "first"]);
    let paths = Paths::new(dir.path().join("data"));
    paths.ensure().expect("paths");
    let lease = Lease::acquire(&paths, "bench").expect("lease");
    let options = EngineOptions {
        scheduler: false,
        keys: Some(Keys::env_only()),
        ..EngineOptions::default()
    };
    let engine = Engine::start_with_lease(paths.clone(), "bench", lease, options)
        .await
        .expect("engine");
    let project = engine
        .add_project(ProjectInput {
            path: repo.display().to_string(),
            name: "bench".to_string(),
            settings: ProjectSettings {
                commit_without_checks: true,
                ..ProjectSettings::default()
            },
        })
        .expect("project");
    let mut config = HealerConfig {
        mode: HealerMode::Aggressive,
        allowed_spells: vec!["update_progress_with_guidance".to_string()],
        ..HealerConfig::default()
    };
    config.scenarios.on_stuck_subtask = true;
    engine
        .set_healer_config(project.id, config)
        .expect("config");

    let mut figures = Vec::new();
    for round in 0..rounds {
        let task = engine
            .add_task(
                project.id,
                TaskEdit {
                    title: format!("Task {round}"),
                    ..TaskEdit::default()
                },
            )
            .expect("task");
        healer::tasklist::modify(&repo, |f| {
            f.update(&task.id, "2026-01-01T00:00:00Z", |t| {
                t.status = TaskStatus::InProgress
            })
        })
        .expect("in progress");
        engine
            .store()
            .insert_session(&NewSession {
                project_id: project.id,
                task_id: &task.id,
                task_title: &task.title,
                agent: healer::session::AgentKind::Builtin,
                worktree: &repo.display().to_string(),
                branch: "main",
            })
            .expect("session");
        let later = chrono::Utc::now() + chrono::Duration::hours(3);
        engine.act_on_stuck(later).await.expect("scan");
        let deadline = Instant::now() + Duration::from_secs(30);
        let inv = loop {
            let all = engine
                .healer_invocations(Some(project.id), Some(&task.id), 5)
                .expect("invocations");
            if let Some(inv) = all.into_iter().find(|i| !i.spells.is_empty()) {
                break inv;
            }
            assert!(Instant::now() < deadline, "no spell started");
            tokio::time::sleep(Duration::from_millis(5)).await;
        };
        let heal_at = engine
            .events(None, 500)
            .expect("events")
            .into_iter()
            .find_map(|e| match e.event {
                healer::Event::HealStarted { heal_id, .. } if Some(heal_id) == inv.heal_id => {
                    Some(e.at)
                }
                _ => None,
            })
            .expect("heal_started");
        figures.push(ms(&inv.spells[0].started_at) - ms(&heal_at));
        // Done with this task: closed, so the next scan does not see it.
        healer::tasklist::modify(&repo, |f| {
            f.update(&task.id, "2026-01-01T00:00:00Z", |t| {
                t.status = TaskStatus::Closed
            })
        })
        .expect("closed");
    }
    figures.sort_unstable();
    let p = |q: f64| figures[((figures.len() - 1) as f64 * q) as usize];
    println!(
        "healer service: failure → plan chosen → first spell started, {rounds} failures: median {} ms, max {} ms",
        p(0.5),
        figures[figures.len() - 1]
    );
    report.report(FIGURE, p(0.95) as f64, "ms", Goal::AtMost(50.0));
    engine.shutdown().await;
}
