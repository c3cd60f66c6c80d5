//! The pipeline's remedy for logic errors: enter maintenance (or escalate when the fixes in a
//! row have run out, or tell the person that no model is configured).

use async_trait::async_trait;

use super::{escalate, Entered, DEFAULT_MAX_FIX_ATTEMPTS, MAX_FIX_ATTEMPTS};
use crate::error::{Error, Result};
use crate::events::Event;
use crate::failure::{Failure, FailureClass, FailureSource};
use crate::heal::{HealContext, Remedy, RemedyReport, RemedyStatus};
use crate::llm::{LlmError, TaskKind, Tier};
use crate::notification::{NewNotification, NotificationAction, NotificationKind};

pub struct Maintain;

#[async_trait]
impl Remedy for Maintain {
    fn name(&self) -> &'static str {
        "maintain"
    }

    async fn apply(
        &self,
        cx: &HealContext<'_>,
        heal_id: i64,
        failure: &Failure,
    ) -> Result<RemedyReport> {
        let FailureSource::ScriptRun {
            workflow_id,
            run_id,
        } = failure.source
        else {
            return Ok(not_resolved("only script runs are repaired"));
        };
        if failure.class != FailureClass::Logic {
            return Ok(not_resolved("the maintainer repairs logic errors only"));
        }
        let Some(services) = cx.services else {
            return Ok(RemedyReport {
                status: RemedyStatus::Failed,
                detail: "no engine behind this pipeline".to_string(),
            });
        };
        match services.llm.resolve_tier(Tier::Cheap) {
            Ok(_) => {}
            Err(Error::Llm(LlmError::NoModelConfigured)) => {
                let workflow = cx.store.workflow(workflow_id)?;
                let mut new = NewNotification::new(
                    NotificationKind::NoModel,
                    format!(
                        "\u{201c}{}\u{201d} failed and could not be repaired",
                        workflow.title
                    ),
                    format!(
                        "{} Healer repairs errors like this with a model, and none is set up. \
                         Set one up in Settings → Models; then Healer can try the repair again \
                         from here.",
                        failure.summary()
                    ),
                );
                new.heal_id = Some(heal_id);
                new.workflow_id = Some(workflow_id);
                new.run_id = Some(run_id);
                // Re-plan needs a model too: setting one up is the one way on (then the
                // notification offers the repair; see `Handle::notifications`).
                new.actions = vec![NotificationAction::OpenSettings];
                let notification = cx.store.insert_notification(&new)?;
                cx.bus.emit(Event::NotificationCreated { notification })?;
                return Ok(RemedyReport {
                    status: RemedyStatus::Contained,
                    detail: "no model is set up, so no repair started; the person was told in a \
                             notification"
                        .to_string(),
                });
            }
            Err(e) => return Err(e),
        }
        let max = cx
            .store
            .setting::<u32>(MAX_FIX_ATTEMPTS)?
            .unwrap_or(DEFAULT_MAX_FIX_ATTEMPTS);
        match cx.store.enter_maintenance(workflow_id, run_id, max)? {
            Entered::Exhausted { fix_count } => {
                // The last version of this major that ran green comes back, with the evidence
                // kept and a run to prove it.
                if let Some(version) =
                    crate::breakers::catastrophic_rollback(services, workflow_id, fix_count)?
                {
                    return Ok(RemedyReport {
                        status: RemedyStatus::Contained,
                        detail: format!(
                            "{fix_count} repairs did not hold; rolled back to the last green code as {version}"
                        ),
                    });
                }
                let major = cx.store.active_version(workflow_id)?.version.major;
                let explanation = format!(
                    "Healer repaired this script {fix_count} times in a row and it still fails: {}. \
                     No version {major}.x has run green yet, so there is none to go back to \
                     (an earlier major is your own past choice, and Healer does not put it back). \
                     It will not try again on its own. Re-plan to decide what it should do.",
                    failure.summary()
                );
                escalate(
                    cx.store,
                    cx.bus,
                    workflow_id,
                    Some(run_id),
                    None,
                    Some(&failure.signature),
                    &explanation,
                )?;
                cx.store.log_decision(
                    Some(workflow_id),
                    crate::memory::DecisionKind::RollbackEscalated,
                    &format!("{major}.x never ran green: no rollback; you decide"),
                    &failure.signature,
                )?;
                // The person knows; Level 2 looks at it next.
                Ok(RemedyReport {
                    status: RemedyStatus::NotResolved,
                    detail: format!(
                        "{fix_count} fixes in a row did not hold; the person was told in a \
                         notification"
                    ),
                })
            }
            Entered::InProgress { task_id } => {
                // Its fix closes this heal too when it passes.
                cx.store.link_heal_task(heal_id, task_id)?;
                Ok(RemedyReport {
                    status: RemedyStatus::Contained,
                    detail:
                        "an auto-fix is already repairing this workflow; this failure waits for it"
                            .to_string(),
                })
            }
            Entered::Started { task_id, .. } => {
                cx.store.set_task_signature(task_id, &failure.signature)?;
                cx.store.link_heal_task(heal_id, task_id)?;
                let task = cx.store.task(task_id)?;
                cx.bus.emit(Event::TaskStarted {
                    task_id,
                    task_kind: TaskKind::Maintainer,
                    title: task.title.clone(),
                })?;
                cx.bus.emit(Event::MaintenanceStarted {
                    workflow_id,
                    task_id,
                    run_id,
                    run_number: cx.store.run(run_id).map_or(0, |r| r.number),
                    title: task.title,
                })?;
                services.wake.inbox.notify_one();
                Ok(RemedyReport {
                    status: RemedyStatus::Contained,
                    detail: "an auto-fix is repairing it".to_string(),
                })
            }
        }
    }
}

fn not_resolved(why: &str) -> RemedyReport {
    RemedyReport {
        status: RemedyStatus::NotResolved,
        detail: why.to_string(),
    }
}
