//! `healer tier …` and `healer usage`: which model each tier uses, and what they cost today.
//! Settings only, written to the store directly (a running engine notices).

use clap::Subcommand;
use healer::llm::{settings, steering_model, today, SteeringModelSetting, Tier, TierSetting};
use healer::{Error, Paths, Result};

use crate::print::print_json;
use crate::reach::open;

#[derive(Subcommand)]
pub enum TierCommand {
    /// Map a tier (cheap, standard, deep) to a provider and model
    Set {
        tier: String,
        provider: String,
        model: String,
        /// Tokens the model may write in one attempt (default: 5000 / 10000 / 20000)
        #[arg(long)]
        budget: Option<u32>,
        /// Sampling temperature, 0 to 2 (default: 0.1 for repairs, the provider's for chat)
        #[arg(long)]
        temperature: Option<f64>,
        /// Minutes one attempt may take, tools included (default: the loop's 10 minutes);
        /// for a model at home that answers slowly
        #[arg(long)]
        minutes: Option<u32>,
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
    /// The steering model: name one (PROVIDER MODEL), go back to the rule (--clear), or show
    /// what steering asks now. The rule: the named model, else the cheapest configured model
    /// by price, else none (only the free loop check runs)
    Steering {
        provider: Option<String>,
        model: Option<String>,
        #[arg(long)]
        clear: bool,
        #[arg(long)]
        json: bool,
    },
}

pub fn run(command: TierCommand, paths: &Paths) -> Result<bool> {
    let store = open(paths)?;
    match command {
        TierCommand::Set {
            tier,
            provider,
            model,
            budget,
            temperature,
            minutes,
            json,
        } => {
            let tier = parse_tier(&tier)?;
            let setting = TierSetting {
                tier,
                provider,
                model,
                budget_tokens: budget.unwrap_or(tier.default_budget()),
                temperature,
                minutes,
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
                "{} tier → {} / {} ({} tokens written per attempt)",
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
                    (Some(s), _) => format!(
                        "{} / {} ({} tokens written per attempt{})",
                        s.provider,
                        s.model,
                        s.budget_tokens,
                        s.temperature
                            .map(|t| format!(", temperature {t}"))
                            .unwrap_or_default()
                            + &s.minutes
                                .map(|m| format!(", at most {m} min per attempt"))
                                .unwrap_or_default()
                    ),
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
        TierCommand::Steering {
            provider,
            model,
            clear,
            json,
        } => {
            match (provider, model, clear) {
                (Some(provider), Some(model), false) => {
                    steering_model::set(&store, Some(&SteeringModelSetting { provider, model }))?
                }
                (None, None, true) => steering_model::set(&store, None)?,
                (None, None, false) => {}
                _ => {
                    return Err(Error::InvalidInput(
                        "name a provider and a model, or pass --clear alone".to_string(),
                    ))
                }
            }
            let view = steering_model::view(&store)?;
            if json {
                return print_json(&view);
            }
            println!("{}", view.summary);
            println!("{}", view.rule);
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

fn parse_tier(text: &str) -> Result<Tier> {
    Tier::parse(text).ok_or_else(|| {
        Error::InvalidInput(format!(
            "unknown tier \"{text}\": use cheap, standard or deep"
        ))
    })
}
