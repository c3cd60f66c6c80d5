//! Figures for the budgets (#15, item 2), printed: does a typical repair fit each tier's default
//! budget? A 150-line Python script that logs 400 lines and then fails on a KeyError is repaired
//! the way the maintainer must do it — one `eval`, one `fix`, one closing sentence — by the
//! real agent loop against the scripted model server, which reports usage measured from each
//! request and reply (about 4 characters a token). Each tier is mapped alone, at its default
//! budget, and asked for by the maintainer's first attempt.
//!
//! For each tier it prints every call's prompt and completion tokens, the totals, what the
//! budget counts (the completion tokens of one attempt), and whether the repair ended green.
//!
//! `cargo bench --bench repair_budget` (or `make bench`; `HEALER_BENCH_QUICK=1`: the first tier
//! only).

#[path = "figures.rs"]
mod figures;
#[path = "../tests/engine/model_server.rs"]
mod model_server;
#[path = "../tests/engine/typical_repair.rs"]
mod typical_repair;

use figures::{Figures, Goal};
use healer::engine::EngineOptions;
use healer::lease::Lease;
use healer::llm::{Keys, ProviderInput, ProviderKind, Tier, TierSetting};
use healer::maintainer::TIERS_BY_ATTEMPT;
use healer::workflow::{RunStatus, Runtime, Schedule, WorkflowInput};
use healer::{Engine, Paths};
use model_server::{openai, ModelServer, Reply, TOKENS};
use serde_json::json;

const KEY_VAR: &str = "HEALER_BENCH_BUDGET_KEY";
const KEY: &str = "sk-bench-budget";

fn main() {
    std::env::set_var(KEY_VAR, KEY);
    let runtime = figures::runtime();
    let (broken, fixed) = typical_repair::scripts();
    println!(
        "A typical repair on each tier's default budget: a {}-line script logging 400 lines, \
         one eval, one fix (usage measured at ~4 characters a token)",
        broken.lines().count()
    );
    println!("The budget counts the tokens the model writes in one attempt (completion tokens).");
    let tiers = &Tier::ALL[..figures::size(Tier::ALL.len(), 1)];
    let names: Vec<String> = tiers
        .iter()
        .flat_map(|t| [written(*t), completed(*t)])
        .collect();
    let figures = Figures::new("repair_budget", &names);
    for tier in tiers {
        runtime.block_on(repair(&figures, *tier, &broken, &fixed));
    }
}

fn written(tier: Tier) -> String {
    format!(
        "typical repair on the {} tier: tokens written",
        tier.as_str()
    )
}

fn completed(tier: Tier) -> String {
    format!(
        "typical repair on the {} tier: completed in its budget",
        tier.as_str()
    )
}

async fn repair(figures: &Figures, tier: Tier, broken: &str, fixed: &str) {
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
    let engine = Engine::start_with_lease(paths, "bench", lease, options)
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
    let budget = tier.default_budget();
    engine
        .set_tier(TierSetting {
            tier,
            provider: "scripted".to_string(),
            model: format!("scripted-{}", tier.as_str()),
            budget_tokens: budget,
            temperature: None,
            minutes: None,
        })
        .expect("tier");
    engine
        .store()
        .set_setting(TIERS_BY_ATTEMPT, &vec![tier])
        .expect("tiers");
    let workflow = engine
        .create_workflow(WorkflowInput {
            title: "Daily sales report".to_string(),
            runtime: Runtime::Python3,
            entry: None,
            schedule: Schedule::Manual,
            env: vec![],
            timeout_secs: 60,
            retry: None,
            code: broken.to_string(),
            summary: "Totals per region".to_string(),
        })
        .expect("workflow");
    let call = |name: &str, args: serde_json::Value| -> Reply {
        openai::tool_calls(&[("call_1", name, &args.to_string())], TOKENS)
    };
    server.script([
        call("eval", json!({"code": fixed})),
        call(
            "fix",
            json!({"code": fixed, "comment": "The export calls the sales figure amount now"}),
        ),
        openai::text(
            "The export renamed total to amount; the report reads amount now.",
            TOKENS,
        ),
    ]);
    let healed = engine.run_until_healed(workflow.id).await.expect("healed");
    let chats = server.chats();
    let reported = server.reported();
    println!();
    println!(
        "{} tier (budget {budget} tokens written per attempt):",
        tier.as_str()
    );
    for (i, seen) in chats.iter().enumerate() {
        let t = seen.reported.unwrap_or_default();
        println!(
            "  call {}: prompt {:>6}  completion {:>5}",
            i + 1,
            t.prompt,
            t.completion
        );
    }
    let green = healed.last.status == RunStatus::Succeeded;
    let caps = healer::llm::Budgets::default();
    let daily = healer::breakers::BreakerSettings::default().daily_healing_tokens;
    println!(
        "  total: prompt {} + completion {} = {} tokens; written {} of {budget} ({:.0} %)",
        reported.prompt,
        reported.completion,
        reported.total(),
        reported.completion,
        reported.completion as f64 * 100.0 / f64::from(budget)
    );
    println!(
        "  read and written: {} of the per-task cap {}; {} such repairs fit a workflow's daily \
         healing allowance ({daily})",
        reported.total(),
        caps.per_task_tokens,
        u64::from(daily) / reported.total().max(1)
    );
    println!("  {}", healed.outcome);
    figures.report(
        &written(tier),
        reported.completion as f64,
        "tokens",
        Goal::AtMost(f64::from(budget)),
    );
    figures.report(&completed(tier), f64::from(u8::from(green)), "", Goal::Yes);
    engine.shutdown().await;
}
