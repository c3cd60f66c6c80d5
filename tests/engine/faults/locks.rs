//! The store refusing writes at the end of a run — another process holding the database
//! locked, the disk full — never leaves a run "running" forever, never loses its outcome, and
//! never keeps the workflow from running again.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use healer::engine::EngineOptions;
use healer::lease::Lease;
use healer::llm::Keys;
use healer::notification::NotificationKind;
use healer::store::WRITE_PATIENCE;
use healer::workflow::{RunStatus, Runtime};
use healer::{Engine, Paths};

use super::{is_root, Figures};
use crate::workflows::input;

async fn engine(paths: &Paths) -> Engine {
    let lease = Lease::acquire(paths, "test").expect("lease");
    let options = EngineOptions {
        scheduler: true,
        keys: Some(Keys::env_only()),
        ..EngineOptions::default()
    };
    Engine::start_with_lease(paths.clone(), "test", lease, options)
        .await
        .expect("engine")
}

/// A script that says it started (a file), waits for `go` to exist, and prints.
fn waiting_script(started: &Path, go: &Path) -> String {
    format!(
        "touch {s}\nwhile [ ! -e {g} ]; do sleep 0.05; done\necho finished its work\n",
        s = started.display(),
        g = go.display()
    )
}

async fn wait_for_file(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !path.exists() {
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Hold the database locked (an exclusive transaction of another connection) for `hold`,
/// starting now; the script is let go at once, so its end meets the lock.
fn hold_lock(db: PathBuf, hold: Duration) -> std::thread::JoinHandle<()> {
    let conn = rusqlite::Connection::open(&db).expect("second connection");
    conn.execute_batch("BEGIN EXCLUSIVE")
        .expect("exclusive lock");
    std::thread::spawn(move || {
        std::thread::sleep(hold);
        conn.execute_batch("COMMIT").expect("release");
    })
}

#[tokio::test]
async fn a_lock_held_past_the_busy_timeout_across_a_runs_end_delays_it_and_loses_nothing() {
    let (tmp, paths) = crate::data_dir();
    let engine = engine(&paths).await;
    let (started, go) = (tmp.path().join("started"), tmp.path().join("go"));
    let w = engine
        .create_workflow(input(
            "Locked",
            Runtime::Bash,
            &waiting_script(&started, &go),
        ))
        .expect("create");
    let handle: healer::engine::Handle = (*engine).clone();
    let run = tokio::spawn(async move { handle.run_and_wait(w.id).await });
    wait_for_file(&started).await;
    // Longer than SQLite's own busy timeout (5 s), shorter than the default patience (60 s).
    let lock = hold_lock(paths.db(), Duration::from_secs(7));
    std::fs::write(&go, "").expect("go");
    let detail = run.await.expect("joined").expect("answered");
    lock.join().expect("released");
    assert_eq!(detail.run.status, RunStatus::Succeeded, "{detail:?}");
    assert_eq!(detail.attempts.len(), 1);
    assert!(detail.attempts[0].stdout.contains("finished its work"));
    let lost = u32::from(detail.run.status != RunStatus::Succeeded);
    // And the workflow runs again at once.
    std::fs::write(&go, "").expect("go");
    let again = engine.run_and_wait(w.id).await.expect("runs again");
    assert_eq!(again.run.status, RunStatus::Succeeded);
    engine.shutdown().await;
    Figures {
        faults: 1,
        runs_lost: lost,
        ..Figures::default()
    }
    .print("lock across a run's end (default patience)");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_patience_a_runs_end_is_kept_and_saved_when_the_lock_goes() {
    let (tmp, paths) = crate::data_dir();
    let engine = engine(&paths).await;
    engine
        .store()
        .set_setting(WRITE_PATIENCE, &1_u64)
        .expect("setting");
    let (started, go) = (tmp.path().join("started"), tmp.path().join("go"));
    let w = engine
        .create_workflow(input("Kept", Runtime::Bash, &waiting_script(&started, &go)))
        .expect("create");
    let handle: healer::engine::Handle = (*engine).clone();
    let run = tokio::spawn(async move { handle.run_and_wait(w.id).await });
    wait_for_file(&started).await;
    // Held well past the patience (1 s), with room for a loaded machine to reach the journal.
    let lock = hold_lock(paths.db(), Duration::from_secs(20));
    std::fs::write(&go, "").expect("go");
    // While locked, the end waits in memory and in the journal, not lost.
    let deadline = Instant::now() + Duration::from_secs(18);
    while std::fs::read_dir(paths.pending_dir()).map_or(0, |d| d.count()) == 0 {
        assert!(
            Instant::now() < deadline,
            "the run's end was not kept: {:?}",
            std::fs::read_dir(paths.data_dir())
                .map(|d| d.flatten().map(|e| e.file_name()).collect::<Vec<_>>())
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    lock.join().expect("released");
    let detail = tokio::time::timeout(Duration::from_secs(10), run)
        .await
        .expect("answered soon after the lock went")
        .expect("joined")
        .expect("answered");
    assert_eq!(detail.run.status, RunStatus::Succeeded, "{detail:?}");
    assert!(detail.attempts[0].stdout.contains("finished its work"));
    assert_eq!(
        std::fs::read_dir(paths.pending_dir()).map_or(0, |d| d.count()),
        0,
        "the journal is empty once saved"
    );
    let again = engine.run_and_wait(w.id).await.expect("runs again");
    assert_eq!(again.run.status, RunStatus::Succeeded);
    engine.shutdown().await;
    Figures {
        faults: 1,
        runs_lost: u32::from(detail.run.status != RunStatus::Succeeded),
        ..Figures::default()
    }
    .print("lock past the patience");
}

/// A small file system for the data folder, so that it can be filled; `None` (and why) where
/// this machine does not allow mounting.
fn small_disk(at: &Path) -> Result<(), String> {
    if !is_root() {
        return Err("mounting a tmpfs needs root".to_string());
    }
    std::fs::create_dir_all(at).map_err(|e| e.to_string())?;
    let out = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=24m", "tmpfs"])
        .arg(at)
        .output()
        .map_err(|e| format!("mount cannot run: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "this machine refuses to mount a tmpfs: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

struct Unmount(PathBuf);

impl Drop for Unmount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[tokio::test]
async fn a_full_disk_at_a_runs_end_keeps_the_result_and_tells_the_person() {
    let tmp = tempfile::tempdir().expect("temp");
    let disk = tmp.path().join("disk");
    if let Err(why) = small_disk(&disk) {
        println!("skipped: a full disk: {why}");
        return;
    }
    let _unmount = Unmount(disk.clone());
    let paths = Paths::new(disk.join("data"));
    paths.ensure().expect("data dir");
    let engine = engine(&paths).await;
    engine
        .store()
        .set_setting(WRITE_PATIENCE, &1_u64)
        .expect("setting");
    let (started, go) = (tmp.path().join("started"), tmp.path().join("go"));
    let w = engine
        .create_workflow(input("Full", Runtime::Bash, &waiting_script(&started, &go)))
        .expect("create");
    let handle: healer::engine::Handle = (*engine).clone();
    let run = tokio::spawn(async move { handle.run_and_wait(w.id).await });
    wait_for_file(&started).await;
    // Fill the disk to the last byte.
    let filler = disk.join("filler");
    let _ = Command::new("dd")
        .args(["if=/dev/zero", "bs=1M", "status=none"])
        .arg(format!("of={}", filler.display()))
        .status();
    std::fs::write(&go, "").expect("go");
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(!run.is_finished(), "the end waits for room");
    std::fs::remove_file(&filler).expect("room again");
    let detail = tokio::time::timeout(Duration::from_secs(15), run)
        .await
        .expect("answered once there was room")
        .expect("joined")
        .expect("answered");
    assert_eq!(detail.run.status, RunStatus::Succeeded, "{detail:?}");
    assert!(detail.attempts[0].stdout.contains("finished its work"));
    let told = engine
        .notifications()
        .expect("notifications")
        .items
        .into_iter()
        .find(|n| n.kind == NotificationKind::Safety && n.title == "The disk was full")
        .expect("the person is told");
    assert!(
        told.body.contains("saved them once there was room"),
        "{}",
        told.body
    );
    let again = engine.run_and_wait(w.id).await.expect("runs again");
    assert_eq!(again.run.status, RunStatus::Succeeded);
    engine.shutdown().await;
    Figures {
        faults: 1,
        runs_lost: u32::from(detail.run.status != RunStatus::Succeeded),
        ..Figures::default()
    }
    .print("full disk at a run's end");
}

/// The disk of the data folder fills while a command waits for the engine's answer: the
/// command says, within seconds, what it waits for and how much room to make (before it was
/// silent); a command that must write while the disk is full says the disk is full and how
/// much it needs (before: "disk I/O error … make it writable"); once there is room, the
/// waiting command gets its answer.
#[tokio::test]
async fn a_full_disk_is_said_as_such_by_a_command_that_waits_and_one_that_writes() {
    use std::process::Stdio;
    let tmp = tempfile::tempdir().expect("temp");
    let disk = tmp.path().join("disk");
    if let Err(why) = small_disk(&disk) {
        println!("skipped: a full disk seen from the CLI: {why}");
        return;
    }
    let _unmount = Unmount(disk.clone());
    let paths = Paths::new(disk.join("data"));
    paths.ensure().expect("data dir");
    let (started, go) = (tmp.path().join("started"), tmp.path().join("go"));
    {
        let engine = engine(&paths).await;
        engine
            .create_workflow(input("Full", Runtime::Bash, &waiting_script(&started, &go)))
            .expect("create");
        engine.shutdown().await;
    }
    let _daemon = super::Daemon::start(
        {
            let mut cmd = super::healer(&paths);
            cmd.arg("daemon").stdout(Stdio::null());
            cmd
        },
        tmp.path().join("daemon.log"),
    );
    let waiting_said = tmp.path().join("waiting.err");
    let mut waiting = super::healer(&paths)
        .args(["workflow", "run", "full"])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&waiting_said).expect("stderr file"))
        .spawn()
        .expect("healer runs");
    wait_for_file(&started).await;
    let filler = disk.join("filler");
    let _ = Command::new("dd")
        .args(["if=/dev/zero", "bs=1M", "status=none"])
        .arg(format!("of={}", filler.display()))
        .status();
    std::fs::write(&go, "").expect("go");

    // A command that must write now.
    let script = tmp.path().join("more.sh");
    std::fs::write(&script, "echo more\n").expect("script");
    let refused = super::healer(&paths)
        .args([
            "workflow",
            "create",
            "--title",
            "More",
            "--runtime",
            "bash",
            "--file",
        ])
        .arg(&script)
        .output()
        .expect("healer runs");
    let said = crate::cli::text(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{said}");
    assert!(said.contains("is full") && said.contains("64 MB"), "{said}");
    assert!(!said.contains("writable"), "{said}");

    let deadline = Instant::now() + Duration::from_secs(20);
    let notice = loop {
        let text = std::fs::read_to_string(&waiting_said).unwrap_or_default();
        if text.contains("Still waiting for the Healer engine") {
            break text;
        }
        assert!(
            Instant::now() < deadline,
            "the waiting command said nothing: {text}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(
        notice.contains("is full") && notice.contains("Free at least 64 MB"),
        "{notice}"
    );
    std::fs::remove_file(&filler).expect("room again");
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = waiting.try_wait().expect("status") {
            break status;
        }
        assert!(Instant::now() < deadline, "no answer once there was room");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(
        status.success(),
        "{}",
        std::fs::read_to_string(&waiting_said).unwrap_or_default()
    );
    Figures {
        faults: 2,
        ..Figures::default()
    }
    .print("full disk seen from the CLI");
}
