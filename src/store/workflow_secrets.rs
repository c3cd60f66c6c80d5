//! A workflow's secrets: the database knows their names and where each value is kept; the
//! values are kept in the [`Keep`] (the OS keyring, or Healer's own secrets file) and never come
//! here (see `workflow::secrets` for what a secret is).

use rusqlite::params;

use super::{now, Store};
use crate::error::{Error, Result};
use crate::secrets::{Keep, KeepError, KeptIn};
use crate::workflow::secrets::{account, name_problem};
use crate::workflow::{EnvVar, WorkflowSecret};

impl Store {
    /// Keep `value` as the workflow's secret `name` and record the name. Blocking (the
    /// keyring). `mark` is the data folder's ([`crate::Paths::instance_mark`]).
    pub fn save_workflow_secret(
        &self,
        keep: &Keep,
        mark: &str,
        workflow_id: i64,
        name: &str,
        value: &str,
    ) -> Result<WorkflowSecret> {
        let name = name.trim();
        if let Some(problem) = name_problem(name) {
            return Err(Error::InvalidInput(problem));
        }
        if value.len() > crate::capped::SECRET_BYTES {
            return Err(Error::InvalidInput(format!(
                "the value of {name} is larger than {} KB, the most a secret may be",
                crate::capped::SECRET_BYTES / 1024
            )));
        }
        if self
            .workflow(workflow_id)?
            .env
            .iter()
            .any(|v| v.name == name)
        {
            return Err(Error::InvalidInput(format!(
                "{name} is already a plain environment variable of this workflow; remove it there first"
            )));
        }
        if value.trim().is_empty() {
            return Err(Error::InvalidInput(format!(
                "the value of {name} is empty: paste the secret, or remove it"
            )));
        }
        crate::secrets::remember(value);
        let kept_in = keep
            .set(&account(mark, workflow_id, name), value)
            .map_err(keep_error)?;
        self.record_workflow_secret(workflow_id, name, kept_in)?;
        self.workflow_secrets(workflow_id)?
            .into_iter()
            .find(|s| s.name == name)
            .ok_or_else(|| Error::Internal(format!("the secret {name} was not recorded")))
    }

    /// Forget the workflow's secret `name`, its value too. Blocking.
    pub fn forget_workflow_secret(
        &self,
        keep: &Keep,
        mark: &str,
        workflow_id: i64,
        name: &str,
    ) -> Result<()> {
        keep.forget(&account(mark, workflow_id, name))
            .map_err(keep_error)?;
        if !self.remove_workflow_secret(workflow_id, name)? {
            return Err(Error::NotFound {
                what: format!("secret {name} of this workflow"),
            });
        }
        Ok(())
    }

    /// Forget every secret value of a workflow about to be deleted (its names go with its
    /// row). Blocking; a value that cannot be forgotten is logged, never in the way.
    pub fn forget_all_workflow_secrets(&self, keep: &Keep, mark: &str, workflow_id: i64) {
        for secret in self.workflow_secrets(workflow_id).unwrap_or_default() {
            if let Err(e) = keep.forget(&account(mark, workflow_id, &secret.name)) {
                tracing::warn!(workflow_id, "a secret's value could not be forgotten: {e}");
            }
        }
    }

    /// The workflow's secrets as environment variables for one run, each remembered for
    /// redaction, and the names whose value could not be found. Blocking.
    pub fn workflow_secrets_for_run(
        &self,
        keep: &Keep,
        mark: &str,
        workflow_id: i64,
    ) -> Result<(Vec<EnvVar>, Vec<String>)> {
        let mut env = Vec::new();
        let mut missing = Vec::new();
        for secret in self.workflow_secrets(workflow_id)? {
            match keep.get(&account(mark, workflow_id, &secret.name)) {
                Some((value, _)) => {
                    crate::secrets::remember(&value);
                    env.push(EnvVar {
                        name: secret.name,
                        value,
                    });
                }
                None => missing.push(secret.name),
            }
        }
        Ok((env, missing))
    }

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

fn keep_error(e: KeepError) -> Error {
    match e {
        KeepError::NoPlace => Error::NoSecretPlace,
        other => Error::Internal(other.to_string()),
    }
}
