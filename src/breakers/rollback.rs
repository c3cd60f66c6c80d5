//! The rollback Healer does on its own after repeated failed repairs: the script goes back to
//! the last version of the current major that ran green, with a forensic bundle of what
//! happened, and a run proves it. It never crosses the person's major versions: a major that
//! never ran green goes to the person instead, and so does a rolled-back version that fails too.

use async_trait::async_trait;
use serde_json::json;

use super::{contained, pass, tripped};
use crate::error::{Error, Result};
use crate::events::Event;
use crate::failure::Failure;
use crate::heal::{not_a_script_run, HealContext, Remedy, RemedyReport, ScriptFailure};
use crate::memory::DecisionKind;
use crate::notification::{NewNotification, NotificationKind};
use crate::services::Services;
use crate::workflow::{Author, RunTrigger, Version};

/// After repeated failed repairs: keep a forensic bundle, go back to the last version of the
/// active major that ran green as a new minor, reset the counters, queue a run to prove it, log
/// the decision. `Ok(None)` when this major never ran green (the caller escalates instead:
/// the code of an earlier major is the person's past choice, not a rollback target).
pub(crate) fn catastrophic_rollback(
    services: &Services,
    workflow_id: i64,
    failed_repairs: u32,
) -> Result<Option<Version>> {
    let store = &services.store;
    let active = store.active_version(workflow_id)?;
    let Some(green) = store.last_green_in_major(workflow_id, active.version.major)? else {
        return Ok(None);
    };
    let workflow = store.workflow(workflow_id)?;
    let green_code = store.version(workflow_id, green)?.code;
    let bundle = forensic_bundle(services, workflow_id)?;
    let comment = format!("Rolled back to {green} after {failed_repairs} failed repairs");
    let restored = store
        .save_minor(
            workflow_id,
            active.version.major,
            &green_code,
            &comment,
            &Author::Healer,
        )?
        .ok_or_else(|| Error::Internal("the workflow changed during the rollback".to_string()))?;
    store.reset_healing_counters(workflow_id)?;
    let proving = store.enqueue_run(workflow_id, RunTrigger::Rollback)?;
    services.wake.scheduler.notify_one();
    services.bus.emit(Event::VersionSaved {
        workflow_id,
        title: workflow.title.clone(),
        version: restored.version,
        author: Author::Healer,
        comment: comment.clone(),
    })?;
    let detail = format!(
        "{} → {} (the code of {green}){}. What happened is kept in {}",
        active.version,
        restored.version,
        proving
            .map(|r| format!("; run {r} proves it"))
            .unwrap_or_default(),
        bundle.display()
    );
    tripped(
        services,
        DecisionKind::CatastrophicRollback,
        Some(workflow_id),
        &comment,
        &detail,
    )?;
    let mut new = NewNotification::new(
        NotificationKind::Safety,
        format!(
            "\u{201c}{}\u{201d} was rolled back to {green}",
            workflow.title
        ),
        format!(
            "{failed_repairs} automatic repairs in a row did not hold, so Healer put back the \
             last version that ran green ({green}) as {} and runs it to prove it. The failing \
             versions, runs and repair threads are saved in {}.",
            restored.version,
            bundle.display()
        ),
    );
    new.workflow_id = Some(workflow_id);
    new.actions = vec![crate::notification::NotificationAction::Replan];
    let n = store.insert_notification(&new)?;
    services
        .bus
        .emit(Event::NotificationCreated { notification: n })?;
    Ok(Some(restored.version))
}

/// A rolled-back version's proving run failed too: nothing Healer can put back works, so the
/// person decides (a notification with Re-plan), and repairs of the error wait for them.
pub struct RollbackFailedToo;

#[async_trait]
impl Remedy for RollbackFailedToo {
    fn name(&self) -> &'static str {
        "rollback_failed_too"
    }

    async fn apply(
        &self,
        cx: &HealContext<'_>,
        _heal_id: i64,
        failure: &Failure,
    ) -> Result<RemedyReport> {
        let Some(ScriptFailure {
            services,
            workflow_id,
            run_id,
        }) = cx.script_run(failure)
        else {
            return Ok(not_a_script_run());
        };
        let run = services.store.run(run_id)?;
        if run.trigger != RunTrigger::Rollback {
            return Ok(pass("not the run of a rollback"));
        }
        let explanation = format!(
            "Healer put back the last version of this script that ran green, as {}, and it \
             fails too: {}. Something outside the script has changed (its data, a service, this \
             machine). Re-plan to decide what it should do now.",
            run.version,
            failure.summary()
        );
        crate::maintainer::escalate(
            &services.store,
            &services.bus,
            workflow_id,
            Some(run_id),
            None,
            Some(&failure.signature),
            &explanation,
        )?;
        tripped(
            services,
            DecisionKind::RollbackEscalated,
            Some(workflow_id),
            &format!(
                "{} (the rolled-back version) fails too; you decide",
                run.version
            ),
            &failure.signature,
        )?;
        Ok(contained(
            "the rolled-back version fails too; the person was told and decides".to_string(),
        ))
    }
}

/// The failing versions, the runs and the maintainer threads, as one JSON file in the data dir.
fn forensic_bundle(services: &Services, workflow_id: i64) -> Result<std::path::PathBuf> {
    let store = &services.store;
    let workflow = store.workflow(workflow_id)?;
    let runs: Vec<_> = store
        .list_runs(workflow_id, None, 20)?
        .into_iter()
        .filter_map(|r| store.run_detail(r.id).ok())
        .collect();
    let threads: Vec<_> = store
        .all_autofixes(Some(workflow_id), 20)?
        .into_iter()
        .filter_map(|f| {
            store
                .thread(f.task_id)
                .ok()
                .map(|t| json!({"fix": f, "thread": t}))
        })
        .collect();
    let bundle = json!({
        "kind": "healer-forensic-bundle",
        "written_at": crate::store::now(),
        "workflow": workflow,
        "versions": store.versions(workflow_id)?,
        "runs": runs,
        "repairs": threads,
    });
    let dir = services.paths.data_dir().join("forensics");
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
    let stamp = crate::store::now().replace([':', '.'], "-");
    let path = dir.join(format!("{}-{stamp}.json", workflow.name));
    let text = serde_json::to_string_pretty(&bundle)
        .map_err(|e| Error::Internal(format!("the bundle does not serialise: {e}")))?;
    std::fs::write(&path, text)
        .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))?;
    Ok(path)
}
