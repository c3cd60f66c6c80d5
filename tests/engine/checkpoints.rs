//! Checkpoints and the recovery levels in the engine: blocking, deciding, surviving a restart,
//! recommending from history, and the Level-2 analyzer answering through the scripted model
//! server (each action, bad JSON, a model error, no model, and the alternatives limit).

use healer::checkpoint::{Checkpoint, CheckpointTrigger};
use healer::engine::EngineOptions;
use healer::lease::Lease;
use healer::llm::Keys;
use healer::workflow::{RunStatus, RunTrigger, Runtime, WorkflowStatus};
use healer::{Engine, Paths};

use crate::data_dir;
use crate::maintainer::bed;
use crate::model_server::{openai, TOKENS};
use crate::workflows::input;

/// A script that dies the way an out-of-memory kill looks (resource: a HICCUP checkpoint).
const KILLED: &str = "echo working\nexit 137\n";
/// A script that may not write where it must (environment, and not a missing module: Level 2).
const MISSING: &str =
    "import os, sys\nprint('hint=' + os.environ.get('HEALER_RECOVERY_HINT', ''), file=sys.stderr)\nraise PermissionError(13, 'Permission denied', '/srv/reports/today.csv')\n";

async fn engine(paths: &Paths, scheduler: bool) -> Engine {
    let lease = Lease::acquire(paths, "test").expect("lease");
    let options = EngineOptions {
        scheduler,
        keys: Some(Keys::env_only()),
        ..EngineOptions::default()
    };
    Engine::start_with_lease(paths.clone(), "test", lease, options)
        .await
        .expect("engine")
}

fn pending(engine: &Engine) -> Vec<Checkpoint> {
    engine.checkpoints().expect("list").pending
}

#[tokio::test]
async fn a_resource_failure_asks_and_its_checkpoint_blocks_only_its_workflow() {
    let (_tmp, paths) = data_dir();
    let engine = engine(&paths, false).await;
    let a = engine
        .create_workflow(input("Killed", Runtime::Bash, KILLED))
        .expect("a");
    let mut other = input("Fine", Runtime::Bash, "echo ok\n");
    other.schedule = healer::workflow::Schedule::Interval { seconds: 60 };
    let b = engine.create_workflow(other).expect("b");
    let mut every = input("Killed", Runtime::Bash, KILLED);
    every.schedule = healer::workflow::Schedule::Interval { seconds: 60 };
    engine.update_workflow(a.id, every).expect("schedule a");

    let run = engine.run_and_wait(a.id).await.expect("run");
    assert_eq!(run.run.status, RunStatus::Failed);
    let waiting = pending(&engine);
    assert_eq!(waiting.len(), 1);
    let c = &waiting[0];
    assert_eq!(c.trigger, CheckpointTrigger::Hiccup);
    assert_eq!(c.workflow_id, Some(a.id));
    assert_eq!(c.run_id, Some(run.run.id));
    let labels: Vec<&str> = c.options.iter().map(|o| o.label.as_str()).collect();
    assert_eq!(labels, ["Proceed", "Skip", "Pause"]);
    assert_eq!(c.recommended(), 1, "no history: Proceed for a hiccup");
    assert!(
        c.recommendation.starts_with("Proceed — "),
        "{}",
        c.recommendation
    );
    assert!(
        c.context.contains("ran out of memory or was killed"),
        "{}",
        c.context
    );

    // The scheduler leaves A alone while it waits; B goes on.
    let scheduled: Vec<i64> = engine
        .store()
        .scheduled_workflows()
        .expect("scheduled")
        .iter()
        .map(|w| w.id)
        .collect();
    assert_eq!(scheduled, [b.id]);
    assert_eq!(
        engine.run_and_wait(b.id).await.expect("b runs").run.status,
        RunStatus::Succeeded
    );
}

#[tokio::test]
async fn proceed_skip_and_pause_each_do_what_they_say() {
    let (_tmp, paths) = data_dir();
    let engine = engine(&paths, false).await;
    let w = engine
        .create_workflow(input("Killed", Runtime::Bash, KILLED))
        .expect("w");

    let first = engine.run_and_wait(w.id).await.expect("run").run;
    let c = pending(&engine).remove(0);
    let decided = engine
        .decide_checkpoint(c.id, Some(1), Some("try once more"))
        .await
        .expect("proceed");
    let decision = decided.decision.expect("decided");
    assert_eq!(decision.notes.as_deref(), Some("try once more"));
    let queued = engine.runs(w.id, None, 1).expect("runs").remove(0);
    assert_eq!(queued.trigger, RunTrigger::Checkpoint);
    assert_eq!(queued.status, RunStatus::Queued);
    assert_eq!(decision.outcome, format!("Run #{} started", queued.number));
    assert!(
        engine.decide_checkpoint(c.id, Some(2), None).await.is_err(),
        "once only"
    );

    // Skip: the run is marked, the workflow goes on.
    engine
        .work_queued_runs(w.id)
        .await
        .expect("the proceed run ran");
    let c = pending(&engine).remove(0);
    engine
        .decide_checkpoint(c.id, Some(2), None)
        .await
        .expect("skip");
    let skipped = engine.run_detail(c.run_id.expect("run")).expect("run").run;
    assert!(skipped.skipped);
    assert!(!engine.run_detail(first.id).expect("first").run.skipped);
    let after = engine.find_workflow("killed").expect("w");
    assert_eq!(after.status, WorkflowStatus::Active);

    // Pause.
    engine.run_and_wait(w.id).await.expect("run");
    let c = pending(&engine).remove(0);
    let decided = engine
        .decide_checkpoint(c.id, Some(3), None)
        .await
        .expect("pause");
    assert_eq!(
        decided.decision.expect("decided").outcome,
        "Paused until you resume it"
    );
    assert_eq!(
        engine.find_workflow("killed").expect("w").status,
        WorkflowStatus::Paused
    );
    assert!(engine.decide_checkpoint(c.id, Some(9), None).await.is_err());
}

/// Run now does not go past a question the person has not answered: it says what waits, and
/// no second question about the same failure is opened. Skip says what comes next for this
/// workflow: a paused one stays paused, a manual one runs when it is run.
#[tokio::test]
async fn run_now_waits_for_the_decision_and_skip_says_what_comes_next_for_this_workflow() {
    let (_tmp, paths) = data_dir();
    let engine = engine(&paths, false).await;
    let w = engine
        .create_workflow(input("Killed", Runtime::Bash, KILLED))
        .expect("w");
    engine.run_and_wait(w.id).await.expect("run");
    let c = pending(&engine).remove(0);
    let runs_before = engine.runs(w.id, None, 50).expect("runs").len();
    let refused = engine
        .run_now(w.id)
        .expect_err("refused while the question waits");
    let text = refused.to_string();
    assert!(
        text.contains("\u{201c}Killed\u{201d} waits for your decision")
            && text.contains("Proceed runs it again"),
        "{text}"
    );
    assert!(engine.run_and_wait(w.id).await.is_err());
    assert_eq!(
        engine.runs(w.id, None, 50).expect("runs").len(),
        runs_before
    );
    assert_eq!(pending(&engine).len(), 1, "still one question");

    // Skipped, a workflow that runs only by hand runs when it is run.
    let decided = engine
        .decide_checkpoint(c.id, Some(2), None)
        .await
        .expect("skip");
    assert!(decided
        .decision
        .expect("decided")
        .outcome
        .ends_with("skipped; it runs again when you run it"),);

    // Paused, then run by hand and failing again: Skip leaves it paused and says so.
    engine.set_paused(w.id, true).expect("paused");
    engine.run_and_wait(w.id).await.expect("run");
    let c = pending(&engine).remove(0);
    let decided = engine
        .decide_checkpoint(c.id, Some(2), None)
        .await
        .expect("skip");
    assert!(decided
        .decision
        .expect("decided")
        .outcome
        .ends_with("skipped; it stays paused until you resume it"),);
    assert_eq!(
        engine.find_workflow("killed").expect("w").status,
        WorkflowStatus::Paused
    );
    engine.run_now(w.id).expect("nothing waits: it runs");
}

#[tokio::test]
async fn a_pending_checkpoint_survives_a_restart_and_the_work_resumes_when_decided() {
    let (_tmp, paths) = data_dir();
    let id = {
        let engine = engine(&paths, false).await;
        let w = engine
            .create_workflow(input("Killed", Runtime::Bash, KILLED))
            .expect("w");
        engine.run_and_wait(w.id).await.expect("run");
        engine.shutdown().await;
        w.id
    };
    let engine = engine(&paths, true).await;
    let c = pending(&engine).remove(0);
    assert_eq!(c.workflow_id, Some(id));
    let mut events = engine.subscribe();
    engine
        .decide_checkpoint(c.id, Some(1), None)
        .await
        .expect("proceed");
    // The scheduler runs the Proceed run (it fails again and asks again).
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let record = tokio::time::timeout_at(deadline, events.recv())
            .await
            .expect("the run in time")
            .expect("event");
        if let healer::Event::RunFinished { workflow_id, .. } = record.event {
            assert_eq!(workflow_id, id);
            break;
        }
    }
    let runs = engine.runs(id, None, 5).expect("runs");
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0].trigger, RunTrigger::Checkpoint);
}

#[tokio::test]
async fn the_recommendation_follows_past_decisions_and_says_why() {
    let (_tmp, paths) = data_dir();
    let engine = engine(&paths, false).await;
    let w = engine
        .create_workflow(input("Killed", Runtime::Bash, KILLED))
        .expect("w");
    for option in [2, 3, 2] {
        engine.run_and_wait(w.id).await.expect("run");
        let c = pending(&engine).remove(0);
        engine
            .decide_checkpoint(c.id, Some(option), None)
            .await
            .expect("decide");
        if option == 3 {
            engine.set_paused(w.id, false).expect("resume");
        }
    }
    engine.run_and_wait(w.id).await.expect("run");
    let c = pending(&engine).remove(0);
    assert_eq!(c.recommended(), 2);
    assert_eq!(
        c.recommendation,
        "Skip — you chose it 2 of the last 3 times for this workflow"
    );
    // Deciding without an option takes the recommended one.
    let decided = engine
        .decide_checkpoint(c.id, None, None)
        .await
        .expect("decide");
    assert_eq!(decided.decision.expect("decided").option, 2);
}

/// Fail the missing-module script once with the analyzer scripted to `answer`; returns the
/// bed and the workflow id after everything the failure set off is over.
async fn level2(answers: &[&str]) -> (crate::maintainer::Bed, i64) {
    let bed = bed(false, true).await;
    let w = bed
        .engine
        .create_workflow(input("Rates", Runtime::Python3, MISSING))
        .expect("w");
    bed.server
        .script(answers.iter().map(|a| openai::text(a, TOKENS)));
    bed.engine.run_until_healed(w.id).await.expect("healed");
    (bed, w.id)
}

#[tokio::test]
async fn level_two_alternative_reruns_with_the_hint_until_the_limit_then_asks() {
    let alt = r#"{"action": "alternative", "hint": "use the cached rates", "reasoning": "the module is optional"}"#;
    let (bed, id) = level2(&[alt, alt, alt]).await;
    let runs = bed.engine.runs(id, None, 10).expect("runs");
    assert_eq!(runs.len(), 3, "the first run and two alternatives");
    for run in &runs[..2] {
        assert_eq!(run.trigger, RunTrigger::Recovery);
        assert_eq!(run.hint.as_deref(), Some("use the cached rates"));
        let detail = bed.engine.run_detail(run.id).expect("detail");
        assert!(detail.attempts[0]
            .stderr
            .contains("hint=use the cached rates"));
    }
    assert_eq!(bed.server.chats().len(), 3);
    let c = pending(&bed.engine).remove(0);
    assert_eq!(c.trigger, CheckpointTrigger::Hiccup);
    assert!(
        c.context.contains("2 alternatives were tried"),
        "{}",
        c.context
    );
}

#[tokio::test]
async fn level_two_diagnostics_opens_an_environment_checkpoint_with_the_facts() {
    let (bed, _) =
        level2(&[r#"{"action": "diagnostics", "reasoning": "a module is missing"}"#]).await;
    let c = pending(&bed.engine).remove(0);
    assert_eq!(c.trigger, CheckpointTrigger::Environment);
    assert!(c.context.contains("a module is missing"), "{}", c.context);
    // Sentences, not a raw `df`: the person reads this in a dialog.
    assert!(
        c.context.contains("python3 is installed ("),
        "{}",
        c.context
    );
    assert!(
        c.context.contains("The disk that holds the workflow has "),
        "{}",
        c.context
    );
    assert!(!c.context.contains("Filesystem"), "{}", c.context);
    // The workflow's own packages, not every module the machine has.
    assert!(
        c.context
            .contains("The workflow has no packages of its own"),
        "{}",
        c.context
    );
    assert!(
        !c.context.contains("Installed Python modules"),
        "{}",
        c.context
    );
    assert_eq!(c.options[c.recommended() as usize - 1].label, "Pause");
}

#[tokio::test]
async fn level_two_unblock_clears_the_engines_state_and_runs_again_once() {
    let (bed, id) = level2(&[
        r#"{"action": "unblock", "reasoning": "a stale flag"}"#,
        r#"{"action": "unblock", "reasoning": "still stuck"}"#,
    ])
    .await;
    let runs = bed.engine.runs(id, None, 10).expect("runs");
    assert_eq!(runs.len(), 2, "one unblock re-run, then asked");
    assert_eq!(runs[0].trigger, RunTrigger::Recovery);
    let c = pending(&bed.engine).remove(0);
    assert!(
        c.context.contains("unblocked once already"),
        "{}",
        c.context
    );
}

#[tokio::test]
async fn level_two_escalates_on_escalate_bad_json_a_model_error_and_no_model() {
    let (bed, _) =
        level2(&[r#"{"action": "escalate", "reasoning": "the person must install it"}"#]).await;
    let c = pending(&bed.engine).remove(0);
    assert_eq!(c.trigger, CheckpointTrigger::Hiccup);
    assert!(
        c.context.contains("the person must install it"),
        "{}",
        c.context
    );

    let (bed, _) = level2(&["Run it again, I think."]).await;
    let c = pending(&bed.engine).remove(0);
    assert!(c.context.contains("not usable"), "{}", c.context);

    let (bed, _) = level2(&[r#"{"action": "reformat-disk", "reasoning": "x"}"#]).await;
    assert!(pending(&bed.engine)[0].context.contains("not usable"));

    let bed = bed_with_error().await;
    let c = pending(&bed.engine).remove(0);
    assert!(c.context.contains("the analyzer failed"), "{}", c.context);

    let bed = crate::maintainer::bed(false, false).await;
    let w = bed
        .engine
        .create_workflow(input("Rates", Runtime::Python3, MISSING))
        .expect("w");
    bed.engine.run_until_healed(w.id).await.expect("healed");
    let c = pending(&bed.engine).remove(0);
    assert!(c.context.contains("no analysis"), "{}", c.context);
    assert!(bed.server.chats().is_empty());
}

async fn bed_with_error() -> crate::maintainer::Bed {
    let bed = bed(false, true).await;
    let w = bed
        .engine
        .create_workflow(input("Rates", Runtime::Python3, MISSING))
        .expect("w");
    bed.server
        .script([openai::error(400, "the request was refused", &[])]);
    bed.engine.run_until_healed(w.id).await.expect("healed");
    bed
}
