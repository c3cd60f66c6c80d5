//! The steering model: the one model the steering judge asks, a role beside the tiers. The
//! rule, as Settings shows it: the model named for steering; else the cheapest configured model
//! by price; else none, and then only the free loop detector watches sessions.
//!
//! "Configured" means a model a tier is mapped to or a model with a price on its provider. Its
//! price is input plus output per million tokens; a local Ollama model costs nothing. A model
//! without a price is never "the cheapest": when no configured model has one, the cheap tier's
//! model (or the nearest mapped tier's) stands in, since that is the model the person chose for
//! cheap work.

use serde::{Deserialize, Serialize};

use super::provider::{Provider, ProviderKind};
use super::tiers::{self, Tier, TierChoice, TierSetting};
use crate::error::{Error, Result};
use crate::store::Store;

/// Settings key of the named steering model.
pub const STEERING_MODEL_KEY: &str = "llm.steering_model";

/// Tokens the judge may write in one answer: a one-line JSON object.
pub const JUDGE_MAX_TOKENS: u32 = 400;

/// The rule, in the words Settings and the docs use.
pub const STEERING_MODEL_RULE: &str = "Healer asks the model you name here; if you name none, it asks the cheapest model you have set up (by price); if there is none, only the free loop check watches your agents.";

/// A model named for steering.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct SteeringModelSetting {
    pub provider: String,
    pub model: String,
}

/// Why this model steers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum SteeringModelSource {
    /// Named in Settings.
    Named,
    /// The cheapest configured model by price.
    Cheapest,
    /// No configured model has a price: the cheap tier's model.
    CheapTier,
}

/// The model steering would ask now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct SteeringModel {
    pub provider: Provider,
    pub model: String,
    pub source: SteeringModelSource,
}

impl SteeringModel {
    /// As a tier choice for the agent loop: its calls count in the cheap tier's usage.
    pub fn choice(&self) -> TierChoice {
        TierChoice {
            requested: Tier::Cheap,
            used: Tier::Cheap,
            provider: self.provider.clone(),
            model: self.model.clone(),
            budget_tokens: JUDGE_MAX_TOKENS,
            temperature: Some(0.0),
            fallback: None,
            minutes: None,
        }
    }

    /// In a sentence for Settings.
    pub fn describe(&self) -> String {
        let how = match self.source {
            SteeringModelSource::Named => "the model you named",
            SteeringModelSource::Cheapest => "the cheapest model you have set up",
            SteeringModelSource::CheapTier => {
                "no model has a price, so the model of the cheap tier"
            }
        };
        format!("{} from {} ({how})", self.model, self.provider.name)
    }
}

/// Settings' view: what is named, what is used, and the rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct SteeringModelView {
    pub setting: Option<SteeringModelSetting>,
    /// `None`: no model at all; only the free loop check runs.
    pub resolves_to: Option<SteeringModel>,
    /// What `resolves_to` is, in a sentence (or that only the free check runs).
    pub summary: String,
    pub rule: String,
}

/// Price per million tokens (input + output) of `model` on `provider`, if known.
fn price_of(provider: &Provider, model: &str) -> Option<f64> {
    if provider.kind == ProviderKind::Ollama {
        return Some(0.0);
    }
    provider
        .price(model)
        .map(|p| p.input_per_mtok + p.output_per_mtok)
        .filter(|p| p.is_finite())
}

/// The model steering asks: the named one (when its provider still exists), else the cheapest
/// configured one, else the cheap tier's, else none.
pub fn resolve(
    named: Option<&SteeringModelSetting>,
    settings: &[TierSetting],
    providers: &[Provider],
) -> Option<SteeringModel> {
    if let Some(named) = named {
        if let Some(provider) = providers.iter().find(|p| p.name == named.provider) {
            return Some(SteeringModel {
                provider: provider.clone(),
                model: named.model.clone(),
                source: SteeringModelSource::Named,
            });
        }
    }
    let mut candidates: Vec<(&Provider, String)> = Vec::new();
    for setting in settings {
        if let Some(p) = providers.iter().find(|p| p.name == setting.provider) {
            candidates.push((p, setting.model.clone()));
        }
    }
    for provider in providers {
        for price in &provider.prices {
            candidates.push((provider, price.model.clone()));
        }
    }
    let cheapest = candidates
        .iter()
        .filter_map(|(p, m)| price_of(p, m).map(|price| (price, *p, m)))
        // On a tie, the first by provider and model name: the same answer every time.
        .min_by(|a, b| {
            a.0.total_cmp(&b.0)
                .then_with(|| a.1.name.cmp(&b.1.name))
                .then_with(|| a.2.cmp(b.2))
        });
    if let Some((_, provider, model)) = cheapest {
        return Some(SteeringModel {
            provider: provider.clone(),
            model: model.clone(),
            source: SteeringModelSource::Cheapest,
        });
    }
    let cheap = tiers::resolve(Tier::Cheap, settings, providers).ok()?;
    Some(SteeringModel {
        provider: cheap.provider,
        model: cheap.model,
        source: SteeringModelSource::CheapTier,
    })
}

/// The sentence Settings shows for what steering uses now.
pub fn summary(model: Option<&SteeringModel>) -> String {
    match model {
        Some(model) => format!("Steering asks {}.", model.describe()),
        None => "No model is set up, so only the free loop check watches your agents: nothing is spent, and no one looks at their progress every few minutes.".to_string(),
    }
}

/// The model steering asks now, from the store's settings.
pub fn current(store: &Store) -> Result<Option<SteeringModel>> {
    let named: Option<SteeringModelSetting> = store.setting(STEERING_MODEL_KEY)?;
    Ok(resolve(
        named.as_ref(),
        &store.tier_settings()?,
        &store.list_providers()?,
    ))
}

/// Settings' view: what is named, what is used now, and the rule.
pub fn view(store: &Store) -> Result<SteeringModelView> {
    let setting: Option<SteeringModelSetting> = store.setting(STEERING_MODEL_KEY)?;
    let resolves_to = current(store)?;
    Ok(SteeringModelView {
        setting,
        summary: summary(resolves_to.as_ref()),
        resolves_to,
        rule: STEERING_MODEL_RULE.to_string(),
    })
}

/// Name the steering model (its provider must exist), or (`None`) leave it to the rule.
pub fn set(store: &Store, setting: Option<&SteeringModelSetting>) -> Result<()> {
    match setting {
        Some(s) => {
            if s.model.trim().is_empty() {
                return Err(Error::InvalidInput("the model name is empty".to_string()));
            }
            store.provider(&s.provider)?;
            store.set_setting(
                STEERING_MODEL_KEY,
                &SteeringModelSetting {
                    provider: s.provider.clone(),
                    model: s.model.trim().to_string(),
                },
            )
        }
        None => store.delete_setting(STEERING_MODEL_KEY),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ModelPrice;

    fn provider(name: &str, kind: ProviderKind, prices: &[(&str, f64, f64)]) -> Provider {
        Provider {
            name: name.to_string(),
            title: name.to_string(),
            kind,
            base_url: String::new(),
            key_env: None,
            prices: prices
                .iter()
                .map(|(m, i, o)| ModelPrice {
                    model: m.to_string(),
                    input_per_mtok: *i,
                    output_per_mtok: *o,
                    cached_input_per_mtok: None,
                })
                .collect(),
            created_at: String::new(),
            updated_at: String::new(),
        }
    }

    fn tier(tier: Tier, provider: &str, model: &str) -> TierSetting {
        TierSetting {
            tier,
            provider: provider.to_string(),
            model: model.to_string(),
            budget_tokens: 1,
            temperature: None,
            minutes: None,
        }
    }

    #[test]
    fn the_named_model_wins_then_the_cheapest_by_price_then_the_cheap_tier_then_none() {
        let cloud = provider(
            "cloud",
            ProviderKind::OpenaiCompatible,
            &[("big", 3.0, 15.0), ("small", 0.15, 0.6)],
        );
        let other = provider("other", ProviderKind::Anthropic, &[("mid", 1.0, 5.0)]);
        let tiers = [
            tier(Tier::Deep, "cloud", "big"),
            tier(Tier::Standard, "other", "mid"),
        ];
        let providers = [cloud.clone(), other.clone()];

        let named = SteeringModelSetting {
            provider: "other".to_string(),
            model: "mid".to_string(),
        };
        let got = resolve(Some(&named), &tiers, &providers).expect("named");
        assert_eq!(
            (got.model.as_str(), got.source),
            ("mid", SteeringModelSource::Named)
        );

        // Unnamed: the cheapest priced model, even one no tier maps.
        let got = resolve(None, &tiers, &providers).expect("cheapest");
        assert_eq!(
            (got.model.as_str(), got.source),
            ("small", SteeringModelSource::Cheapest)
        );

        // A named model whose provider was removed does not count.
        let gone = SteeringModelSetting {
            provider: "removed".to_string(),
            model: "x".to_string(),
        };
        assert_eq!(
            resolve(Some(&gone), &tiers, &providers).map(|m| m.model),
            Some("small".to_string())
        );

        // A local Ollama model is free: cheapest of all.
        let local = provider("local", ProviderKind::Ollama, &[]);
        let with_local = [cloud.clone(), local.clone()];
        let tiers_local = [
            tier(Tier::Deep, "cloud", "big"),
            tier(Tier::Cheap, "local", "llama"),
        ];
        let got = resolve(None, &tiers_local, &with_local).expect("local");
        assert_eq!(
            (got.provider.name.as_str(), got.model.as_str()),
            ("local", "llama")
        );

        // No prices at all: the cheap tier's model (nearest mapped tier).
        let bare = provider("bare", ProviderKind::OpenaiCompatible, &[]);
        let got = resolve(
            None,
            &[tier(Tier::Standard, "bare", "m")],
            std::slice::from_ref(&bare),
        )
        .expect("cheap tier");
        assert_eq!(
            (got.model.as_str(), got.source),
            ("m", SteeringModelSource::CheapTier)
        );

        // Nothing configured: none, and Settings says only the free check runs.
        assert_eq!(resolve(None, &[], &[bare]), None);
        assert!(summary(None).contains("only the free loop check"));
    }
}
