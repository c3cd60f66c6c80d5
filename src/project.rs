//! Projects: a person's git repositories with a task list (`.healer/tasks.jsonl`), on which
//! Healer runs coding agents — each task in its own git worktree, verified by the project's
//! own commands, committed when green, handed to the failure pipeline when not.
//!
//! Adding one: the folder is inspected (a repository? bare? detached? uncommitted changes?),
//! what can be detected is proposed (verification commands, an init script, the agents on
//! this machine), and the person confirms it in a form checked field by field here.

mod board;
mod command;
mod detect;
mod prompt;
mod recover;
mod repo;
mod run;
mod runner;
mod settle;
mod validate;
mod watch;
mod worktree;

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::agent::{agent_name, agent_program, not_available, AgentRegistry};
use crate::session::AgentKind;
use crate::store::ProjectSettings;

pub use board::{
    detail, session_detail, summary, task_detail, BoardTask, Columns, ProjectDetail,
    ProjectSummary, SessionDetail, TaskDetail,
};
pub use command::{run_project_command, CommandResult};
pub use detect::{Detection, InstalledAgent};
pub use prompt::{append_progress, read_progress, task_prompt};
pub use recover::end_marked_processes;
pub(crate) use recover::settle_interrupted;
pub use repo::{canonical, init_with_first_commit, inspect, FolderState, RepoCheck};
pub use run::SESSION_MARKER_VAR;
pub use runner::Projects;
pub use validate::validate;
pub use worktree::{branch_name, remove as remove_worktree, AGENT_EMAIL, AGENT_NAME};

pub use crate::store::{
    MergePolicy, Project, SessionRecord, StoredStep, VerifyCommand, DEFAULT_AGENT_TIME_LIMIT_SECS,
    DEFAULT_COMMAND_TIME_LIMIT_SECS, DEFAULT_MAX_PARALLEL, DEFAULT_MAX_STEPS, DEFAULT_TOKEN_BUDGET,
};
pub use crate::tasklist::{Problem, Task, TaskEdit, TaskStatus};

/// What the add-project form sends (and `healer project add`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct ProjectInput {
    /// The repository's folder.
    pub path: String,
    pub name: String,
    pub settings: ProjectSettings,
}

/// `healer project add`: a folder, and what the person named on the command line instead of
/// what is detected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AddProject {
    pub path: String,
    pub name: Option<String>,
    pub agent: Option<AgentKind>,
    /// Replaces the detected verification commands when given.
    pub verify: Option<Vec<crate::store::VerifyCommand>>,
    pub init_script: Option<String>,
    pub merge: Option<crate::store::MergePolicy>,
    /// Make the folder a repository (git init and a first commit) when it is not one.
    pub git_init: bool,
}

/// A folder, looked at for the add-project form: what it is, and what Healer proposes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct FolderCheck {
    pub repo: RepoCheck,
    /// Detected when the folder is a repository.
    pub detection: Option<Detection>,
    /// The form, filled in with what was detected.
    pub proposal: Option<ProjectInput>,
    /// The name of the project that already has this folder.
    pub already_added: Option<String>,
}

/// Look at `path` and propose a project for it.
pub async fn check_folder(
    path: &Path,
    agents: &AgentRegistry,
    existing: Option<String>,
) -> FolderCheck {
    let path = canonical(path);
    let repo = inspect(&path);
    if repo.state != FolderState::Ready {
        return FolderCheck {
            repo,
            detection: None,
            proposal: None,
            already_added: existing,
        };
    }
    let (found, verify) = detect::verification_commands(&path);
    let init_script = detect::init_script(&path);
    let installed = installed_agents(agents).await;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "project".to_string());
    let settings = ProjectSettings {
        main_branch: repo
            .main_branch
            .clone()
            .unwrap_or_else(|| "main".to_string()),
        verify: verify.clone(),
        init_script: init_script.clone(),
        ..ProjectSettings::default()
    };
    FolderCheck {
        proposal: Some(ProjectInput {
            path: repo.path.clone(),
            name,
            settings,
        }),
        detection: Some(Detection {
            found,
            verify,
            init_script,
            agents: installed,
        }),
        repo,
        already_added: existing,
    }
}

/// Every agent kind, with whether this machine has it and this build can run it.
pub async fn installed_agents(agents: &AgentRegistry) -> Vec<InstalledAgent> {
    let mut out = Vec::new();
    for kind in [AgentKind::Builtin, AgentKind::ClaudeCode, AgentKind::Codex] {
        let name = agent_name(kind).to_string();
        let in_build = agents.has(kind);
        let Some(program) = agent_program(kind) else {
            out.push(InstalledAgent {
                kind,
                name,
                program: None,
                version: None,
                usable: in_build,
                message: "Works with the model tiers set in Settings.".to_string(),
            });
            continue;
        };
        let (path, version) = detect::program_version(program).await;
        let message = match (&path, in_build) {
            (None, _) => format!("{program} is not installed on this machine (not on PATH)."),
            (Some(_), false) => format!(
                "Installed{}, but {}.",
                version
                    .as_ref()
                    .map(|v| format!(" ({v})"))
                    .unwrap_or_default(),
                not_available(kind)
            ),
            (Some(_), true) => format!(
                "Installed{}.",
                version
                    .as_ref()
                    .map(|v| format!(" ({v})"))
                    .unwrap_or_default()
            ),
        };
        out.push(InstalledAgent {
            kind,
            name,
            usable: in_build && path.is_some(),
            program: path,
            version,
            message,
        });
    }
    out
}
