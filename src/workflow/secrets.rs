//! A workflow's secrets: values its script reads from environment variables (an API token)
//! that are kept where provider keys are ([`Keep`]: the OS keyring, or Healer's own secrets file)
//! — never in the database, a version, a log or a thread. The database keeps only their names.
//! At run time they are handed to the script's process and remembered for redaction, so a
//! script that prints one shows "[redacted]" in its output.
//!
//! Only the workflow's own runs get them: not the sandbox in which a model's proposed fix is
//! tried, nor a package installation. Keeping, removing and handing them to a run is the
//! store's (`store/workflow_secrets.rs`), which knows both the names and the [`Keep`].
//!
//! [`Keep`]: crate::secrets::Keep

use serde::{Deserialize, Serialize};

use crate::secrets::KeptIn;

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

/// The sentence why `name` cannot be a secret's name, if it cannot (the workflow's own plain
/// variables are checked where the workflow is read).
pub fn name_problem(name: &str) -> Option<String> {
    let well_formed = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.len() <= 128;
    if !well_formed {
        return Some(format!(
            "\"{name}\" cannot be a variable name: use letters, digits and _ (not first a digit), such as API_TOKEN"
        ));
    }
    if RESERVED.contains(&name) || name.starts_with("HEALER_") {
        return Some(format!(
            "{name} is set by Healer for every run; choose another name"
        ));
    }
    None
}

/// Where `name`'s value for a workflow is kept: bound to this data folder (`mark`), so two
/// data folders on one computer never read each other's.
pub fn account(mark: &str, workflow_id: i64, name: &str) -> String {
    format!("workflow:{mark}:{workflow_id}:{name}")
}
