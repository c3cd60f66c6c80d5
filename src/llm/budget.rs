//! Budgets and caps. Before a call is made its most it could use (the prompt, estimated, plus
//! the most completion tokens it may write) is set against what the task and today have used.
//! When that would cross a cap, the completion allowance shrinks to fit; when even a small
//! answer would not fit, the call is not made and the error names the cap.

use serde::{Deserialize, Serialize};

use super::chat::Usage;
use super::provider::ModelPrice;
use crate::error::{BudgetCap, LlmError};

/// Below this many completion tokens an answer is not worth asking for.
pub const MIN_COMPLETION_TOKENS: u32 = 64;

/// The caps a person sets (settings key `llm.budgets`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct Budgets {
    /// The most completion tokens one call may write.
    pub max_tokens_per_call: u32,
    /// The most tokens one task may use, across its attempts.
    pub per_task_tokens: u64,
    /// The most tokens all tasks together may use in a day (local time).
    pub per_day_tokens: u64,
    /// The most a day's calls may cost, in US dollars (priced models only); none: no cap.
    pub per_day_cost_usd: Option<f64>,
}

impl Default for Budgets {
    fn default() -> Self {
        Budgets {
            max_tokens_per_call: 4_096,
            per_task_tokens: 60_000,
            per_day_tokens: 1_000_000,
            per_day_cost_usd: Some(5.0),
        }
    }
}

/// What has been used so far.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Spent {
    pub task_tokens: u64,
    pub day_tokens: u64,
    pub day_cost_usd: f64,
}

/// The cost of `usage` at `price`, in US dollars.
pub fn cost(usage: &Usage, price: &ModelPrice) -> f64 {
    let cached = usage.cached_tokens.min(usage.prompt_tokens) as f64;
    let fresh = usage.prompt_tokens as f64 - cached;
    let cached_price = price.cached_input_per_mtok.unwrap_or(price.input_per_mtok);
    (fresh * price.input_per_mtok
        + cached * cached_price
        + usage.completion_tokens as f64 * price.output_per_mtok)
        / 1_000_000.0
}

/// A rough count of the tokens `chars` characters of prompt make (about four per token).
pub fn estimate_tokens(chars: usize) -> u64 {
    (chars as u64).div_ceil(4)
}

/// The completion tokens a cap of `limit` leaves after `used` and a prompt of `prompt_estimate`;
/// `None` when not even a small answer fits.
pub fn room(limit: u64, used: u64, prompt_estimate: u64) -> Option<u64> {
    let room = limit.saturating_sub(used).saturating_sub(prompt_estimate);
    (room >= u64::from(MIN_COMPLETION_TOKENS)).then_some(room)
}

/// How many completion tokens the call may ask for: at most `wanted`, within every cap.
pub fn allowance(
    budgets: &Budgets,
    spent: Spent,
    prompt_estimate: u64,
    wanted: u32,
    price: Option<&ModelPrice>,
) -> Result<u32, LlmError> {
    let mut allowed = u64::from(wanted.min(budgets.max_tokens_per_call));
    let caps = [
        (BudgetCap::Task, budgets.per_task_tokens, spent.task_tokens),
        (
            BudgetCap::DayTokens,
            budgets.per_day_tokens,
            spent.day_tokens,
        ),
    ];
    for (cap, limit, used) in caps {
        let Some(room) = room(limit, used, prompt_estimate) else {
            return Err(LlmError::BudgetExceeded {
                cap,
                limit: format!("{limit} tokens"),
                used: format!("{used} tokens"),
                needed: format!(
                    "{} tokens",
                    prompt_estimate + u64::from(MIN_COMPLETION_TOKENS)
                ),
            });
        };
        allowed = allowed.min(room);
    }
    if let (Some(limit), Some(price)) = (budgets.per_day_cost_usd, price) {
        let prompt_cost = prompt_estimate as f64 * price.input_per_mtok / 1_000_000.0;
        let per_token = price.output_per_mtok / 1_000_000.0;
        let room = limit - spent.day_cost_usd - prompt_cost;
        let fits = if per_token > 0.0 {
            (room / per_token).floor()
        } else if room >= 0.0 {
            f64::MAX
        } else {
            0.0
        };
        if fits < f64::from(MIN_COMPLETION_TOKENS) {
            return Err(LlmError::BudgetExceeded {
                cap: BudgetCap::DayCost,
                limit: format!("${limit:.2}"),
                used: format!("${:.4}", spent.day_cost_usd),
                needed: format!(
                    "${:.4}",
                    prompt_cost + f64::from(MIN_COMPLETION_TOKENS) * per_token
                ),
            });
        }
        if fits < allowed as f64 {
            allowed = fits as u64;
        }
    }
    Ok(u32::try_from(allowed).unwrap_or(u32::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budgets() -> Budgets {
        Budgets {
            max_tokens_per_call: 1_000,
            per_task_tokens: 10_000,
            per_day_tokens: 50_000,
            per_day_cost_usd: Some(1.0),
        }
    }

    #[test]
    fn the_allowance_shrinks_to_fit_and_then_refuses_naming_the_cap() {
        let spent = Spent {
            task_tokens: 8_500,
            ..Spent::default()
        };
        assert_eq!(allowance(&budgets(), spent, 1_000, 4_000, None), Ok(500));
        let spent = Spent {
            task_tokens: 9_000,
            ..Spent::default()
        };
        let refused = allowance(&budgets(), spent, 990, 4_000, None);
        assert!(matches!(
            refused,
            Err(LlmError::BudgetExceeded {
                cap: BudgetCap::Task,
                ..
            })
        ));
        let spent = Spent {
            day_tokens: 50_000,
            ..Spent::default()
        };
        assert!(matches!(
            allowance(&budgets(), spent, 10, 100, None),
            Err(LlmError::BudgetExceeded {
                cap: BudgetCap::DayTokens,
                ..
            })
        ));
    }

    #[test]
    fn a_priced_model_is_held_to_the_daily_cost() {
        let price = ModelPrice {
            model: "m".to_string(),
            input_per_mtok: 3.0,
            output_per_mtok: 15.0,
            cached_input_per_mtok: Some(0.3),
        };
        let spent = Spent {
            day_cost_usd: 0.999,
            ..Spent::default()
        };
        assert!(matches!(
            allowance(&budgets(), spent, 100, 1_000, Some(&price)),
            Err(LlmError::BudgetExceeded {
                cap: BudgetCap::DayCost,
                ..
            })
        ));
        let usage = Usage {
            prompt_tokens: 1_000_000,
            completion_tokens: 100_000,
            cached_tokens: 500_000,
        };
        assert!((cost(&usage, &price) - (1.5 + 0.15 + 1.5)).abs() < 1e-9);
    }
}
