//! A person's edits to a script: saved with the syntax check an auto-fix gets, refused when a
//! newer version appeared while they were editing, and earlier versions restored in one step.

use serde::{Deserialize, Serialize};

use super::Handle;
use crate::error::{Error, Result};
use crate::events::Event;
use crate::sandbox::{self, SyntaxCheck};
use crate::workflow::{Author, ScriptVersion, Version};

/// What became of a person's save.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SaveOutcome {
    /// Stored as the next major version, which runs from now on.
    Saved { version: ScriptVersion },
    /// A newer version (a CLI save, an auto-fix) appeared after the editor opened `base`:
    /// nothing was stored. Saving again with `newer` as the base keeps the person's code.
    Conflict {
        base: Version,
        newer: Box<ScriptVersion>,
    },
    /// The runtime's own checker refused the code: nothing was stored.
    Invalid { message: String },
}

impl Handle {
    /// A person's save from an editor that opened version `base`: checked like an auto-fix's
    /// code, and refused (as [`SaveOutcome::Conflict`]) when the script moved on meanwhile, so
    /// work is never saved over without the person seeing the newer version.
    pub async fn save_edited_script(
        &self,
        id: i64,
        code: &str,
        comment: &str,
        base: Option<Version>,
    ) -> Result<SaveOutcome> {
        if let Some(base) = base {
            let newest = self.services.store.versions(id)?.pop();
            if let Some(newer) = newest.filter(|v| v.version != base) {
                return Ok(SaveOutcome::Conflict {
                    base,
                    newer: Box::new(newer),
                });
            }
        }
        if let Some(message) = self.check_script(id, code).await? {
            return Ok(SaveOutcome::Invalid { message });
        }
        Ok(SaveOutcome::Saved {
            version: self.save_script(id, code, comment)?,
        })
    }

    /// The runtime's own syntax check of `code` as the workflow's entry script, run in the
    /// sandbox: `None` when it passes (or the runtime has no checker), else what it said.
    pub async fn check_script(&self, id: i64, code: &str) -> Result<Option<String>> {
        if code.trim().is_empty() {
            return Ok(Some("The script is empty.".to_string()));
        }
        let workflow = self.services.store.workflow(id)?;
        let root = self.services.paths.data_dir().join("sandbox");
        let check = sandbox::check_syntax(&root, &workflow.runtime, &workflow.entry, code).await?;
        Ok(match check {
            SyntaxCheck::Refused { message } => Some(message),
            SyntaxCheck::Passed | SyntaxCheck::NoChecker { .. } => None,
        })
    }

    /// An earlier version's code as the next major version ("Restored from 1.0"): history is
    /// never rewritten, so going back is one more step forward.
    pub fn restore_version(&self, id: i64, version: Version) -> Result<ScriptVersion> {
        let old = self.services.store.version(id, version)?;
        let active = self.services.store.active_version(id)?;
        if old.id == active.id {
            return Err(Error::InvalidInput(format!(
                "version {version} is already the one that runs"
            )));
        }
        let comment = format!("Restored from {version}");
        let workflow = self.services.store.workflow(id)?;
        let saved = self.services.store.save_major(
            id,
            &old.code,
            &comment,
            Some(&old.summary),
            &Author::Person,
        )?;
        self.services.bus.emit(Event::VersionSaved {
            workflow_id: id,
            title: workflow.title,
            version: saved.version,
            author: Author::Person,
            comment,
        })?;
        Ok(saved)
    }
}

/// Settings key: the person skipped the first-run model setup (it is then only offered where a
/// model is missing, never put in front of them again).
pub const SETUP_SKIPPED: &str = "ui.setup_skipped";

impl Handle {
    /// Whether the first-run setup was skipped (or finished) in this data folder.
    pub fn setup_skipped(&self) -> Result<bool> {
        Ok(self
            .services
            .store
            .setting::<bool>(SETUP_SKIPPED)?
            .unwrap_or(false))
    }

    pub fn skip_setup(&self) -> Result<()> {
        self.services.store.set_setting(SETUP_SKIPPED, &true)
    }
}
