use healer::store::{known_schema_version, Store};
use healer::{Error, ErrorCode};

use crate::{data_dir, read};

#[test]
fn a_new_database_is_migrated_up_from_empty() {
    let (_tmp, paths) = data_dir();
    let store = Store::open(&paths.db()).expect("open");
    assert_eq!(
        store.schema_version().expect("version"),
        known_schema_version()
    );
    // The tables the engine relies on exist and are empty.
    assert!(store.list_events(None, 10).expect("events").is_empty());
    assert_eq!(store.list_notifications().expect("notifications").unread, 0);
    // Opening again is a no-op, not a second migration.
    drop(store);
    let again = Store::open(&paths.db()).expect("reopen");
    assert_eq!(
        again.schema_version().expect("version"),
        known_schema_version()
    );
}

#[test]
fn a_database_from_a_newer_healer_is_refused_and_left_as_it_was() {
    let (_tmp, paths) = data_dir();
    drop(Store::open(&paths.db()).expect("open"));
    {
        let conn = rusqlite_conn(&paths.db());
        conn.pragma_update(None, "user_version", 99).expect("bump");
        conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
            .expect("checkpoint");
    }
    let before = read(&paths.db());

    let err = Store::open(&paths.db()).expect_err("refused");
    assert_eq!(err.code(), ErrorCode::SchemaTooNew);
    let message = err.to_string();
    assert!(message.contains("newer Healer"), "{message}");
    assert!(message.contains("99"), "{message}");
    assert!(
        message.contains(&paths.db().display().to_string()),
        "{message}"
    );
    assert_eq!(read(&paths.db()), before, "the file must not change");
}

#[test]
fn a_corrupt_database_file_is_refused_with_its_path_and_kept() {
    let (_tmp, paths) = data_dir();
    let garbage = b"this is not sqlite, just some bytes someone put here\n".repeat(100);
    std::fs::write(paths.db(), &garbage).expect("write garbage");

    let err = Store::open(&paths.db()).expect_err("refused");
    assert!(matches!(err, Error::CorruptDatabase { .. }), "{err:?}");
    let message = err.to_string();
    assert!(
        message.contains(&paths.db().display().to_string()),
        "{message}"
    );
    assert!(message.contains("move the file aside"), "{message}");
    assert_eq!(
        read(&paths.db()),
        garbage,
        "nothing may be deleted or rewritten"
    );
}

#[test]
fn a_data_folder_that_cannot_be_created_is_named_in_the_error() {
    let tmp = tempfile::tempdir().expect("tmp");
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "x").expect("write");
    let paths = healer::Paths::new(file.join("data"));
    let err = paths.ensure().expect_err("refused");
    assert_eq!(err.code(), ErrorCode::DataDir);
    assert!(err
        .to_string()
        .contains(&file.join("data").display().to_string()));
}

#[test]
fn two_connections_share_one_database_file() {
    let (_tmp, paths) = data_dir();
    let app = Store::open(&paths.db()).expect("app");
    let cli = Store::open(&paths.db()).expect("cli");
    let before = cli.data_version().expect("version");
    app.insert_event(&healer::Event::EngineStopped { pid: 1 })
        .expect("write");
    assert_eq!(cli.list_events(None, 10).expect("read").len(), 1);
    assert_ne!(
        cli.data_version().expect("version"),
        before,
        "the other side sees the write"
    );
}

#[test]
fn a_request_is_claimed_exactly_once() {
    let (_tmp, paths) = data_dir();
    let a = Store::open(&paths.db()).expect("a");
    let b = Store::open(&paths.db()).expect("b");
    a.insert_request("ping", r#"{"type":"ping"}"#)
        .expect("insert");
    let first = a.claim_request().expect("claim a");
    let second = b.claim_request().expect("claim b");
    assert!(first.is_some());
    assert!(
        second.is_none(),
        "a taken request must not be handed out again"
    );
}

fn rusqlite_conn(path: &std::path::Path) -> rusqlite::Connection {
    rusqlite::Connection::open(path).expect("raw open")
}

/// The schema of the file at `path`, read without opening it as Healer does (which upgrades).
fn schema_of(path: &std::path::Path) -> i64 {
    rusqlite::Connection::open(path)
        .expect("open")
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .expect("user_version")
}

#[test]
fn a_reading_command_never_upgrades_the_data_and_the_engine_does_so_only_with_a_copy_kept() {
    let (tmp, paths) = data_dir();
    let older = known_schema_version() - 1;
    healer::store::create_at_schema(&paths.db(), usize::try_from(older).expect("n"))
        .expect("older data");
    let list = || {
        crate::faults::healer(&paths)
            .args(["workflow", "list"])
            .output()
            .expect("healer runs")
    };
    // An older Healer's engine runs on the data: a newer reading command leaves it alone.
    let lease = healer::lease::Lease::acquire(&paths, "an older Healer").expect("lease");
    let out = list();
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success());
    assert!(said.contains("is from an older Healer"), "{said}");
    assert!(said.contains("quit it first"), "{said}");
    assert_eq!(
        schema_of(&paths.db()),
        older,
        "migrated under a running engine"
    );
    drop(lease);
    // None runs now: reading still does not upgrade.
    let out = list();
    assert!(!out.status.success());
    assert_eq!(schema_of(&paths.db()), older);
    // The engine upgrades it, and keeps the file as it was beside it.
    let mut daemon = crate::faults::Daemon::start(
        {
            let mut cmd = crate::faults::healer(&paths);
            cmd.arg("daemon");
            cmd
        },
        tmp.path().join("daemon.log"),
    );
    daemon.stop();
    assert_eq!(schema_of(&paths.db()), known_schema_version());
    let copies: Vec<_> = std::fs::read_dir(paths.data_dir())
        .expect("folder")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().contains(&format!(".schema{older}-")))
        .collect();
    assert_eq!(copies.len(), 1, "one copy kept: {copies:?}");
    assert_eq!(schema_of(&copies[0]), older);
    let out = list();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
