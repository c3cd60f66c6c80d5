//! The healer service's part of the engine's API: each project's healer settings, the
//! invocations (for the window's cards, `healer heals`), snapshots and their restore, the
//! stuck scan, and what a crash left of the service, settled at start.

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::Handle;
use crate::error::{Error, Result};
use crate::events::Event;
use crate::failure::{Evidence, Failure, FailureSource, ProjectScenario};
use crate::notification::{NewNotification, NotificationKind};
use crate::project::snapshot;
use crate::spells::{self, StuckReport};
use crate::store::{HealerConfig, HealerInvocation, InvocationStatus, SnapshotRecord};
use crate::tasklist::{read_file, TASKS_FILE};

/// How often the engine runs the stuck scan.
pub const STUCK_SCAN_SECS: u64 = 10 * 60;

impl Handle {
    pub fn healer_config(&self, project_id: i64) -> Result<HealerConfig> {
        self.services.store.healer_config(project_id)
    }

    pub fn set_healer_config(&self, project_id: i64, config: HealerConfig) -> Result<HealerConfig> {
        let project = self.services.store.project(project_id)?;
        for name in config.allowed_spells.iter().chain(&config.forbidden_spells) {
            if !spells::SPELLS.contains(&name.as_str()) {
                return Err(Error::InvalidInput(format!(
                    "there is no repair called {name:?}; the known ones are {}",
                    spells::SPELLS.join(", ")
                )));
            }
        }
        self.services.store.set_healer_config(project_id, &config)?;
        self.services.bus.emit(Event::ProjectChanged {
            project_id,
            name: project.name,
            what: "its healer settings changed".to_string(),
        })?;
        self.services.store.healer_config(project_id)
    }

    /// Invocations, newest first: of a project (and task), or of all.
    pub fn healer_invocations(
        &self,
        project_id: Option<i64>,
        task_id: Option<&str>,
        limit: u32,
    ) -> Result<Vec<HealerInvocation>> {
        self.services.store.invocations(project_id, task_id, limit)
    }

    pub fn snapshots(
        &self,
        project_id: Option<i64>,
        task_id: Option<&str>,
    ) -> Result<Vec<SnapshotRecord>> {
        self.services.store.snapshots(project_id, task_id)
    }

    /// Put a snapshot back into its task's worktree (what is there now is pinned first).
    /// Refused while an agent works in that worktree.
    pub async fn restore_snapshot(&self, id: i64) -> Result<String> {
        let snap = self.services.store.snapshot(id)?;
        let busy = self
            .services
            .store
            .running_sessions()?
            .into_iter()
            .any(|s| {
                s.project_id == snap.project_id
                    && s.task_id == snap.task_id
                    && self.projects().is_running(s.id)
            });
        let project = self.services.store.project(snap.project_id)?;
        let task = crate::project::task_words(&project, &snap.task_id);
        if busy {
            return Err(Error::InvalidInput(format!(
                "an agent is working on {task} now; stop it before putting back an earlier state of its files"
            )));
        }
        let store = self.services.store.clone();
        let restored = tokio::task::spawn_blocking(move || snapshot::restore_recorded(&store, id))
            .await
            .map_err(|e| Error::Internal(format!("the restore stopped: {e}")))??;
        self.services.bus.emit(Event::ProjectChanged {
            project_id: project.id,
            name: project.name,
            what: format!("the files of {task} were put back as a snapshot kept them"),
        })?;
        Ok(match restored.previous {
            Some(_) => format!(
                "Restored the snapshot of {task} into its working copy ({} written, {} removed); what was there before is kept as a snapshot too",
                crate::workflow::count(restored.written, "file", "files"),
                restored.removed,
            ),
            None => format!("The working copy of {task} already matched this snapshot; nothing changed"),
        })
    }

    /// The stuck scan as of `now`, without acting on it (`healer scan`).
    pub fn stuck_scan(&self, now: chrono::DateTime<chrono::Utc>) -> Result<StuckReport> {
        spells::scan(&self.services.store, now)
    }

    /// The stuck scan, acted on: a `SubtaskStuck` failure into the pipeline when the project's
    /// `onStuckSubtask` is on, else a notification. Each finding is acted on once while it
    /// lasts, remembered in the store so a restart does not report it again.
    pub async fn act_on_stuck(&self, now: chrono::DateTime<chrono::Utc>) -> Result<StuckReport> {
        let report = self.stuck_scan(now)?;
        let key = |stuck: &crate::spells::StuckTask| {
            format!(
                "{}/{}/{:?}/{:?}",
                stuck.project_id, stuck.task_id, stuck.kind, stuck.session_id
            )
        };
        let keys: Vec<String> = report.tasks.iter().map(key).collect();
        let new: HashSet<String> = self
            .services
            .store
            .settle_stuck_findings(&keys)?
            .into_iter()
            .collect();
        for stuck in &report.tasks {
            if !new.contains(&key(stuck)) {
                continue;
            }
            let config = self.services.store.healer_config(stuck.project_id)?;
            // A task nobody works on is the person's to look at: no agent to heal.
            let unattended = stuck.kind == crate::spells::StuckKind::Unattended;
            match stuck
                .session_id
                .filter(|_| config.scenarios.on_stuck_subtask && !unattended)
            {
                Some(session_id) => {
                    let failure = Failure::new(
                        FailureSource::ProjectTask {
                            project_id: stuck.project_id,
                            task_id: stuck.task_id.clone(),
                            session_id,
                        },
                        ProjectScenario::SubtaskStuck.as_str(),
                        ProjectScenario::SubtaskStuck.class(),
                        Evidence {
                            error_type: None,
                            message: format!(
                                "The task \u{201c}{}\u{201d} is stuck: {}",
                                stuck.title, stuck.detail
                            ),
                            stack: None,
                        },
                    );
                    self.services.heal(failure).await?;
                }
                None => {
                    let notification = self.services.store.insert_notification(
                        &NewNotification::new(
                            NotificationKind::Heal,
                            format!("A task of \u{201c}{}\u{201d} looks stuck", stuck.project),
                            format!("\u{201c}{}\u{201d}: {}.", stuck.title, stuck.detail),
                        )
                        .about_task(stuck.project_id, &stuck.task_id),
                    )?;
                    self.services
                        .bus
                        .emit(Event::NotificationCreated { notification })?;
                }
            }
        }
        Ok(report)
    }

    /// What a crash left of the service: invocations marked running end as unresolved, and
    /// snapshot refs pinned but never recorded are recorded now. Returns what it said.
    pub fn settle_healer_leftovers(&self) -> Result<Vec<String>> {
        let store = &self.services.store;
        let mut said = Vec::new();
        for inv in store.running_invocations()? {
            store.finish_invocation(
                inv.id,
                InvocationStatus::Unresolved,
                "Healer stopped while it worked on this; any snapshot it pinned is kept",
            )?;
            said.push(format!(
                "healer invocation {} on task {} was cut short",
                inv.id, inv.task_id
            ));
        }
        for project in store.list_projects()? {
            let repo = Path::new(&project.path);
            if !repo.exists() {
                continue;
            }
            let tasks = read_file(&repo.join(TASKS_FILE)).ok();
            let worktree_of = |task: &str| {
                tasks
                    .as_ref()
                    .and_then(|f| f.task(task))
                    .and_then(|t| t.worktree.clone())
            };
            match snapshot::record_unrecorded(store, project.id, repo, &worktree_of) {
                Ok(found) => {
                    for snap in found {
                        said.push(format!(
                            "snapshot {} of task {} in \u{201c}{}\u{201d} ({}) was pinned but not recorded; it is recorded now",
                            snap.id, snap.task_id, project.name, snap.ref_name
                        ));
                    }
                }
                Err(e) => tracing::warn!(project = project.id, "cannot look for snapshots: {e}"),
            }
        }
        if !said.is_empty() {
            self.services.bus.emit(Event::RecoveredAtStartup {
                summary: format!("Healer service: {}", said.join("; ")),
            })?;
        }
        Ok(said)
    }
}

/// The stuck scan every [`STUCK_SCAN_SECS`].
pub(super) async fn scan_loop(handle: Handle, cancel: CancellationToken) {
    loop {
        tokio::select! {
            () = cancel.cancelled() => return,
            () = tokio::time::sleep(Duration::from_secs(STUCK_SCAN_SECS)) => {}
        }
        if let Err(e) = handle.act_on_stuck(chrono::Utc::now()).await {
            tracing::warn!("the stuck scan failed: {e}");
        }
    }
}
