//! What the runner tests with the real agent CLIs share: an engine whose data folder is in the
//! build's temp folder (not /tmp: Codex refuses to keep its sandbox helper in a home there),
//! the scripted model server configured as Healer providers (OpenAI-compatible and Anthropic),
//! and the greeter repository added as a project run by Claude Code or Codex on a provider.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use healer::engine::EngineOptions;
use healer::lease::Lease;
use healer::llm::{Keys, ProviderInput, ProviderKind};
use healer::project::{agent_home, Project, ProjectInput, TaskEdit};
use healer::session::AgentKind;
use healer::store::{MergePolicy, ProjectSettings};
use healer::{Engine, Paths};

use crate::agent_fixtures::{claude, codex, gemini, opencode};
use crate::maintainer::{configure_model, KEY, KEY_VAR};
use crate::model_server::ModelServer;
use crate::project_fixtures::{git_repo, python_check, GREETER};

/// The Anthropic provider Claude Code is given (the same scripted server).
pub const ANTHROPIC: &str = "scripted-anthropic";
/// The OpenAI-compatible provider Codex is given (`configure_model`'s).
pub const OPENAI: &str = "scripted";

pub struct AgentBed {
    pub tmp: tempfile::TempDir,
    pub paths: Paths,
    pub engine: Engine,
    pub server: ModelServer,
    pub repo_dir: PathBuf,
    pub project: Project,
}

impl AgentBed {
    /// The folder of the agent's own settings for the project.
    pub fn agent_home(&self) -> PathBuf {
        agent_home(
            self.paths.data_dir(),
            self.project.id,
            self.project.settings.agent,
        )
    }

    /// The worktree the project's first task gets.
    pub fn first_worktree(&self) -> PathBuf {
        self.paths
            .data_dir()
            .join("worktrees")
            .join(self.project.id.to_string())
            .join("slot-1")
    }

    pub fn task(&self, title: &str) -> healer::project::Task {
        self.engine
            .add_task(
                self.project.id,
                TaskEdit {
                    title: title.to_string(),
                    description: "greet() must say Hello, with a comma and an exclamation mark."
                        .to_string(),
                    ..TaskEdit::default()
                },
            )
            .expect("task")
    }

    /// Change the project's settings as stored, past the form's checks (a program removed
    /// after it was chosen, a limit below the form's minimum).
    pub fn set(&self, change: impl FnOnce(&mut ProjectSettings)) {
        let mut settings = self
            .engine
            .store()
            .project(self.project.id)
            .expect("p")
            .settings;
        change(&mut settings);
        self.engine
            .store()
            .update_project(self.project.id, &self.project.name, &settings)
            .expect("settings");
    }

    /// The database and its write-ahead log, as bytes.
    pub fn database_bytes(&self) -> Vec<u8> {
        let db = self.paths.db();
        let mut bytes = std::fs::read(&db).unwrap_or_default();
        let mut wal = db.clone().into_os_string();
        wal.push("-wal");
        bytes.extend(std::fs::read(PathBuf::from(wal)).unwrap_or_default());
        bytes
    }
}

/// The `healer` program the agents' hooks call, as the app has it beside itself: without it an
/// agent that must ask before risky commands is not started.
pub fn hooks_program() {
    std::env::set_var(healer::project::HOOK_CLI_VAR, env!("CARGO_BIN_EXE_healer"));
}

pub async fn engine_at(paths: &Paths) -> Engine {
    crate::pyenv_guard::guard();
    hooks_program();
    let lease = Lease::acquire(paths, "test").expect("lease");
    let options = EngineOptions {
        scheduler: false,
        keys: Some(Keys::env_only()),
        ..EngineOptions::default()
    };
    Engine::start_with_lease(paths.clone(), "test", lease, options)
        .await
        .expect("engine")
}

/// Both scripted providers on one engine.
pub fn configure_providers(engine: &Engine, server: &ModelServer) {
    configure_model(engine, server);
    engine
        .save_provider(ProviderInput {
            name: ANTHROPIC.to_string(),
            title: None,
            kind: ProviderKind::Anthropic,
            base_url: Some(server.url.clone()),
            key_env: Some(KEY_VAR.to_string()),
            prices: vec![],
        })
        .expect("anthropic provider");
}

/// The Gemini API provider Gemini CLI is given (the same scripted server).
pub const GEMINI: &str = "scripted-gemini-api";

/// The scripted server as a Gemini API provider (Gemini CLI's only wire format).
pub fn configure_gemini(engine: &Engine, server: &ModelServer) {
    engine
        .save_provider(ProviderInput {
            name: GEMINI.to_string(),
            title: None,
            kind: ProviderKind::Gemini,
            base_url: Some(server.url.clone()),
            key_env: Some(KEY_VAR.to_string()),
            prices: vec![],
        })
        .expect("gemini provider");
}

/// Settings for `kind` on its scripted provider, with the pinned program.
pub fn agent_settings(kind: AgentKind) -> ProjectSettings {
    hooks_program();
    let (program, provider, model) = match kind {
        AgentKind::ClaudeCode => (claude(), ANTHROPIC, None),
        AgentKind::Codex => (codex(), OPENAI, Some("scripted-model".to_string())),
        AgentKind::OpenCode => (opencode(), OPENAI, Some("scripted-model".to_string())),
        AgentKind::GeminiCli => (gemini(), GEMINI, Some("scripted-gemini".to_string())),
        AgentKind::Builtin => unreachable!("a CLI agent"),
    };
    ProjectSettings {
        agent: kind,
        verify: vec![python_check()],
        merge: MergePolicy::FastForward,
        agent_program: Some(program.display().to_string()),
        agent_provider: Some(provider.to_string()),
        model,
        approvals: crate::project_fixtures::python_listed(),
        ..ProjectSettings::default()
    }
}

/// An engine, the scripted server as providers, and the greeter repository as a project of
/// `kind` (settings adjusted by `change`). Codex gets a model catalog naming the scripted
/// model in its config (kept by Healer), without which it offers no apply_patch tool.
pub async fn agent_bed(kind: AgentKind, change: impl FnOnce(&mut ProjectSettings)) -> AgentBed {
    agent_bed_with(kind, |_, _| {}, change).await
}

/// [`agent_bed`] whose repository `shape` changes before its first commit (given the
/// repository's folder and the test's own temp folder, outside it).
pub async fn agent_bed_with(
    kind: AgentKind,
    shape: impl FnOnce(&Path, &Path),
    change: impl FnOnce(&mut ProjectSettings),
) -> AgentBed {
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
    let paths = Paths::new(tmp.path().join("data"));
    paths.ensure().expect("data dir");
    let server = ModelServer::start(Some(KEY));
    let engine = engine_at(&paths).await;
    configure_providers(&engine, &server);
    if kind == AgentKind::GeminiCli {
        configure_gemini(&engine, &server);
    }
    let repo_dir = tmp.path().join("greeter");
    std::fs::create_dir_all(&repo_dir).expect("repo folder");
    shape(&repo_dir, tmp.path());
    git_repo(&repo_dir, GREETER);
    let mut settings = agent_settings(kind);
    change(&mut settings);
    let project = engine
        .add_project(ProjectInput {
            path: repo_dir.display().to_string(),
            name: "greeter".to_string(),
            settings,
        })
        .expect("project added");
    if kind == AgentKind::Codex {
        let home = agent_home(paths.data_dir(), project.id, kind);
        keep_catalog(&home, tmp.path());
    }
    AgentBed {
        tmp,
        paths,
        engine,
        server,
        repo_dir,
        project,
    }
}

/// A person's own line in the project's Codex config: the scripted model's catalog.
pub fn keep_catalog(codex_home: &Path, dir: &Path) {
    let catalog = dir.join("models.json");
    std::fs::write(&catalog, crate::agent_codex::CATALOG).expect("catalog");
    std::fs::create_dir_all(codex_home).expect("codex home");
    std::fs::write(
        codex_home.join("config.toml"),
        format!("model_catalog_json = {:?}\n", catalog.display().to_string()),
    )
    .expect("config");
}

/// A program that is not an agent: a shell script with `body`.
pub fn fake_agent(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}
