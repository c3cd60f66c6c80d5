//! What each agent session used of its model, as Healer's model gateway counted it.

use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};

use super::usage::{get_u64, sql_int};
use super::Store;
use crate::error::Result;
use crate::llm::Usage;

/// A session's model use through the gateway.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct SessionModelUse {
    pub requests: u32,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cached_tokens: u64,
    /// What the requests whose model has a price cost, in dollars.
    pub cost_usd: f64,
    /// Tokens of requests whose model has no price in Healer.
    pub unpriced_tokens: u64,
}

impl Store {
    /// Add one answer's use to session `session_id`; `cost`: `None` when its model has no
    /// price.
    pub fn add_session_model_use(
        &self,
        session_id: i64,
        usage: &Usage,
        cost: Option<f64>,
    ) -> Result<()> {
        let unpriced = if cost.is_some() { 0 } else { usage.total() };
        self.call(|c| {
            c.execute(
                "INSERT INTO session_model_use (session_id, requests, prompt_tokens,
                     completion_tokens, cached_tokens, cost_usd, unpriced_tokens)
                 VALUES (?1, 1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT (session_id) DO UPDATE SET
                     requests = requests + 1,
                     prompt_tokens = prompt_tokens + excluded.prompt_tokens,
                     completion_tokens = completion_tokens + excluded.completion_tokens,
                     cached_tokens = cached_tokens + excluded.cached_tokens,
                     cost_usd = cost_usd + excluded.cost_usd,
                     unpriced_tokens = unpriced_tokens + excluded.unpriced_tokens",
                params![
                    session_id,
                    sql_int(usage.prompt_tokens),
                    sql_int(usage.completion_tokens),
                    sql_int(usage.cached_tokens),
                    cost.unwrap_or(0.0),
                    sql_int(unpriced)
                ],
            )
        })?;
        Ok(())
    }

    /// What session `session_id` used through the gateway (`None`: no request passed it).
    pub fn session_model_use(&self, session_id: i64) -> Result<Option<SessionModelUse>> {
        self.call(|c| {
            c.query_row(
                "SELECT requests, prompt_tokens, completion_tokens, cached_tokens, cost_usd,
                     unpriced_tokens FROM session_model_use WHERE session_id = ?1",
                [session_id],
                |r| {
                    Ok(SessionModelUse {
                        requests: r.get(0)?,
                        prompt_tokens: get_u64(r, 1)?,
                        completion_tokens: get_u64(r, 2)?,
                        cached_tokens: get_u64(r, 3)?,
                        cost_usd: r.get(4)?,
                        unpriced_tokens: get_u64(r, 5)?,
                    })
                },
            )
            .optional()
        })
    }
}
