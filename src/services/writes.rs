//! Writes a run cannot lose: while another process holds the database locked they are tried
//! again (for the patience in `store.write_patience_secs`, 60 s by default); past that, or
//! while the disk is full, the end of a run is kept in memory and in a small journal file, and
//! written as soon as the store accepts writes again. The person is told when it was the disk.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio::sync::Notify;

use super::Services;
use crate::error::{Error, Result};
use crate::events::Event;
use crate::failure::FailureClass;
use crate::notification::{NewNotification, NotificationKind};
use crate::store::{AttemptEnd, Store};
use crate::workflow::RunStatus;

use crate::store::WRITE_PATIENCE;
const DEFAULT_WRITE_PATIENCE: Duration = Duration::from_secs(60);

/// How long a kept run end waits before the next try.
const FLUSH_EVERY: Duration = Duration::from_millis(500);

/// The end of a run, as it is to be written.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct RunEnd {
    pub run_id: i64,
    pub workflow_id: i64,
    pub title: String,
    /// The last attempt's end, when it could not be written either.
    pub attempt: Option<(i64, AttemptEnd)>,
    pub status: RunStatus,
    pub class: Option<FailureClass>,
    /// The failure's signature: the fixes made for that same error failed.
    #[serde(default)]
    pub signature: Option<String>,
    pub summary: String,
}

/// Run ends the store refused, and since when the disk was full (if that was why).
#[derive(Default)]
pub(crate) struct Pending {
    ends: Mutex<Vec<RunEnd>>,
    disk_full_since: Mutex<Option<String>>,
    pub wake: Notify,
}

impl Pending {
    pub(crate) fn is_empty(&self) -> bool {
        lock(&self.ends).is_empty()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Services {
    fn write_patience(&self) -> Duration {
        self.store
            .setting::<u64>(WRITE_PATIENCE)
            .ok()
            .flatten()
            .map_or(DEFAULT_WRITE_PATIENCE, Duration::from_secs)
    }

    /// Run a store write, trying again while the database is locked or the disk full, for at
    /// most the write patience.
    pub(crate) async fn patiently<T>(
        &self,
        mut write: impl FnMut(&Store) -> Result<T>,
    ) -> Result<T> {
        let deadline = Instant::now() + self.write_patience();
        let mut pause = Duration::from_millis(50);
        loop {
            match write(&self.store) {
                Err(e) if (e.is_locked() || e.is_disk_full()) && Instant::now() < deadline => {
                    if e.is_disk_full() {
                        self.note_disk_full();
                    }
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(2));
                }
                other => return other,
            }
        }
    }

    fn note_disk_full(&self) {
        let mut since = lock(&self.pending.disk_full_since);
        if since.is_none() {
            tracing::error!(
                "the disk holding {} is full: Healer keeps run results in memory until it can save them",
                self.paths.data_dir().display()
            );
            *since = Some(crate::store::now());
        }
    }

    /// Record a run's end: written now (patiently), or kept and written later. The workflow's
    /// run slot is free either way.
    pub(crate) async fn record_run_end(&self, end: RunEnd) {
        let written = self.patiently(|store| write_end(store, &end)).await;
        match written {
            Ok(()) => self.announce(&end),
            Err(e) => self.keep_run_end(end, &e),
        }
    }

    /// Keep a run's end the store refused (`why`), to be written as soon as it accepts.
    pub(crate) fn keep_run_end(&self, end: RunEnd, why: &Error) {
        if why.is_disk_full() {
            self.note_disk_full();
        }
        tracing::error!(
            run = end.run_id,
            "could not save the end of the run ({why}); keeping it until the store accepts writes"
        );
        let journal = self.paths.pending_dir();
        if std::fs::create_dir_all(&journal).is_ok() {
            if let Ok(text) = serde_json::to_string(&end) {
                let _ = std::fs::write(journal.join(format!("run-{}.json", end.run_id)), text);
            }
        }
        lock(&self.pending.ends).push(end);
        self.pending.wake.notify_one();
    }

    /// Write what was kept, oldest first, until the store refuses again. Returns how many are
    /// still kept.
    pub(crate) fn flush_pending(&self) -> usize {
        loop {
            let Some(end) = lock(&self.pending.ends).first().cloned() else {
                break;
            };
            if let Err(e) = write_end(&self.store, &end) {
                if e.is_disk_full() {
                    self.note_disk_full();
                }
                return lock(&self.pending.ends).len();
            }
            lock(&self.pending.ends).retain(|k| k.run_id != end.run_id);
            let _ = std::fs::remove_file(
                self.paths
                    .pending_dir()
                    .join(format!("run-{}.json", end.run_id)),
            );
            tracing::info!(run = end.run_id, "saved the end of the run that was kept");
            self.announce(&end);
            self.scheduler_may_go();
        }
        let since = lock(&self.pending.disk_full_since).take();
        if let Some(since) = since {
            self.tell_disk_was_full(&since);
        }
        0
    }

    fn scheduler_may_go(&self) {
        self.wake.scheduler.notify_one();
    }

    fn announce(&self, end: &RunEnd) {
        if let Err(e) = self.bus.emit(Event::RunFinished {
            run_id: end.run_id,
            // Read back: the end was just written, and a journal kept by an older build has
            // no number (0 means unknown to the window).
            run_number: self.store.run(end.run_id).map_or(0, |r| r.number),
            workflow_id: end.workflow_id,
            title: end.title.clone(),
            status: end.status,
            summary: end.summary.clone(),
        }) {
            tracing::warn!(
                run = end.run_id,
                "could not announce the end of the run: {e}"
            );
        }
    }

    fn tell_disk_was_full(&self, since: &str) {
        let body = format!(
            "From {since} the disk holding Healer's data ({}) was full, so Healer could not save. \
             It kept the results of runs that ended meanwhile and saved them once there was room \
             again. Free some space on that disk so that it does not happen again.",
            self.paths.data_dir().display()
        );
        let made = self.store.insert_notification(&NewNotification::new(
            NotificationKind::Safety,
            "The disk was full".to_string(),
            body,
        ));
        match made {
            Ok(notification) => {
                let _ = self.bus.emit(Event::NotificationCreated { notification });
            }
            Err(e) => tracing::error!("could not tell that the disk was full: {e}"),
        }
    }
}

/// Write kept run ends whenever there are some, until cancelled.
pub(crate) async fn flush_loop(
    services: std::sync::Arc<Services>,
    cancel: tokio_util::sync::CancellationToken,
) {
    loop {
        let waiting = !services.pending.is_empty();
        tokio::select! {
            () = cancel.cancelled() => break,
            () = services.pending.wake.notified() => {}
            () = tokio::time::sleep(FLUSH_EVERY), if waiting => {}
        }
        if !services.pending.is_empty() {
            services.flush_pending();
        }
    }
}

/// Everything a run's end changes, in order; each step may be repeated safely.
fn write_end(store: &Store, end: &RunEnd) -> Result<()> {
    if let Some((attempt_id, attempt)) = &end.attempt {
        store.finish_attempt(*attempt_id, attempt)?;
    }
    store.finish_run(end.run_id, end.status, end.class, &end.summary)?;
    let succeeded = end.status == RunStatus::Succeeded;
    store.settle_workflow_status(end.workflow_id, succeeded)?;
    // A fixed version's run tells the healing memory whether the fix held. A passing problem
    // says nothing about the code, and a failure without a known error settles nothing.
    if succeeded {
        store.settle_pattern_fixes(end.run_id, None)?;
    } else if let (Some(signature), false) = (
        end.signature.as_deref(),
        end.class == Some(FailureClass::Transient),
    ) {
        store.settle_pattern_fixes(end.run_id, Some(signature))?;
    }
    store.settle_package_fixes(end.run_id, succeeded)?;
    Ok(())
}

/// At start-up, before open runs are marked interrupted: write the run ends a previous engine
/// kept but could not save before it stopped. Returns how many.
pub(crate) fn replay_journal(services: &Services) -> usize {
    let Ok(entries) = std::fs::read_dir(services.paths.pending_dir()) else {
        return 0;
    };
    let mut written = 0;
    for entry in entries.flatten() {
        let Ok(text) = std::fs::read_to_string(entry.path()) else {
            continue;
        };
        match serde_json::from_str::<RunEnd>(&text) {
            Ok(end) => match write_end(&services.store, &end) {
                Ok(()) => {
                    written += 1;
                    let _ = std::fs::remove_file(entry.path());
                }
                Err(e) => tracing::error!("could not save a kept run end: {e}"),
            },
            Err(e) => {
                tracing::warn!("an unreadable kept run end was dropped: {e}");
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    written
}
