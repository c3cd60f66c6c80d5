//! Building a workflow's own environment: before a run (when the version declares other packages
//! than were installed), by the missing-module remedy, at a checkpoint's "Try another package
//! name…", and by Reinstall. One change at a time per workflow, and never under a running script.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::OwnedMutexGuard;

use super::Services;
use crate::deps::{
    self, parse_requirements, requirements_text, Built, Ecosystem, EnvironmentRecord, Requirement,
};
use crate::error::Result;
use crate::events::Event;
use crate::store::now;
use crate::workflow::{EnvVar, ScriptVersion, Workflow};

/// One lock per workflow: a run holds it while its script runs, an installation while it
/// installs, so Reinstall never pulls a venv from under a running script.
#[derive(Default)]
pub(crate) struct EnvironmentLocks {
    locks: Mutex<HashMap<i64, Arc<tokio::sync::Mutex<()>>>>,
}

impl EnvironmentLocks {
    pub(crate) async fn lock(&self, workflow_id: i64) -> OwnedMutexGuard<()> {
        let lock = {
            let mut locks = self.locks.lock().unwrap_or_else(|p| p.into_inner());
            locks.entry(workflow_id).or_default().clone()
        };
        lock.lock_owned().await
    }
}

/// What preparing a run's environment did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Prepared {
    /// Nothing to install: the machine's interpreter, or an environment already as declared.
    Ready,
    /// Installed now; what the installer printed.
    Installed { log: String },
    /// The installation failed: what it printed, and its own error lines.
    Failed { log: String, error: String },
}

impl Services {
    /// What the workflow's own environment adds to a script's variables: for a run, and for
    /// the sandbox's syntax checks and evaluations of its code, so all three see the same.
    pub(crate) fn environment_vars(&self, workflow: &Workflow) -> Vec<EnvVar> {
        let base = std::env::var("PATH").unwrap_or_default();
        deps::run_environment(
            &workflow.runtime,
            &self.paths.workflow_dir(workflow.id),
            &base,
        )
    }

    /// The installation time limit (setting `environment.install_timeout_secs`).
    pub(crate) fn install_timeout(&self) -> Result<Duration> {
        Ok(Duration::from_secs(
            self.store
                .setting::<u64>(deps::INSTALL_TIMEOUT)?
                .unwrap_or(deps::DEFAULT_INSTALL_TIMEOUT_SECS),
        ))
    }

    /// Make the workflow's environment hold what `version` declares. The caller holds the
    /// workflow's environment lock.
    pub(crate) async fn prepare_environment(
        &self,
        workflow: &Workflow,
        version: &ScriptVersion,
    ) -> Result<Prepared> {
        let Some(ecosystem) = Ecosystem::of(&workflow.runtime) else {
            return Ok(Prepared::Ready);
        };
        let folder = self.paths.workflow_dir(workflow.id);
        let wanted = version.requirements.join("\n");
        let record = self.store.environment(workflow.id)?;
        let exists = deps::environment_exists(ecosystem, &folder);
        if wanted.is_empty() && !exists {
            return Ok(Prepared::Ready);
        }
        if exists
            && record
                .as_ref()
                .is_some_and(|r| r.ok && r.requirements == wanted)
        {
            return Ok(Prepared::Ready);
        }
        let requirements = match parse_requirements(ecosystem, &wanted) {
            Ok(list) => list,
            Err(error) => {
                return Ok(Prepared::Failed {
                    log: String::new(),
                    error: format!(
                        "version {} declares a package Healer cannot install: {error}",
                        version.version
                    ),
                })
            }
        };
        // Packages are only ever added by installing over what is there; one that is no
        // longer declared goes with a fresh environment.
        let kept = record.as_ref().map_or(Vec::new(), |r| {
            r.requirements
                .lines()
                .map(str::to_string)
                .collect::<Vec<_>>()
        });
        let fresh = !kept.iter().all(|line| version.requirements.contains(line));
        let built = self
            .install_requirements(workflow, ecosystem, &requirements, fresh)
            .await?;
        Ok(if built.ok {
            Prepared::Installed { log: built.log }
        } else {
            Prepared::Failed {
                error: built.error.unwrap_or_default(),
                log: built.log,
            }
        })
    }

    /// Install `requirements` into the workflow's environment (`fresh`: from scratch), record
    /// how it went, and announce it. The caller holds the workflow's environment lock.
    pub(crate) async fn install_requirements(
        &self,
        workflow: &Workflow,
        ecosystem: Ecosystem,
        requirements: &[Requirement],
        fresh: bool,
    ) -> Result<Built> {
        let folder = self.paths.workflow_dir(workflow.id);
        std::fs::create_dir_all(&folder).map_err(|e| {
            crate::error::Error::io(format!("cannot create {}", folder.display()), e)
        })?;
        let built = deps::build(
            ecosystem,
            &folder,
            requirements,
            fresh,
            self.install_timeout()?,
        )
        .await;
        let text = requirements_text(ecosystem, requirements);
        self.store.record_environment(
            workflow.id,
            &EnvironmentRecord {
                requirements: text,
                ok: built.ok,
                lock: built.lock.join("\n"),
                log: built.log.clone(),
                error: built.error.clone(),
                interpreter: built.interpreter.clone(),
                built_at: now(),
            },
        )?;
        let summary = if built.ok {
            installed_summary(ecosystem, requirements, &built)
        } else {
            format!(
                "{} could not install its packages: {}",
                ecosystem.tool(),
                built.error.as_deref().unwrap_or("it failed")
            )
        };
        self.bus.emit(Event::EnvironmentBuilt {
            workflow_id: workflow.id,
            title: workflow.title.clone(),
            ok: built.ok,
            summary,
        })?;
        Ok(built)
    }
}

/// "installed PyYAML 6.0.2 and six 1.16.0", "removed every package".
pub(crate) fn installed_summary(
    ecosystem: Ecosystem,
    requirements: &[Requirement],
    built: &Built,
) -> String {
    if requirements.is_empty() {
        return "its environment holds no packages now".to_string();
    }
    let named: Vec<String> = requirements
        .iter()
        .map(|r| match built.installed_version(ecosystem, &r.name) {
            Some(v) => format!("{} {v}", r.name),
            None => r.name.clone(),
        })
        .collect();
    format!("installed {}", join_words(&named))
}

/// "a", "a and b", "a, b and c".
pub(crate) fn join_words(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}
