//! Script versions. Versions are never changed once stored (a trigger refuses updates).

use rusqlite::{params, OptionalExtension, Row};

use super::notifications::unknown_value;
use super::workflows::{insert_version, insert_version_with};
use super::Store;
use crate::error::{Error, Result};
use crate::workflow::{Author, ScriptVersion, Version};

const COLUMNS: &str = "s.id, s.workflow_id, s.major, s.minor, s.code, s.change_comment, s.summary, s.author, s.created_at, s.id = w.active_script_id, s.requirements";

impl Store {
    /// The version that runs.
    pub fn active_version(&self, workflow_id: i64) -> Result<ScriptVersion> {
        let sql = format!(
            "SELECT {COLUMNS} FROM scripts s JOIN workflows w ON w.id = s.workflow_id
             WHERE w.id = ?1 AND s.id = w.active_script_id"
        );
        self.call(|c| {
            c.query_row(&sql, [workflow_id], version_from_row)
                .optional()
        })?
        .ok_or_else(|| Error::NotFound {
            what: format!("the active version of workflow {workflow_id}"),
        })
    }

    /// Every version, oldest first (1.0, 1.1, 2.0, …).
    pub fn versions(&self, workflow_id: i64) -> Result<Vec<ScriptVersion>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM scripts s JOIN workflows w ON w.id = s.workflow_id
             WHERE s.workflow_id = ?1 ORDER BY s.major, s.minor"
        );
        self.call(|c| {
            let mut stmt = c.prepare_cached(&sql)?;
            let rows = stmt
                .query_map([workflow_id], version_from_row)?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    pub fn version(&self, workflow_id: i64, version: Version) -> Result<ScriptVersion> {
        let sql = format!(
            "SELECT {COLUMNS} FROM scripts s JOIN workflows w ON w.id = s.workflow_id
             WHERE s.workflow_id = ?1 AND s.major = ?2 AND s.minor = ?3"
        );
        self.call(|c| {
            c.query_row(
                &sql,
                params![workflow_id, version.major, version.minor],
                version_from_row,
            )
            .optional()
        })?
        .ok_or_else(|| Error::NotFound {
            what: format!("version {version} of workflow {workflow_id}"),
        })
    }

    /// The newest version of one major (2.3 of 2.x).
    pub fn latest_of_major(&self, workflow_id: i64, major: u32) -> Result<Option<ScriptVersion>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM scripts s JOIN workflows w ON w.id = s.workflow_id
             WHERE s.workflow_id = ?1 AND s.major = ?2 ORDER BY s.minor DESC LIMIT 1"
        );
        self.call(|c| {
            c.query_row(&sql, params![workflow_id, major], version_from_row)
                .optional()
        })
    }

    /// A person's or the planner's save: version major+1.0 becomes the active one.
    pub fn save_major(
        &self,
        workflow_id: i64,
        code: &str,
        comment: &str,
        summary: Option<&str>,
        author: &Author,
    ) -> Result<ScriptVersion> {
        self.save_major_with(workflow_id, code, comment, summary, author, None)
    }

    /// As [`Store::save_major`], with the packages the version declares (`None`: those of the
    /// version that runs now).
    pub fn save_major_with(
        &self,
        workflow_id: i64,
        code: &str,
        comment: &str,
        summary: Option<&str>,
        author: &Author,
        requirements: Option<&str>,
    ) -> Result<ScriptVersion> {
        let id = self.call(|c| {
            let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let (major, last_summary): (u32, String) = tx.query_row(
                "SELECT s.major, s.summary FROM scripts s WHERE s.workflow_id = ?1
                 ORDER BY s.major DESC, s.minor DESC LIMIT 1",
                [workflow_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            let version = Version { major, minor: 0 }.next_major();
            let id = insert_version_with(
                &tx,
                workflow_id,
                version,
                code,
                comment,
                summary.unwrap_or(&last_summary),
                author,
                requirements,
            )?;
            // A new major is the person's answer to a repair that gave up: repairs may start
            // again.
            tx.execute(
                "DELETE FROM repair_holds WHERE workflow_id = ?1",
                [workflow_id],
            )?;
            tx.commit()?;
            Ok(id)
        })?;
        self.version_by_id(id)
    }

    /// A fix: version major.minor+1 of the major the fix was made for, made active — unless the
    /// workflow has moved on to another major meanwhile (a person saved a new version), in
    /// which case nothing is stored and `None` is returned.
    pub fn save_minor(
        &self,
        workflow_id: i64,
        expected_major: u32,
        code: &str,
        comment: &str,
        author: &Author,
    ) -> Result<Option<ScriptVersion>> {
        let id = self.call(|c| {
            let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let (active_major, summary): (u32, String) = tx.query_row(
                "SELECT s.major, s.summary FROM scripts s JOIN workflows w ON w.active_script_id = s.id
                 WHERE w.id = ?1",
                [workflow_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            if active_major != expected_major {
                return Ok(None);
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
            let id = insert_version(&tx, workflow_id, version, code, comment, &summary, author)?;
            tx.commit()?;
            Ok(Some(id))
        })?;
        id.map(|id| self.version_by_id(id)).transpose()
    }

    fn version_by_id(&self, id: i64) -> Result<ScriptVersion> {
        let sql = format!(
            "SELECT {COLUMNS} FROM scripts s JOIN workflows w ON w.id = s.workflow_id WHERE s.id = ?1"
        );
        self.call(|c| c.query_row(&sql, [id], version_from_row).optional())?
            .ok_or_else(|| Error::NotFound {
                what: format!("script version {id}"),
            })
    }
}

fn version_from_row(r: &Row<'_>) -> rusqlite::Result<ScriptVersion> {
    let author: String = r.get(7)?;
    Ok(ScriptVersion {
        id: r.get(0)?,
        workflow_id: r.get(1)?,
        version: Version {
            major: r.get(2)?,
            minor: r.get(3)?,
        },
        code: r.get(4)?,
        change_comment: r.get(5)?,
        summary: r.get(6)?,
        author: Author::from_db(&author).ok_or_else(|| unknown_value(7, &author))?,
        created_at: r.get(8)?,
        active: r.get(9)?,
        requirements: r
            .get::<_, String>(10)?
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect(),
    })
}
