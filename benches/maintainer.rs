//! Figure for the maintainer issue: from a run's failure to the maintainer's first model
//! request, excluding the model's own time (target: p90 ≤ 10 ms).
//!
//! Each round is a failure Healer repairs: a new workflow whose Python script fails on a
//! KeyError of its own (a key no other round uses, so a new error signature), run in an engine
//! with its scheduler and inbox worker, as in the app. A repair that gave up holds later
//! failures of the same error on the same workflow, so reusing one workflow would measure
//! nothing after the first round. The clock starts when the run is recorded as failed (its
//! `run_finished` event's time) and stops when the scripted model server on 127.0.0.1 receives
//! the maintainer's first request: the failure pipeline, entering maintenance in its
//! transaction, the inbox hand-off, rebuilding the context from the run, and the HTTP request.
//! The model then gives up at once, so each round ends in escalation.
//!
//! `cargo bench --bench maintainer` (or `make bench`; `HEALER_BENCH_QUICK=1`: one round).

#[path = "figures.rs"]
mod figures;
#[path = "../tests/engine/model_server.rs"]
mod model_server;

use std::time::{Duration, Instant, SystemTime};

use figures::{Figures, Goal};
use healer::engine::EngineOptions;
use healer::events::Event;
use healer::lease::Lease;
use healer::llm::{Keys, ProviderInput, ProviderKind, Tier, TierSetting};
use healer::workflow::{RetryPolicy, Runtime, Schedule, WorkflowInput};
use healer::{Engine, Paths};
use model_server::{openai, ModelServer, TOKENS};

const ROUNDS: usize = 30;
const FIGURES: [&str; 3] = ["p50", "p90", "max"];
const KEY_VAR: &str = "HEALER_BENCH_KEY";
const KEY: &str = "sk-bench";

fn main() {
    // Before any thread exists: the provider's key is read from here.
    std::env::set_var(KEY_VAR, KEY);
    let runtime = figures::runtime();
    runtime.block_on(bench());
}

async fn bench() {
    let rounds = figures::size(ROUNDS, 1);
    let figures = Figures::new(
        "maintainer",
        &FIGURES.map(|f| format!("failure → maintainer's first request, {f}")),
    );
    let server = ModelServer::start(Some(KEY));
    let dir = tempfile::tempdir().expect("tmp");
    let paths = Paths::new(dir.path().join("data"));
    paths.ensure().expect("data dir");
    let lease = Lease::acquire(&paths, "bench").expect("lease");
    let options = EngineOptions {
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
            tier: Tier::Cheap,
            provider: "scripted".to_string(),
            model: "scripted-small".to_string(),
            budget_tokens: 1_000_000,
            temperature: None,
            minutes: None,
        })
        .expect("tier");
    // The server's Instants, read as wall-clock times.
    let anchor = (Instant::now(), SystemTime::now());
    let wall = |at: Instant| anchor.1 + at.duration_since(anchor.0);

    let mut latencies = Vec::new();
    // One warm-up round, not counted.
    for round in 0..=rounds {
        let key = key(round);
        let workflow = engine
            .create_workflow(WorkflowInput {
                title: format!("Sales total {key}"),
                runtime: Runtime::Python3,
                entry: None,
                schedule: Schedule::Manual,
                env: vec![],
                timeout_secs: 30,
                retry: Some(RetryPolicy::default()),
                code: format!("data = {{'totl': 3}}\nprint(data['{key}'])\n"),
                summary: "Prints the sales total".to_string(),
            })
            .expect("workflow");
        server.script([openai::text("No fix for this one.", TOKENS)]);
        let mut events = engine.subscribe();
        engine.run_now(workflow.id).expect("run");
        let mut failed_at = None;
        loop {
            let record = tokio::time::timeout(Duration::from_secs(60), events.recv())
                .await
                .expect("an event in time")
                .expect("event");
            match record.event {
                Event::RunFinished { .. } => {
                    let at = chrono::DateTime::parse_from_rfc3339(&record.at).expect("time");
                    failed_at = Some(SystemTime::from(at));
                }
                Event::MaintenanceFinished { workflow_id, .. } if workflow_id == workflow.id => {
                    break
                }
                _ => {}
            }
        }
        let request = server.chats().last().expect("a model request").at;
        let failed = failed_at.expect("the run finished");
        let took = wall(request).duration_since(failed).unwrap_or_default();
        if round > 0 {
            latencies.push(took);
        }
    }
    engine.shutdown().await;

    latencies.sort();
    let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q).round() as usize];
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!("Maintainer start: run failure → first model request ({rounds} rounds, a new failure each, scripted model on 127.0.0.1; times are read to the millisecond)");
    for (name, q) in FIGURES.iter().zip([0.5, 0.9, 1.0]) {
        // The goal is set on p90; p50 and max are shown beside it.
        let goal = if *name == "p90" {
            Goal::AtMost(10.0)
        } else {
            Goal::Shown
        };
        figures.report(
            &format!("failure → maintainer's first request, {name}"),
            ms(at(q)),
            "ms",
            goal,
        );
    }
}

/// A key name of letters only, different for every round: numbers in an error message are
/// normalised away before signing, letters are not.
fn key(round: usize) -> String {
    let mut n = round;
    let mut name = String::from("total_");
    loop {
        name.push(char::from(b'a' + (n % 26) as u8));
        n /= 26;
        if n == 0 {
            return name;
        }
    }
}
