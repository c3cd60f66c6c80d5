//! `healer checkpoint list|decide` as a person (or a script piping answers) uses it.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use healer::engine::EngineOptions;
use healer::lease::Lease;
use healer::llm::Keys;
use healer::store::Store;
use healer::workflow::Runtime;
use healer::{Engine, Paths};
use serde_json::Value;

use crate::cli::text;
use crate::data_dir;
use crate::workflows::input;

/// A data folder with one pending HICCUP checkpoint (a run killed like an out-of-memory kill).
async fn with_a_checkpoint() -> (tempfile::TempDir, Paths, i64) {
    let (tmp, paths) = data_dir();
    let lease = Lease::acquire(&paths, "test").expect("lease");
    let options = EngineOptions {
        scheduler: false,
        keys: Some(Keys::env_only()),
        ..EngineOptions::default()
    };
    let engine = Engine::start_with_lease(paths.clone(), "test", lease, options)
        .await
        .expect("engine");
    let w = engine
        .create_workflow(input("Nightly import", Runtime::Bash, "exit 137\n"))
        .expect("w");
    engine.run_and_wait(w.id).await.expect("run");
    let id = engine.checkpoints().expect("list").pending[0].id;
    engine.shutdown().await;
    (tmp, paths, id)
}

/// Run `healer` with `input` on standard input (`None`: closed at once).
fn healer(paths: &Paths, args: &[&str], input: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_healer"))
        .env("HEALER_DATA_DIR", paths.data_dir())
        .env("HEALER_KEYRING", "off")
        .env_remove("HEALER_LOG")
        .args(args)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("healer starts");
    if let (Some(text), Some(mut stdin)) = (input, child.stdin.take()) {
        stdin.write_all(text.as_bytes()).expect("write answers");
    }
    child.wait_with_output().expect("healer ends")
}

fn decision(paths: &Paths, id: i64) -> Option<healer::checkpoint::Decision> {
    Store::open(&paths.db())
        .expect("store")
        .checkpoint(id)
        .expect("checkpoint")
        .decision
}

#[tokio::test]
async fn an_invalid_answer_asks_again_and_notes_are_kept() {
    let (_tmp, paths, id) = with_a_checkpoint().await;
    let out = healer(
        &paths,
        &["checkpoint", "decide", &id.to_string()],
        Some("9\n2\nthe import server is down today\n"),
    );
    let said = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}{}", text(&out.stderr));
    assert!(
        said.contains("A run ran out of memory or was stopped"),
        "{said}"
    );
    assert!(said.contains("[1] Proceed (recommended)"), "{said}");
    assert!(
        said.contains("There is no option \u{201c}9\u{201d}"),
        "{said}"
    );
    assert_eq!(said.matches("Choose 1-3 [Enter: 1]").count(), 2, "{said}");
    let d = decision(&paths, id).expect("decided");
    assert_eq!(d.option, 2);
    assert_eq!(d.notes.as_deref(), Some("the import server is down today"));
    assert!(said.contains("Skip"), "{said}");
}

#[tokio::test]
async fn an_empty_answer_takes_the_recommended_option() {
    let (_tmp, paths, id) = with_a_checkpoint().await;
    let out = healer(
        &paths,
        &["checkpoint", "decide", &id.to_string()],
        Some("\n\n"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let d = decision(&paths, id).expect("decided");
    assert_eq!(d.option, 1);
    assert_eq!(d.notes, None);
    assert!(d.outcome.starts_with("Run "), "{}", d.outcome);
}

#[tokio::test]
async fn a_closed_input_exits_2_and_decides_nothing() {
    let (_tmp, paths, id) = with_a_checkpoint().await;
    let out = healer(&paths, &["checkpoint", "decide", &id.to_string()], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("standard input closed"),
        "{}",
        text(&out.stderr)
    );
    assert!(decision(&paths, id).is_none());

    let out = healer(&paths, &["checkpoint", "list", "--json"], None);
    let list: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(list["pending"][0]["id"], id);
    assert_eq!(list["pending"][0]["trigger"], "hiccup");

    // With the option on the command line, nothing is asked.
    let out = healer(
        &paths,
        &[
            "checkpoint",
            "decide",
            &id.to_string(),
            "3",
            "--notes",
            "later",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("Paused until you resume it"));
    assert_eq!(
        decision(&paths, id).expect("decided").notes.as_deref(),
        Some("later")
    );
}
