//! For people who do not live in a terminal (issue 16): no lost work, news when things go right,
//! alerts that fit and resolve, the maintainer's question carried into the chat. Real scripts,
//! real SQLite, the scripted model server for the model.

use std::time::Duration;

use healer::checkpoint::CheckpointTrigger;
use healer::engine::SaveOutcome;
use healer::maintainer::AutoFixStatus;
use healer::notification::{NotificationAction, NotificationKind};
use healer::workflow::{Author, RunStatus, Runtime, Version, WorkflowStatus};
use serde_json::json;

use crate::maintainer::{bed, tool, BROKEN, FIXED};
use crate::model_server::{openai, TOKENS};
use crate::workflows::input;

#[tokio::test]
async fn a_save_from_an_editor_that_opened_an_older_version_is_a_conflict_not_an_overwrite() {
    let bed = bed(false, false).await;
    let engine = &bed.engine;
    let w = engine
        .create_workflow(input("Report", Runtime::Bash, "echo one\n"))
        .expect("create");
    // The person opens 1.0 in the editor; meanwhile a CLI save makes 2.0.
    engine
        .save_script(w.id, "echo two\n", "From the terminal")
        .expect("2.0");

    let outcome = engine
        .save_edited_script(w.id, "echo mine\n", "Mine", Some(Version::FIRST))
        .await
        .expect("answer");
    let SaveOutcome::Conflict { base, newer } = outcome else {
        panic!("expected a conflict, got {outcome:?}");
    };
    assert_eq!(base, Version::FIRST);
    assert_eq!(newer.version, Version { major: 2, minor: 0 });
    assert_eq!(newer.code, "echo two\n");
    assert_eq!(
        engine.versions(w.id).expect("versions").len(),
        2,
        "nothing saved"
    );

    // "Keep mine as 3.0": saved again from the newer version.
    let kept = engine
        .save_edited_script(w.id, "echo mine\n", "Mine", Some(newer.version))
        .await
        .expect("answer");
    let SaveOutcome::Saved { version } = kept else {
        panic!("expected a save, got {kept:?}");
    };
    assert_eq!(version.version, Version { major: 3, minor: 0 });
    assert_eq!(version.author, Author::Person);
    engine.shutdown().await;
}

#[tokio::test]
async fn a_persons_save_gets_the_syntax_check_an_auto_fix_gets() {
    let bed = bed(false, false).await;
    let engine = &bed.engine;
    let w = engine
        .create_workflow(input("Report", Runtime::Python3, "print('ok')\n"))
        .expect("create");
    let broken = "def total(:\n    return 1\n";
    let said = engine
        .check_script(w.id, broken)
        .await
        .expect("checked")
        .expect("refused");
    assert!(
        said.contains("SyntaxError") || said.contains("invalid syntax"),
        "{said}"
    );
    assert!(
        !said.contains("/tmp/"),
        "the file is named by its name only: {said}"
    );
    assert_eq!(
        engine
            .check_script(w.id, "print(1)\n")
            .await
            .expect("checked"),
        None
    );

    let outcome = engine
        .save_edited_script(w.id, broken, "", Some(Version::FIRST))
        .await
        .expect("answer");
    assert!(
        matches!(outcome, SaveOutcome::Invalid { .. }),
        "{outcome:?}"
    );
    assert_eq!(
        engine.versions(w.id).expect("versions").len(),
        1,
        "nothing saved"
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn restoring_an_earlier_version_makes_it_the_next_major_and_examples_are_by_healer() {
    let bed = bed(false, false).await;
    let engine = &bed.engine;
    let examples = engine.load_examples().expect("examples");
    let first = engine.versions(examples[0].id).expect("versions").remove(0);
    assert_eq!(
        first.author,
        Author::Healer,
        "an example is Healer's, not the person's"
    );

    let w = engine
        .create_workflow(input("Report", Runtime::Bash, "echo one\n"))
        .expect("create");
    assert_eq!(engine.versions(w.id).expect("v")[0].author, Author::Person);
    engine.save_script(w.id, "echo two\n", "Two").expect("2.0");
    let restored = engine
        .restore_version(w.id, Version::FIRST)
        .expect("restored");
    assert_eq!(restored.version, Version { major: 3, minor: 0 });
    assert_eq!(restored.code, "echo one\n");
    assert_eq!(restored.change_comment, "Restored from 1.0");
    assert!(restored.active);
    let again = engine.restore_version(w.id, Version { major: 3, minor: 0 });
    assert!(
        again.is_err(),
        "the running version is not restored onto itself"
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn a_repair_that_holds_is_news_linked_to_its_thread_and_can_be_dismissed() {
    let bed = bed(true, true).await;
    let engine = &bed.engine;
    let w = engine
        .create_workflow(input("Weekly sales report", Runtime::Python3, BROKEN))
        .expect("create");
    bed.server.script([
        tool("fix", json!({"code": FIXED, "comment": "Read totl"})),
        openai::text("Fixed.", TOKENS),
    ]);
    let healed = engine.run_until_healed(w.id).await.expect("healed");
    assert_eq!(
        healed.last.status,
        RunStatus::Succeeded,
        "{}",
        healed.outcome
    );

    let list = engine.notifications().expect("list");
    let news: Vec<_> = list
        .items
        .iter()
        .filter(|n| n.kind == NotificationKind::Repaired)
        .collect();
    assert_eq!(news.len(), 1, "{list:?}");
    assert_eq!(
        news[0].title,
        "Weekly sales report was repaired: 1.0 \u{2192} 1.1, the run passed"
    );
    assert_eq!(news[0].task_id, Some(healed.fixes[0].task_id));
    assert_eq!(news[0].workflow_id, Some(w.id));

    // A second green run of the same fix is not news again.
    engine.run_and_wait(w.id).await.expect("run");
    let again = engine.notifications().expect("list");
    assert_eq!(
        again
            .items
            .iter()
            .filter(|n| n.kind == NotificationKind::Repaired)
            .count(),
        1
    );

    engine.dismiss_notification(news[0].id).expect("dismissed");
    let after = engine.notifications().expect("list");
    assert!(after.items.iter().all(|n| n.id != news[0].id));
    assert!(
        engine.dismiss_notification(news[0].id).is_err(),
        "already put away"
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn a_persons_green_save_clears_needs_attention_and_resolves_the_alert() {
    let bed = bed(true, true).await;
    let engine = &bed.engine;
    let w = engine
        .create_workflow(input("Sales total", Runtime::Python3, BROKEN))
        .expect("create");
    let question = "Tell me whether total is the same figure as totl.";
    bed.server.script([openai::text(question, TOKENS)]);
    let healed = engine.run_until_healed(w.id).await.expect("healed");
    assert_eq!(healed.fixes[0].status, AutoFixStatus::GaveUp);
    assert_eq!(
        engine.find_workflow("sales-total").expect("w").status,
        WorkflowStatus::NeedsAttention
    );
    let alert = |engine: &healer::Engine| {
        engine
            .notifications()
            .expect("list")
            .items
            .into_iter()
            .find(|n| n.kind == NotificationKind::MaintenanceFailed)
            .expect("the alert")
    };
    let before = alert(engine);
    assert!(!before.resolved);
    assert_eq!(
        before.actions,
        [NotificationAction::Replan, NotificationAction::RetryAutofix]
    );

    // The maintainer's last words open the Re-plan chat, waiting for an answer.
    let chat = engine.planner_chat(w.id).expect("chat");
    assert_eq!(chat.maintainer_question.as_deref(), Some(question));

    // The person saves a version that runs green.
    engine.save_script(w.id, FIXED, "Use totl").expect("2.0");
    let run = engine.run_and_wait(w.id).await.expect("run");
    assert_eq!(run.run.status, RunStatus::Succeeded);
    assert_eq!(
        engine.find_workflow("sales-total").expect("w").status,
        WorkflowStatus::Active
    );
    assert!(alert(engine).resolved, "its cause is gone");
    assert_eq!(
        engine.planner_chat(w.id).expect("chat").maintainer_question,
        None
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn the_planner_is_told_the_question_its_answer_answers() {
    let bed = bed(true, true).await;
    let engine = &bed.engine;
    let w = engine
        .create_workflow(input("Sales total", Runtime::Python3, BROKEN))
        .expect("create");
    let question = "Tell me whether total is the same figure as totl.";
    bed.server.script([openai::text(question, TOKENS)]);
    engine.run_until_healed(w.id).await.expect("healed");
    bed.server.clear_replies();
    bed.server
        .script([openai::text("Thanks, I will use totl.", TOKENS)]);

    let chat = engine
        .replan_and_wait(w.id, "Yes, it is the same figure")
        .await
        .expect("turn");
    assert_eq!(chat.maintainer_question, None, "answered");
    // The question stays in the conversation, before the answer.
    let kept = chat
        .answered_question
        .expect("the answered question is kept");
    assert_eq!(kept.text, question);
    let answer = chat
        .messages
        .iter()
        .find(|m| m.content == "Yes, it is the same figure")
        .expect("the answer");
    assert!(kept.asked_at.as_str() < answer.at.as_str());
    let asked = bed.server.chats().pop().expect("the planner's request");
    let system = asked.body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(system.contains(question), "{system}");
    engine.shutdown().await;
}

#[tokio::test]
async fn a_time_out_says_stopped_after_the_limit_and_asks_with_a_title_that_fits() {
    let bed = bed(true, false).await;
    let engine = &bed.engine;
    let mut slow = input(
        "Slow export",
        Runtime::Python3,
        "import time\nprint('row 1 of 1000', flush=True)\ntime.sleep(30)\n",
    );
    slow.timeout_secs = 1;
    let w = engine.create_workflow(slow).expect("create");
    let detail = engine.run_and_wait(w.id).await.expect("run");
    assert_eq!(detail.run.status, RunStatus::Failed);
    assert!(
        detail
            .run
            .summary
            .starts_with("stopped after 1 s, its time limit"),
        "{}",
        detail.run.summary
    );
    assert!(
        !detail.run.summary.contains("row 1"),
        "{}",
        detail.run.summary
    );

    let mut pending = None;
    for _ in 0..400 {
        pending = engine
            .checkpoints()
            .expect("list")
            .pending
            .into_iter()
            .next();
        if pending.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let pending = pending.expect("a checkpoint within 20 s");
    assert_eq!(pending.trigger, CheckpointTrigger::Hiccup);
    assert_eq!(pending.title, "A run went past its time limit");
    assert!(
        !pending.recommendation.contains("often passes"),
        "{}",
        pending.recommendation
    );
    assert!(
        pending.recommendation.starts_with("Skip"),
        "{}",
        pending.recommendation
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn the_whole_log_is_kept_on_disk_and_can_be_taken_away() {
    use healer::workflow::runner::OutputStream;
    let bed = bed(true, false).await;
    let engine = &bed.engine;
    // Another workflow ran first: the export's run is its workflow's #1 but not run id 1.
    let other = engine
        .create_workflow(input("Warm up", Runtime::Python3, "print('hi')\n"))
        .expect("create");
    engine.run_and_wait(other.id).await.expect("run");
    // 300,000 lines: far past the 128 KiB the database keeps.
    let w = engine
        .create_workflow(input(
            "Chatty export",
            Runtime::Python3,
            "for i in range(300000):\n    print(f'row {i}')\n",
        ))
        .expect("create");
    let run = engine.run_and_wait(w.id).await.expect("run");
    assert_eq!(run.run.status, RunStatus::Succeeded);
    assert_ne!(run.run.id, 1);
    assert_eq!(run.run.number, 1);
    assert!(run.attempts[0].stdout_cut > 0, "the stored copy is cut");

    let downloads = tempfile::tempdir().expect("downloads");
    let saved = engine
        .export_full_log_to(run.run.id, 1, OutputStream::Stdout, downloads.path())
        .expect("exported");
    assert!(
        saved.ends_with("chatty-export-run-1-try-1-output.log"),
        "{saved}"
    );
    let text = std::fs::read_to_string(&saved).expect("the copy");
    assert_eq!(text.lines().count(), 300_000);
    assert!(text.starts_with("row 0\n") && text.ends_with("row 299999\n"));
    // A second download does not overwrite the first.
    let again = engine
        .export_full_log_to(run.run.id, 1, OutputStream::Stdout, downloads.path())
        .expect("exported");
    assert!(again.ends_with("output (2).log"), "{again}");

    let missing = engine.export_full_log_to(run.run.id, 9, OutputStream::Stdout, downloads.path());
    let message = missing.expect_err("no such attempt").to_string();
    assert!(message.contains("last 20 runs"), "{message}");
    engine.shutdown().await;
}

#[test]
fn a_save_from_the_cli_gets_the_syntax_check_too() {
    let (tmp, paths) = crate::data_dir();
    let file = tmp.path().join("v1.py");
    std::fs::write(&file, "print('v1')\n").expect("write");
    let path = file.to_str().unwrap_or_default();
    let made = crate::cli::run(
        &paths,
        &[
            "workflow",
            "create",
            "--title",
            "Report",
            "--runtime",
            "python3",
            "--file",
            path,
        ],
    );
    assert_eq!(
        made.status.code(),
        Some(0),
        "{}",
        crate::cli::text(&made.stderr)
    );
    std::fs::write(&file, "def total(:\n    return 1\n").expect("write");
    let saved = crate::cli::run(&paths, &["workflow", "save", "report", "--file", path]);
    assert_eq!(saved.status.code(), Some(1));
    let said = crate::cli::text(&saved.stderr);
    assert!(
        said.contains("nothing was saved: the syntax check found a mistake"),
        "{said}"
    );
    let history = crate::cli::run(&paths, &["workflow", "history", "report", "--json"]);
    let versions: serde_json::Value =
        serde_json::from_slice(&history.stdout).expect("history as JSON");
    assert_eq!(versions.as_array().map(Vec::len), Some(1), "{versions}");
}

#[tokio::test]
async fn skipping_the_setup_is_remembered_in_the_data_folder() {
    let bed = bed(false, false).await;
    assert!(!bed.engine.setup_skipped().expect("read"));
    bed.engine.skip_setup().expect("skip");
    assert!(bed.engine.setup_skipped().expect("read"));
    bed.engine.shutdown().await;
}
