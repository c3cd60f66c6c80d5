//! Model providers, their prices, and the tiers that map to them. No key is ever stored.

use rusqlite::{params, OptionalExtension, Row};

use super::notifications::unknown_value;
use super::{now, Store};
use crate::error::{Error, Result};
use crate::llm::{ModelPrice, Provider, ProviderInput, ProviderKind, Tier, TierSetting};

impl Store {
    pub fn list_providers(&self) -> Result<Vec<Provider>> {
        self.call(|c| {
            let mut providers = {
                let mut stmt = c.prepare_cached(
                    "SELECT name, kind, base_url, key_env, created_at, updated_at, title
                     FROM providers ORDER BY name",
                )?;
                let rows = stmt
                    .query_map([], provider_from_row)?
                    .collect::<rusqlite::Result<Vec<_>>>()?;
                rows
            };
            let mut stmt = c.prepare_cached(
                "SELECT model, input_per_mtok, output_per_mtok, cached_input_per_mtok
                 FROM model_prices WHERE provider = ?1 ORDER BY model",
            )?;
            for provider in &mut providers {
                provider.prices = stmt
                    .query_map([&provider.name], |r| {
                        Ok(ModelPrice {
                            model: r.get(0)?,
                            input_per_mtok: r.get(1)?,
                            output_per_mtok: r.get(2)?,
                            cached_input_per_mtok: r.get(3)?,
                        })
                    })?
                    .collect::<rusqlite::Result<Vec<_>>>()?;
            }
            Ok(providers)
        })
    }

    pub fn provider(&self, name: &str) -> Result<Provider> {
        self.list_providers()?
            .into_iter()
            .find(|p| p.name == name)
            .ok_or_else(|| Error::NotFound {
                what: format!("provider \"{name}\""),
            })
    }

    /// Add a provider, or change the one with that name (its prices are replaced).
    pub fn save_provider(&self, input: &ProviderInput) -> Result<Provider> {
        let at = now();
        let name = input.name.trim().to_string();
        let base_url = input
            .base_url
            .as_deref()
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .unwrap_or(input.kind.default_base_url())
            .trim_end_matches('/')
            .to_string();
        let key_env = input.key_env.as_deref().filter(|v| !v.is_empty());
        let title = input
            .title
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty() && *t != name);
        self.call(|c| {
            let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            tx.execute(
                "INSERT INTO providers (name, kind, base_url, key_env, created_at, updated_at, title)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6)
                 ON CONFLICT (name) DO UPDATE SET kind = excluded.kind,
                     base_url = excluded.base_url, key_env = excluded.key_env,
                     updated_at = excluded.updated_at,
                     title = COALESCE(excluded.title, providers.title)",
                params![name, kind_str(input.kind), base_url, key_env, at, title],
            )?;
            tx.execute("DELETE FROM model_prices WHERE provider = ?1", [&name])?;
            for price in &input.prices {
                tx.execute(
                    "INSERT OR REPLACE INTO model_prices
                        (provider, model, input_per_mtok, output_per_mtok, cached_input_per_mtok)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![
                        name,
                        price.model.trim(),
                        price.input_per_mtok,
                        price.output_per_mtok,
                        price.cached_input_per_mtok
                    ],
                )?;
            }
            tx.commit()
        })?;
        self.provider(&name)
    }

    /// Remove a provider and the tiers mapped to it. Returns whether it existed.
    pub fn delete_provider(&self, name: &str) -> Result<bool> {
        let removed = self.call(|c| c.execute("DELETE FROM providers WHERE name = ?1", [name]))?;
        Ok(removed > 0)
    }

    pub fn tier_settings(&self) -> Result<Vec<TierSetting>> {
        self.call(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT tier, provider, model, budget_tokens, temperature, minutes FROM tiers
                 ORDER BY tier",
            )?;
            let rows = stmt
                .query_map([], |r| {
                    let tier: String = r.get(0)?;
                    Ok(TierSetting {
                        tier: Tier::parse(&tier).ok_or_else(|| unknown_value(0, &tier))?,
                        provider: r.get(1)?,
                        model: r.get(2)?,
                        budget_tokens: r.get(3)?,
                        temperature: r.get(4)?,
                        minutes: r.get(5)?,
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    pub fn set_tier(&self, setting: &TierSetting) -> Result<()> {
        if setting.model.trim().is_empty() {
            return Err(Error::InvalidInput("the model name is empty".to_string()));
        }
        if setting
            .temperature
            .is_some_and(|t| !t.is_finite() || !(0.0..=2.0).contains(&t))
        {
            return Err(Error::InvalidInput(
                "the temperature must be between 0 and 2".to_string(),
            ));
        }
        if setting.minutes == Some(0) {
            return Err(Error::InvalidInput(
                "the time for one attempt must be at least a minute".to_string(),
            ));
        }
        // The provider must exist: say so rather than fail on the foreign key.
        self.provider(&setting.provider)?;
        let at = now();
        self.call(|c| {
            c.execute(
                "INSERT INTO tiers (tier, provider, model, budget_tokens, updated_at, temperature,
                     minutes)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT (tier) DO UPDATE SET provider = excluded.provider,
                     model = excluded.model, budget_tokens = excluded.budget_tokens,
                     updated_at = excluded.updated_at, temperature = excluded.temperature,
                     minutes = excluded.minutes",
                params![
                    setting.tier.as_str(),
                    setting.provider,
                    setting.model.trim(),
                    setting.budget_tokens,
                    at,
                    setting.temperature,
                    setting.minutes
                ],
            )
        })?;
        Ok(())
    }

    /// Unmap a tier (it falls back to the nearest mapped one). Returns whether it was mapped.
    pub fn clear_tier(&self, tier: Tier) -> Result<bool> {
        let removed =
            self.call(|c| c.execute("DELETE FROM tiers WHERE tier = ?1", [tier.as_str()]))?;
        Ok(removed > 0)
    }

    pub fn has_provider(&self, name: &str) -> Result<bool> {
        self.call(|c| {
            c.query_row(
                "SELECT 1 FROM providers WHERE name = ?1",
                [name],
                |_| Ok(()),
            )
            .optional()
            .map(|found| found.is_some())
        })
    }
}

fn kind_str(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::OpenaiCompatible => "openai_compatible",
        ProviderKind::Anthropic => "anthropic",
        ProviderKind::Ollama => "ollama",
        ProviderKind::Gemini => "gemini",
    }
}

fn provider_from_row(r: &Row<'_>) -> rusqlite::Result<Provider> {
    let kind: String = r.get(1)?;
    let name: String = r.get(0)?;
    Ok(Provider {
        title: r
            .get::<_, Option<String>>(6)?
            .unwrap_or_else(|| name.clone()),
        name,
        kind: ProviderKind::ALL
            .into_iter()
            .find(|k| kind_str(*k) == kind)
            .ok_or_else(|| unknown_value(1, &kind))?,
        base_url: r.get(2)?,
        key_env: r.get(3)?,
        prices: Vec::new(),
        created_at: r.get(4)?,
        updated_at: r.get(5)?,
    })
}
