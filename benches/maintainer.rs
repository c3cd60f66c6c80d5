//! Figure for the maintainer issue, printed (not asserted): from a run's failure to the
//! maintainer's first model request, excluding the model's own time (target: p50 ≤ 50 ms).
//!
//! A workflow whose Python script fails on a KeyError runs ROUNDS times in an engine with its
//! scheduler and inbox worker, as in the app. The clock starts when the run is recorded as
//! failed (its `run_finished` event's time) and stops when the scripted model server on
//! 127.0.0.1 receives the maintainer's first request: the failure pipeline, entering
//! maintenance in its transaction, the inbox hand-off, rebuilding the context from the run,
//! and the HTTP request. The model then gives up at once, so each round ends in escalation and
//! the next starts clean.
//!
//! `cargo bench --bench maintainer` (or `make bench`).

#[path = "../tests/engine/model_server.rs"]
mod model_server;

use std::time::{Duration, Instant, SystemTime};

use healer::engine::EngineOptions;
use healer::events::Event;
use healer::lease::Lease;
use healer::llm::{Keys, ProviderInput, ProviderKind, Tier, TierSetting};
use healer::workflow::{RetryPolicy, Runtime, Schedule, WorkflowInput};
use healer::{Engine, Paths};
use model_server::{openai, ModelServer, TOKENS};

const ROUNDS: usize = 30;
const KEY_VAR: &str = "HEALER_BENCH_KEY";
const KEY: &str = "sk-bench";

fn main() {
    // Before any thread exists: the provider's key is read from here.
    std::env::set_var(KEY_VAR, KEY);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(bench());
}

async fn bench() {
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
        })
        .expect("tier");
    let workflow = engine
        .create_workflow(WorkflowInput {
            title: "Sales total".to_string(),
            runtime: Runtime::Python3,
            entry: None,
            schedule: Schedule::Manual,
            env: vec![],
            timeout_secs: 30,
            retry: Some(RetryPolicy::default()),
            code: "data = {'totl': 3}\nprint(data['total'])\n".to_string(),
            summary: "Prints the sales total".to_string(),
        })
        .expect("workflow");

    // The server's Instants, read as wall-clock times.
    let anchor = (Instant::now(), SystemTime::now());
    let wall = |at: Instant| anchor.1 + at.duration_since(anchor.0);

    let mut latencies = Vec::new();
    // One warm-up round, not counted.
    for round in 0..=ROUNDS {
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
                Event::MaintenanceFinished { .. } => break,
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
    println!("Maintainer start: run failure → first model request ({ROUNDS} rounds, scripted model on 127.0.0.1)");
    println!(
        "  p50 {:.1} ms   p90 {:.1} ms   max {:.1} ms   (target: p50 ≤ 50 ms; times are read to the millisecond)",
        ms(at(0.5)),
        ms(at(0.9)),
        ms(at(1.0))
    );
}
