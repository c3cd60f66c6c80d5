//! Good news is news too: when the first run of a version an auto-fix made passes, the person
//! is told which workflow was repaired, from which version to which, with a link to the thread.

use crate::error::Result;
use crate::events::Event;
use crate::notification::{NewNotification, NotificationKind};
use crate::services::Services;
use crate::workflow::{Version, Workflow};

/// Called after every green run; tells only about the first green run of a fixed version.
pub(crate) fn tell_if_repaired(
    services: &Services,
    workflow: &Workflow,
    run_id: i64,
) -> Result<()> {
    let Some((fixed, task_id)) = services.store.first_green_of_fix(run_id)? else {
        return Ok(());
    };
    let mut new = NewNotification::new(
        NotificationKind::Repaired,
        repaired_title(&workflow.title, fixed),
        "Healer changed the script and ran it again; the run passed. The auto-fix thread shows \
         what was wrong and what changed."
            .to_string(),
    );
    new.workflow_id = Some(workflow.id);
    new.run_id = Some(run_id);
    new.task_id = Some(task_id);
    let notification = services.store.insert_notification(&new)?;
    services
        .bus
        .emit(Event::NotificationCreated { notification })?;
    Ok(())
}

/// "Weekly sales report was repaired: 1.0 → 1.1, the run passed".
fn repaired_title(title: &str, fixed: Version) -> String {
    let from = Version {
        major: fixed.major,
        minor: fixed.minor.saturating_sub(1),
    };
    format!("{title} was repaired: {from} \u{2192} {fixed}, the run passed")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_title_names_the_workflow_and_both_versions() {
        let fixed = Version { major: 1, minor: 1 };
        assert_eq!(
            repaired_title("Weekly sales report", fixed),
            "Weekly sales report was repaired: 1.0 \u{2192} 1.1, the run passed"
        );
    }
}
