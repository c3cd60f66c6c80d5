//! Rollbacks Healer does on its own: a fix whose re-run fails with a different error is undone,
//! and after repeated failed repairs the script goes back to the last version that ran green,
//! with a forensic bundle of what happened.

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

/// A fix's re-run failed with a different signature: roll the fix back.
pub struct RollbackBadFix;

#[async_trait]
impl Remedy for RollbackBadFix {
    fn name(&self) -> &'static str {
        "rollback_bad_fix"
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
        let store = &services.store;
        let run = store.run(run_id)?;
        if run.trigger != RunTrigger::Fix {
            return Ok(pass("not the re-run of a fix"));
        }
        let fixed = store.version(workflow_id, run.version)?;
        let Author::Task { task_id } = fixed.author else {
            return Ok(pass("not a fix by a task"));
        };
        let fix = store.autofix(task_id)?;
        let (Some(signature), Some(from)) = (store.task_signature(task_id)?, fix.from_version)
        else {
            return Ok(pass("the fix's failure is not known"));
        };
        if signature == failure.signature {
            return Ok(pass("the same error as before the fix"));
        }
        let before = store.version(workflow_id, from)?;
        let comment = format!(
            "Rolled back the fix of auto-fix task {task_id}: its re-run failed with a different error ({})",
            failure.summary()
        );
        let Some(restored) = store.save_minor(
            workflow_id,
            run.version.major,
            &before.code,
            &comment,
            &Author::Healer,
        )?
        else {
            return Ok(pass("the workflow moved on to another major"));
        };
        store.fail_pattern_fix_of_task(task_id)?;
        let workflow = store.workflow(workflow_id)?;
        services.bus.emit(Event::VersionSaved {
            workflow_id,
            title: workflow.title,
            version: restored.version,
            author: Author::Healer,
            comment: comment.clone(),
        })?;
        tripped(
            services,
            DecisionKind::FixRolledBack,
            Some(workflow_id),
            &format!(
                "{} rolled back to the code of {from} as {}",
                fixed.version, restored.version
            ),
            &comment,
        )?;
        Ok(contained(format!(
            "the fix ({}) made it fail differently; rolled back to {from}'s code as {}",
            fixed.version, restored.version
        )))
    }
}

/// After repeated failed repairs: keep a forensic bundle, go back to the last version that ran
/// green as a new minor, reset the counters, log the decision. `Ok(None)` when no version ever
/// ran green (the caller escalates instead).
pub(crate) fn catastrophic_rollback(
    services: &Services,
    workflow_id: i64,
    failed_repairs: u32,
) -> Result<Option<Version>> {
    let store = &services.store;
    let Some(green) = store.last_green_script(workflow_id)? else {
        return Ok(None);
    };
    let workflow = store.workflow(workflow_id)?;
    let active = store.active_version(workflow_id)?;
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
    services.bus.emit(Event::VersionSaved {
        workflow_id,
        title: workflow.title.clone(),
        version: restored.version,
        author: Author::Healer,
        comment: comment.clone(),
    })?;
    let detail = format!(
        "{} → {} (the code of {green}). What happened is kept in {}",
        active.version,
        restored.version,
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
             last version that ran green ({green}) as {}. The failing versions, runs and repair \
             threads are saved in {}.",
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
