//! The inbox worker: takes waiting items (planner before maintainer, one at a time per
//! workflow) and runs their tasks. The long-running engine runs it in the background; an
//! engine a CLI command starts drains one workflow's items in place.

use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::{job, InboxItem, InboxKind};
use crate::error::Result;
use crate::services::Services;

/// With nothing to do the worker still looks this often (items another process queued).
const IDLE_LOOK: Duration = Duration::from_secs(30);

pub(crate) async fn inbox_loop(services: Arc<Services>, cancel: CancellationToken) {
    let mut jobs: JoinSet<()> = JoinSet::new();
    loop {
        match services.store.take_inbox_items(None) {
            Ok(items) => {
                for item in items {
                    jobs.spawn(work(services.clone(), item));
                }
            }
            Err(e) => tracing::error!("the inbox could not be read: {e}"),
        }
        tokio::select! {
            () = cancel.cancelled() => break,
            () = services.wake.inbox.notified() => {}
            Some(_) = jobs.join_next(), if !jobs.is_empty() => {}
            () = tokio::time::sleep(IDLE_LOOK) => {}
        }
    }
    // Stopping: tasks in flight end here; the next start marks them interrupted.
    jobs.abort_all();
    while jobs.join_next().await.is_some() {}
}

/// Work through one workflow's items here and now, until none is left.
pub(crate) async fn drain(services: &Arc<Services>, workflow_id: i64) -> Result<bool> {
    let mut did = false;
    loop {
        let items = services.store.take_inbox_items(Some(workflow_id))?;
        if items.is_empty() {
            return Ok(did);
        }
        for item in items {
            work(services.clone(), item).await;
            did = true;
        }
    }
}

async fn work(services: Arc<Services>, item: InboxItem) {
    let result = match item.kind {
        InboxKind::Maintainer => job::run_maintainer(&services, &item).await,
        InboxKind::Planner => crate::planner::run_turn(&services, &item).await,
    };
    // A maintainer task escalates its own failures (run_maintainer); what reaches here is a
    // failure to record the outcome, which must not turn a stored fix into an escalation.
    if let Err(e) = result {
        tracing::error!(
            task = item.task_id,
            "a {} task failed: {e}",
            item.kind.as_str()
        );
    }
    if let Err(e) = services.store.finish_inbox_item(item.id) {
        tracing::error!("could not close inbox item {}: {e}", item.id);
    }
    services.wake.inbox.notify_one();
}
