//! `healer provider …`, `healer tier …`, `healer usage`, `healer task …`: the model layer's
//! commands. They only write settings, so they write the store directly (a running engine
//! notices). A key is never an argument: it comes from the provider's environment variable or
//! the OS keyring (`healer provider set-key NAME` reads it from standard input).

use std::io::Read;
use std::path::PathBuf;

use clap::Subcommand;
use healer::events::Bus;
use healer::llm::{
    self, settings, today, ApiKey, Keys, Llm, ModelPrice, ProviderInput, ProviderKind, Tier,
    TierSetting,
};
use healer::store::Store;
use healer::{Error, Paths, Result};

use crate::cli::{open, print_json};

#[derive(Subcommand)]
pub enum ProviderCommand {
    /// Add a provider, or change the one with that name
    Add {
        name: String,
        /// openai-compatible (OpenAI, OpenRouter, vLLM, LM Studio, llama.cpp), anthropic, ollama
        #[arg(long)]
        kind: String,
        /// e.g. https://api.openai.com/v1, https://api.anthropic.com, http://127.0.0.1:11434
        #[arg(long)]
        base_url: Option<String>,
        /// The environment variable holding the key when the keyring has none
        /// (default: OPENAI_API_KEY or ANTHROPIC_API_KEY)
        #[arg(long, value_name = "VAR")]
        key_env: Option<String>,
        /// A model's price in US dollars per million tokens: MODEL=INPUT,OUTPUT[,CACHED];
        /// repeatable
        #[arg(long = "price", value_name = "MODEL=IN,OUT[,CACHED]")]
        prices: Vec<String>,
        #[arg(long)]
        json: bool,
    },
    /// List providers and where each one's key comes from
    List {
        #[arg(long)]
        json: bool,
    },
    /// Ask a provider for its models; exit 1 with the exact error when it fails
    Test {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// Remove a provider, its tier mappings and its key in the keyring
    Remove {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// Keep a provider's key in the OS keyring, read from standard input (never an argument)
    SetKey { name: String },
    /// Look for a local Ollama server and list its models
    DetectOllama {
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
pub enum TierCommand {
    /// Map a tier (cheap, standard, deep) to a provider and model
    Set {
        tier: String,
        provider: String,
        model: String,
        /// Tokens one attempt may use (default: 5000 / 10000 / 20000)
        #[arg(long)]
        budget: Option<u32>,
        #[arg(long)]
        json: bool,
    },
    /// Each tier's mapping, and what it falls back to when unmapped
    List {
        #[arg(long)]
        json: bool,
    },
    /// Unmap a tier (calls for it fall back to the nearest mapped one)
    Clear { tier: String },
}

#[derive(Subcommand)]
pub enum TaskCommand {
    /// The newest tasks (with --workflow: that workflow's auto-fix tasks)
    List {
        #[arg(long, default_value_t = 20)]
        limit: u32,
        /// Only this workflow's auto-fix tasks
        #[arg(long, value_name = "NAME")]
        workflow: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// A task's thread, step by step
    Show {
        id: i64,
        #[arg(long)]
        json: bool,
    },
    /// Write the task's thread as an ATIF-v1.7 trajectory (to standard output, or --out)
    ExportAtif {
        id: i64,
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
}

pub async fn provider(command: ProviderCommand, paths: &Paths) -> Result<bool> {
    let store = open(paths)?;
    match command {
        ProviderCommand::Add {
            name,
            kind,
            base_url,
            key_env,
            prices,
            json,
        } => {
            let kind = ProviderKind::parse(&kind).ok_or_else(|| {
                Error::InvalidInput(format!(
                    "unknown kind \"{kind}\": use openai-compatible, anthropic or ollama"
                ))
            })?;
            let input = ProviderInput {
                name,
                kind,
                base_url,
                key_env,
                prices: prices
                    .iter()
                    .map(|p| parse_price(p))
                    .collect::<Result<_>>()?,
            };
            let provider = settings::save_provider(&store, &input)?;
            let view = llm_for(&store).providers().await?;
            let shown = view.into_iter().find(|v| v.provider.name == provider.name);
            if json {
                return print_json(&shown);
            }
            if let Some(v) = shown {
                println!(
                    "Saved provider \"{}\" ({}, {}): {}",
                    v.provider.name,
                    v.provider.kind.as_str(),
                    v.provider.base_url,
                    v.key_text
                );
            }
            Ok(true)
        }
        ProviderCommand::List { json } => {
            let views = llm_for(&store).providers().await?;
            if json {
                return print_json(&views);
            }
            if views.is_empty() {
                println!("No providers yet. Add one with `healer provider add`.");
            }
            for v in &views {
                println!(
                    "{:<20} {:<18} {:<40} {}",
                    v.provider.name,
                    v.provider.kind.as_str(),
                    v.provider.base_url,
                    v.key_text
                );
            }
            Ok(true)
        }
        ProviderCommand::Test { name, json } => {
            let test = llm_for(&store).test_provider(&name).await?;
            if json {
                print_json(&test)?;
                return Ok(test.ok);
            }
            match &test.error {
                None => {
                    println!(
                        "{}: connected ({}), {} model(s):",
                        test.provider,
                        test.key.describe(),
                        test.models.len()
                    );
                    for model in &test.models {
                        println!("  {model}");
                    }
                }
                Some(error) => println!("{}: {}", test.provider, error.message),
            }
            Ok(test.ok)
        }
        ProviderCommand::Remove { name, json } => {
            settings::remove_provider(&store, &name)?;
            if let Err(e) = Keys::from_env().forget(&name) {
                eprintln!("healer: the keyring entry could not be removed: {e}");
            }
            if json {
                return print_json(&serde_json::json!({"removed": name}));
            }
            println!("Removed provider \"{name}\" and the tiers that used it.");
            Ok(true)
        }
        ProviderCommand::SetKey { name } => {
            store.provider(&name)?;
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| Error::io("cannot read the key from standard input", e))?;
            let key = ApiKey::new(text);
            if key.expose().is_empty() {
                return Err(Error::InvalidInput(
                    "no key on standard input: pipe it in, e.g. `healer provider set-key NAME < keyfile`"
                        .to_string(),
                ));
            }
            Keys::from_env().store(&name, &key)?;
            println!("Kept the key of \"{name}\" in the OS keyring.");
            Ok(true)
        }
        ProviderCommand::DetectOllama { json } => {
            let status = llm_for(&store).detect_ollama().await?;
            if json {
                print_json(&status)?;
            } else if status.running {
                println!(
                    "Ollama at {}: {} model(s)",
                    status.base_url,
                    status.models.len()
                );
                for model in &status.models {
                    println!("  {model}");
                }
            } else {
                println!(
                    "No Ollama: {}",
                    status.detail.as_deref().unwrap_or("no answer")
                );
            }
            Ok(status.running)
        }
    }
}

pub fn tier(command: TierCommand, paths: &Paths) -> Result<bool> {
    let store = open(paths)?;
    match command {
        TierCommand::Set {
            tier,
            provider,
            model,
            budget,
            json,
        } => {
            let tier = parse_tier(&tier)?;
            let setting = TierSetting {
                tier,
                provider,
                model,
                budget_tokens: budget.unwrap_or(tier.default_budget()),
            };
            if setting.budget_tokens == 0 {
                return Err(Error::InvalidInput(
                    "the budget must be more than zero".to_string(),
                ));
            }
            store.set_tier(&setting)?;
            if json {
                return print_json(&setting);
            }
            println!(
                "{} tier → {} / {} ({} tokens per attempt)",
                tier.as_str(),
                setting.provider,
                setting.model,
                setting.budget_tokens
            );
            Ok(true)
        }
        TierCommand::List { json } => {
            let views = settings::tier_views(&store)?;
            if json {
                return print_json(&views);
            }
            for v in &views {
                let line = match (&v.setting, &v.resolves_to) {
                    (Some(s), _) => {
                        format!("{} / {} ({} tokens)", s.provider, s.model, s.budget_tokens)
                    }
                    (None, Some(choice)) => format!(
                        "not set: falls back to {} ({} / {})",
                        choice.used.as_str(),
                        choice.provider.name,
                        choice.model
                    ),
                    (None, None) => "not set".to_string(),
                };
                println!("{:<9} {line}", v.tier.as_str());
            }
            Ok(true)
        }
        TierCommand::Clear { tier } => {
            let tier = parse_tier(&tier)?;
            store.clear_tier(tier)?;
            println!("{} tier unmapped.", tier.as_str());
            Ok(true)
        }
    }
}

pub fn usage(paths: &Paths, json: bool) -> Result<bool> {
    let store = open(paths)?;
    let report = settings::usage_report(&store, &today())?;
    if json {
        return print_json(&report);
    }
    let b = &report.budgets;
    println!("Model usage on {}", report.day);
    println!(
        "  {} call(s), {} tokens ({} prompt, {} cached, {} completion) of {} a day",
        report.total.calls,
        report.total.tokens(),
        report.total.prompt_tokens,
        report.total.cached_tokens,
        report.total.completion_tokens,
        b.per_day_tokens
    );
    let cap = b
        .per_day_cost_usd
        .map(|c| format!(" of ${c:.2} a day"))
        .unwrap_or_default();
    println!("  cost ${:.4}{cap}", report.total.cost_usd);
    if report.total.unpriced_calls > 0 {
        println!(
            "  ({} call(s) to models with no price are not in the cost)",
            report.total.unpriced_calls
        );
    }
    for t in &report.by_tier {
        println!(
            "  {:<9} {} call(s), {} tokens, ${:.4}",
            t.tier.as_str(),
            t.totals.calls,
            t.totals.tokens(),
            t.totals.cost_usd
        );
    }
    Ok(true)
}

pub fn task(command: TaskCommand, paths: &Paths) -> Result<bool> {
    let store = open(paths)?;
    match command {
        TaskCommand::List {
            limit,
            workflow: Some(name),
            json,
        } => crate::heal_cli::workflow_tasks(paths, &name, limit, json),
        TaskCommand::List { limit, json, .. } => {
            let tasks = store.list_tasks(limit)?;
            if json {
                return print_json(&tasks);
            }
            if tasks.is_empty() {
                println!("No tasks yet.");
            }
            for t in &tasks {
                println!(
                    "#{:<5} {:<11} {:<11} {}  {}",
                    t.id,
                    t.kind.as_str(),
                    t.status.as_str(),
                    t.title,
                    t.summary
                );
            }
            Ok(true)
        }
        TaskCommand::Show { id, json } => {
            let thread = store.thread(id)?;
            if json {
                return print_json(&thread);
            }
            println!(
                "Task {} ({}, {}): {}",
                thread.task.id,
                thread.task.kind.as_str(),
                thread.task.status.as_str(),
                thread.task.title
            );
            for m in &thread.messages {
                crate::heal_cli::print_message(m);
            }
            if !thread.task.summary.is_empty() {
                println!("  → {}", thread.task.summary);
            }
            Ok(true)
        }
        TaskCommand::ExportAtif { id, out } => {
            let text = llm::atif::export(&store, id)?;
            match out {
                Some(path) => {
                    std::fs::write(&path, format!("{text}\n"))
                        .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))?;
                    eprintln!("Wrote the trajectory of task {id} to {}", path.display());
                }
                None => println!("{text}"),
            }
            Ok(true)
        }
    }
}

fn llm_for(store: &Store) -> Llm {
    Llm::new(store.clone(), Bus::new(store.clone()))
}

fn parse_tier(text: &str) -> Result<Tier> {
    Tier::parse(text).ok_or_else(|| {
        Error::InvalidInput(format!(
            "unknown tier \"{text}\": use cheap, standard or deep"
        ))
    })
}

/// "gpt-4o-mini=0.15,0.6[,0.075]" (US dollars per million tokens).
fn parse_price(text: &str) -> Result<ModelPrice> {
    let bad = || {
        Error::InvalidInput(format!(
            "price \"{text}\" is not MODEL=INPUT,OUTPUT[,CACHED] (dollars per million tokens)"
        ))
    };
    let (model, numbers) = text.split_once('=').ok_or_else(bad)?;
    let numbers: Vec<f64> = numbers
        .split(',')
        .map(|n| n.trim().parse::<f64>().map_err(|_| bad()))
        .collect::<Result<_>>()?;
    match numbers.as_slice() {
        [input, output] | [input, output, _] if !model.trim().is_empty() => Ok(ModelPrice {
            model: model.trim().to_string(),
            input_per_mtok: *input,
            output_per_mtok: *output,
            cached_input_per_mtok: numbers.get(2).copied(),
        }),
        _ => Err(bad()),
    }
}
