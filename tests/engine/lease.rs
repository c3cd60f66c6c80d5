use healer::lease::Lease;
use healer::{Engine, ErrorCode};

use crate::data_dir;

#[test]
fn only_one_lease_at_a_time_and_it_names_the_holder() {
    let (_tmp, paths) = data_dir();
    let first = Lease::acquire(&paths, "desktop app").expect("first");
    let err = Lease::acquire(&paths, "healer daemon").expect_err("second refused");
    assert_eq!(err.code(), ErrorCode::EngineRunning);
    let message = err.to_string();
    assert!(message.contains("already running"), "{message}");
    assert!(message.contains("desktop app"), "{message}");
    assert!(
        message.contains(&format!("pid {}", std::process::id())),
        "{message}"
    );
    drop(first);
    assert!(
        Lease::acquire(&paths, "healer daemon").is_ok(),
        "released on drop"
    );
}

#[tokio::test]
async fn a_second_engine_refuses_to_start() {
    let (_tmp, paths) = data_dir();
    let engine = Engine::start(paths.clone(), "desktop app")
        .await
        .expect("first");
    let err = Engine::start(paths.clone(), "healer daemon")
        .await
        .expect_err("second refused");
    assert_eq!(err.code(), ErrorCode::EngineRunning);
    engine.shutdown().await;
    drop(engine);
    let again = Engine::start(paths, "healer daemon")
        .await
        .expect("free again");
    again.shutdown().await;
}

#[test]
fn status_reads_the_lease_without_taking_it() {
    let (_tmp, paths) = data_dir();
    assert!(!Lease::is_held(&paths).expect("no lock file yet"));

    let held = Lease::acquire(&paths, "desktop app").expect("lease");
    let holder = std::fs::read(paths.lock_file()).expect("lock file");
    assert!(Lease::is_held(&paths).expect("read"), "seen while held");
    let out = crate::cli::run(&paths, &["status", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::cli::text(&out.stderr)
    );
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(status["engine_running"], true);
    let engine = status["engine"].as_str().unwrap_or_default();
    assert!(engine.starts_with("desktop app, pid "), "{engine}");
    drop(held);

    // Nobody holds it now: `status` says so and leaves the file as the last holder wrote it
    // (a probe that took the lock would have written itself in).
    let out = crate::cli::run(&paths, &["status", "--json"]);
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(status["engine_running"], false);
    assert_eq!(std::fs::read(paths.lock_file()).expect("lock file"), holder);
    assert!(!Lease::is_held(&paths).expect("read"));
}
