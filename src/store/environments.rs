//! Each workflow's environment as last built, what a run's set-up printed, the packages that
//! fixed a missing module (healing memory), and the package questions asked at checkpoints.

use rusqlite::{params, OptionalExtension, Row, TransactionBehavior};

use super::notifications::unknown_value;
use super::workflows::insert_version_with;
use super::{now, FixResult, Store};
use crate::deps::{EnvironmentRecord, PackageFix, PackageQuestion};
use crate::error::Result;
use crate::memory::FixVerdict;
use crate::workflow::{Author, RunTrigger, Version};

const FIX_COLUMNS: &str = "f.id, f.signature, f.runtime, f.module, f.package, f.workflow_id,
    w.title, f.result, f.created_at";

impl Store {
    /// The workflow's environment as last built; `None` when it never was.
    pub fn environment(&self, workflow_id: i64) -> Result<Option<EnvironmentRecord>> {
        self.call(|c| {
            c.query_row(
                "SELECT requirements, ok, lock, log, error, interpreter, built_at
                 FROM environments WHERE workflow_id = ?1",
                [workflow_id],
                |r| {
                    Ok(EnvironmentRecord {
                        requirements: r.get(0)?,
                        ok: r.get(1)?,
                        lock: r.get(2)?,
                        log: r.get(3)?,
                        error: r.get(4)?,
                        interpreter: r.get(5)?,
                        built_at: r.get(6)?,
                    })
                },
            )
            .optional()
        })
    }

    pub fn record_environment(&self, workflow_id: i64, record: &EnvironmentRecord) -> Result<()> {
        self.call(|c| {
            c.execute(
                "INSERT INTO environments (workflow_id, requirements, ok, lock, log, error,
                     interpreter, built_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                 ON CONFLICT (workflow_id) DO UPDATE SET requirements = excluded.requirements,
                     ok = excluded.ok, lock = excluded.lock, log = excluded.log,
                     error = excluded.error, interpreter = excluded.interpreter,
                     built_at = excluded.built_at",
                params![
                    workflow_id,
                    record.requirements,
                    record.ok,
                    record.lock,
                    record.log,
                    record.error,
                    record.interpreter,
                    record.built_at
                ],
            )
        })?;
        Ok(())
    }

    /// The requirements an environment holds, written as a version declares them (the same
    /// packages, pinned to what was installed), so the next run does not install them again.
    pub fn set_environment_requirements(&self, workflow_id: i64, requirements: &str) -> Result<()> {
        self.call(|c| {
            c.execute(
                "UPDATE environments SET requirements = ?2 WHERE workflow_id = ?1",
                params![workflow_id, requirements],
            )
        })?;
        Ok(())
    }

    /// Keep what the set-up before a run printed, with the run.
    pub fn set_run_setup_log(&self, run_id: i64, log: &str) -> Result<()> {
        self.call(|c| {
            c.execute(
                "UPDATE runs SET setup_log = ?2 WHERE id = ?1",
                params![run_id, log],
            )
        })?;
        Ok(())
    }

    pub fn run_setup_log(&self, run_id: i64) -> Result<Option<String>> {
        Ok(self
            .call(|c| {
                c.query_row("SELECT setup_log FROM runs WHERE id = ?1", [run_id], |r| {
                    r.get::<_, Option<String>>(0)
                })
                .optional()
            })?
            .flatten())
    }

    /// Packages installed for a workflow by the missing-module remedy since its last green run.
    pub fn installs_since_green(&self, workflow_id: i64) -> Result<u32> {
        self.call(|c| {
            c.query_row(
                "SELECT count(*) FROM package_fixes WHERE workflow_id = ?1
                   AND created_at > COALESCE((SELECT max(finished_at) FROM runs
                                              WHERE workflow_id = ?1 AND status = 'succeeded'), '')",
                [workflow_id],
                |r| r.get(0),
            )
        })
    }

    /// A package installed into a workflow's environment as a new minor version of the major it
    /// was made for (same code, `requirements`), by Healer, with a re-run queued — in one
    /// transaction, with its memory entry. Nothing is stored when a person saved another major
    /// meanwhile.
    #[allow(clippy::too_many_arguments)]
    pub fn save_package_fix(
        &self,
        workflow_id: i64,
        expected_major: u32,
        requirements: &str,
        comment: &str,
        remembered: Option<(&str, &str, &str, &str)>,
        setup_log: &str,
    ) -> Result<FixResult> {
        let at = now();
        self.call(|c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let (active, code, summary): (Version, String, String) = tx.query_row(
                "SELECT s.major, s.minor, s.code, s.summary FROM scripts s
                 JOIN workflows w ON w.active_script_id = s.id WHERE w.id = ?1",
                [workflow_id],
                |r| {
                    let version = Version {
                        major: r.get(0)?,
                        minor: r.get(1)?,
                    };
                    Ok((version, r.get(2)?, r.get(3)?))
                },
            )?;
            if active.major != expected_major {
                return Ok(FixResult::Stale { active });
            }
            let minor: u32 = tx.query_row(
                "SELECT max(minor) FROM scripts WHERE workflow_id = ?1 AND major = ?2",
                params![workflow_id, expected_major],
                |r| r.get(0),
            )?;
            let version = Version {
                major: expected_major,
                minor,
            }
            .next_minor();
            let script_id = insert_version_with(
                &tx,
                workflow_id,
                version,
                &code,
                comment,
                &summary,
                &Author::Healer,
                Some(requirements),
            )?;
            if let Some((signature, runtime, module, package)) = remembered {
                tx.execute(
                    "INSERT INTO package_fixes (signature, runtime, module, package, workflow_id,
                         script_id, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    params![signature, runtime, module, package, workflow_id, script_id, at],
                )?;
            }
            let open: bool = tx.query_row(
                "SELECT EXISTS (SELECT 1 FROM runs WHERE workflow_id = ?1 AND status IN ('queued', 'running'))",
                [workflow_id],
                |r| r.get(0),
            )?;
            let rerun = if open {
                None
            } else {
                tx.execute(
                    "INSERT INTO runs (workflow_id, script_id, trigger, status, queued_at, setup_log)
                     VALUES (?1, ?2, ?3, 'queued', ?4, ?5)",
                    params![workflow_id, script_id, RunTrigger::Fix.as_str(), at, setup_log],
                )?;
                Some(tx.last_insert_rowid())
            };
            tx.commit()?;
            Ok(FixResult::Applied { version, rerun })
        })
    }

    /// The first run of a version a package fix made tells memory whether the package held.
    pub fn settle_package_fixes(&self, run_id: i64, succeeded: bool) -> Result<usize> {
        let verdict = if succeeded {
            FixVerdict::Success
        } else {
            FixVerdict::Failed
        };
        self.call(|c| {
            c.execute(
                "UPDATE package_fixes SET result = ?2, settled_at = ?3
                 WHERE result = 'pending'
                   AND script_id = (SELECT script_id FROM runs WHERE id = ?1)",
                params![run_id, verdict.as_str(), now()],
            )
        })
    }

    /// The package that fixed this missing module before: for the same failure signature
    /// first, else for the same import in the same runtime; the most recent that held.
    pub fn learned_package(
        &self,
        runtime: &str,
        module: &str,
        signature: Option<&str>,
    ) -> Result<Option<String>> {
        self.call(|c| {
            c.query_row(
                "SELECT package FROM package_fixes
                 WHERE result = 'success' AND runtime = ?1
                   AND (module = ?2 OR signature = ?3)
                 ORDER BY (signature = ?3) DESC, id DESC LIMIT 1",
                params![runtime, module, signature],
                |r| r.get(0),
            )
            .optional()
        })
    }

    /// Packages installed for a signature, newest first (the Memory page).
    pub fn package_fixes(&self, signature: &str) -> Result<Vec<PackageFix>> {
        let sql = format!(
            "SELECT {FIX_COLUMNS} FROM package_fixes f LEFT JOIN workflows w ON w.id = f.workflow_id
             WHERE f.signature = ?1 ORDER BY f.id DESC"
        );
        self.call(|c| {
            let mut stmt = c.prepare_cached(&sql)?;
            let rows = stmt
                .query_map([signature], fix_from_row)?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    pub fn insert_package_question(&self, checkpoint_id: i64, q: &PackageQuestion) -> Result<()> {
        self.call(|c| {
            c.execute(
                "INSERT INTO package_questions (checkpoint_id, workflow_id, module, package, signature)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![checkpoint_id, q.workflow_id, q.module, q.package, q.signature],
            )
        })?;
        Ok(())
    }

    pub fn package_question(&self, checkpoint_id: i64) -> Result<Option<PackageQuestion>> {
        self.call(|c| {
            c.query_row(
                "SELECT workflow_id, module, package, signature FROM package_questions
                 WHERE checkpoint_id = ?1",
                [checkpoint_id],
                |r| {
                    Ok(PackageQuestion {
                        workflow_id: r.get(0)?,
                        module: r.get(1)?,
                        package: r.get(2)?,
                        signature: r.get(3)?,
                    })
                },
            )
            .optional()
        })
    }
}

fn fix_from_row(r: &Row<'_>) -> rusqlite::Result<PackageFix> {
    let result: String = r.get(7)?;
    Ok(PackageFix {
        id: r.get(0)?,
        signature: r.get(1)?,
        runtime: r.get(2)?,
        module: r.get(3)?,
        package: r.get(4)?,
        workflow_id: r.get(5)?,
        workflow_title: r.get(6)?,
        result: FixVerdict::parse(&result).ok_or_else(|| unknown_value(7, &result))?,
        created_at: r.get(8)?,
    })
}
