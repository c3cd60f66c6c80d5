use rusqlite::{params, OptionalExtension};
use serde::{de::DeserializeOwned, Serialize};

use super::{now, Store};
use crate::error::{Error, Result};

impl Store {
    /// A setting, or `None` when it was never set.
    pub fn setting<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>> {
        let raw: Option<String> = self.call(|c| {
            c.query_row("SELECT value FROM settings WHERE key = ?1", [key], |r| {
                r.get(0)
            })
            .optional()
        })?;
        raw.map(|raw| {
            serde_json::from_str(&raw).map_err(|e| {
                Error::InvalidInput(format!(
                    "setting {key} holds {raw:?}, which is not valid: {e}"
                ))
            })
        })
        .transpose()
    }

    pub fn set_setting<T: Serialize>(&self, key: &str, value: &T) -> Result<()> {
        let raw = serde_json::to_string(value)
            .map_err(|e| Error::Internal(format!("setting {key} does not serialise: {e}")))?;
        let at = now();
        self.call(|c| {
            c.execute(
                "INSERT INTO settings (key, value, updated_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                params![key, raw, at],
            )
        })?;
        Ok(())
    }

    pub fn delete_setting(&self, key: &str) -> Result<()> {
        self.call(|c| c.execute("DELETE FROM settings WHERE key = ?1", [key]))?;
        Ok(())
    }
}
