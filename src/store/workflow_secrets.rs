//! A workflow's secrets as the database knows them: names and where each value is kept. The
//! values themselves never come here (see `workflow::secrets`).

use rusqlite::params;

use super::{now, Store};
use crate::error::Result;
use crate::secrets::KeptIn;
use crate::workflow::WorkflowSecret;

impl Store {
    /// Record that `name`'s value for a workflow is kept in `kept_in` (saved again: updated).
    pub fn record_workflow_secret(
        &self,
        workflow_id: i64,
        name: &str,
        kept_in: KeptIn,
    ) -> Result<()> {
        self.call(|c| {
            c.execute(
                "INSERT INTO workflow_secrets (workflow_id, name, kept_in, saved_at)
                 VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (workflow_id, name)
                 DO UPDATE SET kept_in = excluded.kept_in, saved_at = excluded.saved_at",
                params![workflow_id, name, kept_in_text(kept_in), now()],
            )
        })?;
        Ok(())
    }

    /// A workflow's secrets by name.
    pub fn workflow_secrets(&self, workflow_id: i64) -> Result<Vec<WorkflowSecret>> {
        self.call(|c| {
            let mut statement = c.prepare(
                "SELECT name, kept_in, saved_at FROM workflow_secrets
                 WHERE workflow_id = ?1 ORDER BY name",
            )?;
            let rows = statement.query_map([workflow_id], |row| {
                Ok(WorkflowSecret {
                    name: row.get(0)?,
                    kept_in: if row.get::<_, String>(1)? == "file" {
                        KeptIn::File
                    } else {
                        KeptIn::Keyring
                    },
                    saved_at: row.get(2)?,
                })
            })?;
            rows.collect()
        })
    }

    /// Forget that a workflow has the secret `name`; whether there was one.
    pub fn remove_workflow_secret(&self, workflow_id: i64, name: &str) -> Result<bool> {
        let removed = self.call(|c| {
            c.execute(
                "DELETE FROM workflow_secrets WHERE workflow_id = ?1 AND name = ?2",
                params![workflow_id, name],
            )
        })?;
        Ok(removed > 0)
    }
}

fn kept_in_text(kept_in: KeptIn) -> &'static str {
    match kept_in {
        KeptIn::Keyring => "keyring",
        KeptIn::File => "file",
    }
}
