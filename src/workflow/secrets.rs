//! A workflow's secrets: values its script reads from environment variables (an API token)
//! that are kept where provider keys are ([`Keep`]: the OS keyring, or Healer's own secrets file)
//! — never in the database, a version, a log or a thread. The database keeps only their names.
//! At run time they are handed to the script's process and remembered for redaction, so a
//! script that prints one shows "[redacted]" in its output.
//!
//! Only the workflow's own runs get them: not the sandbox in which a model's proposed fix is
//! tried, nor a package installation.

use serde::{Deserialize, Serialize};

use super::EnvVar;
use crate::error::{Error, Result};
use crate::secrets::{Keep, KeepError, KeptIn};
use crate::store::Store;

/// A secret as the window shows it: its name and where the value is kept, never the value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct WorkflowSecret {
    pub name: String,
    pub kept_in: KeptIn,
    pub saved_at: String,
}

/// Names the runner sets itself, which a secret may not take.
const RESERVED: [&str; 8] = [
    "PATH",
    "HOME",
    "PYTHONUNBUFFERED",
    "PYTHONPATH",
    "NODE_PATH",
    "VIRTUAL_ENV",
    "LANG",
    "TMPDIR",
];

/// Where `name`'s value for a workflow is kept: bound to this data folder (`mark`), so two
/// data folders on one computer never read each other's.
fn account(mark: &str, workflow_id: i64, name: &str) -> String {
    format!("workflow:{mark}:{workflow_id}:{name}")
}

/// Whether `name` can be a secret of this workflow; the sentence why not.
pub fn check_name(store: &Store, workflow_id: i64, name: &str) -> Result<()> {
    let well_formed = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.len() <= 128;
    if !well_formed {
        return Err(Error::InvalidInput(format!(
            "\"{name}\" cannot be a variable name: use letters, digits and _ (not first a digit), such as API_TOKEN"
        )));
    }
    if RESERVED.contains(&name) || name.starts_with("HEALER_") {
        return Err(Error::InvalidInput(format!(
            "{name} is set by Healer for every run; choose another name"
        )));
    }
    let workflow = store.workflow(workflow_id)?;
    if workflow.env.iter().any(|v| v.name == name) {
        return Err(Error::InvalidInput(format!(
            "{name} is already a plain environment variable of this workflow; remove it there first"
        )));
    }
    Ok(())
}

/// Keep `value` as the workflow's secret `name` and record the name. Blocking (the keyring).
pub fn save(
    store: &Store,
    keep: &Keep,
    mark: &str,
    workflow_id: i64,
    name: &str,
    value: &str,
) -> Result<WorkflowSecret> {
    let name = name.trim();
    check_name(store, workflow_id, name)?;
    if value.trim().is_empty() {
        return Err(Error::InvalidInput(format!(
            "the value of {name} is empty: paste the secret, or remove it"
        )));
    }
    crate::secrets::remember(value);
    let kept_in = keep
        .set(&account(mark, workflow_id, name), value)
        .map_err(keep_error)?;
    store.record_workflow_secret(workflow_id, name, kept_in)?;
    store
        .workflow_secrets(workflow_id)?
        .into_iter()
        .find(|s| s.name == name)
        .ok_or_else(|| Error::Internal(format!("the secret {name} was not recorded")))
}

/// Forget the workflow's secret `name`, its value too. Blocking.
pub fn remove(store: &Store, keep: &Keep, mark: &str, workflow_id: i64, name: &str) -> Result<()> {
    keep.forget(&account(mark, workflow_id, name))
        .map_err(keep_error)?;
    if !store.remove_workflow_secret(workflow_id, name)? {
        return Err(Error::NotFound {
            what: format!("secret {name} of this workflow"),
        });
    }
    Ok(())
}

/// Forget every secret value of a workflow about to be deleted (its names go with its row).
/// Blocking; a value that cannot be forgotten is logged, never in the way of the deletion.
pub fn forget_all(store: &Store, keep: &Keep, mark: &str, workflow_id: i64) {
    for secret in store.workflow_secrets(workflow_id).unwrap_or_default() {
        if let Err(e) = keep.forget(&account(mark, workflow_id, &secret.name)) {
            tracing::warn!(workflow_id, "a secret's value could not be forgotten: {e}");
        }
    }
}

/// The workflow's secrets as environment variables for one run, each remembered for redaction,
/// and the names whose value could not be found. Blocking.
pub fn for_run(
    store: &Store,
    keep: &Keep,
    mark: &str,
    workflow_id: i64,
) -> Result<(Vec<EnvVar>, Vec<String>)> {
    let mut env = Vec::new();
    let mut missing = Vec::new();
    for secret in store.workflow_secrets(workflow_id)? {
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

fn keep_error(e: KeepError) -> Error {
    match e {
        KeepError::NoPlace => Error::NoSecretPlace,
        other => Error::Internal(other.to_string()),
    }
}
