//! Process groups that outlive their kill: a script that moved a child out of its process group
//! (setsid, a double fork into a new session) leaves it running after Healer ended the group.
//! Healer finds such processes by the run id in their environment, ends them, and after
//! `surviving_groups` such attempts pauses the scheduler and tells the person.

use std::sync::Arc;
use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use super::{settings, tripped};
use crate::error::Result;
use crate::events::Event;
use crate::memory::DecisionKind;
use crate::notification::{NewNotification, NotificationKind};
use crate::scheduler::{paused as scheduler_paused, SCHEDULER_PAUSED};
use crate::services::Services;

/// Settings key: attempts that left survivors since the scheduler last ran freely.
const SURVIVORS_SEEN: &str = "breakers.surviving_groups_seen";

/// How long a process just sent SIGKILL gets to be gone before it counts as a survivor.
const DYING: Duration = Duration::from_millis(200);

/// Count the processes of this attempt that outlived its process group's kill: `escaped`
/// when its control group found (and ended) them; else look for them by their environment,
/// and end them.
pub(crate) async fn check_survivors(
    services: Arc<Services>,
    run_id: i64,
    attempt: u32,
    escaped: usize,
) {
    if escaped > 0 {
        if let Err(e) = count(&services, run_id, escaped) {
            tracing::error!("could not record processes that survived run {run_id}: {e}");
        }
        return;
    }
    let instance = services.instance();
    if find(instance, run_id, attempt).is_empty() {
        return;
    }
    tokio::time::sleep(DYING).await;
    let survivors = find(instance, run_id, attempt);
    if survivors.is_empty() {
        return;
    }
    for pid in &survivors {
        let _ = kill(Pid::from_raw(*pid), Signal::SIGKILL);
    }
    if let Err(e) = count(&services, run_id, survivors.len()) {
        tracing::error!("could not record processes that survived run {run_id}: {e}");
    }
}

fn count(services: &Services, run_id: i64, n: usize) -> Result<()> {
    let store = &services.store;
    let seen = store.setting::<u32>(SURVIVORS_SEEN)?.unwrap_or(0) + 1;
    store.set_setting(SURVIVORS_SEEN, &seen)?;
    tracing::warn!(
        run = run_id,
        "{n} process(es) outlived the end of the run; ended them"
    );
    let limit = settings(store)?.surviving_groups;
    if seen < limit || scheduler_paused(store)?.is_some() {
        return Ok(());
    }
    let reason = format!(
        "{seen} runs left processes running after Healer ended them (the last: run {} of \
         \u{201c}{}\u{201d}). Scheduled runs are paused until you resume them.",
        store.run_name(run_id),
        store
            .run(run_id)
            .and_then(|r| store.workflow(r.workflow_id))
            .map(|w| w.title)
            .unwrap_or_default()
    );
    store.set_setting(SCHEDULER_PAUSED, &reason)?;
    let n = store.insert_notification(&NewNotification::new(
        NotificationKind::Safety,
        "Scheduled runs are paused".to_string(),
        format!(
            "{reason} A script that starts background processes in a new session (setsid, \
             nohup with a double fork) escapes its run; Healer ended them each time. Resume in \
             Workflows when the scripts are fixed."
        ),
    ))?;
    services
        .bus
        .emit(Event::NotificationCreated { notification: n })?;
    tripped(services, DecisionKind::Survivors, None, &reason, "")
}

/// Let scheduled runs go again (and start counting survivors from zero).
pub(crate) fn resume_scheduler(services: &Services) -> Result<()> {
    services.store.delete_setting(SCHEDULER_PAUSED)?;
    services.store.set_setting(SURVIVORS_SEEN, &0u32)?;
    services.store.log_decision(
        None,
        DecisionKind::SchedulerResumed,
        "Scheduled runs resumed",
        "",
    )?;
    services.bus.emit(Event::BreakerTripped {
        breaker: DecisionKind::SchedulerResumed,
        workflow_id: None,
        detail: "Scheduled runs resumed".to_string(),
    })?;
    services.wake.scheduler.notify_one();
    Ok(())
}

/// Live (not zombie) processes whose environment carries this Healer's instance marker and
/// this run's id and attempt.
fn find(instance: &str, run_id: i64, attempt: u32) -> Vec<i32> {
    let ours = format!("HEALER_INSTANCE={instance}");
    let run = format!("HEALER_RUN_ID={run_id}");
    let att = format!("HEALER_ATTEMPT={attempt}");
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
        .filter(|pid| u32::try_from(*pid).ok() != Some(me))
        .filter(|pid| {
            let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
                return false;
            };
            let vars: Vec<&[u8]> = environ.split(|b| *b == 0).collect();
            vars.contains(&ours.as_bytes())
                && vars.contains(&run.as_bytes())
                && vars.contains(&att.as_bytes())
        })
        .filter(|pid| !zombie(*pid))
        .collect()
}

fn zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next().map(|s| s == "Z"))
        })
        .unwrap_or(true)
}
