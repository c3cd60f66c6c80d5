//! The "same error in several workflows" breaker at its defaults (3 workflows within an hour):
//! one checkpoint per shared error that names every workflow it hit, whatever the class; while
//! it waits no model call is spent on that error; and each option acts on all of them.

use healer::checkpoint::{Checkpoint, CheckpointTrigger};
use healer::workflow::{RunStatus, Runtime, WorkflowStatus};

use crate::maintainer::{bed, Bed, BROKEN};
use crate::model_server::{openai, TOKENS};
use crate::workflows::input;

const TITLES: [&str; 3] = ["North sales", "South sales", "East sales"];

/// Three workflows fail with the same logic error; with no model configured the first two are
/// told "no model" and the third trips the breaker.
async fn three_fail(bed: &Bed) -> (Vec<i64>, Checkpoint) {
    let mut ids = Vec::new();
    for title in TITLES {
        let w = bed
            .engine
            .create_workflow(input(title, Runtime::Python3, BROKEN))
            .expect("w");
        bed.engine.run_until_healed(w.id).await.expect("ran");
        ids.push(w.id);
    }
    let pending = bed.engine.checkpoints().expect("list").pending;
    assert_eq!(pending.len(), 1, "one checkpoint for the shared error");
    let c = pending.into_iter().next().expect("systemic");
    assert_eq!(c.trigger, CheckpointTrigger::Systemic);
    assert_eq!(c.workflow_id, None);
    let named: Vec<(i64, &str)> = c
        .affected
        .iter()
        .map(|a| (a.workflow_id, a.title.as_str()))
        .collect();
    assert_eq!(
        named,
        ids.iter().copied().zip(TITLES).collect::<Vec<_>>(),
        "it names every workflow"
    );
    (ids, c)
}

#[tokio::test]
async fn a_missing_program_in_three_workflows_asks_once_and_spends_no_more_calls() {
    let bed = bed(false, true).await;
    let engine = &bed.engine;
    // Level 2 would look at each: the first two are asked about, the rest wait.
    bed.server.script([
        openai::text(
            r#"{"action": "escalate", "reasoning": "not installed"}"#,
            TOKENS,
        ),
        openai::text(
            r#"{"action": "escalate", "reasoning": "not installed"}"#,
            TOKENS,
        ),
    ]);
    // A program the machine lacks, the same in each (a missing module is installed instead).
    let code = "import subprocess, sys\nsys.exit(subprocess.run('healer-systemic-missing-tool', shell=True).returncode)\n";
    let mut ids = Vec::new();
    for title in ["Mailer", "Exporter", "Importer", "Reporter"] {
        let w = engine
            .create_workflow(input(title, Runtime::Python3, code))
            .expect("w");
        let healed = engine.run_until_healed(w.id).await.expect("ran");
        assert_eq!(
            healed.first.run.class,
            Some(healer::failure::FailureClass::Environment)
        );
        ids.push(w.id);
    }
    assert_eq!(
        bed.server.chats().len(),
        2,
        "the third and fourth made no Level-2 call"
    );
    let systemic: Vec<Checkpoint> = engine
        .checkpoints()
        .expect("list")
        .pending
        .into_iter()
        .filter(|c| c.trigger == CheckpointTrigger::Systemic)
        .collect();
    assert_eq!(systemic.len(), 1);
    let titles: Vec<&str> = systemic[0]
        .affected
        .iter()
        .map(|a| a.title.as_str())
        .collect();
    assert_eq!(
        titles,
        ["Mailer", "Exporter", "Importer", "Reporter"],
        "the fourth joined the open checkpoint"
    );
    assert!(
        systemic[0].context.contains("healer-systemic-missing-tool"),
        "{}",
        systemic[0].context
    );
}

#[tokio::test]
async fn pause_pauses_every_workflow_it_names_and_says_which() {
    let bed = bed(false, false).await;
    let (ids, c) = three_fail(&bed).await;
    assert!(
        c.options[2].recommended,
        "Pause is recommended for a spreading error"
    );
    let decided = bed
        .engine
        .decide_checkpoint(c.id, Some(3), None)
        .await
        .expect("pause");
    let outcome = decided.decision.expect("decided").outcome;
    assert_eq!(
        outcome,
        "Paused \u{201c}North sales\u{201d}, \u{201c}South sales\u{201d}, \u{201c}East sales\u{201d} until you resume them"
    );
    for id in ids {
        assert_eq!(
            bed.engine.workflow(id).expect("w").workflow.status,
            WorkflowStatus::Paused
        );
    }
}

#[tokio::test]
async fn skip_skips_their_failed_runs_and_lets_their_schedules_go_on() {
    let bed = bed(false, false).await;
    let (ids, c) = three_fail(&bed).await;
    let decided = bed
        .engine
        .decide_checkpoint(c.id, Some(2), None)
        .await
        .expect("skip");
    let outcome = decided.decision.expect("decided").outcome;
    assert!(outcome.contains("run"), "{outcome}");
    for (id, affected) in ids.iter().zip(&c.affected) {
        let run = bed
            .engine
            .run_detail(affected.run_id.expect("its failed run"))
            .expect("run")
            .run;
        assert!(run.skipped, "run {} of workflow {id} skipped", run.id);
        let w = bed.engine.workflow(*id).expect("w").workflow;
        assert_eq!(w.status, WorkflowStatus::Active);
    }
}

#[tokio::test]
async fn proceed_runs_each_again_and_repairs_go_on() {
    let bed = bed(false, false).await;
    let (ids, c) = three_fail(&bed).await;
    let decided = bed
        .engine
        .decide_checkpoint(c.id, Some(1), None)
        .await
        .expect("proceed");
    assert!(decided
        .decision
        .expect("decided")
        .outcome
        .starts_with("Repairs go on"));
    for id in &ids {
        bed.engine
            .work_queued_runs(*id)
            .await
            .expect("the run again");
        let last = bed.engine.runs(*id, None, 1).expect("runs").remove(0);
        assert_eq!(last.status, RunStatus::Failed);
        assert_eq!(last.trigger, healer::workflow::RunTrigger::Checkpoint);
    }
    // The new failures passed the breaker and reached the repair (here: no model, so the
    // person is told), instead of waiting again.
    let heals = bed.engine.heals(3).expect("heals");
    for heal in heals {
        let names: Vec<&str> = heal.remedies.iter().map(|r| r.remedy.as_str()).collect();
        assert!(names.contains(&"maintain"), "{names:?}");
        assert_eq!(
            heal.remedies
                .iter()
                .find(|r| r.remedy == "systemic_breaker")
                .map(|r| r.detail.as_str()),
            Some("decided recently")
        );
    }
    assert!(bed.engine.checkpoints().expect("list").pending.is_empty());
}

/// Fifteen workflows failing the same way on their schedules: one rule for all of them. The
/// questions the first ones got on their own are folded into the one that names them all, and
/// none of them runs on its schedule until the person decides.
#[tokio::test]
async fn one_question_holds_every_workflow_it_names_and_folds_their_own_questions() {
    let bed = bed(false, true).await;
    let engine = &bed.engine;
    bed.server.script([
        openai::text(
            r#"{"action": "escalate", "reasoning": "not installed"}"#,
            TOKENS,
        ),
        openai::text(
            r#"{"action": "escalate", "reasoning": "not installed"}"#,
            TOKENS,
        ),
    ]);
    let code = "import subprocess, sys\nsys.exit(subprocess.run('healer-systemic-missing-tool', shell=True).returncode)\n";
    let mut ids = Vec::new();
    for n in 0..15 {
        let mut w = input(&format!("Report {n}"), Runtime::Python3, code);
        w.schedule = healer::workflow::Schedule::Interval { seconds: 3600 };
        let w = engine.create_workflow(w).expect("w");
        engine.run_until_healed(w.id).await.expect("ran");
        ids.push(w.id);
    }
    let pending = engine.checkpoints().expect("list").pending;
    assert_eq!(pending.len(), 1, "one question: {pending:?}");
    assert_eq!(pending[0].trigger, CheckpointTrigger::Systemic);
    assert_eq!(pending[0].affected.len(), 15);
    let folded: Vec<Checkpoint> = engine
        .checkpoints()
        .expect("list")
        .decided
        .into_iter()
        .filter(|c| {
            c.decision.is_none()
                || c.decision
                    .as_ref()
                    .is_some_and(|d| d.outcome.contains("together"))
        })
        .collect();
    assert!(
        !folded.is_empty(),
        "the first workflows' own questions are folded into it"
    );
    let scheduled: Vec<i64> = engine
        .store()
        .scheduled_workflows()
        .expect("scheduled")
        .into_iter()
        .map(|s| s.id)
        .collect();
    assert!(
        ids.iter().all(|w| !scheduled.contains(w)),
        "a workflow the question names still runs on its schedule"
    );
    assert!(pending[0].context.contains("do not run on their schedules"));
}
