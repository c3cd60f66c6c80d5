//! Usage of model calls: one row per call; sums per task and per day.

use rusqlite::params;

use super::{now, Store};
use crate::error::Result;
use crate::llm::{today, Spent, Tier, TierUsage, UsageRecord, UsageTotals};

/// SQLite integers are signed; token counts never come near the limit, but do not wrap.
pub(super) fn sql_int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// A count column (never negative) as u64.
pub(super) fn get_u64(r: &rusqlite::Row<'_>, column: usize) -> rusqlite::Result<u64> {
    Ok(u64::try_from(r.get::<_, i64>(column)?).unwrap_or(0))
}

const SUMS: &str = "count(*), coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0),
     coalesce(sum(cached_tokens), 0), coalesce(sum(cost_usd), 0.0),
     coalesce(sum(cost_usd IS NULL), 0), coalesce(sum(local), 0),
     coalesce(sum(CASE WHEN local THEN duration_ms ELSE 0 END), 0)";

impl Store {
    pub fn record_usage(&self, record: &UsageRecord) -> Result<()> {
        let at = now();
        let day = today();
        self.call(|c| {
            c.execute(
                "INSERT INTO usage (at, day, task_id, tier, provider, model, prompt_tokens,
                     completion_tokens, cached_tokens, cost_usd, local, duration_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                params![
                    at,
                    day,
                    record.task_id,
                    record.tier.as_str(),
                    record.provider,
                    record.model,
                    sql_int(record.usage.prompt_tokens),
                    sql_int(record.usage.completion_tokens),
                    sql_int(record.usage.cached_tokens),
                    record.cost_usd,
                    record.local,
                    sql_int(record.duration_ms)
                ],
            )
        })?;
        Ok(())
    }

    /// What `task_id` and `day` have used so far.
    pub fn spent(&self, task_id: Option<i64>, day: &str) -> Result<Spent> {
        let day_totals = self.usage_totals("WHERE day = ?1", &day)?;
        let task_tokens = match task_id {
            Some(id) => self.usage_totals("WHERE task_id = ?1", &id)?.tokens(),
            None => 0,
        };
        Ok(Spent {
            task_tokens,
            day_tokens: day_totals.tokens(),
            day_cost_usd: day_totals.cost_usd,
        })
    }

    pub fn task_usage(&self, task_id: i64) -> Result<UsageTotals> {
        self.usage_totals("WHERE task_id = ?1", &task_id)
    }

    pub fn day_usage(&self, day: &str) -> Result<UsageTotals> {
        self.usage_totals("WHERE day = ?1", &day)
    }

    /// A day's usage per tier, in tier order; tiers with no calls are left out.
    pub fn day_usage_by_tier(&self, day: &str) -> Result<Vec<TierUsage>> {
        let mut out = Vec::new();
        for tier in Tier::ALL {
            let sql = format!("SELECT {SUMS} FROM usage WHERE day = ?1 AND tier = ?2");
            let totals =
                self.call(|c| c.query_row(&sql, params![day, tier.as_str()], totals_from_row))?;
            if totals.calls > 0 {
                out.push(TierUsage { tier, totals });
            }
        }
        Ok(out)
    }

    fn usage_totals(&self, filter: &str, arg: &dyn rusqlite::ToSql) -> Result<UsageTotals> {
        let sql = format!("SELECT {SUMS} FROM usage {filter}");
        self.call(|c| c.query_row(&sql, [arg], totals_from_row))
    }
}

fn totals_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<UsageTotals> {
    Ok(UsageTotals {
        calls: get_u64(r, 0)?,
        prompt_tokens: get_u64(r, 1)?,
        completion_tokens: get_u64(r, 2)?,
        cached_tokens: get_u64(r, 3)?,
        cost_usd: r.get(4)?,
        unpriced_calls: get_u64(r, 5)?,
        local_calls: get_u64(r, 6)?,
        local_secs: get_u64(r, 7)? / 1000,
    })
}
