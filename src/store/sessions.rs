//! Agent sessions and their steps. A step is stored the moment the agent reports it, so the
//! live view, a crash and the steering loop all see the same record.

use rusqlite::{params, OptionalExtension, Row};
use serde::{Deserialize, Serialize};

use super::notifications::unknown_value;
use super::usage::sql_int;
use super::{now, Store};
use crate::error::{Error, Result};
use crate::session::{AgentKind, SessionStatus, SessionStep, StepKind, StepSource, StepUsage};

/// A session as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct SessionRecord {
    pub id: i64,
    pub project_id: i64,
    pub task_id: String,
    pub task_title: String,
    pub agent: AgentKind,
    pub status: SessionStatus,
    pub worktree: String,
    pub branch: String,
    pub base_commit: Option<String>,
    pub pgid: Option<i32>,
    pub agent_session_id: Option<String>,
    pub transcript: Option<String>,
    pub exit_code: Option<i32>,
    pub summary: String,
    pub commit_id: Option<String>,
    /// The commit was fast-forwarded into the main branch.
    pub merged: bool,
    pub started_at: String,
    pub ended_at: Option<String>,
    /// The earlier session of the task this one resumed (with a message), if it did.
    pub resumed_from: Option<i64>,
    /// What the agent's program said its version was when the session started
    /// (`2.1.328 (Claude Code)`), when it is a CLI that says one.
    pub agent_version: Option<String>,
    /// Lines of the agent's stream Healer did not understand (kept as raw steps).
    pub raw_lines: u32,
}

/// A session for the history on the Sessions page: with its project's name and the model
/// tokens its steps reported (0 where the agent reports none).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct PastSession {
    pub session: SessionRecord,
    pub project_name: String,
    pub tokens: u64,
    /// What its model calls cost in US dollars, when every model it used has a price set.
    pub cost_usd: Option<f64>,
}

/// What a session starts with.
#[derive(Debug, Clone)]
pub struct NewSession<'a> {
    pub project_id: i64,
    pub task_id: &'a str,
    pub task_title: &'a str,
    pub agent: AgentKind,
    pub worktree: &'a str,
    pub branch: &'a str,
}

/// How a session ended.
#[derive(Debug, Clone, Default)]
pub struct SessionOutcome {
    pub exit_code: Option<i32>,
    pub summary: String,
    pub commit_id: Option<String>,
    pub merged: bool,
}

/// A stored step with its place in the session (1, 2, …).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct StoredStep {
    pub session_id: i64,
    pub seq: u32,
    pub step: SessionStep,
}

const COLUMNS: &str = "id, project_id, task_id, task_title, agent, status, worktree, branch, \
     base_commit, pgid, agent_session_id, transcript, exit_code, summary, commit_id, merged, \
     started_at, ended_at, resumed_from, agent_version, raw_lines";

pub(crate) fn status_str(status: SessionStatus) -> &'static str {
    match status {
        SessionStatus::Running => "running",
        SessionStatus::Finished => "finished",
        SessionStatus::Failed => "failed",
        SessionStatus::TimedOut => "timed_out",
        SessionStatus::Stopped => "stopped",
        SessionStatus::Interrupted => "interrupted",
    }
}

fn parse_status(s: &str) -> Option<SessionStatus> {
    [
        SessionStatus::Running,
        SessionStatus::Finished,
        SessionStatus::Failed,
        SessionStatus::TimedOut,
        SessionStatus::Stopped,
        SessionStatus::Interrupted,
    ]
    .into_iter()
    .find(|st| status_str(*st) == s)
}

impl Store {
    pub fn insert_session(&self, new: &NewSession<'_>) -> Result<SessionRecord> {
        let id = self.call(|c| {
            c.execute(
                "INSERT INTO agent_sessions (project_id, task_id, task_title, agent, status, worktree, branch, started_at)
                 VALUES (?1, ?2, ?3, ?4, 'running', ?5, ?6, ?7)",
                params![
                    new.project_id,
                    new.task_id,
                    new.task_title,
                    new.agent.as_str(),
                    new.worktree,
                    new.branch,
                    now()
                ],
            )?;
            Ok(c.last_insert_rowid())
        })?;
        self.session(id)
    }

    /// Link a session to the earlier one it resumes.
    pub fn set_session_resumed_from(&self, id: i64, earlier: i64) -> Result<()> {
        self.call(|c| {
            c.execute(
                "UPDATE agent_sessions SET resumed_from = ?2 WHERE id = ?1",
                params![id, earlier],
            )
        })?;
        Ok(())
    }

    pub fn session(&self, id: i64) -> Result<SessionRecord> {
        let sql = format!("SELECT {COLUMNS} FROM agent_sessions WHERE id = ?1");
        self.call(|c| c.query_row(&sql, [id], session_from_row).optional())?
            .ok_or_else(|| Error::NotFound {
                what: format!("session {id}"),
            })
    }

    /// A project's sessions, newest first; with `task_id`, that task's only.
    pub fn list_sessions(
        &self,
        project_id: i64,
        task_id: Option<&str>,
        limit: u32,
    ) -> Result<Vec<SessionRecord>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM agent_sessions WHERE project_id = ?1 AND (?2 IS NULL OR task_id = ?2)
             ORDER BY id DESC LIMIT ?3"
        );
        self.call(|c| {
            let mut stmt = c.prepare_cached(&sql)?;
            let rows = stmt
                .query_map(params![project_id, task_id, limit], session_from_row)?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    /// Every project's sessions, newest first: the Sessions page's history.
    pub fn session_history(&self, limit: u32) -> Result<Vec<PastSession>> {
        let sql = format!(
            "SELECT {COLUMNS},
                    (SELECT p.name FROM projects p WHERE p.id = agent_sessions.project_id),
                    (SELECT COALESCE(SUM(COALESCE(s.prompt_tokens, 0) + COALESCE(s.completion_tokens, 0)), 0)
                       FROM session_steps s WHERE s.session_id = agent_sessions.id)
             FROM agent_sessions ORDER BY id DESC LIMIT ?1"
        );
        // The two columns after the session's own.
        let after = COLUMNS.split(',').count();
        self.call(|c| {
            let mut stmt = c.prepare_cached(&sql)?;
            let rows = stmt
                .query_map([limit], |r| {
                    let tokens: i64 = r.get(after + 1)?;
                    Ok(PastSession {
                        session: session_from_row(r)?,
                        project_name: r.get::<_, Option<String>>(after)?.unwrap_or_default(),
                        tokens: u64::try_from(tokens).unwrap_or(0),
                        cost_usd: None,
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    /// The tokens each model used in the sessions from `first_id` on: (session, model, usage).
    pub fn session_model_usage(
        &self,
        first_id: i64,
    ) -> Result<Vec<(i64, String, crate::llm::Usage)>> {
        self.call(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT session_id, model, SUM(COALESCE(prompt_tokens, 0)),
                        SUM(COALESCE(completion_tokens, 0)), SUM(COALESCE(cached_tokens, 0))
                 FROM session_steps
                 WHERE session_id >= ?1 AND model IS NOT NULL AND prompt_tokens IS NOT NULL
                 GROUP BY session_id, model",
            )?;
            let rows = stmt
                .query_map([first_id], |r| {
                    let count =
                        |i: usize| r.get::<_, i64>(i).map(|n| u64::try_from(n).unwrap_or(0));
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        crate::llm::Usage {
                            prompt_tokens: count(2)?,
                            completion_tokens: count(3)?,
                            cached_tokens: count(4)?,
                        },
                    ))
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    /// Sessions still marked running (all projects).
    pub fn running_sessions(&self) -> Result<Vec<SessionRecord>> {
        let sql =
            format!("SELECT {COLUMNS} FROM agent_sessions WHERE status = 'running' ORDER BY id");
        self.call(|c| {
            let mut stmt = c.prepare_cached(&sql)?;
            let rows = stmt
                .query_map([], session_from_row)?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    /// The agents' own session ids of every session Healer started.
    pub fn agent_session_ids(&self) -> Result<Vec<String>> {
        self.call(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT DISTINCT agent_session_id FROM agent_sessions WHERE agent_session_id IS NOT NULL",
            )?;
            let rows = stmt
                .query_map([], |r| r.get(0))?
                .collect::<rusqlite::Result<Vec<String>>>()?;
            Ok(rows)
        })
    }

    pub fn set_session_base(&self, id: i64, base_commit: &str) -> Result<()> {
        self.call(|c| {
            c.execute(
                "UPDATE agent_sessions SET base_commit = ?2 WHERE id = ?1",
                params![id, base_commit],
            )
        })?;
        Ok(())
    }

    /// The Temporal id of the session's workflow on the cluster (kept before it starts).
    pub fn set_session_cluster_id(&self, id: i64, cluster_id: &str) -> Result<()> {
        self.call(|c| {
            c.execute(
                "UPDATE agent_sessions SET cluster_id = ?2 WHERE id = ?1",
                params![id, cluster_id],
            )
        })?;
        Ok(())
    }

    /// The Temporal id of the session's workflow, when it ran on the cluster.
    pub fn session_cluster_id(&self, id: i64) -> Result<Option<String>> {
        self.call(|c| {
            c.query_row(
                "SELECT cluster_id FROM agent_sessions WHERE id = ?1",
                [id],
                |r| r.get(0),
            )
        })
    }

    pub fn set_session_process(&self, id: i64, pgid: Option<i32>) -> Result<()> {
        self.call(|c| {
            c.execute(
                "UPDATE agent_sessions SET pgid = ?2 WHERE id = ?1",
                params![id, pgid],
            )
        })?;
        Ok(())
    }

    /// The version the agent's program said it was, read as the session starts.
    pub fn set_agent_version(&self, id: i64, version: &str) -> Result<()> {
        self.call(|c| {
            c.execute(
                "UPDATE agent_sessions SET agent_version = ?2 WHERE id = ?1",
                params![id, version],
            )
        })?;
        Ok(())
    }

    /// One more line of the agent's stream Healer did not understand; the count so far.
    pub fn count_raw_line(&self, id: i64) -> Result<u32> {
        self.call(|c| {
            c.query_row(
                "UPDATE agent_sessions SET raw_lines = raw_lines + 1 WHERE id = ?1 RETURNING raw_lines",
                [id],
                |r| r.get(0),
            )
        })
    }

    pub fn set_agent_session(
        &self,
        id: i64,
        agent_session_id: &str,
        transcript: Option<&str>,
    ) -> Result<()> {
        self.call(|c| {
            c.execute(
                "UPDATE agent_sessions SET agent_session_id = ?2, transcript = coalesce(?3, transcript) WHERE id = ?1",
                params![id, agent_session_id, transcript],
            )
        })?;
        Ok(())
    }

    /// End a running session; a session already ended keeps its first ending.
    pub fn finish_session(
        &self,
        id: i64,
        status: SessionStatus,
        outcome: &SessionOutcome,
    ) -> Result<bool> {
        let changed = self.call(|c| {
            c.execute(
                "UPDATE agent_sessions SET status = ?2, exit_code = ?3, summary = ?4, commit_id = ?5,
                        merged = ?6, pgid = NULL, ended_at = ?7
                 WHERE id = ?1 AND status = 'running'",
                params![
                    id,
                    status_str(status),
                    outcome.exit_code,
                    outcome.summary,
                    outcome.commit_id,
                    outcome.merged,
                    now()
                ],
            )
        })?;
        Ok(changed > 0)
    }

    /// The session's work was accepted into the main branch later (from the task's review).
    pub fn set_session_merged(&self, id: i64) -> Result<()> {
        self.call(|c| {
            c.execute(
                "UPDATE agent_sessions SET merged = 1 WHERE id = ?1",
                params![id],
            )
        })?;
        Ok(())
    }

    /// Append a step; returns its number in the session.
    pub fn append_step(&self, session_id: i64, step: &SessionStep) -> Result<u32> {
        let usage = step.usage.unwrap_or_default();
        let has_usage = step.usage.is_some();
        self.call(|c| {
            let tx = c.transaction()?;
            let seq: i64 = tx.query_row(
                "SELECT coalesce(max(seq), 0) + 1 FROM session_steps WHERE session_id = ?1",
                [session_id],
                |r| r.get(0),
            )?;
            tx.execute(
                "INSERT INTO session_steps (session_id, seq, at, source, kind, text, tool, arguments, call_id,
                        is_error, model, prompt_tokens, completion_tokens, cached_tokens)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
                params![
                    session_id,
                    seq,
                    step.at,
                    source_str(step.source),
                    kind_str(step.kind),
                    step.text,
                    step.tool,
                    step.arguments,
                    step.call_id,
                    step.is_error,
                    step.model,
                    has_usage.then(|| sql_int(usage.prompt_tokens)),
                    has_usage.then(|| sql_int(usage.completion_tokens)),
                    has_usage.then(|| sql_int(usage.cached_tokens)),
                ],
            )?;
            tx.commit()?;
            Ok(u32::try_from(seq).unwrap_or(u32::MAX))
        })
    }

    /// The session's steps after `after` (0: all), in order.
    pub fn session_steps(&self, session_id: i64, after: u32) -> Result<Vec<StoredStep>> {
        self.call(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT session_id, seq, at, source, kind, text, tool, arguments, call_id, is_error, model,
                        prompt_tokens, completion_tokens, cached_tokens
                 FROM session_steps WHERE session_id = ?1 AND seq > ?2 ORDER BY seq",
            )?;
            let rows = stmt
                .query_map(params![session_id, after], step_from_row)?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }
}

fn source_str(source: StepSource) -> &'static str {
    match source {
        StepSource::System => "system",
        StepSource::User => "user",
        StepSource::Agent => "agent",
    }
}

fn kind_str(kind: StepKind) -> &'static str {
    match kind {
        StepKind::Text => "text",
        StepKind::ToolCall => "tool_call",
        StepKind::ToolResult => "tool_result",
    }
}

fn step_from_row(r: &Row<'_>) -> rusqlite::Result<StoredStep> {
    let source: String = r.get(3)?;
    let kind: String = r.get(4)?;
    let tokens: [Option<i64>; 3] = [r.get(11)?, r.get(12)?, r.get(13)?];
    let count = |n: Option<i64>| u64::try_from(n.unwrap_or(0)).unwrap_or(0);
    Ok(StoredStep {
        session_id: r.get(0)?,
        seq: r.get(1)?,
        step: SessionStep {
            at: r.get(2)?,
            source: match source.as_str() {
                "system" => StepSource::System,
                "user" => StepSource::User,
                "agent" => StepSource::Agent,
                _ => return Err(unknown_value(3, &source)),
            },
            kind: match kind.as_str() {
                "text" => StepKind::Text,
                "tool_call" => StepKind::ToolCall,
                "tool_result" => StepKind::ToolResult,
                _ => return Err(unknown_value(4, &kind)),
            },
            text: r.get(5)?,
            tool: r.get(6)?,
            arguments: r.get(7)?,
            call_id: r.get(8)?,
            is_error: r.get(9)?,
            model: r.get(10)?,
            usage: tokens.iter().any(Option::is_some).then(|| StepUsage {
                prompt_tokens: count(tokens[0]),
                completion_tokens: count(tokens[1]),
                cached_tokens: count(tokens[2]),
            }),
        },
    })
}

fn session_from_row(r: &Row<'_>) -> rusqlite::Result<SessionRecord> {
    let agent: String = r.get(4)?;
    let status: String = r.get(5)?;
    Ok(SessionRecord {
        id: r.get(0)?,
        project_id: r.get(1)?,
        task_id: r.get(2)?,
        task_title: r.get(3)?,
        agent: AgentKind::parse(&agent).ok_or_else(|| unknown_value(4, &agent))?,
        status: parse_status(&status).ok_or_else(|| unknown_value(5, &status))?,
        worktree: r.get(6)?,
        branch: r.get(7)?,
        base_commit: r.get(8)?,
        pgid: r.get(9)?,
        agent_session_id: r.get(10)?,
        transcript: r.get(11)?,
        exit_code: r.get(12)?,
        summary: r.get(13)?,
        commit_id: r.get(14)?,
        merged: r.get(15)?,
        started_at: r.get(16)?,
        ended_at: r.get(17)?,
        resumed_from: r.get(18)?,
        agent_version: r.get(19)?,
        raw_lines: r.get(20)?,
    })
}
