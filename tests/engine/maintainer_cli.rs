//! The maintainer as a person meets it from the command line, and what a crash while entering
//! maintenance leaves behind (the `healer` binary aborted at each step).

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Output, Stdio};

use healer::engine::EngineOptions;
use healer::lease::Lease;
use healer::llm::{Keys, TaskKind};
use healer::notification::NotificationKind;
use healer::store::Store;
use healer::workflow::Runtime;
use healer::{Engine, Paths};
use serde_json::{json, Value};

use crate::cli::text;
use crate::data_dir;
use crate::maintainer::{configure_model, tool, BROKEN, FIXED, KEY, KEY_VAR};
use crate::model_server::{openai, ModelServer, TOKENS};
use crate::workflows::input;

fn healer(paths: &Paths, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_healer"));
    cmd.env("HEALER_DATA_DIR", paths.data_dir())
        .env("HEALER_KEYRING", "off")
        .env(KEY_VAR, KEY)
        .env_remove("HEALER_LOG")
        .env_remove("HEALER_FAILPOINT")
        .stdin(Stdio::null())
        .args(args);
    for (name, value) in env {
        cmd.env(name, value);
    }
    cmd.output().expect("healer runs")
}

/// A data folder with the scripted model configured and a workflow that fails on its data.
async fn prepared(server: &ModelServer) -> (tempfile::TempDir, Paths) {
    let (tmp, paths) = data_dir();
    let engine = engine(&paths, false).await;
    configure_model(&engine, server);
    engine
        .create_workflow(input("Sales total", Runtime::Python3, BROKEN))
        .expect("create");
    engine.shutdown().await;
    (tmp, paths)
}

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

#[tokio::test]
async fn a_crash_at_any_step_of_entering_maintenance_leaves_all_or_nothing() {
    let server = ModelServer::start(Some(KEY));
    for (point, committed) in [
        ("enter_maintenance.fix_count", false),
        ("enter_maintenance.flag", false),
        ("enter_maintenance.task", false),
        ("enter_maintenance.inbox", false),
        ("enter_maintenance.committed", true),
    ] {
        let (_tmp, paths) = prepared(&server).await;
        let out = healer(
            &paths,
            &["workflow", "run", "sales-total"],
            &[("HEALER_FAILPOINT", point)],
        );
        assert_eq!(
            out.status.signal(),
            Some(6),
            "{point}: {}",
            text(&out.stderr)
        );
        assert!(text(&out.stderr).contains(point));

        // What the crash left, read straight from the file.
        let store = Store::open(&paths.db()).expect("store");
        let w = store.workflow_by_name("sales-total").expect("workflow");
        let maintainers = store
            .list_tasks(50)
            .expect("tasks")
            .into_iter()
            .filter(|t| t.kind == TaskKind::Maintainer)
            .count();
        let queued = store.has_open_inbox_items(w.id).expect("inbox");
        if committed {
            assert_eq!(
                (w.fix_count, w.healing, maintainers, queued),
                (1, true, 1, true),
                "{point}"
            );
        } else {
            assert_eq!(
                (w.fix_count, w.healing, maintainers, queued),
                (0, false, 0, false),
                "{point}"
            );
        }
        drop(store);

        // Restart: the committed task runs (the model gives up), nothing else appears.
        server.script([openai::text("No fix: the data has no total.", TOKENS)]);
        let engine = engine(&paths, true).await;
        if committed {
            let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
            while !engine.notifications().expect("list").items.iter().any(|n| {
                n.kind == NotificationKind::MaintenanceFailed
                    && n.body == "No fix: the data has no total."
            }) {
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "the queued auto-fix ran"
                );
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
            let fixes = engine.autofixes(w.id).expect("fixes");
            assert_eq!(fixes.len(), 1);
        } else {
            assert!(engine.autofixes(w.id).expect("fixes").is_empty(), "{point}");
            assert_eq!(server.unused_replies(), 1, "{point}: no model call");
        }
        assert!(!engine.find_workflow("sales-total").expect("w").healing);
        engine.shutdown().await;
        // Whatever was not used by this round must not leak into the next.
        server.clear_replies();
    }
}

#[tokio::test]
async fn run_until_healed_task_list_show_notifications_and_replan_from_the_cli() {
    let server = ModelServer::start(Some(KEY));
    let (_tmp, paths) = prepared(&server).await;
    server.script([
        tool("eval", json!({"code": FIXED})),
        tool("fix", json!({"code": FIXED, "comment": "Read totl"})),
        openai::text("Fixed: the key is totl now.", TOKENS),
    ]);
    let out = healer(
        &paths,
        &["workflow", "run", "sales-total", "--until-healed"],
        &[],
    );
    let said = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}{}", text(&out.stderr));
    assert!(said.contains("KeyError"), "{said}");
    assert!(said.contains("1.0 → 1.1"), "{said}");
    assert!(said.contains("Healed: fixed 1.0 → 1.1"), "{said}");

    let out = healer(
        &paths,
        &["thread", "list", "--workflow", "sales-total", "--json"],
        &[],
    );
    let fixes: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(fixes[0]["status"], "fixed");
    assert_eq!(fixes[0]["to_version"], json!({"major": 1, "minor": 1}));
    let id = fixes[0]["task_id"].as_i64().expect("id").to_string();

    let out = healer(&paths, &["thread", "show", &id], &[]);
    let shown = text(&out.stdout);
    assert!(shown.contains("→ eval("), "{shown}");
    assert!(shown.contains("→ fix("), "{shown}");
    assert!(shown.contains("\"applied\":true"), "{shown}");
    assert!(shown.contains("Fixed: the key is totl now."), "{shown}");

    server.script([
        tool(
            "ask",
            json!({"question": "Should it also run on weekends?"}),
        ),
        openai::text("I have one question.", TOKENS),
    ]);
    let out = healer(&paths, &["replan", "sales-total", "Make it run daily"], &[]);
    let said = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}{}", text(&out.stderr));
    assert!(said.contains("I have one question."), "{said}");
    assert!(
        said.contains("The planner asks: Should it also run on weekends?"),
        "{said}"
    );

    // The model fails: the command says why and does not claim success.
    server.script([openai::error(400, "This model does not take tools", &[])]);
    let out = healer(&paths, &["replan", "sales-total", "Weekdays only"], &[]);
    let said = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{said}{}", text(&out.stdout));
    assert!(said.contains("The planner could not answer"), "{said}");
    assert!(said.contains("This model does not take tools"), "{said}");

    let out = healer(&paths, &["notifications", "--json"], &[]);
    let list: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(list["items"].is_array());
}

#[tokio::test]
async fn a_give_up_reaches_the_cli_notifications_with_re_plan() {
    let server = ModelServer::start(Some(KEY));
    let (_tmp, paths) = prepared(&server).await;
    server.script([openai::text(
        "The file it reads is gone; ask who sends it.",
        TOKENS,
    )]);
    let out = healer(
        &paths,
        &["workflow", "run", "sales-total", "--until-healed"],
        &[],
    );
    assert_eq!(out.status.code(), Some(1), "not healed");
    assert!(
        text(&out.stdout).contains("gave up"),
        "{}",
        text(&out.stdout)
    );
    let out = healer(&paths, &["notifications"], &[]);
    let said = text(&out.stdout);
    assert!(
        said.contains("The file it reads is gone; ask who sends it."),
        "{said}"
    );
    assert!(said.contains("Re-plan: healer replan"), "{said}");
}

/// With no model set up, a command that needs one says what to do on a terminal (the window's
/// sentence names Settings → Models; the commands are added here).
#[test]
fn with_no_model_a_command_that_needs_one_names_the_commands_that_set_one_up() {
    let (tmp, paths) = crate::data_dir();
    let script = tmp.path().join("s.py");
    std::fs::write(&script, "print('hi')\n").expect("script");
    let made = healer(
        &paths,
        &[
            "workflow",
            "create",
            "--title",
            "Hello",
            "--runtime",
            "python3",
            "--file",
            script.to_str().expect("path"),
        ],
        &[],
    );
    assert!(made.status.success(), "{}", text(&made.stderr));
    let out = healer(&paths, &["replan", "hello", "Say hello twice"], &[]);
    let said = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("no model is set up"), "{said}");
    assert!(
        said.contains("on a terminal: healer provider add, then healer tier set"),
        "{said}"
    );
}
