//! The model layer's settings, read and written on a [`Store`] so that the CLI (which may
//! write settings directly) and the engine share one path. Each bound is a named setting with
//! a default: `llm.budgets`, `llm.retry`, `llm.loop`.

use crate::error::{Error, Result};
use crate::store::Store;

use super::agent_run::LoopSettings;
use super::budget::Budgets;
use super::http::RetrySettings;
use super::provider::{check_input, Provider, ProviderInput};
use super::tiers::{self, Tier, TierView};
use super::usage::UsageReport;

pub const BUDGETS_KEY: &str = "llm.budgets";
pub const RETRY_KEY: &str = "llm.retry";
pub const LOOP_KEY: &str = "llm.loop";

pub fn budgets(store: &Store) -> Result<Budgets> {
    Ok(store.setting(BUDGETS_KEY)?.unwrap_or_default())
}

pub fn set_budgets(store: &Store, budgets: &Budgets) -> Result<()> {
    if budgets.max_tokens_per_call == 0
        || budgets.per_task_tokens == 0
        || budgets.per_day_tokens == 0
    {
        return Err(Error::InvalidInput(
            "token caps must be more than zero".to_string(),
        ));
    }
    // A task cap below one call's would stop every task at its first call.
    if budgets.per_task_tokens < u64::from(budgets.max_tokens_per_call) {
        return Err(Error::InvalidInput(format!(
            "a task may use at most {} tokens, less than one call may write ({}): raise the task's \
             cap, or lower the call's",
            budgets.per_task_tokens, budgets.max_tokens_per_call
        )));
    }
    if budgets
        .per_day_cost_usd
        .is_some_and(|c| !c.is_finite() || c < 0.0)
    {
        return Err(Error::InvalidInput(
            "the daily cost cap must be zero or more".to_string(),
        ));
    }
    store.set_setting(BUDGETS_KEY, budgets)
}

pub fn retry(store: &Store) -> Result<RetrySettings> {
    Ok(store.setting(RETRY_KEY)?.unwrap_or_default())
}

pub fn loop_settings(store: &Store) -> Result<LoopSettings> {
    Ok(store.setting(LOOP_KEY)?.unwrap_or_default())
}

/// Check and save a provider.
pub fn save_provider(store: &Store, input: &ProviderInput) -> Result<Provider> {
    let problems = check_input(input);
    if !problems.is_empty() {
        return Err(Error::InvalidInput(problems.join("; ")));
    }
    store.save_provider(input)
}

pub fn remove_provider(store: &Store, name: &str) -> Result<()> {
    if store.delete_provider(name)? {
        Ok(())
    } else {
        Err(Error::NotFound {
            what: format!("provider \"{name}\""),
        })
    }
}

/// Each tier: its mapping, and what a call for it uses now.
pub fn tier_views(store: &Store) -> Result<Vec<TierView>> {
    let settings = store.tier_settings()?;
    let providers = store.list_providers()?;
    Ok(Tier::ALL
        .into_iter()
        .map(|tier| TierView {
            tier,
            setting: settings.iter().find(|s| s.tier == tier).cloned(),
            default_budget: tier.default_budget(),
            resolves_to: tiers::resolve(tier, &settings, &providers).ok(),
        })
        .collect())
}

pub fn usage_report(store: &Store, day: &str) -> Result<UsageReport> {
    Ok(UsageReport {
        day: day.to_string(),
        total: store.day_usage(day)?,
        by_tier: store.day_usage_by_tier(day)?,
        budgets: budgets(store)?,
    })
}
