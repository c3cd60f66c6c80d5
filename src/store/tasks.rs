//! Tasks and their threads (messages).

use rusqlite::{params, OptionalExtension, Row};

use super::notifications::unknown_value;
use super::usage::{get_u64, sql_int};
use super::{now, Store};
use crate::error::{Error, Result};
use crate::llm::{
    MessageRole, NewMessage, Task, TaskKind, TaskStatus, TaskThread, ThreadMessage, ToolCall, Usage,
};

const TASK_COLUMNS: &str = "id, kind, title, workflow_id, status, summary, created_at, finished_at";

impl Store {
    /// The newest planner (chat) task of a workflow.
    pub fn planner_task(&self, workflow_id: i64) -> Result<Option<i64>> {
        self.call(|c| {
            c.query_row(
                "SELECT max(id) FROM tasks WHERE kind = 'planner' AND workflow_id = ?1",
                [workflow_id],
                |r| r.get(0),
            )
        })
    }

    /// Mark a chat task running again for a new turn.
    pub fn reopen_task(&self, task_id: i64) -> Result<()> {
        self.call(|c| {
            c.execute(
                "UPDATE tasks SET status = 'running', finished_at = NULL WHERE id = ?1",
                [task_id],
            )
        })?;
        Ok(())
    }

    pub fn insert_task(
        &self,
        kind: TaskKind,
        title: &str,
        workflow_id: Option<i64>,
    ) -> Result<Task> {
        let at = now();
        let id = self.call(|c| {
            c.execute(
                "INSERT INTO tasks (kind, title, workflow_id, status, created_at)
                 VALUES (?1, ?2, ?3, 'running', ?4)",
                params![kind.as_str(), title, workflow_id, at],
            )?;
            Ok(c.last_insert_rowid())
        })?;
        self.task(id)
    }

    pub fn task(&self, id: i64) -> Result<Task> {
        let sql = format!("SELECT {TASK_COLUMNS} FROM tasks WHERE id = ?1");
        self.call(|c| c.query_row(&sql, [id], task_from_row).optional())?
            .ok_or_else(|| Error::NotFound {
                what: format!("task {id}"),
            })
    }

    /// The newest tasks first.
    pub fn list_tasks(&self, limit: u32) -> Result<Vec<Task>> {
        let sql = format!("SELECT {TASK_COLUMNS} FROM tasks ORDER BY id DESC LIMIT ?1");
        self.call(|c| {
            let mut stmt = c.prepare_cached(&sql)?;
            let rows = stmt
                .query_map([limit], task_from_row)?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    pub fn finish_task(&self, id: i64, status: TaskStatus, summary: &str) -> Result<()> {
        let at = now();
        self.call(|c| {
            c.execute(
                "UPDATE tasks SET status = ?2, summary = ?3, finished_at = ?4 WHERE id = ?1",
                params![id, status.as_str(), summary, at],
            )
        })?;
        Ok(())
    }

    /// Tasks a crash left running: mark them interrupted. Returns how many. A task whose inbox
    /// item is still pending has not started: it stays, and runs when its turn comes.
    pub fn interrupt_running_tasks(&self) -> Result<usize> {
        let at = now();
        self.call(|c| {
            c.execute(
                "UPDATE tasks SET status = 'interrupted',
                    summary = 'Interrupted: the engine stopped before this task finished',
                    finished_at = ?1
                 WHERE status = 'running'
                   AND id NOT IN (SELECT task_id FROM inbox WHERE status = 'pending')",
                [at],
            )
        })
    }

    pub fn add_message(&self, task_id: i64, message: &NewMessage) -> Result<ThreadMessage> {
        // A known secret in a thread is not kept, whoever said it.
        let mut redacted = message.clone();
        redacted.content = crate::secrets::redact_owned(redacted.content);
        for call in &mut redacted.tool_calls {
            call.arguments = crate::secrets::redact_owned(std::mem::take(&mut call.arguments));
        }
        let message = &redacted;
        let at = now();
        let tool_calls = if message.tool_calls.is_empty() {
            None
        } else {
            Some(
                serde_json::to_string(&message.tool_calls)
                    .map_err(|e| Error::Internal(format!("tool calls do not serialise: {e}")))?,
            )
        };
        let usage = message.usage;
        let id = self.call(|c| {
            c.execute(
                "INSERT INTO messages (task_id, at, role, content, tool_calls, tool_call_id,
                     tool_name, is_error, provider, model, prompt_tokens, completion_tokens,
                     cached_tokens, nudge)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
                params![
                    task_id,
                    at,
                    // The table's role CHECK predates nudges: one is a 'user' row, flagged.
                    match message.role {
                        MessageRole::Nudge => MessageRole::User.as_str(),
                        role => role.as_str(),
                    },
                    message.content,
                    tool_calls,
                    message.tool_call_id,
                    message.tool_name,
                    message.is_error,
                    message.provider,
                    message.model,
                    usage.map(|u| sql_int(u.prompt_tokens)),
                    usage.map(|u| sql_int(u.completion_tokens)),
                    usage.map(|u| sql_int(u.cached_tokens)),
                    message.role == MessageRole::Nudge,
                ],
            )?;
            Ok(c.last_insert_rowid())
        })?;
        Ok(ThreadMessage {
            id,
            task_id,
            at,
            role: message.role,
            content: message.content.clone(),
            tool_calls: message.tool_calls.clone(),
            tool_call_id: message.tool_call_id.clone(),
            tool_name: message.tool_name.clone(),
            is_error: message.is_error,
            provider: message.provider.clone(),
            model: message.model.clone(),
            usage,
        })
    }

    pub fn thread(&self, task_id: i64) -> Result<TaskThread> {
        let task = self.task(task_id)?;
        let messages = self.call(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT id, task_id, at, role, content, tool_calls, tool_call_id, tool_name,
                        is_error, provider, model, prompt_tokens, completion_tokens, cached_tokens,
                        nudge
                 FROM messages WHERE task_id = ?1 ORDER BY id",
            )?;
            let rows = stmt
                .query_map([task_id], message_from_row)?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })?;
        Ok(TaskThread { task, messages })
    }
}

fn task_from_row(r: &Row<'_>) -> rusqlite::Result<Task> {
    let kind: String = r.get(1)?;
    let status: String = r.get(4)?;
    Ok(Task {
        id: r.get(0)?,
        kind: TaskKind::parse(&kind).ok_or_else(|| unknown_value(1, &kind))?,
        title: r.get(2)?,
        workflow_id: r.get(3)?,
        status: TaskStatus::parse(&status).ok_or_else(|| unknown_value(4, &status))?,
        summary: r.get(5)?,
        created_at: r.get(6)?,
        finished_at: r.get(7)?,
    })
}

fn message_from_row(r: &Row<'_>) -> rusqlite::Result<ThreadMessage> {
    let role: String = r.get(3)?;
    let calls: Option<String> = r.get(5)?;
    let tool_calls: Vec<ToolCall> = match calls {
        Some(text) => serde_json::from_str(&text).map_err(|_| unknown_value(5, &text))?,
        None => Vec::new(),
    };
    let prompt: Option<i64> = r.get(11)?;
    let usage = match prompt {
        Some(_) => Some(Usage {
            prompt_tokens: get_u64(r, 11)?,
            completion_tokens: get_u64(r, 12)?,
            cached_tokens: get_u64(r, 13)?,
        }),
        None => None,
    };
    Ok(ThreadMessage {
        id: r.get(0)?,
        task_id: r.get(1)?,
        at: r.get(2)?,
        role: match MessageRole::parse(&role).ok_or_else(|| unknown_value(3, &role))? {
            MessageRole::User if r.get::<_, bool>(14)? => MessageRole::Nudge,
            role => role,
        },
        content: r.get(4)?,
        tool_calls,
        tool_call_id: r.get(6)?,
        tool_name: r.get(7)?,
        is_error: r.get(8)?,
        provider: r.get(9)?,
        model: r.get(10)?,
        usage,
    })
}
