//! The questions agents asked the person, their answers, and the rules the answers made.

use rusqlite::{params, OptionalExtension, Row};

use super::notifications::unknown_value;
use super::{now, Store};
use crate::approval::{AgentAsk, AgentRequest, ApprovalScope, ApprovalStatus};
use crate::error::{Error, Result};

/// How long past a question's deadline an agent still waits for the engine to deny it, before
/// it is denied where the agent waits (the engine looks every minute).
pub const PAST_DEADLINE: chrono::Duration = chrono::Duration::seconds(90);

const COLUMNS: &str = "id, session_id, agent, request, why, rule, status, scope, reason,
    created_at, deadline_at, answered_at, project_id, task_id, call_id, checkpoint_id, used_at,
    resumed_session";

/// A question as stored: what the dialog shows, and where it belongs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRecord {
    pub ask: AgentAsk,
    pub project_id: i64,
    pub task_id: String,
    pub call_id: Option<String>,
    pub checkpoint_id: Option<i64>,
    pub used_at: Option<String>,
    pub resumed_session: Option<i64>,
}

/// A question to store.
#[derive(Debug, Clone)]
pub struct NewApproval<'a> {
    pub project_id: i64,
    pub task_id: &'a str,
    pub session_id: i64,
    pub agent: &'a str,
    pub call_id: Option<&'a str>,
    pub request: &'a AgentRequest,
    pub why: &'a str,
    pub rule: &'a str,
    pub deadline_at: &'a str,
}

/// A rule the person made by answering.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, specta::Type)]
pub struct ApprovalRule {
    pub id: i64,
    pub project_id: i64,
    /// The task it is for; `None`: the whole project.
    pub task_id: Option<String>,
    pub rule: String,
    pub created_at: String,
}

fn from_row(r: &Row<'_>) -> rusqlite::Result<ApprovalRecord> {
    let request: String = r.get(3)?;
    let status: String = r.get(6)?;
    let scope: Option<String> = r.get(7)?;
    Ok(ApprovalRecord {
        ask: AgentAsk {
            id: r.get(0)?,
            session_id: r.get(1)?,
            agent: r.get(2)?,
            request: serde_json::from_str(&request).map_err(|_| unknown_value(3, &request))?,
            why: r.get(4)?,
            rule: r.get(5)?,
            status: ApprovalStatus::parse(&status).ok_or_else(|| unknown_value(6, &status))?,
            scope: match scope {
                Some(s) => Some(ApprovalScope::parse(&s).ok_or_else(|| unknown_value(7, &s))?),
                None => None,
            },
            reason: r.get(8)?,
            created_at: r.get(9)?,
            deadline_at: r.get(10)?,
            answered_at: r.get(11)?,
        },
        project_id: r.get(12)?,
        task_id: r.get(13)?,
        call_id: r.get(14)?,
        checkpoint_id: r.get(15)?,
        used_at: r.get(16)?,
        resumed_session: r.get(17)?,
    })
}

/// Where a session works, for judging its agent's requests: its working copy, its own temp
/// folder under the data folder, the person's home, and the project's checks.
pub fn place_for(
    data_dir: &std::path::Path,
    session: &super::SessionRecord,
    project: &super::Project,
) -> crate::approval::Place {
    let worktree = std::path::PathBuf::from(&session.worktree);
    let mut checks: Vec<String> = project
        .settings
        .verify
        .iter()
        .map(|v| v.command.clone())
        .collect();
    checks.extend(project.settings.init_script.clone());
    crate::approval::Place {
        worktree: std::fs::canonicalize(&worktree).unwrap_or(worktree),
        tmp: data_dir.join("sessions").join(session.id.to_string()),
        home: std::env::var_os("HOME").map(std::path::PathBuf::from),
        checks,
    }
}

impl Store {
    pub fn insert_approval(&self, new: &NewApproval<'_>) -> Result<ApprovalRecord> {
        let request = serde_json::to_string(new.request)
            .map_err(|e| Error::Internal(format!("a request does not serialise: {e}")))?;
        let id = self.call(|c| {
            c.execute(
                "INSERT INTO approvals (project_id, task_id, session_id, agent, call_id, request,
                     why, rule, created_at, deadline_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![
                    new.project_id,
                    new.task_id,
                    new.session_id,
                    new.agent,
                    new.call_id,
                    request,
                    new.why,
                    new.rule,
                    now(),
                    new.deadline_at
                ],
            )?;
            Ok(c.last_insert_rowid())
        })?;
        self.approval(id)
    }

    pub fn approval(&self, id: i64) -> Result<ApprovalRecord> {
        self.approvals_where("id = ?1", params![id])?
            .into_iter()
            .next()
            .ok_or_else(|| Error::NotFound {
                what: format!("question {id} of an agent"),
            })
    }

    fn approvals_where(
        &self,
        filter: &str,
        args: impl rusqlite::Params,
    ) -> Result<Vec<ApprovalRecord>> {
        let sql = format!("SELECT {COLUMNS} FROM approvals WHERE {filter} ORDER BY id");
        self.call(|c| {
            let mut stmt = c.prepare_cached(&sql)?;
            let rows = stmt
                .query_map(args, from_row)?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    /// The question a checkpoint asks, when it is an agent's.
    pub fn approval_of_checkpoint(&self, checkpoint_id: i64) -> Result<Option<ApprovalRecord>> {
        Ok(self
            .approvals_where("checkpoint_id = ?1", params![checkpoint_id])?
            .into_iter()
            .next())
    }

    /// A session's question about one of its agent's tool calls, asked before.
    pub fn approval_of_call(
        &self,
        session_id: i64,
        call_id: &str,
    ) -> Result<Option<ApprovalRecord>> {
        Ok(self
            .approvals_where(
                "session_id = ?1 AND call_id = ?2",
                params![session_id, call_id],
            )?
            .into_iter()
            .next_back())
    }

    /// Every question of a session, oldest first.
    pub fn session_approvals(&self, session_id: i64) -> Result<Vec<AgentAsk>> {
        Ok(self
            .approvals_where("session_id = ?1", params![session_id])?
            .into_iter()
            .map(|a| a.ask)
            .collect())
    }

    /// Questions nobody has answered yet, oldest first.
    pub fn waiting_approvals(&self) -> Result<Vec<ApprovalRecord>> {
        self.approvals_where("status = 'waiting'", params![])
    }

    /// Answered questions whose session ended before it heard the answer and was not resumed
    /// with it yet.
    pub fn answers_not_heard(&self) -> Result<Vec<ApprovalRecord>> {
        self.approvals_where(
            "status != 'waiting' AND resumed_session IS NULL AND used_at IS NULL
             AND EXISTS (SELECT 1 FROM agent_sessions s WHERE s.id = session_id AND s.status = 'interrupted')",
            params![],
        )
    }

    pub fn set_approval_checkpoint(&self, id: i64, checkpoint_id: i64) -> Result<()> {
        self.call(|c| {
            c.execute(
                "UPDATE approvals SET checkpoint_id = ?2 WHERE id = ?1",
                params![id, checkpoint_id],
            )?;
            Ok(())
        })
    }

    /// Record the answer of a question still waiting (`false`: it was answered already), and
    /// the rule it makes (for the task or the project) in the same transaction.
    pub fn answer_approval(
        &self,
        id: i64,
        status: ApprovalStatus,
        scope: Option<ApprovalScope>,
        reason: Option<&str>,
        at: &str,
    ) -> Result<bool> {
        self.call(|c| {
            let tx = c.transaction()?;
            let changed = tx.execute(
                "UPDATE approvals SET status = ?2, scope = ?3, reason = ?4, answered_at = ?5
                 WHERE id = ?1 AND status = 'waiting'",
                params![id, status.as_str(), scope.map(ApprovalScope::as_str), reason, at],
            )?;
            if changed > 0 && status == ApprovalStatus::Allowed {
                let for_task = match scope {
                    Some(ApprovalScope::Task) => Some(true),
                    Some(ApprovalScope::Project) => Some(false),
                    _ => None,
                };
                if let Some(for_task) = for_task {
                    tx.execute(
                        "INSERT OR IGNORE INTO approval_rules (project_id, task_id, rule, approval_id, created_at)
                         SELECT project_id, CASE WHEN ?2 THEN task_id ELSE '' END, rule, id, ?3
                         FROM approvals WHERE id = ?1",
                        params![id, for_task, at],
                    )?;
                }
            }
            tx.commit()?;
            Ok(changed > 0)
        })
    }

    /// An allow-once is spent by the command it allowed.
    pub fn use_approval(&self, id: i64) -> Result<bool> {
        self.call(|c| {
            let n = c.execute(
                "UPDATE approvals SET used_at = ?2 WHERE id = ?1 AND used_at IS NULL",
                params![id, now()],
            )?;
            Ok(n > 0)
        })
    }

    /// An answer given while its session was not running, that no session has used yet: the
    /// same request of the same task, allowed once.
    pub fn unused_allow(
        &self,
        project_id: i64,
        task_id: &str,
        request: &AgentRequest,
    ) -> Result<Option<ApprovalRecord>> {
        let request = serde_json::to_string(request)
            .map_err(|e| Error::Internal(format!("a request does not serialise: {e}")))?;
        Ok(self
            .approvals_where(
                "project_id = ?1 AND task_id = ?2 AND request = ?3 AND status = 'allowed'
                 AND used_at IS NULL",
                params![project_id, task_id, request],
            )?
            .into_iter()
            .next())
    }

    pub fn set_approval_resumed(&self, id: i64, session_id: i64) -> Result<()> {
        self.call(|c| {
            c.execute(
                "UPDATE approvals SET resumed_session = ?2 WHERE id = ?1",
                params![id, session_id],
            )?;
            Ok(())
        })
    }

    /// The rules that apply to a task of a project: the project's and the task's own.
    pub fn approval_rules(&self, project_id: i64, task_id: &str) -> Result<Vec<String>> {
        self.call(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT rule FROM approval_rules WHERE project_id = ?1 AND task_id IN ('', ?2)
                 ORDER BY id",
            )?;
            let rows = stmt
                .query_map(params![project_id, task_id], |r| r.get(0))?
                .collect::<rusqlite::Result<Vec<String>>>()?;
            Ok(rows)
        })
    }

    /// A project's rules made by answering (the whole project's and each task's), oldest first.
    pub fn project_approval_rules(&self, project_id: i64) -> Result<Vec<ApprovalRule>> {
        self.call(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT id, project_id, task_id, rule, created_at FROM approval_rules
                 WHERE project_id = ?1 ORDER BY id",
            )?;
            let rows = stmt
                .query_map([project_id], |r| {
                    let task: String = r.get(2)?;
                    Ok(ApprovalRule {
                        id: r.get(0)?,
                        project_id: r.get(1)?,
                        task_id: (!task.is_empty()).then_some(task),
                        rule: r.get(3)?,
                        created_at: r.get(4)?,
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    pub fn remove_approval_rule(&self, project_id: i64, id: i64) -> Result<()> {
        let n = self.call(|c| {
            c.execute(
                "DELETE FROM approval_rules WHERE id = ?1 AND project_id = ?2",
                params![id, project_id],
            )
        })?;
        if n == 0 {
            return Err(Error::NotFound {
                what: format!("rule {id} of this project"),
            });
        }
        Ok(())
    }

    /// How long the session waited for the person between `since` and `until` (RFC 3339):
    /// each question counts from when it was asked until it was answered (or `until`).
    pub fn session_waited(
        &self,
        session_id: i64,
        since: &str,
        until: &str,
    ) -> Result<chrono::Duration> {
        let spans: Vec<(String, Option<String>)> = self.call(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT created_at, answered_at FROM approvals WHERE session_id = ?1
                 AND (answered_at IS NULL OR answered_at > ?2) AND created_at < ?3",
            )?;
            let rows = stmt
                .query_map(params![session_id, since, until], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })?;
        let parse = |s: &str| {
            chrono::DateTime::parse_from_rfc3339(s)
                .ok()
                .map(|t| t.with_timezone(&chrono::Utc))
        };
        let (Some(since), Some(until)) = (parse(since), parse(until)) else {
            return Ok(chrono::Duration::zero());
        };
        // Overlapping questions (two tool calls asking at once) count once.
        let mut spans: Vec<(chrono::DateTime<chrono::Utc>, chrono::DateTime<chrono::Utc>)> = spans
            .iter()
            .filter_map(|(from, to)| {
                let from = parse(from)?.max(since);
                let to = to.as_deref().and_then(parse).unwrap_or(until).min(until);
                (to > from).then_some((from, to))
            })
            .collect();
        spans.sort();
        let mut total = chrono::Duration::zero();
        let mut reached = since;
        for (from, to) in spans {
            let from = from.max(reached);
            if to > from {
                total += to - from;
                reached = to;
            }
        }
        Ok(total)
    }

    /// Wait for the answer to question `id` (due at `deadline_at`) as an agent waits for it:
    /// until [`PAST_DEADLINE`] after its deadline (the engine's sweep denies it first, looking
    /// every minute). `None`: it may go ahead; else what the agent is told.
    pub async fn hear_for_agent(&self, id: i64, deadline_at: &str) -> Result<Option<String>> {
        let deadline = chrono::DateTime::parse_from_rfc3339(deadline_at)
            .map(|d| d.with_timezone(&chrono::Utc))
            .unwrap_or_else(|_| chrono::Utc::now());
        let ask = self.hear_answer(id, deadline + PAST_DEADLINE).await?;
        Ok(match ask.status {
            ApprovalStatus::Allowed => None,
            _ => crate::approval::told_agent(&ask)
                .or_else(|| Some("It was not allowed.".to_string())),
        })
    }

    /// Wait for the answer to question `id`, looking every few hundred milliseconds, until
    /// `until` (when the question is denied as nobody answered, if it still waits). The
    /// answer is marked heard: the agent is told it now.
    pub async fn hear_answer(
        &self,
        id: i64,
        until: chrono::DateTime<chrono::Utc>,
    ) -> Result<AgentAsk> {
        loop {
            let asked = self.approval(id)?;
            if asked.ask.status != ApprovalStatus::Waiting {
                self.use_approval(id)?;
                return Ok(asked.ask);
            }
            if chrono::Utc::now() >= until {
                let reason = crate::approval::unanswered_reason(&asked.ask);
                self.answer_approval(id, ApprovalStatus::Expired, None, Some(&reason), &now())?;
                continue;
            }
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        }
    }

    /// Whether a question of the session waits for the person, or was answered and its agent
    /// has not heard the answer yet.
    pub fn session_has_unheard_question(&self, session_id: i64) -> Result<bool> {
        self.call(|c| {
            Ok(c.query_row(
                "SELECT 1 FROM approvals WHERE session_id = ?1 AND used_at IS NULL
                     AND resumed_session IS NULL LIMIT 1",
                [session_id],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
        })
    }

    /// Whether a session waits for the person now.
    pub fn session_waits_for_you(&self, session_id: i64) -> Result<bool> {
        self.call(|c| {
            Ok(c.query_row(
                "SELECT 1 FROM approvals WHERE session_id = ?1 AND status = 'waiting' LIMIT 1",
                [session_id],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
        })
    }
}
