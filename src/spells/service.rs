//! The service itself: the pipeline's remedy that hands a project failure over (after the
//! policy: a skipped invocation is recorded with its reason and the pipeline goes on to tell
//! the person), and the loop that takes each one through context → plan → spells in order →
//! a second look when a spell claims a fix → one outcome, every step stored and announced.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::context::{gather, give_up_facts};
use super::plan::plan;
use super::policy::should_run;
use super::{spell, spell_in_words, SpellContext, SpellReport};
use crate::error::{Error, Result};
use crate::events::Event;
use crate::failure::{Failure, FailureSource, ProjectScenario};
use crate::heal::{HealContext, Remedy, RemedyReport, RemedyStatus};
use crate::project::{marks, run_project_command, CommandPlace, Project, Projects};
use crate::services::{HandedOver, Services};
use crate::store::{now, InvocationStatus, NewInvocation, SpellRun};
use crate::tasklist::{read_file, TaskStatus, TASKS_FILE};

/// When the engine stops, how long invocations under way get to finish.
const STOP_GRACE: Duration = Duration::from_secs(3);

/// How long the service waits for the failed session to finish settling before it acts.
const SETTLE_WAIT: Duration = Duration::from_secs(60);

/// The pipeline's remedy for project failures: the policy, then the hand-over.
pub struct HealerService;

#[async_trait]
impl Remedy for HealerService {
    fn name(&self) -> &'static str {
        "healer_service"
    }

    async fn apply(
        &self,
        cx: &HealContext<'_>,
        heal_id: i64,
        failure: &Failure,
    ) -> Result<RemedyReport> {
        let (
            Some(services),
            FailureSource::ProjectTask {
                project_id,
                task_id,
                session_id,
            },
        ) = (cx.services, &failure.source)
        else {
            return Ok(RemedyReport {
                status: RemedyStatus::NotResolved,
                detail: "only a project's task with an engine behind it".to_string(),
            });
        };
        let at = Instant::now();
        let store = &services.store;
        let config = store.healer_config(*project_id)?;
        let ran = store.healer_invocations_of_task(*project_id, task_id)?;
        let gives_up = give_up_facts(store, *project_id, failure)?.gives_up();
        let decision = should_run(failure, &config, ran, gives_up);
        let inv = store.insert_invocation(&NewInvocation {
            project_id: *project_id,
            task_id,
            session_id: Some(*session_id),
            heal_id: Some(heal_id),
            scenario: &failure.scenario,
            signature: &failure.signature,
            status: if decision.run {
                InvocationStatus::Running
            } else {
                InvocationStatus::Skipped
            },
            reason: &decision.reason,
        })?;
        services.bus.emit(Event::HealerInvocationStart {
            invocation_id: inv.id,
            project_id: *project_id,
            task_id: task_id.clone(),
            session_id: Some(*session_id),
            scenario: failure.scenario.clone(),
            at: inv.started_at.clone(),
        })?;
        if !decision.run {
            services.bus.emit(Event::HealerInvocationComplete {
                invocation_id: inv.id,
                project_id: *project_id,
                task_id: task_id.clone(),
                scenario: failure.scenario.clone(),
                status: InvocationStatus::Skipped,
                spells: vec![],
                reason: decision.reason.clone(),
            })?;
            return Ok(RemedyReport {
                status: RemedyStatus::NotResolved,
                detail: format!("the healer service skipped it: {}", decision.reason),
            });
        }
        let handed = services.healer.hand_over(HandedOver {
            invocation_id: inv.id,
            failure: failure.clone(),
            at,
            contain_only: decision.contain_only,
        });
        if !handed {
            let why = "the healer service is not running in this process";
            finish(
                services,
                &inv_of(inv.id, *project_id, task_id, &failure.scenario),
                InvocationStatus::Unresolved,
                why,
                vec![],
            )?;
            return Ok(RemedyReport {
                status: RemedyStatus::NotResolved,
                detail: why.to_string(),
            });
        }
        // Not the end of the heal: the person is told at once (the next remedy), while the
        // service works on it and its card shows what it does.
        Ok(RemedyReport {
            status: RemedyStatus::NotResolved,
            detail: "the healer service took it over; its card on the task says what it does"
                .to_string(),
        })
    }
}

/// What `finish` needs to say about an invocation.
pub(super) struct InvOf<'a> {
    id: i64,
    project_id: i64,
    task_id: &'a str,
    scenario: &'a str,
}

pub(super) fn inv_of<'a>(
    id: i64,
    project_id: i64,
    task_id: &'a str,
    scenario: &'a str,
) -> InvOf<'a> {
    InvOf {
        id,
        project_id,
        task_id,
        scenario,
    }
}

pub(super) fn finish(
    services: &Services,
    inv: &InvOf<'_>,
    status: InvocationStatus,
    reason: &str,
    spells: Vec<String>,
) -> Result<()> {
    services.store.finish_invocation(inv.id, status, reason)?;
    services.bus.emit(Event::HealerInvocationComplete {
        invocation_id: inv.id,
        project_id: inv.project_id,
        task_id: inv.task_id.to_string(),
        scenario: inv.scenario.to_string(),
        status,
        spells,
        reason: reason.to_string(),
    })?;
    Ok(())
}

/// The service's loop: each handed-over failure in a task of its own (a spell may wait for an
/// agent or for the person), all ended when the engine stops.
pub(crate) async fn run_loop(
    services: Arc<Services>,
    projects: Arc<Projects>,
    cancel: CancellationToken,
) {
    let Some(mut desk) = services.healer.take() else {
        return;
    };
    let mut running = JoinSet::new();
    let spawn = |running: &mut JoinSet<()>, item: HandedOver| {
        let (services, projects) = (services.clone(), projects.clone());
        running.spawn(async move {
            let id = item.invocation_id;
            if let Err(e) = maybe_run(&services, &projects, item).await {
                tracing::error!(invocation = id, "the healer service failed: {e}");
                let _ = services.store.finish_invocation(
                    id,
                    InvocationStatus::Unresolved,
                    &format!("Healer could not finish: {e}"),
                );
            }
        });
    };
    loop {
        tokio::select! {
            () = cancel.cancelled() => break,
            item = desk.recv() => {
                let Some(item) = item else { break };
                spawn(&mut running, item);
            }
            Some(_) = running.join_next(), if !running.is_empty() => {}
        }
    }
    // The engine stops (a CLI command's engine right after its session): what was handed
    // over gets a short while to finish; one that waits for the person is cut short and
    // settled at the next start.
    while let Ok(item) = desk.try_recv() {
        spawn(&mut running, item);
    }
    let _ = tokio::time::timeout(STOP_GRACE, async {
        while running.join_next().await.is_some() {}
    })
    .await;
    running.abort_all();
}

/// One invocation, after the policy let it run: context → plan → spells → outcome. The plan
/// and the failure are stored first: a spell that asks the person leaves the invocation
/// waiting, stored, and [`resume`] carries it on with the answer in whichever engine runs then.
pub(crate) async fn maybe_run(
    services: &Services,
    projects: &Arc<Projects>,
    item: HandedOver,
) -> Result<InvocationStatus> {
    let failure = &item.failure;
    let FailureSource::ProjectTask {
        project_id,
        session_id,
        ..
    } = &failure.source
    else {
        return Err(Error::Internal("not a project failure".to_string()));
    };
    let project = services.store.project(*project_id)?;
    let config = services.store.healer_config(*project_id)?;
    // The session that failed is still settling (it handed the failure up as its last act):
    // a spell that starts a session of the task, or a check run again, must find it gone.
    let deadline = Instant::now() + SETTLE_WAIT;
    while projects.is_running(*session_id) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut context = gather(&services.store, &project, failure)?;
    let scenario = ProjectScenario::parse(&failure.scenario)
        .ok_or_else(|| Error::Internal(format!("unknown scenario {}", failure.scenario)))?;
    if scenario == ProjectScenario::VerificationFailed {
        let probe = SpellContext {
            services,
            projects,
            project: &project,
            config: &config,
            failure,
            context: &context,
            invocation_id: item.invocation_id,
            answer: None,
        };
        context.flaky = verify_again(&probe).await?;
    }
    let chosen = plan(scenario, context.facts(), &config, item.contain_only);
    services
        .store
        .set_invocation_plan(item.invocation_id, failure, &chosen)?;
    tracing::debug!(
        invocation = item.invocation_id,
        ms = item.at.elapsed().as_millis() as u64,
        "plan chosen: {chosen:?}"
    );
    let cx = SpellContext {
        services,
        projects,
        project: &project,
        config: &config,
        failure,
        context: &context,
        invocation_id: item.invocation_id,
        answer: None,
    };
    let names: Vec<String> = chosen.iter().map(|n| n.to_string()).collect();
    let cast = cast_all(&cx, &names, 0, Vec::new(), &|cx| Box::pin(recheck(cx))).await?;
    let (status, _) = conclude(&cx, cast)?;
    Ok(status)
}

/// The name a check run again is recorded under on the invocation's card.
pub const VERIFY_AGAIN: &str = "verify_again";

/// Flaky means flaky: after a red verification the checks run once more on the unchanged
/// worktree. Green this time → the failure was flaky; red again → the rules as written. The
/// re-run and what it said are a step of the invocation.
async fn verify_again(cx: &SpellContext<'_>) -> Result<bool> {
    let started_at = now();
    let (passed, said) = match recheck(cx).await {
        Ok(r) => r,
        Err(e) => (false, format!("the check could not run again: {e}")),
    };
    let said = said.trim_start_matches("checked again: ");
    let report = if passed {
        SpellReport::done(format!(
            "Ran the checks again on the unchanged worktree: {said}; the failure was flaky"
        ))
    } else {
        SpellReport::not_done(format!(
            "Ran the checks again on the unchanged worktree: {said}; it fails every time"
        ))
    };
    record(cx, VERIFY_AGAIN, &report, started_at, None)?;
    Ok(passed)
}

/// How casting the plan ended.
pub(super) enum Cast {
    Finished(InvocationStatus, String, Vec<String>),
    /// A spell asked the person: the invocation waits at spell `at` of its plan.
    Waiting {
        at: usize,
        checkpoint: i64,
        worked: Vec<String>,
        summary: String,
        tried: Vec<String>,
    },
}

/// Store and announce how casting ended: a waiting invocation keeps its place in the plan; a
/// finished one ends with its outcome (a resolved task that is not closed goes on).
pub(super) fn conclude(cx: &SpellContext<'_>, cast: Cast) -> Result<(InvocationStatus, String)> {
    let services = cx.services;
    let task_id = &cx.context.task_id;
    let inv = inv_of(
        cx.invocation_id,
        cx.project.id,
        task_id,
        &cx.failure.scenario,
    );
    match cast {
        Cast::Waiting {
            at,
            checkpoint,
            worked,
            summary,
            tried,
        } => {
            services
                .store
                .wait_invocation(inv.id, at, &worked, checkpoint, &summary)?;
            super::tell::ask_person(services, cx.project, cx.context, checkpoint, &summary)?;
            // Answered already (in the moment between the question and this wait being
            // stored, nobody could act on it): carried on now, not at the next start.
            if services.store.checkpoint(checkpoint)?.decision.is_some() {
                let (services, projects) = (cx.projects.services.clone(), cx.projects.clone());
                tokio::spawn(async move {
                    if let Err(e) = super::resume::resume_answered(&services, &projects).await {
                        tracing::warn!("could not carry on an answered question: {e}");
                    }
                });
            }
            services.bus.emit(Event::HealerInvocationComplete {
                invocation_id: inv.id,
                project_id: inv.project_id,
                task_id: task_id.clone(),
                scenario: inv.scenario.to_string(),
                status: InvocationStatus::Waiting,
                spells: tried,
                reason: summary.clone(),
            })?;
            Ok((InvocationStatus::Waiting, summary))
        }
        Cast::Finished(status, reason, tried) => {
            let reason = if status == InvocationStatus::Resolved {
                match continue_task(cx.projects, cx.project, task_id) {
                    Ok(Some(next)) => format!("{reason}; the task continues (session {next})"),
                    Ok(None) => reason,
                    Err(e) => format!("{reason}; the task could not continue: {e}"),
                }
            } else {
                reason
            };
            finish(services, &inv, status, &reason, tried)?;
            // Every outcome reaches the person: fixed, made safe, or not fixed.
            super::tell::tell_person(services, cx.project, cx.context, status, &reason)?;
            Ok((status, reason))
        }
    }
}

/// A second look at the failing check.
type Recheck<'a> = dyn Fn(&'a SpellContext<'a>) -> Pin<Box<dyn Future<Output = Result<(bool, String)>> + Send + 'a>>
    + Sync;

/// Cast the spells of `plan` from index `from` (the spells before it ran already and achieved
/// `worked`): a spell that errors or panics is recorded and the next one runs; a claimed fix
/// is checked again; the person's Pause ends it; a spell that asks the person stops here with
/// the invocation's place kept.
pub(crate) async fn cast_all<'a>(
    cx: &'a SpellContext<'a>,
    plan: &[String],
    from: usize,
    mut worked: Vec<String>,
    recheck: &Recheck<'a>,
) -> Result<Cast> {
    let mut tried: Vec<String> = plan.iter().take(from).cloned().collect();
    for (at, name) in plan.iter().enumerate().skip(from) {
        let name = name.as_str();
        let Some(spell) = spell(name) else { continue };
        let started_at = now();
        // The answer is for the spell that asked; the ones after it decide for themselves.
        let spell_cx = SpellContext {
            answer: if at == from { cx.answer } else { None },
            ..*cx
        };
        let casting = async {
            crate::failpoint::panic_at(&format!("spell.{name}"));
            spell.cast(&spell_cx).await
        };
        let report = match CatchPanic(Box::pin(casting)).await {
            Ok(Ok(report)) => report,
            Ok(Err(e)) => SpellReport::not_done(format!("It could not run: {e}")),
            Err(panic) => {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                tracing::error!(
                    invocation = cx.invocation_id,
                    spell = name,
                    "a spell panicked: {what}"
                );
                SpellReport::not_done(
                    "It stopped on an internal error (a bug in Healer); the next step ran",
                )
            }
        };
        tried.push(name.to_string());
        if let Some(checkpoint) = report.waits_for {
            // Not a step of its own yet: the spell is cast again with the answer.
            return Ok(Cast::Waiting {
                at,
                checkpoint,
                worked,
                summary: report.summary,
                tried,
            });
        }
        if report.success && !report.stop {
            worked.push(format!(
                "{}: {}",
                spell_in_words(name),
                report.summary.trim_end_matches('.')
            ));
        }
        crate::failpoint::hit("healer.before_spell_recorded");
        record(cx, name, &report, started_at, Some((at + 1, &worked)))?;
        crate::failpoint::hit("healer.spell_recorded");
        if report.stop {
            return Ok(Cast::Finished(
                InvocationStatus::Contained,
                report.summary,
                tried,
            ));
        }
        if report.claims_fix {
            let (passed, said) = match recheck(cx).await {
                Ok(r) => r,
                Err(e) => (false, format!("the check could not run again: {e}")),
            };
            if passed {
                return Ok(Cast::Finished(
                    InvocationStatus::Resolved,
                    format!("{}; {said}", report.summary.trim_end_matches('.')),
                    tried,
                ));
            }
            worked.pop();
            let note = SpellReport::not_done(format!("Checked again: {said}"));
            record(cx, name, &note, now(), Some((at + 1, &worked)))?;
        }
    }
    Ok(match worked.is_empty() {
        true if tried.is_empty() => Cast::Finished(
            InvocationStatus::Unresolved,
            "No spell fits this failure under the project's settings".to_string(),
            tried,
        ),
        true => Cast::Finished(
            InvocationStatus::Unresolved,
            "Nothing Healer tried helped".to_string(),
            tried,
        ),
        false => Cast::Finished(InvocationStatus::Contained, worked.join("; "), tried),
    })
}

fn record(
    cx: &SpellContext<'_>,
    name: &str,
    report: &SpellReport,
    started_at: String,
    progress: Option<(usize, &[String])>,
) -> Result<()> {
    let run = SpellRun {
        spell: name.to_string(),
        success: report.success,
        summary: report.summary.clone(),
        started_at,
        finished_at: now(),
        session_id: report.session_id,
    };
    if let Some(session) = report.session_id {
        // The invocation's trajectory points at it: written now that the session ended.
        if let Err(e) = super::atif::write_session_trajectory(cx.services, session) {
            tracing::warn!(session, "cannot write the session's trajectory: {e}");
        }
    }
    cx.services
        .store
        .add_invocation_spell(cx.invocation_id, &run, progress)?;
    cx.services.bus.emit(Event::HealerSpellApplied {
        invocation_id: cx.invocation_id,
        project_id: cx.project.id,
        task_id: cx.context.task_id.clone(),
        spell: run.spell,
        success: run.success,
        summary: run.summary,
    })?;
    Ok(())
}

/// Run the check that failed again in the worktree: the init script for an init failure,
/// else the project's verification commands. `(passed, what it said)`.
pub(super) async fn recheck(cx: &SpellContext<'_>) -> Result<(bool, String)> {
    let worktree = cx.context.worktree.clone().ok_or_else(|| Error::NotFound {
        what: format!("the worktree of task {}", cx.context.task_id),
    })?;
    let settings = &cx.project.settings;
    let init = matches!(
        ProjectScenario::parse(&cx.failure.scenario),
        Some(
            ProjectScenario::InitScriptTypecheckFailure
                | ProjectScenario::InitScriptTestFailure
                | ProjectScenario::InitScriptEnvironmentFailure
        )
    );
    let checks: Vec<(String, String)> = if init {
        settings
            .init_script
            .iter()
            .map(|s| ("init script".to_string(), s.clone()))
            .collect()
    } else {
        settings
            .verify
            .iter()
            .map(|v| (v.name.clone(), v.command.clone()))
            .collect()
    };
    if checks.is_empty() {
        return Ok((true, "there is no check to run again".to_string()));
    }
    let tmp = cx
        .services
        .paths
        .data_dir()
        .join("healer")
        .join(cx.invocation_id.to_string());
    std::fs::create_dir_all(&tmp)
        .map_err(|e| Error::io(format!("cannot create {}", tmp.display()), e))?;
    let mark = marks(cx.services.instance(), 0);
    let limit = Duration::from_secs(u64::from(settings.command_time_limit_secs));
    let groups = cx.services.paths.groups_dir();
    let place = CommandPlace {
        worktree: &worktree,
        tmp: &tmp,
        marker: &mark,
        groups: &groups,
    };
    let mut passed = Vec::new();
    for (name, command) in checks {
        let result = run_project_command(&place, &name, &command, limit).await?;
        if !result.passed() {
            return Ok((false, format!("{name} {}", result.verdict())));
        }
        passed.push(name);
    }
    let _ = std::fs::remove_dir_all(&tmp);
    Ok((true, format!("checked again: {} passed", passed.join(", "))))
}

/// A resolved task that is not done yet goes on: its next session starts.
fn continue_task(
    projects: &Arc<Projects>,
    project: &Project,
    task_id: &str,
) -> Result<Option<i64>> {
    let file = read_file(&PathBuf::from(&project.path).join(TASKS_FILE))?;
    match file.task(task_id) {
        Some(t) if t.status == TaskStatus::Open => {
            Ok(Some(projects.start_for_healer(project, task_id)?.id))
        }
        _ => Ok(None),
    }
}

/// A future whose panic is caught and returned, so one spell's bug does not end the others.
struct CatchPanic<F>(Pin<Box<F>>);

impl<F: Future> Future for CatchPanic<F> {
    type Output = std::thread::Result<F::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<Self::Output> {
        let inner = self.get_mut().0.as_mut();
        match std::panic::catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What keeps one spell's bug from ending the invocation: its panic comes back as a value.
    #[tokio::test]
    async fn a_panicking_future_comes_back_as_an_error_and_a_good_one_as_its_value() {
        let bad = CatchPanic(Box::pin(async {
            tokio::task::yield_now().await;
            if std::hint::black_box(true) {
                panic!("a spell's bug");
            }
            1
        }))
        .await;
        assert!(bad.is_err());
        let good = CatchPanic(Box::pin(async { 2 })).await;
        assert_eq!(good.ok(), Some(2));
    }
}
