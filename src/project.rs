//! Projects: a person's git repositories with a task list (`.healer/tasks.jsonl`), on which
//! Healer runs coding agents — each task in its own git worktree, verified by the project's
//! own commands, committed when green, handed to the failure pipeline when not.
//!
//! Adding one: the folder is inspected (a repository? bare? detached? uncommitted changes?),
//! what can be detected is proposed (verification commands, an init script, the agents on
//! this machine), and the person confirms it in a form checked field by field here.

mod agent_setup;
mod board;
mod channel;
mod command;
mod commit;
mod detect;
pub mod finish;
mod folder;
mod followed;
mod hooks;
mod looped;
mod model_pass;
mod on_cluster;
pub mod on_worker;
pub mod own_copy;
mod prompt;
pub mod push;
mod quiet_git;
mod reconcile;
mod recover;
mod replaced;
mod repo;
pub mod review;
mod run;
mod runner;
mod settle;
pub mod snapshot;
mod steered;
mod validate;
mod validate_agent;
mod watch;
mod worktree;

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::agent::installed::not_installed;
use crate::agent::{agent_name, not_available, AgentRegistry};
use crate::session::AgentKind;
use crate::store::ProjectSettings;

pub use agent_setup::{agent_home, marks, wire_mismatch, INSTANCE_VAR};
pub use board::{
    detail, session_detail, summary, task_detail, task_words, BoardTask, Columns, ProjectDetail,
    ProjectSummary, SessionDetail, TaskDetail, Unaccepted, HELD_WORDS,
};
pub use command::{run_project_command, CommandPlace, CommandResult};
pub use detect::{Detection, InstalledAgent};
pub use folder::{open_folder, trust_repository};
pub use hooks::{cli_program, CLI_VAR as HOOK_CLI_VAR};
pub use on_cluster::cluster_problem;
pub(crate) use on_cluster::rewind_pushed;
pub use prompt::{append_progress, read_progress, task_prompt};
pub(crate) use quiet_git::short as short_commit;
pub use recover::end_marked_processes;
pub(crate) use recover::settle_interrupted;
pub use repo::{canonical, git_error, init_with_first_commit, inspect, FolderState, RepoCheck};
pub use run::SESSION_MARKER_VAR;
pub use runner::{Projects, SessionStop};
pub use steered::STUCK_CHECK_SECS;
pub use validate::validate;
pub use worktree::{
    branch_name, changes_since, remove as remove_worktree, FileChange, Merge as WorktreeMerge,
    AGENT_EMAIL, AGENT_NAME,
};

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
    /// A model provider set up in Healer for an external agent (none: its own login).
    #[serde(default)]
    pub provider: Option<String>,
    /// The model an external agent is to use (none: its default).
    #[serde(default)]
    pub model: Option<String>,
    /// Where an external agent's program is, when not on PATH.
    #[serde(default)]
    pub program: Option<String>,
    /// Make the folder a repository (git init and a first commit) when it is not one.
    pub git_init: bool,
    /// With no check found or given, the person says an agent's work may be committed
    /// without one (`--no-checks`).
    #[serde(default)]
    pub no_checks: bool,
    /// What the agent may do without asking (none: ask before anything risky).
    #[serde(default)]
    pub ask: Option<crate::approval::Preset>,
    /// Commands the agent may run without asking (`--allow`).
    #[serde(default)]
    pub allow: Vec<String>,
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
    existing: Option<&Project>,
) -> FolderCheck {
    let program = existing.and_then(|p| {
        p.settings
            .agent_program
            .as_deref()
            .filter(|s| !s.trim().is_empty())
            .map(|s| (p.settings.agent, Path::new(s)))
    });
    let existing = existing.map(|p| p.name.clone());
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
    let installed = installed_agents(agents, program).await;
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

/// Every agent kind, with whether this machine has it (and its version) and this build can
/// run it. `program`: where the project says an agent's program is, when it says so.
pub async fn installed_agents(
    agents: &AgentRegistry,
    program: Option<(AgentKind, &Path)>,
) -> Vec<InstalledAgent> {
    let mut out = Vec::new();
    for kind in AgentKind::ALL {
        let name = agent_name(kind).to_string();
        let in_build = agents.has(kind);
        let explicit = program
            .filter(|(k, _)| *k == kind)
            .map(|(_, p)| p.to_path_buf());
        let found = match kind {
            AgentKind::Builtin => {
                out.push(InstalledAgent {
                    kind,
                    name,
                    program: None,
                    version: None,
                    usable: in_build,
                    message: "Works with the model tiers set in Settings.".to_string(),
                });
                continue;
            }
            _ => match crate::agent::cli(kind, explicit) {
                Some(agent) => agent.installed().await,
                None => None,
            },
        };
        let version = found.as_ref().map(|f| detect::version_number(&f.version));
        let message = match (&found, in_build) {
            (None, _) => not_installed(kind),
            (Some(_), false) => format!(
                "Installed (version {}), but {}.",
                version.clone().unwrap_or_default(),
                not_available(kind)
            ),
            (Some(_), true) => format!(
                "Installed, version {}.",
                version.clone().unwrap_or_default()
            ),
        };
        out.push(InstalledAgent {
            kind,
            name,
            usable: in_build && found.is_some(),
            program: found.map(|f| f.program.display().to_string()),
            version,
            message,
        });
    }
    out
}
