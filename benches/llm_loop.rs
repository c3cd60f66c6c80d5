//! Figure for the model-layer issue, printed (not asserted): the overhead of the agent loop
//! itself per step, beyond the HTTP round trip, against a scripted OpenAI-compatible server on
//! 127.0.0.1 (target: under 2 ms).
//!
//! The loop runs RUNS times with STEPS steps each (a tool call per step, then an answer); every
//! request it sent is then replayed with a bare reqwest client against the same scripted
//! replies. Overhead per step = (loop time − bare round trips) / steps: building the request,
//! parsing the stream, checking tool arguments against their schemas, running the (no-op)
//! tool, the budget check, and the SQLite writes and events of the thread.
//!
//! `cargo bench --bench llm_loop` (or `make bench`; `HEALER_BENCH_QUICK=1`: one run).

#[path = "figures.rs"]
mod figures;
#[path = "../tests/engine/model_server.rs"]
mod model_server;

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use figures::{Figures, Goal};
use healer::engine::EngineOptions;
use healer::lease::Lease;
use healer::llm::{
    AgentRun, ChatMessage, Keys, LoopSettings, ProviderInput, ProviderKind, StopReason, TaskKind,
    Tier, TierSetting, Tool, ToolSet,
};
use healer::{Engine, Paths};
use model_server::{openai, ModelServer, Reply, TOKENS};
use serde_json::{json, Value};

const FIGURE: &str = "agent loop overhead per step beyond HTTP";
const STEPS: usize = 10;
const KEY_VAR: &str = "HEALER_BENCH_KEY";
const KEY: &str = "sk-bench";

struct Note;

#[async_trait]
impl Tool for Note {
    fn name(&self) -> &str {
        "note"
    }
    fn description(&self) -> &str {
        "Write down an observation"
    }
    fn schema(&self) -> Value {
        json!({"type": "object", "properties": {"text": {"type": "string", "maxLength": 500},
               "line": {"type": "integer", "minimum": 1}},
               "required": ["text"], "additionalProperties": false})
    }
    async fn call(&self, args: Value) -> healer::Result<String> {
        Ok(format!(
            "noted: {}",
            args["text"].as_str().unwrap_or_default()
        ))
    }
}

fn replies(runs: usize) -> Vec<Reply> {
    let mut replies = Vec::new();
    for _ in 0..runs {
        for step in 1..STEPS {
            let args = format!(
                r#"{{"text": "line {step} reads rows['totl'], a typo of total", "line": {step}}}"#
            );
            replies.push(openai::tool_calls(
                &[(&format!("call_{step}"), "note", &args)],
                TOKENS,
            ));
        }
        replies.push(openai::text(
            "The script reads rows['totl']; it should read rows['total'].",
            TOKENS,
        ));
    }
    replies
}

fn main() {
    // Before any thread exists: the provider's key is read from here.
    std::env::set_var(KEY_VAR, KEY);
    let runtime = figures::runtime();
    runtime.block_on(bench());
}

async fn bench() {
    let report = Figures::new("llm_loop", &[FIGURE.to_string()]);
    let runs = figures::size(20, 1);
    let server = ModelServer::start(Some(KEY));
    let dir = tempfile::tempdir().expect("tmp");
    let paths = Paths::new(dir.path().join("data"));
    paths.ensure().expect("data dir");
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
            model: "scripted-large".to_string(),
            budget_tokens: 1_000_000,
            temperature: None,
            minutes: None,
        })
        .expect("tier");
    let tools = || ToolSet::new(vec![Arc::new(Note)]).expect("tools");

    // Warm up: the HTTP connection, SQLite pages, the code paths.
    server.script(replies(1));
    run_once(&engine, tools()).await;
    let warm = server.chats().len();

    server.script(replies(runs));
    let mut loop_time = Duration::ZERO;
    let mut per_step = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        run_once(&engine, tools()).await;
        let took = t.elapsed();
        loop_time += took;
        per_step.push(took / STEPS as u32);
    }
    let requests: Vec<Value> = server
        .chats()
        .into_iter()
        .skip(warm)
        .map(|s| s.body)
        .collect();
    assert_eq!(requests.len(), runs * STEPS);

    // The same requests and the same replies, with nothing but HTTP.
    server.script(replies(runs));
    let http = reqwest::Client::new();
    let url = format!("{}/v1/chat/completions", server.url);
    let mut bare_time = Duration::ZERO;
    let mut bare = Vec::new();
    for body in &requests {
        let t = Instant::now();
        let mut response = http
            .post(&url)
            .bearer_auth(KEY)
            .json(body)
            .send()
            .await
            .expect("send");
        while let Some(_chunk) = response.chunk().await.expect("chunk") {}
        let took = t.elapsed();
        bare_time += took;
        bare.push(took);
    }
    engine.shutdown().await;

    let steps = (runs * STEPS) as f64;
    let overhead = (ms(loop_time) - ms(bare_time)) / steps;
    println!(
        "Healer agent-loop figures (this machine: {} cores)",
        cores()
    );
    println!(
        "\nLoop overhead per step, beyond the HTTP round trip ({runs} runs × {STEPS} steps, scripted OpenAI-compatible server on 127.0.0.1)"
    );
    println!(
        "   one step through the loop: {:>7.3} ms median ({:.3} ms mean)",
        ms(median(&mut per_step)),
        ms(loop_time) / steps
    );
    println!(
        "   bare HTTP round trip:      {:>7.3} ms median ({:.3} ms mean)",
        ms(median(&mut bare)),
        ms(bare_time) / steps
    );
    report.report(FIGURE, overhead, "ms", Goal::AtMost(2.0));
}

async fn run_once(engine: &Engine, tools: ToolSet) {
    let task = engine
        .start_task(TaskKind::Analyzer, "Bench", None)
        .expect("task");
    let outcome = engine
        .run_agent(AgentRun {
            task_id: task.id,
            tier: Tier::Standard,
            system: "You look at scripts and note what is wrong.".to_string(),
            history: Vec::new(),
            messages: vec![ChatMessage::User {
                text: "report.py fails with KeyError: 'totl'.".to_string(),
            }],
            tools,
            limits: Some(LoopSettings {
                max_steps: STEPS as u32 + 1,
                ..LoopSettings::default()
            }),
            max_tokens: None,
            task_tokens: None,
            inbox: None,
            temperature: None,
            choice: None,
            answer_schema: None,
        })
        .await
        .expect("loop");
    assert_eq!(outcome.stop, StopReason::Answered);
    assert_eq!(outcome.steps, STEPS as u32);
}

fn median(values: &mut [Duration]) -> Duration {
    values.sort();
    values.get(values.len() / 2).copied().unwrap_or_default()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn cores() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}
