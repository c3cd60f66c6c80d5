//! Carrying on an invocation that waits for the person: the spell that asked is cast again
//! with the answer, then the rest of the plan — in whichever engine records the answer, or in
//! the next one to start when none did (docs/healer-service.md, "Durable invocations").

use std::sync::Arc;

use super::context::gather;
use super::service::{cast_all, conclude, finish, inv_of, recheck};
use super::SpellContext;
use crate::checkpoint::CheckpointAction;
use crate::error::Result;
use crate::project::Projects;
use crate::services::Services;
use crate::store::InvocationStatus;

/// Carry on the invocation that waits for the answer to its question: the spell that asked is
/// cast again with `answer`, then the rest of the plan. Returns what was done, in a sentence
/// for the person (the checkpoint's outcome). Any engine may do it: the app, the daemon, or a
/// CLI command that decides the question.
pub(crate) async fn resume(
    services: &Services,
    projects: &Arc<Projects>,
    invocation_id: i64,
    answer: CheckpointAction,
) -> Result<String> {
    let store = &services.store;
    if !store.claim_waiting_invocation(invocation_id)? {
        return Ok("Healer had carried on already".to_string());
    }
    let inv = store.invocation(invocation_id)?;
    let before = inv.spells.len();
    let state = store.invocation_state(invocation_id)?;
    let Some(failure) = state.failure else {
        let why = "Healer no longer knows which failure this was about";
        finish(
            services,
            &inv_of(inv.id, inv.project_id, &inv.task_id, &inv.scenario),
            InvocationStatus::Unresolved,
            why,
            vec![],
        )?;
        return Ok(why.to_string());
    };
    let project = store.project(inv.project_id)?;
    let config = store.healer_config(inv.project_id)?;
    let context = gather(store, &project, &failure)?;
    let cx = SpellContext {
        services,
        projects,
        project: &project,
        config: &config,
        failure: &failure,
        context: &context,
        invocation_id,
        answer: Some(answer),
    };
    let cast = cast_all(&cx, &state.plan, state.next_spell, state.worked, &|cx| {
        Box::pin(recheck(cx))
    })
    .await?;
    let (status, reason) = conclude(&cx, cast)?;
    // What each spell did since the answer, in its own sentence.
    let done: Vec<String> = store
        .invocation(invocation_id)?
        .spells
        .into_iter()
        .skip(before)
        .map(|s| s.summary.trim_end_matches('.').to_string())
        .collect();
    let done = if done.is_empty() {
        reason.trim_end_matches('.').to_string()
    } else {
        done.join(". ")
    };
    Ok(match status {
        InvocationStatus::Waiting => format!("{done}. Healer asks you once more"),
        InvocationStatus::Unresolved => format!("Healer could not fix it: {done}."),
        InvocationStatus::Contained if matches!(answer, CheckpointAction::Pause) => {
            format!("{done}.")
        }
        _ => format!("Done: {done}."),
    })
}

/// Take up, in this engine, every invocation whose question was answered while no engine
/// carried it on (the one that recorded the answer stopped first). Returns how many.
pub(crate) async fn resume_answered(
    services: &Services,
    projects: &Arc<Projects>,
) -> Result<usize> {
    let mut resumed = 0;
    for (invocation, checkpoint) in services.store.waiting_invocations()? {
        let decided = services.store.checkpoint(checkpoint)?;
        let Some(decision) = decided.decision else {
            continue;
        };
        let action = usize::try_from(decision.option)
            .ok()
            .and_then(|n| n.checked_sub(1))
            .and_then(|i| decided.options.get(i))
            .map_or(CheckpointAction::Skip, |o| o.action);
        let outcome = resume(services, projects, invocation, action).await?;
        services
            .store
            .set_checkpoint_outcome(checkpoint, &outcome)?;
        resumed += 1;
    }
    Ok(resumed)
}
