//! Figures for a model server at home (printed, not asserted), on llama.cpp's real server with
//! Gemma 3 270M, a small base model that follows no instruction (installed by
//! `scripts/setup.sh test`):
//! - the steering judge's valid answers over 20 questions with the answer's schema sent for the
//!   server to enforce (target ≥ 95 %), and with the prompt alone (shown beside it);
//! - the wall time of a fix request on it (tools offered, the cheap tier's 2,000 tokens), from
//!   the request to the loop's end, whatever the model makes of it.
//!
//! The questions are the judge's own prompt over sessions of three kinds: going in circles,
//! making progress, working on something else, each with its task, changes and turns.
//!
//! `cargo bench -p healer --bench local_model` (or `make bench`; `HEALER_BENCH_QUICK=1`: 2
//! questions each way).

#[path = "figures.rs"]
mod figures;
#[path = "../tests/engine/llama_server.rs"]
mod llama_server;

use std::time::Instant;

use figures::{Figures, Goal};
use healer::engine::EngineOptions;
use healer::lease::Lease;
use healer::llm::{
    AgentRun, ChatMessage, Keys, ProviderInput, ProviderKind, TaskKind, Tier, TierSetting, ToolSet,
};
use healer::steering::parse_answer;
use healer::{Engine, Paths};
use llama_server::{judge_run, LlamaServer, MODEL};

const WITH: &str = "judge answers valid, schema sent";
const WITHOUT: &str = "judge answers valid, prompt alone";
const REPAIR: &str = "a fix request's wall time on it";

/// The `i`-th question: one of three kinds of session, with details that vary.
fn question(i: usize) -> String {
    let file = ["parser.rs", "cli.py", "report.js", "db.go", "main.rs"][i % 5];
    let minutes = 15 + (i * 7) % 45;
    let turns = match i % 3 {
        0 => (1..=4)
            .map(|t| format!("--- turn {t} ---\nRan the tests: 1 failed (test_{file})\n"))
            .collect::<String>(),
        1 => format!(
            "--- turn 1 ---\nRead {file}\n--- turn 2 ---\nEdited {file}: handled the empty case\n\
             --- turn 3 ---\nRan the tests: all {} passed\n",
            10 + i
        ),
        _ => "--- turn 1 ---\nRewrote the build system in Bazel\n--- turn 2 ---\nDeleted the docs folder\n"
            .to_string(),
    };
    let changes = match i % 3 {
        0 => "Its worktree has no change yet since the task started.".to_string(),
        1 => format!("Its worktree since the task started: 1 file(s) changed, {} line(s) added, 2 removed:\n- {file}", 5 + i),
        _ => "Its worktree since the task started: 14 file(s) changed, 900 line(s) added, 400 removed.".to_string(),
    };
    format!(
        "Task: Fix the crash in {file} on empty input\nAcceptance criteria:\n- the tests pass\n\n{changes}\n\n\
         The agent has been working for {minutes} minutes. Its last turns, oldest first:\n\n{turns}"
    )
}

async fn engine(base_url: &str) -> (tempfile::TempDir, Engine) {
    let dir = tempfile::tempdir().expect("tmp");
    let paths = Paths::new(dir.path().join("data"));
    paths.ensure().expect("data dir");
    let lease = Lease::acquire(&paths, "bench").expect("lease");
    let options = EngineOptions {
        scheduler: false,
        keys: Some(Keys::env_only()),
        ..EngineOptions::default()
    };
    let engine = Engine::start_with_lease(paths, "bench", lease, options)
        .await
        .expect("engine");
    engine
        .save_provider(ProviderInput {
            name: "home".to_string(),
            title: None,
            kind: ProviderKind::OpenaiCompatible,
            base_url: Some(base_url.to_string()),
            key_env: None,
            prices: vec![],
        })
        .expect("provider");
    for tier in [Tier::Cheap, Tier::Standard] {
        engine
            .set_tier(TierSetting {
                tier,
                provider: "home".to_string(),
                model: MODEL.to_string(),
                budget_tokens: 2_000,
                temperature: None,
                minutes: None,
            })
            .expect("tier");
    }
    (dir, engine)
}

async fn judge(engine: &Engine, question: String, schema: bool) -> bool {
    match engine.run_agent(judge_run(engine, &question, schema)).await {
        Ok(outcome) => outcome
            .answer
            .is_some_and(|answer| parse_answer(&answer).is_ok()),
        Err(_) => false,
    }
}

fn main() {
    let figures = Figures::new(
        "local_model",
        &[WITH.to_string(), WITHOUT.to_string(), REPAIR.to_string()],
    );
    let questions = figures::size(20, 2);
    let server = LlamaServer::start(4096);
    figures::runtime().block_on(async {
        let (_dir, engine) = engine(&server.base_url()).await;
        for (schema, name, goal) in [
            (true, WITH, Goal::AtLeast(95.0)),
            (false, WITHOUT, Goal::Shown),
        ] {
            let mut valid = 0;
            for i in 0..questions {
                if judge(&engine, question(i), schema).await {
                    valid += 1;
                }
            }
            figures.report(name, 100.0 * valid as f64 / questions as f64, "%", goal);
        }

        let work = tempfile::tempdir().expect("work");
        std::fs::write(work.path().join("report.py"), "total = rows['totl']\n").expect("script");
        let task = engine
            .start_task(TaskKind::Maintainer, "Fix report.py", None)
            .expect("task");
        let run = AgentRun {
            task_id: task.id,
            tier: Tier::Standard,
            system: "You repair scripts. Call a tool, or answer in one sentence when done."
                .to_string(),
            history: Vec::new(),
            messages: vec![ChatMessage::User {
                text: "report.py fails with KeyError: 'totl'. Fix it.".to_string(),
            }],
            tools: ToolSet::empty(),
            limits: None,
            max_tokens: None,
            task_tokens: None,
            inbox: None,
            temperature: Some(0.0),
            choice: None,
            answer_schema: None,
        };
        let started = Instant::now();
        let ended = engine.run_agent(run).await;
        let secs = started.elapsed().as_secs_f64();
        println!(
            "  (the fix request ended: {})",
            match &ended {
                Ok(outcome) => outcome.stop.describe().to_string(),
                Err(e) => e.to_string(),
            }
        );
        figures.report(REPAIR, secs, "s", Goal::Shown);
        engine.shutdown().await;
    });
}
