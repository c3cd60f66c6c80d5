//! What the engine's loops and remedies share, in one place below them all: the data folder, the
//! store, the bus, the live-output channel, the model layer, the wake-ups of the loops that
//! sleep, the runs in flight and this Healer's instance marker — plus the few acts that more than
//! one of them performs (hand a failure to the pipeline, raise a checkpoint, change a workflow's
//! settings).
//!
//! The engine builds one `Services` and hands an `Arc` of it down; nothing here knows the engine,
//! the pipeline or a remedy. The loops reach what sits above them (the pipeline, the breakers)
//! through [`Healing`], which the engine fills in. An act belongs here only when more than one
//! part needs it; otherwise it lives with its caller.

mod active_runs;
mod approvals;
mod checkpoints;
mod environments;
mod workflows;
mod writes;

use std::sync::Arc;

use async_trait::async_trait;
use tokio::sync::{broadcast, Notify};

use crate::error::Result;
use crate::events::Bus;
use crate::failure::Failure;
use crate::llm::Llm;
use crate::paths::Paths;
use crate::store::{HealRecord, Store, StoredStep};
use crate::workflow::runner::OutputChunk;

pub(crate) use active_runs::ActiveRuns;
pub(crate) use approvals::Heard;
pub(crate) use environments::{join_words, EnvironmentLocks, Prepared};
pub(crate) use writes::{flush_loop, replay_journal, RunEnd};

/// How many chunks of live output a slow viewer may fall behind; the stored log is complete.
const OUTPUT_CAPACITY: usize = 4096;

/// What the engine plugs in above the loops: the failure pipeline with its remedies, and the
/// breakers' watch over the processes a run leaves. The loops hand work up through it without
/// importing what is there.
#[async_trait]
pub(crate) trait Healing: Send + Sync {
    /// Take a failure through the pipeline.
    async fn heal(&self, services: &Services, failure: Failure) -> Result<HealRecord>;

    /// An attempt ended and its process group was killed: look, off the run's path, for
    /// processes that outlived it.
    /// `escaped`: processes of the attempt found outside its process group (and ended with its
    /// control group); 0 where no control group held it.
    fn attempt_ended(&self, services: &Arc<Services>, run_id: i64, attempt: u32, escaped: usize);
}

/// Project failures the pipeline handed to the healer service (`spells`), waiting for it: the
/// pipeline never waits for spells, and the service's loop (which the engine starts) takes
/// them in order.
pub(crate) struct HealerDesk {
    tx: tokio::sync::mpsc::UnboundedSender<HandedOver>,
    rx: std::sync::Mutex<Option<tokio::sync::mpsc::UnboundedReceiver<HandedOver>>>,
}

/// One failure for the healer service, with its invocation already recorded.
pub(crate) struct HandedOver {
    pub invocation_id: i64,
    pub failure: Failure,
    /// When the failure reached the pipeline (the bench measures from here).
    pub at: std::time::Instant,
    /// Past the project's limit: only containment may run.
    pub contain_only: bool,
}

impl Default for HealerDesk {
    fn default() -> Self {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        HealerDesk {
            tx,
            rx: std::sync::Mutex::new(Some(rx)),
        }
    }
}

impl HealerDesk {
    /// Hand a failure over; `false` when no service takes them (its loop ended).
    pub(crate) fn hand_over(&self, item: HandedOver) -> bool {
        self.tx.send(item).is_ok()
    }

    /// The service's end of the desk (once).
    pub(crate) fn take(&self) -> Option<tokio::sync::mpsc::UnboundedReceiver<HandedOver>> {
        self.rx.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// Wake-ups for the loops that sleep until there is work.
#[derive(Default)]
pub(crate) struct WakeUps {
    /// The scheduler: a run was requested, a schedule changed, a run finished.
    pub scheduler: Notify,
    /// The inbox worker: a maintainer or planner item was queued or finished.
    pub inbox: Notify,
}

pub(crate) struct Services {
    pub paths: Paths,
    pub store: Store,
    pub bus: Bus,
    /// Live output of running attempts (not persisted; the stored logs are on the attempts).
    pub output: broadcast::Sender<OutputChunk>,
    /// The model layer: providers, tiers, budgets, agent loops.
    pub llm: Llm,
    /// Steps of running agent sessions as they are stored (the live view of a task page and
    /// the steering loop; the stored steps are complete).
    pub session_steps: broadcast::Sender<StoredStep>,
    pub wake: WakeUps,
    /// Workflow id → the run its task is running, so a workflow never runs twice at once.
    pub active_runs: ActiveRuns,
    /// One change to a workflow's own environment at a time, never under a running script.
    pub environments: EnvironmentLocks,
    /// Run ends the store refused (locked too long, disk full), written when it accepts again.
    pub pending: writes::Pending,
    /// Project failures waiting for the healer service.
    pub healer: HealerDesk,
    instance: String,
    healing: Box<dyn Healing>,
}

impl Services {
    pub(crate) fn new(
        paths: Paths,
        store: Store,
        bus: Bus,
        llm: Llm,
        healing: Box<dyn Healing>,
    ) -> Services {
        let (output, _) = broadcast::channel(OUTPUT_CAPACITY);
        let (session_steps, _) = broadcast::channel(OUTPUT_CAPACITY);
        Services {
            session_steps,
            instance: paths.instance_mark(),
            paths,
            store,
            bus,
            output,
            llm,
            wake: WakeUps::default(),
            active_runs: ActiveRuns::default(),
            environments: EnvironmentLocks::default(),
            pending: writes::Pending::default(),
            healer: HealerDesk::default(),
            healing,
        }
    }

    /// A marker of this data folder, set as `HEALER_INSTANCE` in every run's environment so the
    /// processes of one Healer are never taken for another's.
    pub(crate) fn instance(&self) -> &str {
        &self.instance
    }

    /// Take a failure through the pipeline the engine plugged in.
    pub(crate) async fn heal(&self, failure: Failure) -> Result<HealRecord> {
        self.healing.heal(self, failure).await
    }

    /// Tell the breakers an attempt ended (they look for processes that outlived it).
    pub(crate) fn attempt_ended(self: &Arc<Self>, run_id: i64, attempt: u32, escaped: usize) {
        self.healing.attempt_ended(self, run_id, attempt, escaped);
    }
}
