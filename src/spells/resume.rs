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
/// for the person (the checkpoint's outcome); `None` when another look (this engine's at its
/// start, or another engine's) took it up first, which then sets the outcome. Any engine may
/// do it: the app, the daemon, or a CLI command that decides the question.
pub(crate) async fn resume(
    services: &Services,
    projects: &Arc<Projects>,
    invocation_id: i64,
    answer: CheckpointAction,
) -> Result<Option<String>> {
    if !services
        .store
        .claim_waiting_invocation(invocation_id, this_engine())?
    {
        return Ok(None);
    }
    crate::failpoint::hit("healer.act_claimed");
    carry_on(services, projects, invocation_id, answer)
        .await
        .map(Some)
}

/// Carry out `answer` on an invocation claimed to act on it: the spell that asked is cast with
/// the answer (unless it had finished when an engine stopped mid-act), then the rest of the
/// plan from where it was. What each spell did since the answer, in a sentence.
async fn carry_on(
    services: &Services,
    projects: &Arc<Projects>,
    invocation_id: i64,
    answer: CheckpointAction,
) -> Result<String> {
    let store = &services.store;
    let inv = store.invocation(invocation_id)?;
    let before = inv.spells.len();
    let state = store.invocation_state(invocation_id)?;
    // The answer is for the spell that asked; one recorded since (before a crash) had it.
    let answered = store.asked_spell(invocation_id)? == Some(state.next_spell);
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
        answer: answered.then_some(answer),
    };
    let cast = cast_all(&cx, &state.plan, state.next_spell, state.worked, &|cx| {
        Box::pin(recheck(cx))
    })
    .await?;
    let (status, reason) = conclude(&cx, cast)?;
    // What each spell did since the answer (an engine stopped mid-act did some of it), in
    // its own sentence.
    let since = store.asked_spell(invocation_id)?.map_or(before, |asked| {
        before.min(
            inv.spells
                .len()
                .saturating_sub(state.next_spell.saturating_sub(asked)),
        )
    });
    let done: Vec<String> = store
        .invocation(invocation_id)?
        .spells
        .into_iter()
        .skip(since)
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

/// This engine (this process's run): what it carries out, no other engine takes from it, and
/// it takes up only what an engine that is gone left.
fn this_engine() -> &'static str {
    static ID: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ID.get_or_init(|| format!("{}-{:016x}", std::process::id(), rand::random::<u64>()))
}

/// How many times in all an engine takes up the same answer (the first try included): one
/// that keeps ending the engine half-way is not tried for ever.
pub const MAX_ACT_TRIES: u32 = 3;

/// The action the person chose on `checkpoint`, once they have.
fn chosen(services: &Services, checkpoint: i64) -> Result<Option<CheckpointAction>> {
    let decided = services.store.checkpoint(checkpoint)?;
    Ok(decided.decision.map(|decision| {
        usize::try_from(decision.option)
            .ok()
            .and_then(|n| n.checked_sub(1))
            .and_then(|i| decided.options.get(i))
            .map_or(CheckpointAction::Skip, |o| o.action)
    }))
}

/// Take up, in this engine, every invocation whose question was answered while no engine
/// carried it on (the one that recorded the answer stopped first), and every one an engine
/// stopped while carrying out its answer — once each. Returns how many.
pub(crate) async fn resume_answered(
    services: &Services,
    projects: &Arc<Projects>,
) -> Result<usize> {
    let mut resumed = 0;
    for (invocation, checkpoint) in services.store.acting_invocations(this_engine())? {
        let Some(action) = chosen(services, checkpoint)? else {
            continue;
        };
        let outcome =
            if services
                .store
                .claim_acting_invocation(invocation, MAX_ACT_TRIES, this_engine())?
            {
                tracing::info!(
                    invocation,
                    "carrying on the person's answer an engine stopped in the middle of"
                );
                carry_on(services, projects, invocation, action).await?
            } else {
                let inv = services.store.invocation(invocation)?;
                let why = "Healer stopped several times while it carried out your answer, so it \
                       stopped trying; what it had done is kept. Look at the task, then run it \
                       again when it is ready";
                finish(
                    services,
                    &inv_of(inv.id, inv.project_id, &inv.task_id, &inv.scenario),
                    InvocationStatus::Unresolved,
                    why,
                    vec![],
                )?;
                format!("{why}.")
            };
        services
            .store
            .set_checkpoint_outcome(checkpoint, &outcome)?;
        resumed += 1;
    }
    for (invocation, checkpoint) in services.store.waiting_invocations()? {
        let Some(action) = chosen(services, checkpoint)? else {
            continue;
        };
        // Another engine (or the answer's own command) took it up: the outcome is its to say.
        let Some(outcome) = resume(services, projects, invocation, action).await? else {
            continue;
        };
        services
            .store
            .set_checkpoint_outcome(checkpoint, &outcome)?;
        resumed += 1;
    }
    Ok(resumed)
}
