//! What a crash left half-done, settled at start-up before anything new starts: runs marked
//! interrupted and their processes ended (by their control group, or by the markers in their
//! environment), sandboxes' processes and scratch folders removed, interrupted repairs put back
//! in line or explained, requests a dead engine had taken answered.

use super::failed_result;
use crate::error::Result;
use crate::events::Event;
use crate::notification::{NewNotification, NotificationAction, NotificationKind};
use crate::sandbox::GROUPS_FOLDER;
use crate::services::Services;
use crate::workflow::runner::end_leftovers;
use crate::workflow::WorkflowStatus;

/// Nothing stays "running" forever: settle what a crash left half-done.
pub(super) fn settle_crash_leftovers(services: &Services) -> Result<()> {
    let store = &services.store;
    // Every group a crashed engine recorded is ended, whatever its processes did since.
    let scratch_root = crate::maintainer::scratch_root(services);
    let mut groups = crate::contain::sweep(&services.paths.groups_dir());
    groups += crate::contain::sweep(&scratch_root.join(GROUPS_FOLDER));
    let scratches = remove_scratch_leftovers(&scratch_root);
    // Run ends a previous engine kept (the store refused them) are real outcomes: first.
    let kept = crate::services::replay_journal(services);
    if kept > 0 {
        tracing::info!("saved {kept} run result(s) kept from before the last stop");
    }
    let leftovers = store.interrupt_open_runs()?;
    let mut ended = 0;
    for attempt in &leftovers {
        ended += end_leftovers(services.instance(), attempt.run_id, attempt.pgid);
    }
    if !leftovers.is_empty() || groups + scratches > 0 {
        tracing::warn!(
            "{} run(s) were interrupted by an unclean stop; ended {groups} group(s) and {ended} process(es) left behind, removed {scratches} sandbox folder(s)",
            leftovers.len()
        );
    }
    let runs = leftovers.len();
    // The fix a run was judging is judged again: its run goes back in line (once).
    let mut run_ids: Vec<i64> = leftovers.iter().map(|a| a.run_id).collect();
    run_ids.dedup();
    let checks = store.requeue_interrupted_fix_runs(&run_ids)?;
    // Before tasks: a repair (or chat turn) being worked on goes back in line, once; its task
    // stays open. One interrupted twice is given up, and the person is told why.
    let items = store.settle_taken_inbox_items()?;
    let sessions = crate::project::settle_interrupted(services)?;
    if sessions > 0 {
        tracing::warn!("{sessions} agent session(s) were interrupted; their tasks are open again");
    }
    let heals = store.interrupt_running_heals()?;
    let tasks = store.interrupt_running_tasks()?;
    let requests = store.fail_taken_requests(&failed_result(
        "the Healer engine stopped before it finished this request (it was killed or crashed); try again",
    ))?;
    for workflow_id in checks.given_up {
        tell_interrupted_twice(services, workflow_id, "the run that checks its latest fix")?;
    }
    for (workflow_id, _, _) in &items.given_up {
        tell_interrupted_twice(services, *workflow_id, "its repair")?;
    }
    let requeued = items.requeued.len() + checks.queued.len();
    if heals + requests + runs + tasks + sessions + requeued > 0 {
        let again = if requeued > 0 {
            format!("; {requeued} repair(s) or fix check(s) put back in line")
        } else {
            String::new()
        };
        let summary = format!(
            "Settled after an unclean stop: {runs} run(s), {heals} heal(s), {tasks} thread(s) and {sessions} agent session(s) marked interrupted, {requests} request(s) answered as failed{again}"
        );
        tracing::warn!("{summary}");
        services.bus.emit(Event::RecoveredAtStartup { summary })?;
    }
    Ok(())
}

/// A repair (or the run that checks a fix) was interrupted by an unclean stop a second time:
/// it is not tried a third time, and the person is told so, with Re-plan at hand.
fn tell_interrupted_twice(services: &Services, workflow_id: i64, what: &str) -> Result<()> {
    let Ok(workflow) = services.store.workflow(workflow_id) else {
        return Ok(());
    };
    let mut note = NewNotification::new(
        NotificationKind::MaintenanceFailed,
        format!("The repair of \"{}\" was interrupted", workflow.title),
        format!(
            "Healer stopped twice while working on {what} (it was killed or crashed), so it \
             did not start it a third time. Its last failed run is in the workflow's history: \
             run it again, or open Re-plan to change it."
        ),
    );
    note.workflow_id = Some(workflow_id);
    note.actions = vec![NotificationAction::Replan];
    let notification = services.store.insert_notification(&note)?;
    services
        .store
        .set_workflow_status(workflow_id, WorkflowStatus::NeedsAttention)?;
    services
        .bus
        .emit(Event::NotificationCreated { notification })?;
    Ok(())
}

/// Scratch folders of sandboxes a crash interrupted (the lease is held: none is in use).
fn remove_scratch_leftovers(root: &std::path::Path) -> usize {
    let Ok(entries) = std::fs::read_dir(root) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        if name.to_string_lossy().starts_with("sandbox-")
            && crate::sandbox::remove_tree(&entry.path()).is_ok()
        {
            removed += 1;
        }
    }
    removed
}
