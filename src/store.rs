//! SQLite: one file, WAL, busy timeout, foreign keys, embedded migrations applied at open.
//! One file per table family lives beside this one. A shape the store keeps is defined either in
//! a module below the store (workflow, checkpoint, memory…) or, when the module that acts on it
//! sits above the store (heal, maintainer), in the table's file here, and re-exported there.

mod accept_intents;
mod affected;
mod approvals;
mod autofixes;
mod checkpoints;
mod cluster;
mod environments;
mod events;
mod healer_config;
mod heals;
mod holds;
mod inbox;
mod invocations;
mod judgements;
mod maintenance;
mod memory;
mod model_use;
mod notifications;
mod projects;
mod providers;
mod pull_requests;
mod requests;
mod review_comments;
mod runs;
mod scripts;
mod sessions;
mod settings;
mod snapshots;
mod steering;
mod steering_settings;
mod stuck;
mod tasks;
mod usage;
mod workflow_secrets;
mod workflows;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode as SqliteCode, OpenFlags};
use rusqlite_migration::{Migrations, M};

use crate::error::{Error, Result};

pub use accept_intents::AcceptIntent;
pub use approvals::{place_for, ApprovalRecord, ApprovalRule, NewApproval};
pub use autofixes::{AutoFix, AutoFixStatus};
pub use cluster::ClusterSchedule;
pub use healer_config::{
    HealerConfig, HealerMode, HealerScenarios, DEFAULT_MAX_INVOCATIONS_PER_TASK,
    DEFAULT_STUCK_AFTER_HOURS,
};
pub use heals::{HealRecord, Outcome, RemedyAttempt, RemedyStatus};
pub use holds::RepairHold;
pub use inbox::{InboxItem, InboxKind, SettledItems};
pub use invocations::{
    HealerInvocation, InvocationState, InvocationStatus, NewInvocation, SpellRun,
};
pub use judgements::{PendingReplace, TaskJudgement};
pub use maintenance::{Entered, FixResult};
pub use model_use::SessionModelUse;
pub use projects::{
    AcceptHow, BringMainIn, FinishSettings, MergePolicy, Project, ProjectSettings, RunsOn,
    VerifyCommand, DEFAULT_AGENT_TIME_LIMIT_SECS, DEFAULT_ALLOWED_TOOLS,
    DEFAULT_COMMAND_TIME_LIMIT_SECS, DEFAULT_MAX_PARALLEL, DEFAULT_MAX_STEPS,
    DEFAULT_SESSION_CAP_CENTS, DEFAULT_SESSION_CAP_TOKENS, DEFAULT_TOKEN_BUDGET,
};
pub use pull_requests::{PullRequestReading, PullRequestRecord};
pub use requests::{RequestRow, RequestStatus};
pub use review_comments::{NewReviewComment, ReviewComment};
pub use runs::{AttemptEnd, InterruptedAttempt};
pub use sessions::{NewSession, PastSession, SessionOutcome, SessionRecord, StoredStep};
pub use snapshots::{NewSnapshot, SnapshotRecord};
pub use steering::{
    for_agent, DeliveryState, JudgeAction, MessageDelivery, NewSteeringEntry, SessionPulse,
    SteeringEntry, SteeringKind, SteeringMessage, SteeringOrigin, HEARTBEAT_NOTE_SECS,
    MAX_PERSON_MESSAGE,
};
pub use steering_settings::{
    SteeringSettings, DEFAULT_JUDGE_EVERY_SECS, DEFAULT_MAX_LOOP_MESSAGES,
    DEFAULT_ZOMBIE_AFTER_SECS, STEERING_KEY,
};
pub use workflows::ScheduledWorkflow;

/// How long a writer waits for another process's write to finish before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Settings key: how long a run's writes keep trying while the database is locked (or the
/// disk full) before its end is kept in memory and saved later (seconds; default 60).
pub const WRITE_PATIENCE: &str = "store.write_patience_secs";

/// The schema, one SQL file per version, applied in order. `PRAGMA user_version` counts them.
const MIGRATIONS: &[&str] = &[
    include_str!("store/migrations/0001_foundation.sql"),
    include_str!("store/migrations/0002_workflows.sql"),
    include_str!("store/migrations/0003_llm.sql"),
    include_str!("store/migrations/0004_maintainer.sql"),
    include_str!("store/migrations/0005_checkpoints.sql"),
    include_str!("store/migrations/0006_memory.sql"),
    include_str!("store/migrations/0007_people.sql"),
    include_str!("store/migrations/0008_projects.sql"),
    include_str!("store/migrations/0009_reliability.sql"),
    include_str!("store/migrations/0010_trust.sql"),
    include_str!("store/migrations/0011_run_numbers.sql"),
    include_str!("store/migrations/0012_deps.sql"),
    include_str!("store/migrations/0013_steering.sql"),
    include_str!("store/migrations/0014_healer_service.sql"),
    include_str!("store/migrations/0015_steering_judge.sql"),
    include_str!("store/migrations/0016_durable_invocations.sql"),
    include_str!("store/migrations/0017_steering_delivery.sql"),
    include_str!("store/migrations/0018_project_notifications.sql"),
    include_str!("store/migrations/0019_workflow_secrets.sql"),
    include_str!("store/migrations/0020_provider_titles.sql"),
    include_str!("store/migrations/0021_cluster.sql"),
    include_str!("store/migrations/0022_session_model_use.sql"),
    include_str!("store/migrations/0023_answered_and_acting.sql"),
    include_str!("store/migrations/0024_run_retry_wait.sql"),
    include_str!("store/migrations/0025_approvals.sql"),
    include_str!("store/migrations/0026_pull_requests.sql"),
    include_str!("store/migrations/0027_review_comments.sql"),
    include_str!("store/migrations/0028_pull_request_checks.sql"),
    include_str!("store/migrations/0029_accept_intents.sql"),
    include_str!("store/migrations/0030_provider_waits.sql"),
    include_str!("store/migrations/0031_agent_versions.sql"),
    include_str!("store/migrations/0032_cluster_sessions.sql"),
];

fn migrations() -> Migrations<'static> {
    Migrations::new(MIGRATIONS.iter().map(|sql| M::up(sql)).collect())
}

/// The newest schema this build knows.
pub fn known_schema_version() -> i64 {
    MIGRATIONS.len() as i64
}

/// A handle to the database. Cheap to clone; all clones share one connection, so writes from
/// this process are serialised and `PRAGMA data_version` on it changes only for writes made by
/// other processes.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    conn: Mutex<Connection>,
    path: PathBuf,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.inner.path)
            .finish()
    }
}

impl Store {
    /// Open (creating if needed) the database at `path` and bring its schema up to date — for
    /// the engine, which holds the lease (no other engine uses the file meanwhile). An existing
    /// database is copied beside itself before it is changed.
    pub fn open(path: &Path) -> Result<Store> {
        Store::open_with(path, Upgrade::Yes)
    }

    /// Open the database at `path` without upgrading one an older Healer made: for commands
    /// that only read (or change a setting) and for a client of a running engine, which may be
    /// an older one. A file that does not exist yet is made.
    pub fn open_without_upgrade(path: &Path, running: Option<String>) -> Result<Store> {
        Store::open_with(path, Upgrade::No { running })
    }

    fn open_with(path: &Path, upgrade: Upgrade) -> Result<Store> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        // Processes opening a fresh file at once would each see schema version 0 and create
        // the same tables; one at a time, the second finds the schema made.
        let _schema = schema_lock(path)?;
        let mut conn = Connection::open_with_flags(path, flags).map_err(|e| open_error(path, e))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| open_error(path, e))?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(|e| open_error(path, e))?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(|e| open_error(path, e))?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(|e| open_error(path, e))?;

        let found: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(|e| open_error(path, e))?;
        let known = known_schema_version();
        if found > known {
            return Err(Error::SchemaTooNew {
                path: path.to_path_buf(),
                found,
                known,
            });
        }
        if found > 0 && found < known {
            match upgrade {
                Upgrade::No { running } => {
                    return Err(Error::SchemaBehind {
                        path: path.to_path_buf(),
                        found,
                        known,
                        running: running
                            .map(|who| {
                                format!(", and the older Healer that uses it runs now ({who}): quit it first")
                            })
                            .unwrap_or_default(),
                    })
                }
                Upgrade::Yes => {
                    keep_a_copy(&conn, path, found)?;
                }
            }
        }
        migrations().to_latest(&mut conn).map_err(|e| match e {
            rusqlite_migration::Error::RusqliteError { err, .. } => open_error(path, err),
            other => Error::Internal(format!(
                "could not bring {} up to date: {other}",
                path.display()
            )),
        })?;

        Ok(Store {
            inner: Arc::new(Inner {
                conn: Mutex::new(conn),
                path: path.to_path_buf(),
            }),
        })
    }

    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    pub fn schema_version(&self) -> Result<i64> {
        self.call(|c| c.pragma_query_value(None, "user_version", |r| r.get(0)))
    }

    /// Changes whenever another connection (another process) commits a write.
    pub fn data_version(&self) -> Result<i64> {
        self.call(|c| c.pragma_query_value(None, "data_version", |r| r.get(0)))
    }

    /// Run `f` with the connection. Keep `f` short: it holds the connection.
    pub(crate) fn call<T>(
        &self,
        f: impl FnOnce(&mut Connection) -> rusqlite::Result<T>,
    ) -> Result<T> {
        let mut conn = self.lock();
        Ok(f(&mut conn)?)
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave SQLite half-written (a transaction that
        // was not committed is rolled back), so a poisoned lock is safe to take over.
        self.inner
            .conn
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Whether opening may bring an older schema up to date.
enum Upgrade {
    Yes,
    No { running: Option<String> },
}

/// A copy of the database as it is, beside it, before a migration changes it
/// (`healer.db.schema15-20261202T101500.bak`): an upgrade that goes wrong, or a person going
/// back to the older Healer, has the file as it was. No copy, no migration.
fn keep_a_copy(conn: &Connection, path: &Path, found: i64) -> Result<PathBuf> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S");
    let copy = path.with_file_name(format!("{name}.schema{found}-{stamp}.bak"));
    conn.execute("VACUUM INTO ?1", [copy.to_string_lossy()])
        .map_err(|e| {
            Error::data_dir(
                copy.clone(),
                format!("the copy kept before upgrading the data could not be made ({e}); nothing was changed"),
            )
        })?;
    tracing::info!(
        "upgrading {} from schema {found}; its copy as it was is {}",
        path.display(),
        copy.display()
    );
    Ok(copy)
}

/// A database made at `version` of the schema, as an older Healer left it — for tests of
/// upgrades (a test cannot run the older binary).
#[doc(hidden)]
pub fn create_at_schema(path: &Path, version: usize) -> Result<()> {
    let mut conn = Connection::open(path).map_err(|e| open_error(path, e))?;
    let older = Migrations::new(
        MIGRATIONS
            .iter()
            .take(version)
            .map(|sql| M::up(sql))
            .collect(),
    );
    older
        .to_latest(&mut conn)
        .map_err(|e| Error::Internal(format!("could not make schema {version}: {e}")))
}

/// An exclusive lock beside the database, held while it is opened and brought up to date.
/// Its name does not start with the database's, so an engine watching the folder for the
/// database's writes is not woken by it.
fn schema_lock(path: &Path) -> Result<std::fs::File> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let lock = path.with_file_name(format!(".{name}.schema-lock"));
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock)
        .map_err(|e| Error::data_dir(lock.clone(), e.to_string()))?;
    file.lock()
        .map_err(|e| Error::io(format!("cannot lock {}", lock.display()), e))?;
    Ok(file)
}

/// Turn an error from opening the file into one that says what to do.
fn open_error(path: &Path, err: rusqlite::Error) -> Error {
    match err.sqlite_error_code() {
        Some(SqliteCode::NotADatabase) | Some(SqliteCode::DatabaseCorrupt) => {
            Error::CorruptDatabase {
                path: path.to_path_buf(),
                detail: err.to_string(),
            }
        }
        Some(SqliteCode::CannotOpen)
        | Some(SqliteCode::PermissionDenied)
        | Some(SqliteCode::ReadOnly)
        | Some(SqliteCode::DiskFull)
        | Some(SqliteCode::SystemIoFailure) => Error::data_dir(path.to_path_buf(), err.to_string()),
        _ => Error::Store(err),
    }
}

/// Now, as stored: RFC 3339 UTC with milliseconds.
pub fn now() -> String {
    rfc3339(chrono::Utc::now())
}

/// A time as the store keeps it.
pub fn rfc3339(at: chrono::DateTime<chrono::Utc>) -> String {
    at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_are_valid() {
        assert!(migrations().validate().is_ok());
    }

    /// The providers table made again to take Gemini API providers keeps every provider, its
    /// tiers and its prices (dropping the old table cascades to them).
    #[test]
    fn providers_made_again_for_gemini_keep_their_tiers_and_prices() -> Result<()> {
        let remade = MIGRATIONS
            .iter()
            .position(|sql| sql.contains("CREATE TABLE providers_new"))
            .ok_or_else(|| Error::Internal("no providers migration".into()))?;
        let dir = tempfile::tempdir().map_err(|e| Error::io("tempdir", e))?;
        let path = dir.path().join("t.db");
        let mut conn = Connection::open(&path)?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        let before: Vec<M<'_>> = MIGRATIONS[..remade].iter().map(|sql| M::up(sql)).collect();
        Migrations::new(before)
            .to_latest(&mut conn)
            .map_err(|e| Error::Internal(e.to_string()))?;
        conn.execute_batch(
            "INSERT INTO providers (name, kind, base_url, key_env, created_at, updated_at, title)
             VALUES ('work', 'anthropic', 'https://api.anthropic.com', NULL, 'x', 'x', 'Work');
             INSERT INTO model_prices (provider, model, input_per_mtok, output_per_mtok)
             VALUES ('work', 'claude', 3.0, 15.0);
             INSERT INTO tiers (tier, provider, model, budget_tokens, updated_at, minutes)
             VALUES ('cheap', 'work', 'claude', 20000, 'x', 7);",
        )?;
        drop(conn);

        let store = Store::open(&path)?;
        let providers = store.list_providers()?;
        assert_eq!(providers.len(), 1);
        assert_eq!(providers[0].title, "Work");
        assert_eq!(providers[0].prices.len(), 1);
        let tiers = store.tier_settings()?;
        assert_eq!(tiers.len(), 1);
        assert_eq!(tiers[0].minutes, Some(7));
        store.save_provider(&crate::llm::ProviderInput {
            name: "google".to_string(),
            title: None,
            kind: crate::llm::ProviderKind::Gemini,
            base_url: None,
            key_env: None,
            prices: vec![],
        })?;
        assert_eq!(store.list_providers()?.len(), 2);
        Ok(())
    }

    /// Runs stored before runs were numbered get their number per workflow, in order; new
    /// runs go on from there.
    #[test]
    fn run_numbers_are_given_to_old_runs_and_go_on_from_there() -> Result<()> {
        let numbered_from = MIGRATIONS
            .iter()
            .position(|sql| sql.contains("ALTER TABLE runs ADD COLUMN number"))
            .ok_or_else(|| Error::Internal("no run-number migration".into()))?;
        let dir = tempfile::tempdir().map_err(|e| Error::io("tempdir", e))?;
        let path = dir.path().join("t.db");
        let mut conn = Connection::open(&path)?;
        let before: Vec<M<'_>> = MIGRATIONS[..numbered_from]
            .iter()
            .map(|sql| M::up(sql))
            .collect();
        Migrations::new(before)
            .to_latest(&mut conn)
            .map_err(|e| Error::Internal(e.to_string()))?;
        conn.execute_batch(
            "INSERT INTO workflows (id, name, title, runtime, entry, schedule, env, timeout_secs, retry,
                 status, created_at, updated_at)
             VALUES (1, 'a', 'A', '{}', 'main.py', '{}', '[]', 60, '{}', 'active', 'x', 'x'),
                    (2, 'b', 'B', '{}', 'main.py', '{}', '[]', 60, '{}', 'active', 'x', 'x');
             INSERT INTO scripts (id, workflow_id, major, minor, code, change_comment, summary, author, created_at)
             VALUES (1, 1, 1, 0, '', '', '', 'person', 'x'), (2, 2, 1, 0, '', '', '', 'person', 'x');
             INSERT INTO runs (id, workflow_id, script_id, trigger, status, queued_at)
             VALUES (1, 1, 1, 'manual', 'succeeded', 'x'), (2, 2, 2, 'manual', 'succeeded', 'x'),
                    (3, 1, 1, 'manual', 'failed', 'x'), (4, 1, 1, 'manual', 'succeeded', 'x');
             UPDATE workflows SET active_script_id = id;",
        )?;
        drop(conn);

        let store = Store::open(&path)?;
        let numbers = |store: &Store| -> Result<Vec<(i64, i64, u32)>> {
            store.call(|c| {
                let mut stmt = c.prepare("SELECT id, workflow_id, number FROM runs ORDER BY id")?;
                let rows = stmt
                    .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                    .collect::<rusqlite::Result<Vec<_>>>()?;
                Ok(rows)
            })
        };
        assert_eq!(
            numbers(&store)?,
            [(1, 1, 1), (2, 2, 1), (3, 1, 2), (4, 1, 3)]
        );
        let next = store
            .enqueue_run(2, crate::workflow::RunTrigger::Manual)?
            .ok_or_else(|| Error::Internal("not queued".into()))?;
        assert_eq!(store.run(next)?.number, 2, "workflow 2's second run");
        assert_eq!(store.run_name(next), "#2");
        Ok(())
    }

    #[test]
    fn the_known_version_counts_the_migrations() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| Error::io("tempdir", e))?;
        let store = Store::open(&dir.path().join("t.db"))?;
        assert_eq!(store.schema_version()?, known_schema_version());
        Ok(())
    }
}
