//! What a crash left half-done, settled at start-up before anything new starts: runs marked
//! interrupted and their processes ended (by their control group, or by the markers in their
//! environment), sandboxes' processes and scratch folders removed, interrupted repairs put back
//! in line or explained, requests a dead engine had taken answered.

use super::failed_result;
use crate::error::Result;
use crate::events::Event;
use crate::sandbox::GROUPS_FOLDER;
use crate::services::Services;
use crate::workflow::runner::end_leftovers;

/// Nothing stays "running" forever: settle what a crash left half-done.
pub(super) fn settle_crash_leftovers(services: &Services) -> Result<()> {
    let store = &services.store;
    // Every group a crashed engine recorded is ended, whatever its processes did since.
    let scratch_root = crate::maintainer::scratch_root(services);
    let mut groups = crate::contain::sweep(&services.paths.groups_dir());
    groups += crate::contain::sweep(&scratch_root.join(GROUPS_FOLDER));
    let scratches = remove_scratch_leftovers(&scratch_root);
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
    // Before tasks: a task whose item was being worked on is interrupted; one whose item
    // is still pending waits for its turn.
    let items = store.settle_taken_inbox_items()?;
    if items > 0 {
        tracing::warn!("{items} auto-fix or chat turn(s) were interrupted");
    }
    let heals = store.interrupt_running_heals()?;
    let tasks = store.interrupt_running_tasks()?;
    let requests = store.fail_taken_requests(&failed_result(
        "the Healer engine stopped before it finished this request (it was killed or crashed); try again",
    ))?;
    if heals + requests + runs + tasks > 0 {
        let summary = format!(
            "Settled after an unclean stop: {runs} run(s), {heals} heal(s) and {tasks} task(s) marked interrupted, {requests} request(s) answered as failed"
        );
        tracing::warn!("{summary}");
        services.bus.emit(Event::RecoveredAtStartup { summary })?;
    }
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
