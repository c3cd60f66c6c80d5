//! The scheduler: sleeps until the next due run (no polling), queues due runs (a run missed
//! while Healer was closed runs once, not once per missed time), and dispatches queued runs
//! up to the concurrency cap, never two of one workflow at once. Each run goes attempt by
//! attempt ([`attempts`]) and hands a final failure to the pipeline through the services.

pub(crate) mod attempts;
mod repaired;
mod setup;

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use attempts::execute_run;

use crate::error::Result;
use crate::services::Services;
use crate::store::Store;
use crate::workflow::RunTrigger;

/// How late a due run may be started and still count as on schedule rather than a catch-up.
const ON_TIME: chrono::Duration = chrono::Duration::seconds(60);

/// With nothing due, the scheduler still wakes this often (a clock change is noticed then).
const IDLE_WAKE: Duration = Duration::from_secs(3600);

/// Settings key: the most runs at once (default: the number of cores).
pub const MAX_CONCURRENT_RUNS: &str = "scheduler.max_concurrent_runs";

/// Settings key: why scheduled runs are paused (absent: they are not). A breaker sets it.
pub const SCHEDULER_PAUSED: &str = "scheduler.paused";

/// Why scheduled runs are paused, if they are.
pub fn paused(store: &Store) -> Result<Option<String>> {
    store.setting::<String>(SCHEDULER_PAUSED)
}

pub(crate) async fn schedule_loop(services: Arc<Services>, cancel: CancellationToken) {
    let cap = services
        .store
        .setting::<usize>(MAX_CONCURRENT_RUNS)
        .ok()
        .flatten()
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
        .max(1);
    let permits = Arc::new(Semaphore::new(cap));
    let mut runs: JoinSet<i64> = JoinSet::new();
    loop {
        let next_due = match queue_due_runs(&services, Utc::now()) {
            Ok(next) => next,
            Err(e) => {
                tracing::error!("the scheduler could not read the schedules: {e}");
                None
            }
        };
        if let Err(e) = dispatch(&services, &permits, &mut runs) {
            tracing::error!("the scheduler could not start queued runs: {e}");
        }
        // A run waiting out a retry's backoff wakes the scheduler when it is due.
        let next_retry = services
            .store
            .next_retry_at()
            .ok()
            .flatten()
            .as_deref()
            .and_then(parse_stamp);
        let next_due = match (next_due, next_retry) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let sleep_for = next_due
            .and_then(|t| (t - Utc::now()).to_std().ok())
            .unwrap_or(Duration::ZERO)
            .min(IDLE_WAKE);
        let sleep_for = if next_due.is_none() {
            IDLE_WAKE
        } else {
            sleep_for
        };
        tokio::select! {
            () = cancel.cancelled() => break,
            () = services.wake.scheduler.notified() => {}
            () = tokio::time::sleep(sleep_for) => {}
            Some(done) = runs.join_next(), if !runs.is_empty() => {
                if let Ok(workflow_id) = done {
                    services.active_runs.remove(workflow_id);
                }
            }
        }
    }
    // Shutting down: runs in flight stop now (their process groups are killed as their tasks
    // drop) and are recorded as interrupted.
    runs.abort_all();
    while runs.join_next().await.is_some() {}
    if let Err(e) = services.store.interrupt_open_runs() {
        tracing::warn!("could not mark unfinished runs interrupted: {e}");
    }
}

/// Queue every run that is due by `now`; returns when the next one is due. Nothing is queued
/// while a breaker has paused scheduled runs.
fn queue_due_runs(services: &Services, now: DateTime<Utc>) -> Result<Option<DateTime<Utc>>> {
    let mut next_wake: Option<DateTime<Utc>> = None;
    if paused(&services.store)?.is_some() {
        return Ok(None);
    }
    let now_text = stamp(now);
    for w in services.store.scheduled_workflows()? {
        let since = w
            .last_due_at
            .as_deref()
            .and_then(parse_stamp)
            .or_else(|| parse_stamp(&w.created_at))
            .unwrap_or(now);
        let Some(due) = w.schedule.next_after(since) else {
            continue;
        };
        let next = if due <= now {
            let trigger = if now - due > ON_TIME {
                RunTrigger::CatchUp
            } else {
                RunTrigger::Schedule
            };
            // A run of this workflow that is still open takes this due time's place.
            if let Some(run_id) = services.store.enqueue_run(w.id, trigger)? {
                tracing::info!(
                    workflow = w.id,
                    run = run_id,
                    trigger = trigger.as_str(),
                    "run queued"
                );
            }
            let next = w.schedule.next_after(now);
            services
                .store
                .mark_due_handled(w.id, &now_text, next.map(stamp).as_deref())?;
            next
        } else {
            let due_text = stamp(due);
            if w.next_run_at.as_deref() != Some(due_text.as_str()) {
                services.store.set_next_run_at(w.id, Some(&due_text))?;
            }
            Some(due)
        };
        if let Some(next) = next {
            next_wake = Some(next_wake.map_or(next, |n| n.min(next)));
        }
    }
    Ok(next_wake)
}

/// Start queued runs while there is room; one at a time per workflow.
fn dispatch(
    services: &Arc<Services>,
    permits: &Arc<Semaphore>,
    runs: &mut JoinSet<i64>,
) -> Result<()> {
    for (run_id, workflow_id) in services.store.queued_runs()? {
        if services.active_runs.contains(workflow_id) {
            continue;
        }
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            break;
        };
        if !services.store.claim_run(run_id)? {
            continue;
        }
        let task = run_task(services.clone(), run_id, workflow_id, permit);
        let abort = runs.spawn(task);
        services.active_runs.insert(workflow_id, run_id, abort);
    }
    Ok(())
}

async fn run_task(
    services: Arc<Services>,
    run_id: i64,
    workflow_id: i64,
    permit: OwnedSemaphorePermit,
) -> i64 {
    execute_run(&services, run_id, workflow_id, Some(permit)).await;
    services.wake.scheduler.notify_one();
    workflow_id
}

pub(crate) fn stamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn parse_stamp(s: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}
