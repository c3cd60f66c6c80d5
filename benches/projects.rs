//! Figure for the projects issue, printed (not asserted): Healer's overhead on an agent session
//! beyond the agent's own time, for a repository of 5,000 files (target: ≤ 300 ms).
//!
//! A real git repository of 5,000 committed files is added as a project whose verification is
//! `true`. Each round adds a task and runs it through the engine's real runner with the
//! built-in agent against the scripted model server on 127.0.0.1 (it writes one file and
//! finishes). The session's stored steps and events carry the times:
//! - worktree: from the session's start to "Worktree ready" (claiming the task in
//!   tasks.jsonl, branch, worktree checkout of 5,000 files);
//! - verification bookkeeping: from "Verifying" to its result, the `true` process included;
//! - commit: from the verification's result to `session_finished` (commit, fast-forward of
//!   the checked-out main branch, closing the task, the progress log, removing the worktree).
//!
//! The agent's own time (its model calls and tools) is what lies between and is left out.
//!
//! `cargo bench --bench projects` (or `make bench`; `HEALER_BENCH_QUICK=1`: 50 files, two
//! sessions).

#[path = "figures.rs"]
mod figures;
#[path = "../tests/engine/model_server.rs"]
mod model_server;

use std::path::Path;

use chrono::{DateTime, Utc};
use figures::{Figures, Goal};
use git2::{IndexAddOption, Repository, Signature};
use healer::engine::EngineOptions;
use healer::events::Event;
use healer::lease::Lease;
use healer::llm::{Keys, ProviderInput, ProviderKind, Tier, TierSetting};
use healer::project::{ProjectInput, TaskEdit};
use healer::session::{SessionStatus, StepKind, StepSource};
use healer::store::{ProjectSettings, VerifyCommand};
use healer::{Engine, Paths};
use model_server::{openai, ModelServer, TOKENS};

const FIGURE: &str = "Healer's overhead on an agent session, p50";
const KEY_VAR: &str = "HEALER_BENCH_KEY";
const KEY: &str = "sk-bench";

fn main() {
    // Before any thread exists: the provider's key is read from here.
    std::env::set_var(KEY_VAR, KEY);
    let runtime = figures::runtime();
    runtime.block_on(bench());
}

fn repository(dir: &Path, files: usize) {
    let repo = Repository::init(dir).expect("git init");
    repo.set_head("refs/heads/main").expect("main");
    for i in 0..files {
        let path = dir.join(format!("src/m{:02}/f{i:04}.txt", i % 50));
        std::fs::create_dir_all(path.parent().expect("folder")).expect("folder");
        std::fs::write(path, format!("line {i}\n")).expect("file");
    }
    let mut index = repo.index().expect("index");
    index
        .add_all(["*"], IndexAddOption::DEFAULT, None)
        .expect("add");
    index.write().expect("index");
    let tree = repo
        .find_tree(index.write_tree().expect("tree"))
        .expect("tree");
    let who = Signature::now("Bench", "bench@example.com").expect("sig");
    repo.commit(Some("HEAD"), &who, &who, "many files", &tree, &[])
        .expect("commit");
}

fn at(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text)
        .expect("time")
        .with_timezone(&Utc)
}

fn ms(from: DateTime<Utc>, to: DateTime<Utc>) -> f64 {
    (to - from).num_microseconds().unwrap_or(0) as f64 / 1000.0
}

async fn bench() {
    let report = Figures::new("projects", &[FIGURE.to_string()]);
    let files = figures::size(5_000, 50);
    // The first session is the cold one; at least one warm session follows.
    let rounds = figures::size(10, 2);
    let server = ModelServer::start(Some(KEY));
    let dir = tempfile::tempdir().expect("tmp");
    let paths = Paths::new(dir.path().join("data"));
    paths.ensure().expect("data dir");
    let repo = dir.path().join("big");
    repository(&repo, files);
    let lease = Lease::acquire(&paths, "bench").expect("lease");
    let options = EngineOptions {
        scheduler: false,
        keys: Some(Keys::env_only()),
        ..EngineOptions::default()
    };
    let engine = Engine::start_with_lease(paths.clone(), "bench", lease, options)
        .await
        .expect("engine");
    engine
        .save_provider(ProviderInput {
            name: "scripted".to_string(),
            title: None,
            kind: ProviderKind::OpenaiCompatible,
            base_url: Some(format!("{}/v1", server.url)),
            key_env: Some(KEY_VAR.to_string()),
            prices: vec![],
        })
        .expect("provider");
    engine
        .set_tier(TierSetting {
            tier: Tier::Standard,
            provider: "scripted".to_string(),
            model: "scripted-small".to_string(),
            budget_tokens: 20_000,
            temperature: None,
            minutes: None,
        })
        .expect("tier");
    let project = engine
        .add_project(ProjectInput {
            path: repo.display().to_string(),
            name: "big".to_string(),
            settings: ProjectSettings {
                verify: vec![VerifyCommand {
                    name: "check".to_string(),
                    command: "true".to_string(),
                }],
                ..ProjectSettings::default()
            },
        })
        .expect("project");

    let mut totals = Vec::new();
    let mut parts = Vec::new();
    for round in 0..rounds {
        engine
            .add_task(
                project.id,
                TaskEdit {
                    title: format!("Change {round}"),
                    ..TaskEdit::default()
                },
            )
            .expect("task");
        let args = serde_json::json!({"path": format!("notes/n{round}.txt"), "content": "done\n"})
            .to_string();
        let finish = serde_json::json!({"summary": "wrote a note"}).to_string();
        server.script([
            openai::tool_calls(&[("c1", "write_file", &args)], TOKENS),
            openai::tool_calls(&[("c2", "finish", &finish)], TOKENS),
        ]);
        let session = engine
            .run_project_and_wait(project.id, None)
            .await
            .expect("run");
        assert_eq!(
            session.status,
            SessionStatus::Finished,
            "{}",
            session.summary
        );
        assert!(session.merged, "fast-forwarded");
        let steps = engine.store().session_steps(session.id, 0).expect("steps");
        let note = |prefix: &str| {
            steps
                .iter()
                .find(|s| {
                    s.step.source == StepSource::System
                        && s.step.kind == StepKind::Text
                        && s.step.text.starts_with(prefix)
                })
                .map(|s| at(&s.step.at))
                .expect("note")
        };
        let result = steps
            .iter()
            .find(|s| {
                s.step.kind == StepKind::ToolResult && s.step.tool.as_deref() == Some("check")
            })
            .map(|s| at(&s.step.at))
            .expect("verification result");
        let finished = engine
            .events(None, 500)
            .expect("events")
            .into_iter()
            .find(|e| matches!(&e.event, Event::SessionFinished { session_id, .. } if *session_id == session.id))
            .map(|e| at(&e.at))
            .expect("session_finished");
        let worktree = ms(at(&session.started_at), note("Worktree ready"));
        let verify = ms(note("Verifying"), result);
        let commit = ms(result, finished);

        totals.push(worktree + verify + commit);
        parts.push((worktree, verify, commit));
    }
    // The first session checks the whole tree out into a new worktree; later ones switch a
    // worktree a finished task left (the long-running engine also makes one ahead, when a
    // project is added and after each session, so a person's first task starts warm too).
    let (cold, cold_parts) = (totals[0], parts[0]);
    let mut warm: Vec<f64> = totals[1..].to_vec();
    warm.sort_by(|a, b| a.total_cmp(b));
    let p50 = warm[warm.len() / 2];
    let worst = warm[warm.len() - 1];
    let warm_parts = &parts[1..];
    let mean = |f: fn(&(f64, f64, f64)) -> f64| {
        warm_parts.iter().map(f).sum::<f64>() / warm_parts.len() as f64
    };
    println!("projects: Healer's overhead on an agent session, repository of {files} files, {rounds} sessions");
    println!(
        "  worktree ready {:.1} ms + verification bookkeeping {:.1} ms + commit and close {:.1} ms (means of sessions 2..{rounds})",
        mean(|p| p.0),
        mean(|p| p.1),
        mean(|p| p.2)
    );
    println!("  worst {worst:.1} ms");
    report.report(FIGURE, p50, "ms", Goal::AtMost(300.0));
    println!(
        "  first session, a whole checkout into a new worktree: {cold:.1} ms ({:.1} + {:.1} + {:.1})",
        cold_parts.0, cold_parts.1, cold_parts.2
    );
    engine.shutdown().await;
}
