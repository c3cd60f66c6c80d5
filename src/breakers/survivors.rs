//! Processes that outlive their run: a script that moved a child out of its process group
//! (setsid, a double fork into a new session) leaves it running after Healer ended the group.
//! Such a child may be a helper the script started on purpose, so Healer does not kill it on
//! sight: it counts the live ones — found by this Healer's instance marker and a run id in their
//! environment, whose attempt is over — and while `surviving_groups` or more of them live, no
//! scheduled run starts. The count is of processes alive now: when they end, it falls and
//! scheduled runs go again on their own; Resume ends them and goes on at once.

use std::sync::{Arc, Weak};
use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};

use super::{settings, tripped};
use crate::error::Result;
use crate::events::Event;
use crate::memory::DecisionKind;
use crate::notification::{NewNotification, NotificationKind};
use crate::scheduler::{paused as scheduler_paused, SCHEDULER_PAUSED};
use crate::services::Services;
use crate::workflow::RunStatus;

/// Settings key: the stray processes the survivors breaker paused scheduled runs for.
const PAUSED_FOR: &str = "breakers.strays_paused_for";

/// How long a process whose group was just killed gets to be gone before it counts.
const DYING: Duration = Duration::from_millis(200);

/// While scheduled runs wait for strays, how often they are counted again.
const RECOUNT: Duration = Duration::from_secs(1);

/// A live process a run left behind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Stray {
    pub pid: i32,
    pub run_id: i64,
    pub command: String,
}

/// An attempt ended: after a moment, count the processes runs left behind.
pub(crate) async fn check_survivors(services: Arc<Services>) {
    tokio::time::sleep(DYING).await;
    if let Err(e) = recount(&services) {
        tracing::error!("could not count processes that outlived their runs: {e}");
    }
}

/// Count the strays now; pause scheduled runs at the limit, let them go below it.
fn recount(services: &Arc<Services>) -> Result<()> {
    let strays = strays(services)?;
    let store = &services.store;
    let limit = settings(store)?.surviving_groups;
    let ours = store.setting::<Vec<Stray>>(PAUSED_FOR)?;
    let count = u32::try_from(strays.len()).unwrap_or(u32::MAX);
    match ours {
        Some(_) if count < limit => lift(services, &strays),
        Some(_) => Ok(()),
        None if count >= limit && scheduler_paused(store)?.is_none() => pause(services, &strays),
        None => Ok(()),
    }
}

fn pause(services: &Arc<Services>, strays: &[Stray]) -> Result<()> {
    let store = &services.store;
    let listed: Vec<String> = strays
        .iter()
        .map(|s| format!("{} (pid {}, left by run {})", s.command, s.pid, s.run_id))
        .collect();
    let reason = format!(
        "{} processes that scripts started are still running after their runs ended: {}. \
         Scheduled runs wait until fewer than {} are left.",
        strays.len(),
        listed.join("; "),
        settings(store)?.surviving_groups
    );
    store.set_setting(PAUSED_FOR, &strays)?;
    store.set_setting(SCHEDULER_PAUSED, &reason)?;
    let n = store.insert_notification(&NewNotification::new(
        NotificationKind::Safety,
        "Scheduled runs are paused".to_string(),
        format!(
            "{reason} A script that starts a background process in a new session (setsid, \
             nohup with a double fork) leaves it behind when its run ends. They go again on \
             their own once those processes end; Resume in Workflows ends them and goes on now."
        ),
    ))?;
    services
        .bus
        .emit(Event::NotificationCreated { notification: n })?;
    tripped(services, DecisionKind::Survivors, None, &reason, "")?;
    watch(Arc::downgrade(services));
    Ok(())
}

/// At start-up: scheduled runs may still wait for strays of an earlier session; count again.
pub(crate) fn recount_after_start(services: &Arc<Services>) {
    if let Ok(Some(_)) = services.store.setting::<Vec<Stray>>(PAUSED_FOR) {
        watch(Arc::downgrade(services));
    }
}

/// Recount while scheduled runs wait; the watch ends with the pause, or with the engine.
fn watch(services: Weak<Services>) {
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(RECOUNT).await;
            let Some(services) = services.upgrade() else {
                return;
            };
            match services.store.setting::<Vec<Stray>>(PAUSED_FOR) {
                Ok(Some(_)) => {}
                _ => return,
            }
            if let Err(e) = recount(&services) {
                tracing::warn!("could not count stray processes: {e}");
            }
        }
    });
}

/// Fewer strays than the limit are left: scheduled runs go again.
fn lift(services: &Services, left: &[Stray]) -> Result<()> {
    let summary = if left.is_empty() {
        "Scheduled runs resumed: the processes runs left behind have ended".to_string()
    } else {
        format!(
            "Scheduled runs resumed: {} process(es) runs left behind still running, below the \
             limit",
            left.len()
        )
    };
    resumed(services, &summary)
}

/// Let scheduled runs go again at the person's word, ending the processes runs left behind.
pub(crate) fn resume_scheduler(services: &Services) -> Result<()> {
    let strays = strays(services)?;
    for s in &strays {
        let _ = kill(Pid::from_raw(s.pid), Signal::SIGKILL);
    }
    let summary = if strays.is_empty() {
        "Scheduled runs resumed".to_string()
    } else {
        format!(
            "Scheduled runs resumed; ended {} process(es) runs had left behind",
            strays.len()
        )
    };
    resumed(services, &summary)
}

fn resumed(services: &Services, summary: &str) -> Result<()> {
    services.store.delete_setting(SCHEDULER_PAUSED)?;
    services.store.delete_setting(PAUSED_FOR)?;
    services
        .store
        .log_decision(None, DecisionKind::SchedulerResumed, summary, "")?;
    services.bus.emit(Event::BreakerTripped {
        breaker: DecisionKind::SchedulerResumed,
        workflow_id: None,
        detail: summary.to_string(),
    })?;
    services.wake.scheduler.notify_one();
    Ok(())
}

/// Live (not zombie) processes with this Healer's instance marker whose attempt is over: its
/// run is no longer running, or has moved on to a later attempt.
pub(crate) fn strays(services: &Services) -> Result<Vec<Stray>> {
    let ours = format!("HEALER_INSTANCE={}", services.instance());
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Ok(Vec::new());
    };
    let mut found = Vec::new();
    for pid in entries
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
        .filter(|pid| u32::try_from(*pid).ok() != Some(me))
    {
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        let vars: Vec<&[u8]> = environ.split(|b| *b == 0).collect();
        if !vars.contains(&ours.as_bytes()) {
            continue;
        }
        let value = |name: &str| {
            vars.iter()
                .find_map(|v| v.strip_prefix(format!("{name}=").as_bytes()))
                .and_then(|v| std::str::from_utf8(v).ok())
                .and_then(|v| v.parse::<i64>().ok())
        };
        let (Some(run_id), Some(attempt)) = (value("HEALER_RUN_ID"), value("HEALER_ATTEMPT"))
        else {
            continue;
        };
        if zombie(pid) || attempt_is_live(services, run_id, attempt)? {
            continue;
        }
        found.push(Stray {
            pid,
            run_id,
            command: command_of(pid),
        });
    }
    Ok(found)
}

fn attempt_is_live(services: &Services, run_id: i64, attempt: i64) -> Result<bool> {
    Ok(match services.store.run(run_id) {
        Ok(run) => run.status == RunStatus::Running && i64::from(run.attempts) == attempt,
        Err(crate::error::Error::NotFound { .. }) => false,
        Err(e) => return Err(e),
    })
}

fn command_of(pid: i32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .ok()
        .map(|raw| {
            raw.split(|b| *b == 0)
                .filter(|p| !p.is_empty())
                .map(|p| String::from_utf8_lossy(p).into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| "a process".to_string())
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
