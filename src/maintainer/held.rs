//! The remedy in front of every repair: a workflow whose repair gave up waits for the person.
//! A failure with the error it gave up on is counted on the open notification ("failed 3 more
//! times since") — no new task, no model call, no new notification — until the person acts.

use async_trait::async_trait;

use crate::error::Result;
use crate::events::Event;
use crate::failure::Failure;
use crate::heal::{
    not_a_script_run, HealContext, Remedy, RemedyReport, RemedyStatus, ScriptFailure,
};

pub struct HeldForPerson;

#[async_trait]
impl Remedy for HeldForPerson {
    fn name(&self) -> &'static str {
        "held_for_person"
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
            ..
        }) = cx.script_run(failure)
        else {
            return Ok(not_a_script_run());
        };
        let store = &services.store;
        let Some(hold) = store
            .repair_hold(workflow_id)?
            .filter(|h| h.signature == failure.signature)
        else {
            return Ok(RemedyReport {
                status: RemedyStatus::NotResolved,
                detail: "no repair of this error waits for the person".to_string(),
            });
        };
        let counted = match hold.notification_id {
            Some(id) => {
                let notification = store.count_held_failure(id)?;
                let times = notification.repeats;
                services
                    .bus
                    .emit(Event::NotificationUpdated { notification })?;
                format!(
                    "; it failed {times} more time{} since the person was told",
                    if times == 1 { "" } else { "s" }
                )
            }
            None => String::new(),
        };
        Ok(RemedyReport {
            status: RemedyStatus::Contained,
            detail: format!(
                "its repair gave up on this error and waits for the person (Re-plan, Try \
                 auto-fix again, or resume){counted}"
            ),
        })
    }
}
