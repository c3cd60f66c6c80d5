//! Tiers: callers ask for cheap, standard or deep work, never for a model. Settings map each
//! tier to a provider, a model and a token budget per attempt. A tier that is not mapped falls
//! back to the nearest one that is (on a tie, the more capable), and says so.

use serde::{Deserialize, Serialize};

use super::provider::Provider;
use crate::error::LlmError;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, specta::Type,
)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    Cheap,
    Standard,
    Deep,
}

impl Tier {
    pub const ALL: [Tier; 3] = [Tier::Cheap, Tier::Standard, Tier::Deep];

    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Cheap => "cheap",
            Tier::Standard => "standard",
            Tier::Deep => "deep",
        }
    }

    pub fn parse(s: &str) -> Option<Tier> {
        Tier::ALL
            .into_iter()
            .find(|t| t.as_str() == s.trim().to_ascii_lowercase())
    }

    /// The token budget per attempt when the person set none: completion tokens, what the
    /// model writes in one attempt (a typical repair — eval, fix, a closing sentence — of a
    /// 150-line script writes about 3,400; `make bench` shows it).
    pub fn default_budget(self) -> u32 {
        match self {
            Tier::Cheap => 5_000,
            Tier::Standard => 10_000,
            Tier::Deep => 20_000,
        }
    }

    pub(crate) fn rank(self) -> i32 {
        match self {
            Tier::Cheap => 0,
            Tier::Standard => 1,
            Tier::Deep => 2,
        }
    }
}

/// A tier as mapped in Settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct TierSetting {
    pub tier: Tier,
    pub provider: String,
    pub model: String,
    /// Tokens the model may write in one attempt (completion tokens, summed over its calls).
    /// What it reads is held by the per-task cap (`llm.budgets`), not by this.
    pub budget_tokens: u32,
    /// Sampling temperature for this tier's calls; `None`: the caller's default (0.1 for
    /// repairs and analyses, the provider's own for the planner's chat).
    #[serde(default)]
    pub temperature: Option<f64>,
    /// The minutes one attempt may take, tools included: a model at home may answer at a few
    /// tokens a second. `None`: the agent loop's limit (`llm.loop`, 10 minutes).
    #[serde(default)]
    pub minutes: Option<u32>,
}

/// What a request for a tier resolved to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct TierChoice {
    pub requested: Tier,
    /// The tier whose setting is used: `requested` unless it fell back.
    pub used: Tier,
    pub provider: Provider,
    pub model: String,
    pub budget_tokens: u32,
    pub temperature: Option<f64>,
    /// Set when the requested tier is not mapped: which tier stood in, in words.
    pub fallback: Option<String>,
    /// The tier's time budget for one attempt (see [`TierSetting::minutes`]).
    pub minutes: Option<u32>,
}

/// The setting for `requested`, or the nearest mapped one.
pub fn nearest(requested: Tier, settings: &[TierSetting]) -> Option<&TierSetting> {
    settings
        .iter()
        .min_by_key(|s| ((s.tier.rank() - requested.rank()).abs(), -s.tier.rank()))
}

/// Resolve `requested` against the mapped tiers and the configured providers.
pub fn resolve(
    requested: Tier,
    settings: &[TierSetting],
    providers: &[Provider],
) -> Result<TierChoice, LlmError> {
    let setting = nearest(requested, settings).ok_or(LlmError::NoModelConfigured)?;
    let provider = providers
        .iter()
        .find(|p| p.name == setting.provider)
        .ok_or(LlmError::NoModelConfigured)?;
    let fallback = (setting.tier != requested).then(|| {
        format!(
            "the {} tier is not configured; using the {} tier ({} / {})",
            requested.as_str(),
            setting.tier.as_str(),
            provider.name,
            setting.model
        )
    });
    Ok(TierChoice {
        requested,
        used: setting.tier,
        provider: provider.clone(),
        model: setting.model.clone(),
        budget_tokens: setting.budget_tokens,
        temperature: setting.temperature,
        fallback,
        minutes: setting.minutes,
    })
}

/// A tier as Settings shows it: its own mapping, or what it falls back to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct TierView {
    pub tier: Tier,
    pub setting: Option<TierSetting>,
    pub default_budget: u32,
    /// What a call for this tier uses now (`None`: no model configured at all).
    pub resolves_to: Option<TierChoice>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(tier: Tier) -> TierSetting {
        TierSetting {
            tier,
            provider: "p".to_string(),
            model: format!("{}-model", tier.as_str()),
            budget_tokens: tier.default_budget(),
            temperature: None,
            minutes: None,
        }
    }

    #[test]
    fn a_missing_tier_takes_the_nearest_and_on_a_tie_the_more_capable() {
        let only_cheap = [set(Tier::Cheap)];
        assert_eq!(
            nearest(Tier::Deep, &only_cheap).map(|s| s.tier),
            Some(Tier::Cheap)
        );
        let ends = [set(Tier::Cheap), set(Tier::Deep)];
        assert_eq!(
            nearest(Tier::Standard, &ends).map(|s| s.tier),
            Some(Tier::Deep)
        );
        let middle = [set(Tier::Standard), set(Tier::Deep)];
        assert_eq!(
            nearest(Tier::Cheap, &middle).map(|s| s.tier),
            Some(Tier::Standard)
        );
        assert_eq!(nearest(Tier::Cheap, &[]), None);
    }
}
