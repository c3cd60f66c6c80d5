//! The engine's API for where secrets are kept and for a workflow's secrets (Settings → Models
//! and the workflow's Settings tab). Values go in and never come out.

use super::Handle;
use crate::error::{Error, Result};
use crate::events::Event;
use crate::secrets::KeepStatus;
use crate::workflow::WorkflowSecret;

impl Handle {
    /// Whether a keyring service answers here, and whether the secrets file was chosen.
    pub async fn keep_status(&self) -> Result<KeepStatus> {
        let keep = self.services.llm.keep();
        blocking(move || Ok(keep.status())).await
    }

    /// The person accepted Healer's own secrets file (no keyring service on this computer).
    pub async fn choose_secrets_file(&self) -> Result<KeepStatus> {
        let keep = self.services.llm.keep();
        let status = blocking(move || {
            keep.choose_file()
                .map_err(|e| Error::Internal(e.to_string()))?;
            Ok(keep.status())
        })
        .await?;
        self.services.bus.emit(Event::LlmSettingsChanged {
            what: "secrets are kept in Healer's own secrets file".to_string(),
        })?;
        Ok(status)
    }

    /// A workflow's secrets by name (never their values).
    pub fn workflow_secrets(&self, workflow_id: i64) -> Result<Vec<WorkflowSecret>> {
        self.services.store.workflow(workflow_id)?;
        self.services.store.workflow_secrets(workflow_id)
    }

    /// Keep a secret value for a workflow's runs.
    pub async fn set_workflow_secret(
        &self,
        workflow_id: i64,
        name: String,
        value: String,
    ) -> Result<WorkflowSecret> {
        let workflow = self.services.store.workflow(workflow_id)?;
        let (store, keep) = (self.services.store.clone(), self.services.llm.keep());
        let mark = self.services.instance().to_string();
        let saved =
            blocking(move || store.save_workflow_secret(&keep, &mark, workflow_id, &name, &value))
                .await?;
        self.services.bus.emit(Event::WorkflowChanged {
            workflow_id,
            title: workflow.title,
            what: format!("secret {} saved", saved.name),
        })?;
        Ok(saved)
    }

    /// Forget a workflow's secret and its value.
    pub async fn remove_workflow_secret(&self, workflow_id: i64, name: String) -> Result<()> {
        let workflow = self.services.store.workflow(workflow_id)?;
        let (store, keep) = (self.services.store.clone(), self.services.llm.keep());
        let mark = self.services.instance().to_string();
        let what = format!("secret {name} removed");
        blocking(move || store.forget_workflow_secret(&keep, &mark, workflow_id, &name)).await?;
        self.services.bus.emit(Event::WorkflowChanged {
            workflow_id,
            title: workflow.title,
            what,
        })?;
        Ok(())
    }
}

/// Blocking work off the async threads: the keyring (a D-Bus call on Linux), git steps.
pub(super) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Error::Internal(format!("a background step stopped: {e}")))?
}
