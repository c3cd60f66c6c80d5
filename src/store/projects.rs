//! Projects: a person's git repositories Healer runs agents on, with their settings. The
//! shapes are defined here, beside their table, and re-exported by `project`, which acts on
//! them.

use rusqlite::{params, OptionalExtension, Row};
use serde::{Deserialize, Serialize};

use super::notifications::unknown_value;
use super::{now, Store};
use crate::error::{Error, Result};
use crate::llm::Tier;
use crate::session::AgentKind;

/// A command that must pass before a task's change is committed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct VerifyCommand {
    /// A short name ("typecheck", "test").
    pub name: String,
    /// A command line, run with `bash -c` in the task's worktree.
    pub command: String,
}

/// What happens to a green task's branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum MergePolicy {
    /// Fast-forward the main branch to the task's commit (when the main branch has not moved).
    FastForward,
    /// Leave the branch `healer/<task>` for the person to review and merge.
    LeaveBranch,
}

/// How accepted work enters the main branch.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type,
)]
#[serde(rename_all = "snake_case")]
pub enum AcceptHow {
    /// The main branch moves to the task's last commit: its commits become the main branch's.
    #[default]
    FastForward,
    /// A merge commit on the main branch joins the task's branch (its commits kept beside).
    Merge,
    /// One commit on the main branch with all of the task's changes.
    Squash,
}

impl AcceptHow {
    pub fn parse(word: &str) -> crate::error::Result<AcceptHow> {
        match word.trim() {
            "ff" | "fast-forward" | "fast_forward" => Ok(AcceptHow::FastForward),
            "merge" => Ok(AcceptHow::Merge),
            "squash" => Ok(AcceptHow::Squash),
            other => Err(crate::error::Error::InvalidInput(format!(
                "{other:?} is not a way to accept work: say ff, merge or squash"
            ))),
        }
    }

    /// In a sentence: "its commits added as they are", "joined with a merge commit" …
    pub fn done_words(self) -> &'static str {
        match self {
            AcceptHow::FastForward => "its commits added as they are",
            AcceptHow::Merge => "joined with a merge commit",
            AcceptHow::Squash => "squashed into one commit",
        }
    }
}

/// How the main branch's new commits come into a task's branch before it is accepted.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type,
)]
#[serde(rename_all = "snake_case")]
pub enum BringMainIn {
    /// The task's commits are replayed on top of the main branch (a straight history).
    #[default]
    Rebase,
    /// The main branch is merged into the task's branch (its commits unchanged).
    Merge,
}

/// A project's choices for finishing work (Settings of the project).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type,
)]
#[serde(default)]
pub struct FinishSettings {
    pub accept: AcceptHow,
    pub bring_main_in: BringMainIn,
}

/// A project's settings: what the add-project form confirms, and every bound of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(default)]
pub struct ProjectSettings {
    /// The branch worktrees start from and green work merges into.
    pub main_branch: String,
    pub agent: AgentKind,
    pub verify: Vec<VerifyCommand>,
    /// A command run in each new worktree before the agent (installs, a build).
    pub init_script: Option<String>,
    pub merge: MergePolicy,
    /// Tasks of this project that may run at once, each in its own worktree.
    pub max_parallel: u32,
    /// An agent session is ended (its process group killed) after this.
    pub agent_time_limit_secs: u32,
    /// The init script and each verification command are ended after this.
    pub command_time_limit_secs: u32,
    /// The built-in agent: tokens one task may use, all its model calls together (at most
    /// the per-task cap of Settings → Budgets).
    pub token_budget: u64,
    /// The built-in agent: model calls one task may make.
    pub max_steps: u32,
    /// The built-in agent: which model tier it thinks with.
    pub tier: Tier,
    /// Claude Code: the tools it may use without asking (`--allowedTools`).
    pub allowed_tools: Vec<String>,
    /// A model name for an external agent; none: its own default.
    pub model: Option<String>,
    /// Where an external agent's model comes from: `None` is the agent's own login and
    /// settings; a provider's name is that provider as configured in Healer (its address and
    /// key go into the agent's process only).
    pub agent_provider: Option<String>,
    /// Where an external agent's program is, when it is not the one found on PATH.
    pub agent_program: Option<String>,
    /// With no verification command, the person said an agent's work may be committed
    /// unchecked. Without it a project needs a check: none is never skipped silently. (A
    /// project saved before this setting existed keeps committing as it did.)
    #[serde(default = "committed_unchecked_before")]
    pub commit_without_checks: bool,
    /// A task Healer reopened (the steering judge replaced its agent) starts again by itself,
    /// in a fresh worktree, when the project has room for it.
    pub start_reopened_tasks: bool,
    /// An external agent on a provider configured in Healer is stopped once its session has
    /// spent this much on the model (US cents; 0: no cap). Counted by the model gateway.
    pub session_cap_cents: u32,
    /// …or, for a model with no price in Healer, once it has used this many tokens (0: no cap).
    pub session_cap_tokens: u64,
    /// What the agent may do without asking, and how long a question waits for an answer.
    /// (A project saved before this setting existed gets the safe default: ask before
    /// anything risky.)
    #[serde(default)]
    pub approvals: crate::approval::ApprovalSettings,
    /// How a task's work is accepted into the main branch, and how the main branch is brought
    /// into it first when it moved. (A project saved before this setting existed gets
    /// fast-forward and rebase.)
    #[serde(default)]
    pub finishing: FinishSettings,
    /// Where its sessions run: this computer, or the workers of a Temporal cluster, which
    /// clone the repository from its remote and push the task's branch (issue 42). (A project
    /// saved before this setting existed runs here.)
    #[serde(default)]
    pub runs_on: RunsOn,
}

/// Projects saved before [`ProjectSettings::commit_without_checks`] committed an agent's work
/// without checks when they had none; they keep doing so.
fn committed_unchecked_before() -> bool {
    true
}

/// The tools Claude Code may use when a project names none: enough to read, find, edit and
/// run commands. (As root Claude Code refuses `--dangerously-skip-permissions`, so a session
/// with nobody to ask can use only the tools listed.)
pub const DEFAULT_ALLOWED_TOOLS: [&str; 6] = ["Bash", "Read", "Edit", "Write", "Glob", "Grep"];

/// Defaults of [`ProjectSettings`], named so the docs and tests can point at them.
pub const DEFAULT_MAX_PARALLEL: u32 = 1;
pub const DEFAULT_AGENT_TIME_LIMIT_SECS: u32 = 3600;
pub const DEFAULT_COMMAND_TIME_LIMIT_SECS: u32 = 900;
pub const DEFAULT_TOKEN_BUDGET: u64 = 50_000;
pub const DEFAULT_MAX_STEPS: u32 = 60;
/// An agent session's spending cap: $5 of a priced model, or 5 million tokens of one without a
/// price.
pub const DEFAULT_SESSION_CAP_CENTS: u32 = 500;
pub const DEFAULT_SESSION_CAP_TOKENS: u64 = 5_000_000;

/// Where a workflow runs, or a project's agent sessions (issue 26, issue 42).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RunsOn {
    /// This computer (the default).
    #[default]
    Local,
    /// The cluster, on this queue (empty: the connection's).
    Cluster { queue: String },
}

impl Default for ProjectSettings {
    fn default() -> Self {
        ProjectSettings {
            main_branch: "main".to_string(),
            agent: AgentKind::Builtin,
            verify: vec![],
            init_script: None,
            merge: MergePolicy::FastForward,
            max_parallel: DEFAULT_MAX_PARALLEL,
            agent_time_limit_secs: DEFAULT_AGENT_TIME_LIMIT_SECS,
            command_time_limit_secs: DEFAULT_COMMAND_TIME_LIMIT_SECS,
            token_budget: DEFAULT_TOKEN_BUDGET,
            max_steps: DEFAULT_MAX_STEPS,
            tier: Tier::Standard,
            allowed_tools: DEFAULT_ALLOWED_TOOLS.map(str::to_string).to_vec(),
            model: None,
            agent_provider: None,
            agent_program: None,
            commit_without_checks: false,
            start_reopened_tasks: true,
            session_cap_cents: DEFAULT_SESSION_CAP_CENTS,
            session_cap_tokens: DEFAULT_SESSION_CAP_TOKENS,
            approvals: crate::approval::ApprovalSettings::default(),
            finishing: FinishSettings::default(),
            runs_on: RunsOn::Local,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct Project {
    pub id: i64,
    pub name: String,
    /// The repository's folder (its working tree).
    pub path: String,
    pub settings: ProjectSettings,
    pub created_at: String,
    pub updated_at: String,
}

const COLUMNS: &str = "id, name, path, settings, created_at, updated_at";

impl Store {
    pub fn insert_project(
        &self,
        name: &str,
        path: &str,
        settings: &ProjectSettings,
    ) -> Result<Project> {
        let at = now();
        let json = settings_json(settings)?;
        let id = self.call(|c| {
            c.execute(
                "INSERT INTO projects (name, path, settings, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?4)",
                params![name, path, json, at],
            )?;
            Ok(c.last_insert_rowid())
        })?;
        self.project(id)
    }

    pub fn update_project(&self, id: i64, name: &str, settings: &ProjectSettings) -> Result<()> {
        let json = settings_json(settings)?;
        let changed = self.call(|c| {
            c.execute(
                "UPDATE projects SET name = ?2, settings = ?3, updated_at = ?4 WHERE id = ?1",
                params![id, name, json, now()],
            )
        })?;
        if changed == 0 {
            return Err(not_found(&id.to_string()));
        }
        Ok(())
    }

    pub fn project(&self, id: i64) -> Result<Project> {
        let sql = format!("SELECT {COLUMNS} FROM projects WHERE id = ?1");
        self.call(|c| c.query_row(&sql, [id], project_from_row).optional())?
            .ok_or_else(|| not_found(&id.to_string()))
    }

    /// A project by its name, or its id written as a number.
    pub fn project_by_name(&self, name: &str) -> Result<Project> {
        let sql = format!("SELECT {COLUMNS} FROM projects WHERE name = ?1");
        let found = self.call(|c| c.query_row(&sql, [name], project_from_row).optional())?;
        match (found, name.parse::<i64>()) {
            (Some(p), _) => Ok(p),
            (None, Ok(id)) => self.project(id),
            (None, Err(_)) => Err(not_found(name)),
        }
    }

    /// The project whose folder is `path`, if one is.
    pub fn project_at(&self, path: &str) -> Result<Option<Project>> {
        let sql = format!("SELECT {COLUMNS} FROM projects WHERE path = ?1");
        self.call(|c| c.query_row(&sql, [path], project_from_row).optional())
    }

    pub fn list_projects(&self) -> Result<Vec<Project>> {
        let sql = format!("SELECT {COLUMNS} FROM projects ORDER BY name COLLATE NOCASE");
        self.call(|c| {
            let mut stmt = c.prepare_cached(&sql)?;
            let rows = stmt
                .query_map([], project_from_row)?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    /// Forget a project and its sessions (the repository is not touched).
    pub fn delete_project(&self, id: i64) -> Result<()> {
        self.call(|c| c.execute("DELETE FROM projects WHERE id = ?1", [id]))?;
        Ok(())
    }
}

fn not_found(name: &str) -> Error {
    Error::NotFound {
        what: format!("project \"{name}\""),
    }
}

fn settings_json(settings: &ProjectSettings) -> Result<String> {
    serde_json::to_string(settings)
        .map_err(|e| Error::Internal(format!("project settings do not serialise: {e}")))
}

fn project_from_row(r: &Row<'_>) -> rusqlite::Result<Project> {
    let settings: String = r.get(3)?;
    Ok(Project {
        id: r.get(0)?,
        name: r.get(1)?,
        path: r.get(2)?,
        settings: serde_json::from_str(&settings).map_err(|_| unknown_value(3, &settings))?,
        created_at: r.get(4)?,
        updated_at: r.get(5)?,
    })
}
