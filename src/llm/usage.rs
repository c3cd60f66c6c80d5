//! What model calls used: one record per call, summed per task and per day (local time, the
//! daily caps' day), with cost when the model is priced.

use serde::{Deserialize, Serialize};

use super::budget::Budgets;
use super::chat::Usage;
use super::tiers::Tier;

/// One call's usage, as recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct UsageRecord {
    pub task_id: Option<i64>,
    pub tier: Tier,
    pub provider: String,
    pub model: String,
    pub usage: Usage,
    pub cost_usd: Option<f64>,
    /// The provider is a server at home (its cost is time, not money).
    pub local: bool,
    /// How long the call was waited for.
    pub duration_ms: u64,
}

/// Sums over some calls.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct UsageTotals {
    pub calls: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cached_tokens: u64,
    /// Of the priced calls only.
    pub cost_usd: f64,
    /// Calls to models with no price (their cost is not in `cost_usd`).
    pub unpriced_calls: u64,
    /// Calls to servers at home: they cost time, not money.
    pub local_calls: u64,
    /// The seconds those calls were waited for.
    pub local_secs: u64,
}

impl UsageTotals {
    pub fn tokens(&self) -> u64 {
        self.prompt_tokens.saturating_add(self.completion_tokens)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct TierUsage {
    pub tier: Tier,
    pub totals: UsageTotals,
}

/// A day's usage and cost, per tier, with the caps it counts against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct UsageReport {
    /// YYYY-MM-DD, local time.
    pub day: String,
    pub total: UsageTotals,
    pub by_tier: Vec<TierUsage>,
    pub budgets: Budgets,
}

/// Today, as the daily caps count it.
pub fn today() -> String {
    chrono::Local::now().format("%Y-%m-%d").to_string()
}
