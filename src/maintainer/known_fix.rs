//! The remedy that uses memory before any model: a fix that worked for this signature, whose
//! diff applies cleanly to the failing code, is applied directly — validated with the runtime's
//! syntax check and re-run like any fix — at zero tokens. It lives with the maintainer because
//! it is a maintainer task without a model: the same fix count, the same `apply_fix`.

use async_trait::async_trait;

use super::{record_fix, scratch_root, AutoFixStatus, FixResult};
use super::{DEFAULT_MAX_FIX_ATTEMPTS, MAX_FIX_ATTEMPTS};
use crate::error::Result;
use crate::events::Event;
use crate::failure::{Failure, FailureClass};
use crate::heal::{
    not_a_script_run, HealContext, Remedy, RemedyReport, RemedyStatus, ScriptFailure,
};
use crate::llm::{TaskKind, TaskStatus};
use crate::memory::{apply, FixVerdict};
use crate::sandbox::{self, SyntaxCheck};
use crate::workflow::Author;

pub struct KnownFix;

#[async_trait]
impl Remedy for KnownFix {
    fn name(&self) -> &'static str {
        "known_fix"
    }

    async fn apply(
        &self,
        cx: &HealContext<'_>,
        heal_id: i64,
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
        if failure.class != FailureClass::Logic {
            return Ok(skip("known fixes are for logic errors"));
        }
        let store = &services.store;
        let worked: Vec<_> = store
            .pattern_fixes(&failure.signature)?
            .into_iter()
            .filter(|f| f.result == FixVerdict::Success)
            .collect();
        if worked.is_empty() {
            return Ok(skip("no fix that worked is known for this error"));
        }
        let run = store.run(run_id)?;
        let failed = store.version(workflow_id, run.version)?;
        let Some((known, code)) = worked
            .iter()
            .find_map(|f| apply(&f.diff, &failed.code).map(|code| (f, code)))
        else {
            return Ok(skip(
                "a fix worked before for this error, but its diff does not apply here; the maintainer gets it as a hint",
            ));
        };
        let workflow = store.workflow(workflow_id)?;
        if let SyntaxCheck::Refused { message } = sandbox::check_syntax_in(
            &scratch_root(services),
            &workflow.runtime,
            &workflow.entry,
            &code,
            &services.environment_vars(&workflow),
        )
        .await?
        {
            return Ok(skip(&format!(
                "the known fix does not pass the syntax check here: {message}"
            )));
        }
        let max = store
            .setting::<u32>(MAX_FIX_ATTEMPTS)?
            .unwrap_or(DEFAULT_MAX_FIX_ATTEMPTS);
        let Some(task_id) = store.start_known_fix(workflow_id, run_id, &failure.signature, max)?
        else {
            return Ok(skip("the fixes in a row have run out"));
        };
        store.link_heal_task(heal_id, task_id)?;
        let task = store.task(task_id)?;
        services.bus.emit(Event::TaskStarted {
            task_id,
            task_kind: TaskKind::Maintainer,
            title: task.title,
        })?;
        let comment = format!("Known fix for {}", failure.signature);
        let result =
            store.apply_fix(task_id, workflow_id, failed.version.major, &code, &comment)?;
        let (status, summary) = match &result {
            FixResult::Applied { version, .. } => {
                record_fix(
                    services,
                    task_id,
                    workflow_id,
                    *version,
                    &failed.code,
                    &code,
                    &comment,
                )?;
                services.bus.emit(Event::VersionSaved {
                    workflow_id,
                    title: workflow.title.clone(),
                    version: *version,
                    author: Author::Task { task_id },
                    comment: comment.clone(),
                })?;
                services.wake.scheduler.notify_one();
                (
                    AutoFixStatus::Fixed,
                    format!(
                        "Known fix applied at zero tokens: {} → {version} (it worked for {} before); re-running",
                        failed.version,
                        known.workflow_title.as_deref().unwrap_or("another workflow")
                    ),
                )
            }
            FixResult::Stale { active } => (
                AutoFixStatus::Stale,
                format!("Known fix not applied: the workflow is on {active} now"),
            ),
        };
        store.finish_task(task_id, TaskStatus::Finished, &summary)?;
        services.bus.emit(Event::TaskFinished {
            task_id,
            status: TaskStatus::Finished,
            summary: summary.clone(),
        })?;
        services.bus.emit(Event::MaintenanceFinished {
            workflow_id,
            task_id: Some(task_id),
            status,
            summary: summary.clone(),
        })?;
        Ok(RemedyReport {
            status: RemedyStatus::Contained,
            detail: summary,
        })
    }
}

fn skip(why: &str) -> RemedyReport {
    RemedyReport {
        status: RemedyStatus::NotResolved,
        detail: why.to_string(),
    }
}
