//! A project's task list: `.healer/tasks.jsonl` in the repository, one JSON object a line, and
//! `progress.md` beside it. People and agents edit the file by hand, so reading it never fails
//! on a bad line: every line is kept (a line that is not a task is written back as it was), and
//! what is wrong is reported with its line number — invalid JSON, a missing id or title, an
//! unknown status, a duplicate id, a dependency on a task that is not there, a cycle.
//!
//! The shapes and rules live here, below the store; the runner and the board act on them.

mod check;
mod edit;
mod read;
mod ready;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use edit::{modify, modify_settled, TaskEdit, SETTLE};
pub use read::{read_file, Line, TaskFile};
pub use ready::{not_ready_reason, ready, ready_order, TaskIndex};

/// Where the task list lives, relative to the repository's root.
pub const TASKS_FILE: &str = ".healer/tasks.jsonl";
/// The running log the agents and Healer append to, beside the task list.
pub const PROGRESS_FILE: &str = ".healer/progress.md";
/// The folder both live in.
pub const HEALER_DIR: &str = ".healer";

/// The priority a task gets when it names none. Lower numbers go first (0 is the most urgent),
/// as in the trackers people already keep in JSONL.
pub const DEFAULT_PRIORITY: i64 = 2;

// The type names say "project task": model threads have a `Task` of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename = "ProjectTaskStatus", rename_all = "snake_case")]
pub enum TaskStatus {
    Open,
    InProgress,
    Blocked,
    Closed,
}

impl TaskStatus {
    pub const ALL: [TaskStatus; 4] = [
        TaskStatus::Open,
        TaskStatus::InProgress,
        TaskStatus::Blocked,
        TaskStatus::Closed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Open => "open",
            TaskStatus::InProgress => "in_progress",
            TaskStatus::Blocked => "blocked",
            TaskStatus::Closed => "closed",
        }
    }

    pub fn parse(s: &str) -> Option<TaskStatus> {
        TaskStatus::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

/// A dependency: a plain id (this task needs that one closed), or a link with a type —
/// `blocks` (the same as a plain id) or another kind such as `discovered-from`, which is kept
/// and shown but does not hold the task back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename = "TaskDep", untagged)]
pub enum Dep {
    Id(String),
    Link {
        id: String,
        #[serde(rename = "type", default = "blocks")]
        kind: String,
    },
}

fn blocks() -> String {
    "blocks".to_string()
}

impl Dep {
    pub fn id(&self) -> &str {
        match self {
            Dep::Id(id) | Dep::Link { id, .. } => id,
        }
    }

    /// Whether the task waits for this one to be closed.
    pub fn blocks(&self) -> bool {
        match self {
            Dep::Id(_) => true,
            Dep::Link { kind, .. } => kind == "blocks",
        }
    }
}

fn default_priority() -> i64 {
    DEFAULT_PRIORITY
}

/// One task, as a line of the file. Fields Healer does not know are kept (`extra`) and
/// written back, so a person's or another tool's fields survive Healer's writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(rename = "ProjectTask")]
pub struct Task {
    pub id: String,
    pub title: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// What must be true when it is done.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub acceptance: Vec<String>,
    pub status: TaskStatus,
    #[serde(default = "default_priority")]
    pub priority: i64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deps: Vec<Dep>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
    #[serde(default)]
    pub created_at: String,
    #[serde(default)]
    pub updated_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed_reason: Option<String>,
    /// While in progress: which agent works on it, where, on which branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assignee: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The commit that closed it, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Healer's last word on it ("stopped by you; the worktree is kept"), for the board.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// What Healer (steering, the healer service) or a person said about the task, oldest
    /// first: a steering message sent to its agent, why its agent was replaced.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub comments: Vec<TaskComment>,
    #[serde(flatten)]
    #[specta(skip)]
    pub extra: Map<String, Value>,
}

impl Task {
    /// A new open task, stamped now.
    pub fn new(id: &str, title: &str, now: &str) -> Task {
        Task {
            id: id.to_string(),
            title: title.to_string(),
            description: String::new(),
            acceptance: vec![],
            status: TaskStatus::Open,
            priority: DEFAULT_PRIORITY,
            deps: vec![],
            labels: vec![],
            created_at: now.to_string(),
            updated_at: now.to_string(),
            closed_reason: None,
            assignee: None,
            worktree: None,
            branch: None,
            commit: None,
            note: None,
            comments: vec![],
            extra: Map::new(),
        }
    }

    /// The ids this task waits for.
    pub fn blocking_deps(&self) -> impl Iterator<Item = &str> {
        self.deps.iter().filter(|d| d.blocks()).map(Dep::id)
    }
}

/// A comment on a task, kept in its line of the task list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename = "TaskComment")]
pub struct TaskComment {
    pub at: String,
    /// "healer" for Healer's own, else who wrote it.
    pub author: String,
    pub text: String,
}

/// The most comments a task keeps: the oldest go first, so a long steering session cannot
/// grow one line of the file without bound.
pub const MAX_COMMENTS: usize = 50;

impl Task {
    /// Add a comment (the oldest are dropped past [`MAX_COMMENTS`]).
    pub fn comment(&mut self, at: &str, author: &str, text: &str) {
        self.comments.push(TaskComment {
            at: at.to_string(),
            author: author.to_string(),
            text: text.to_string(),
        });
        if self.comments.len() > MAX_COMMENTS {
            let extra = self.comments.len() - MAX_COMMENTS;
            self.comments.drain(..extra);
        }
    }
}

/// What kind of trouble a line has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename = "TaskListProblemKind", rename_all = "snake_case")]
pub enum ProblemKind {
    InvalidJson,
    NotATask,
    BadId,
    UnknownStatus,
    DuplicateId,
    UnknownDep,
    Cycle,
}

/// Something wrong in the file, said for a person: the line (1-based) when it is one line's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename = "TaskListProblem")]
pub struct Problem {
    pub line: Option<u32>,
    pub kind: ProblemKind,
    pub message: String,
}

/// Whether `id` can name a branch (`healer/<id>`) and a folder: letters, digits, `.`, `_`, `-`,
/// not starting with `.` or `-`, no `..`, not ending in `.lock`, at most 64 characters.
pub fn id_problem(id: &str) -> Option<String> {
    if id.is_empty() {
        return Some("the id is empty".to_string());
    }
    if id.len() > 64 {
        return Some(format!("the id {id:?} is longer than 64 characters"));
    }
    let ok_chars = id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if !ok_chars || id.starts_with(['.', '-']) || id.contains("..") || id.ends_with(".lock") {
        return Some(format!(
            "the id {id:?} cannot name a branch: use letters, digits, '.', '_' and '-' only"
        ));
    }
    None
}
