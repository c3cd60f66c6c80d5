//! Judging a fix by its re-run. "The fix made it worse" must mean worse: a fix is rolled back
//! only when its re-run fails earlier in the script than before, or the fix broke loading (a
//! syntax error, an import). A fix that cured its error and let the script get further to the
//! next one is progress: it is kept, and the next error gets its own repair. A passing problem
//! on the re-run (network, 429) says nothing about the code: the re-run is repeated, not
//! judged. And a failure of a version a fix has already replaced waits for the fix's run.

use std::cmp::Ordering;

use async_trait::async_trait;

use super::{contained, pass, tripped};
use crate::error::Result;
use crate::events::Event;
use crate::failure::{broke_loading, entry_frames, Evidence, Failure, FailureClass};
use crate::heal::{not_a_script_run, HealContext, Remedy, RemedyReport, ScriptFailure};
use crate::memory::{position_in_old, DecisionKind};
use crate::services::Services;
use crate::store::AutoFix;
use crate::workflow::{Author, RunTrigger, ScriptVersion};

/// Settings key: how many more times a fix's re-run is repeated when it failed on a passing
/// problem (after the run's own retries), before the fix is left unjudged (default 1).
pub const TRANSIENT_RERUNS: &str = "maintainer.transient_reruns";
pub const DEFAULT_TRANSIENT_RERUNS: u32 = 1;

/// A fix's re-run failed with another error than the one it was made for: keep it (progress),
/// run it again (a passing problem), or roll it back (it fails earlier, or broke loading).
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
        if failure.class == FailureClass::Transient {
            return rerun(services, workflow_id, &fixed);
        }
        let before = store.version(workflow_id, from)?;
        let entry = store.workflow(workflow_id)?.entry;
        let was = evidence_of(services, &fix)?;
        let verdict = judge(&was, &failure.evidence, &before.code, &fixed.code, &entry);
        match verdict {
            Verdict::Further => keep(
                services,
                workflow_id,
                run_id,
                task_id,
                &fixed,
                &signature,
                failure,
            ),
            Verdict::BrokeLoading | Verdict::Earlier => roll_back(
                services,
                workflow_id,
                task_id,
                &fixed,
                &before,
                failure,
                verdict,
            ),
        }
    }
}

/// How a fix's re-run compares with the failure it was made for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// It failed at the same point or later: the fix cured its error (or is no worse).
    Further,
    /// It failed earlier in the script than before the fix.
    Earlier,
    /// The fix stopped the script from loading (syntax, an import).
    BrokeLoading,
}

/// `was` failed in `before`; `now` failed in `after`. Points are compared on the call path of
/// the entry file (outermost frame first), with the fix's lines placed where they sit in the
/// old code; without a place on either side, the fix is not shown to be worse.
fn judge(was: &Evidence, now: &Evidence, before: &str, after: &str, entry: &str) -> Verdict {
    if broke_loading(now) && !broke_loading(was) {
        return Verdict::BrokeLoading;
    }
    let old: Vec<u32> = entry_frames(was, entry)
        .into_iter()
        .map(|line| line.saturating_mul(2))
        .collect();
    let new: Vec<u32> = entry_frames(now, entry)
        .into_iter()
        .map(|line| position_in_old(before, after, line))
        .collect();
    let first_difference = old
        .iter()
        .zip(&new)
        .map(|(o, n)| n.cmp(o))
        .find(|o| *o != Ordering::Equal);
    match first_difference {
        Some(Ordering::Less) => Verdict::Earlier,
        _ => Verdict::Further,
    }
}

/// The evidence of the failure a repair task was made for.
fn evidence_of(services: &Services, fix: &AutoFix) -> Result<Evidence> {
    let Some(run_id) = fix.run_id else {
        return Ok(Evidence::default());
    };
    Ok(services
        .store
        .run_detail(run_id)?
        .attempts
        .iter()
        .rev()
        .find_map(|a| a.evidence.clone())
        .unwrap_or_default())
}

/// A passing problem on the fix's re-run: run it again, a bounded number of times.
fn rerun(services: &Services, workflow_id: i64, fixed: &ScriptVersion) -> Result<RemedyReport> {
    let store = &services.store;
    let limit = store
        .setting::<u32>(TRANSIENT_RERUNS)?
        .unwrap_or(DEFAULT_TRANSIENT_RERUNS);
    let runs = store.runs_of_script(fixed.id, RunTrigger::Fix)?;
    if runs > limit {
        return Ok(pass(&format!(
            "the fix's re-runs kept hitting a passing problem ({runs} runs); the fix is not judged"
        )));
    }
    let queued = store.enqueue_run(workflow_id, RunTrigger::Fix)?;
    services.wake.scheduler.notify_one();
    Ok(contained(format!(
        "the re-run of {} hit a passing problem, which says nothing about the fix; it runs again{}",
        fixed.version,
        queued.map(|r| format!(" (run {r})")).unwrap_or_default()
    )))
}

/// The fix cured its error and the script got further: keep it, remember it worked, close the
/// heals of the old error, and let the pipeline repair the new one.
fn keep(
    services: &Services,
    workflow_id: i64,
    run_id: i64,
    task_id: i64,
    fixed: &ScriptVersion,
    signature: &str,
    failure: &Failure,
) -> Result<RemedyReport> {
    let store = &services.store;
    store.succeed_pattern_fix_of_task(task_id)?;
    for heal_id in store.resolve_heals(workflow_id, signature, fixed.version, run_id)? {
        services.bus.emit(Event::HealResolved {
            heal_id,
            workflow_id,
            version: fixed.version,
            run_id,
            task_id: Some(task_id),
        })?;
    }
    let summary = format!(
        "Kept {}: it cured its error and the script got further, to {}",
        fixed.version,
        failure.summary()
    );
    tripped(
        services,
        DecisionKind::FixKept,
        Some(workflow_id),
        &summary,
        "",
    )?;
    Ok(pass(&format!(
        "the fix ({}) cured its error and the script got further; the new error gets its own repair",
        fixed.version
    )))
}

fn roll_back(
    services: &Services,
    workflow_id: i64,
    task_id: i64,
    fixed: &ScriptVersion,
    before: &ScriptVersion,
    failure: &Failure,
    verdict: Verdict,
) -> Result<RemedyReport> {
    let store = &services.store;
    let why = match verdict {
        Verdict::BrokeLoading => "the script no longer loads",
        _ => "its re-run failed earlier in the script than before",
    };
    let comment = format!(
        "Rolled back the automatic fix that made {}: {why} ({})",
        fixed.version,
        failure.summary()
    );
    let Some(restored) = store.save_minor(
        workflow_id,
        fixed.version.major,
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
            "{} rolled back to the code of {} as {}",
            fixed.version, before.version, restored.version
        ),
        &comment,
    )?;
    Ok(contained(format!(
        "the fix ({}) made it worse: {why}; rolled back to {}'s code as {}",
        fixed.version, before.version, restored.version
    )))
}

/// A failure of a version that another one (a fix, a rollback, or a major version the person
/// saved) already replaced: the active version's run will tell, so nothing is repaired twice
/// and no repair is made of code nobody runs any more. A failure brought in late (a run on
/// the cluster while the control room was away) is judged by the version it ran.
pub struct Superseded;

#[async_trait]
impl Remedy for Superseded {
    fn name(&self) -> &'static str {
        "superseded"
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
        let ran = services.store.run(run_id)?.version;
        let active = services.store.active_version(workflow_id)?.version;
        if active == ran {
            return Ok(pass("it ran the active version"));
        }
        Ok(contained(format!(
            "it ran {ran}, which {active} has replaced since; the run of {active} will tell"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn py(line: u32, t: &str) -> Evidence {
        Evidence {
            error_type: Some(t.to_string()),
            message: "x".to_string(),
            stack: Some(format!("File \"/w/main.py\", line {line}, in <module>")),
        }
    }

    #[test]
    fn later_is_progress_earlier_and_broken_loading_are_worse() {
        let before = "a = 1\nb = data['amount']\nc = 3\nd = total / n\n";
        let after = "a = 1\nb = data['total']\nc = 3\nd = total / n\n";
        let was = py(2, "KeyError");
        assert_eq!(
            judge(&was, &py(4, "ZeroDivisionError"), before, after, "main.py"),
            Verdict::Further
        );
        let earlier = "a = 1 / 0\nb = data['total']\nc = 3\nd = total / n\n";
        assert_eq!(
            judge(
                &was,
                &py(1, "ZeroDivisionError"),
                before,
                earlier,
                "main.py"
            ),
            Verdict::Earlier
        );
        let loading = "import missing_xyz\na = 1\nb = data['total']\nc = 3\nd = total / n\n";
        assert_eq!(
            judge(
                &was,
                &py(1, "ModuleNotFoundError"),
                before,
                loading,
                "main.py"
            ),
            Verdict::BrokeLoading
        );
        // Nowhere to compare: not shown to be worse.
        assert_eq!(
            judge(
                &Evidence::default(),
                &Evidence::default(),
                before,
                after,
                "main.py"
            ),
            Verdict::Further
        );
    }
}
