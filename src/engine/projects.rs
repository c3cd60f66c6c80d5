//! The engine's project API (what the desktop app and the CLI call), and the agent registry
//! the runner chooses from. Adding an agent: its file in `src/agent/`, one line in [`agents`].

use std::path::Path;
use std::sync::Arc;

use tokio::sync::broadcast;

use super::Handle;
use crate::agent::builtin::Builtin;
use crate::agent::claude_code::ClaudeCode;
use crate::agent::codex::Codex;
use crate::agent::gemini::GeminiCli;
use crate::agent::opencode::OpenCode;
use crate::agent::AgentRegistry;
use crate::error::{Error, Result};
use crate::events::Event;
use crate::project::{
    self, FolderCheck, Project, ProjectDetail, ProjectInput, ProjectSummary, SessionDetail,
    SessionRecord, StoredStep, Task, TaskDetail, TaskEdit, TaskStatus,
};
use crate::services::Services;
use crate::session::AgentKind;
use crate::store::now;
use crate::workflow::{refuse, FieldProblem};

/// The agents this build runs. Each adapter registers here, one line each.
pub(super) fn agents(services: &Arc<Services>) -> AgentRegistry {
    let mut agents = AgentRegistry::new();
    agents.register(Arc::new(Builtin::new(services.clone())));
    // Their programs: the project's setting, else PATH (an npm install's native binary).
    agents.register(Arc::new(ClaudeCode::new(None)));
    agents.register(Arc::new(Codex::new(None)));
    agents.register(Arc::new(OpenCode::new(None)));
    agents.register(Arc::new(GeminiCli::new(None)));
    agents
}

/// How long a failed session's failure takes at most to reach the healer service.
const HEALER_APPEARS: std::time::Duration = std::time::Duration::from_secs(3);
/// How long `project run --wait` waits at most for the healer service's own work.
const HEALER_WORKS: std::time::Duration = std::time::Duration::from_secs(600);

/// Past sessions the Sessions page lists.
const SESSION_HISTORY: u32 = 500;
impl Handle {
    pub(super) fn projects(&self) -> &Arc<project::Projects> {
        &self.inner.projects
    }

    /// Whether this build can run agents of `kind`.
    pub fn agent_in_build(&self, kind: crate::session::AgentKind) -> bool {
        self.projects().agents().has(kind)
    }

    /// Look at a folder for the add-project form: what it is, and what Healer proposes.
    pub async fn check_project_folder(&self, path: &str) -> Result<FolderCheck> {
        let canonical = project::canonical(Path::new(path.trim()));
        let existing = self
            .services
            .store
            .project_at(&canonical.display().to_string())?;
        Ok(project::check_folder(&canonical, self.projects().agents(), existing.as_ref()).await)
    }

    /// Make a folder a repository with a first commit (the form's offer), then look again.
    pub async fn init_project_folder(&self, path: &str) -> Result<FolderCheck> {
        let dir = project::canonical(Path::new(path.trim()));
        tokio::task::spawn_blocking(move || project::init_with_first_commit(&dir))
            .await
            .map_err(|e| Error::Internal(format!("git init stopped: {e}")))??;
        self.check_project_folder(path).await
    }

    /// Problems with a project before it is saved; empty when it can be.
    pub fn validate_project(
        &self,
        input: &ProjectInput,
        own_id: Option<i64>,
    ) -> Result<Vec<FieldProblem>> {
        let store = &self.services.store;
        let mut problems = project::validate(
            input,
            self.projects().agents(),
            &store.list_projects()?,
            &self.services.llm.budgets()?,
            &store.list_providers()?,
            own_id,
        );
        problems.extend(project::cluster_problem(store, input));
        Ok(problems)
    }

    pub fn add_project(&self, input: ProjectInput) -> Result<Project> {
        refuse(self.validate_project(&input, None)?)?;
        let path = project::canonical(Path::new(input.path.trim()));
        let project = self.services.store.insert_project(
            input.name.trim(),
            &path.display().to_string(),
            &clean(input.settings),
        )?;
        project::trust_repository(&path);
        if self.inner.scheduling {
            if let Err(e) = self.projects().watch(&project) {
                tracing::warn!(
                    "the task list of \u{201c}{}\u{201d} is not watched: {e}",
                    project.name
                );
            }
        }
        self.services.bus.emit(Event::ProjectAdded {
            project_id: project.id,
            name: project.name.clone(),
        })?;
        Ok(project)
    }

    /// Add a project the way `healer project add` asks: detect, then apply what was named.
    pub async fn add_project_from(&self, add: project::AddProject) -> Result<Project> {
        let mut check = self.check_project_folder(&add.path).await?;
        let not_a_repo = matches!(
            check.repo.state,
            project::FolderState::NotARepository | project::FolderState::NoCommits
        );
        if not_a_repo && add.git_init {
            check = self.init_project_folder(&add.path).await?;
        }
        let Some(mut input) = check.proposal else {
            let hint = if not_a_repo {
                " (--git-init does that)"
            } else {
                ""
            };
            return Err(Error::InvalidInput(format!(
                "{}{hint}",
                check.repo.message.trim_end_matches('.')
            )));
        };
        if let Some(name) = add.name {
            input.name = name;
        }
        if let Some(agent) = add.agent {
            input.settings.agent = agent;
        }
        if let Some(verify) = add.verify {
            input.settings.verify = verify;
        }
        if add.init_script.is_some() {
            input.settings.init_script = add.init_script;
        }
        if let Some(merge) = add.merge {
            input.settings.merge = merge;
        }
        if add.provider.is_some() {
            input.settings.agent_provider = add.provider;
        }
        if add.model.is_some() {
            input.settings.model = add.model;
        }
        if add.program.is_some() {
            input.settings.agent_program = add.program;
        }
        if let Some(preset) = add.ask {
            input.settings.approvals.preset = preset;
        }
        input.settings.approvals.allowed.extend(add.allow);
        let unchecked = input.settings.verify.is_empty();
        input.settings.commit_without_checks = add.no_checks && unchecked;
        let mut problems = self.validate_project(&input, None)?;
        for p in problems.iter_mut().filter(|p| p.field == "verify") {
            p.message = "No check was found in the repository and none was given: add one with --verify NAME=COMMAND (its tests, a type check), or say that an agent's work may be committed without checks with --no-checks".to_string();
        }
        refuse(problems)?;
        self.add_project(input)
    }

    pub fn update_project(&self, id: i64, input: ProjectInput) -> Result<Project> {
        let current = self.services.store.project(id)?;
        // The folder is the project: it does not change.
        let input = ProjectInput {
            path: current.path.clone(),
            ..input
        };
        refuse(self.validate_project(&input, Some(id))?)?;
        self.services
            .store
            .update_project(id, input.name.trim(), &clean(input.settings))?;
        let project = self.services.store.project(id)?;
        self.services.bus.emit(Event::ProjectChanged {
            project_id: id,
            name: project.name.clone(),
            what: "settings changed".to_string(),
        })?;
        Ok(project)
    }

    pub fn list_projects(&self) -> Result<Vec<ProjectSummary>> {
        self.services
            .store
            .list_projects()?
            .into_iter()
            .map(|p| project::summary(&self.services.store, p))
            .collect()
    }

    /// A project by name (or id), for the CLI.
    pub fn find_project(&self, name: &str) -> Result<Project> {
        self.services.store.project_by_name(name)
    }

    pub fn project_detail(&self, id: i64) -> Result<ProjectDetail> {
        project::detail(&self.services.store, self.services.store.project(id)?)
    }

    pub fn task_detail(&self, project_id: i64, task_id: &str) -> Result<TaskDetail> {
        project::task_detail(
            &self.services.store,
            self.services.store.project(project_id)?,
            task_id,
        )
    }

    /// Forget a project: its sessions and worktrees go, its repository and branches stay.
    pub fn remove_project(&self, id: i64) -> Result<()> {
        let project = self.services.store.project(id)?;
        let running = self.projects().running_ids();
        if self
            .services
            .store
            .list_sessions(id, None, u32::MAX)?
            .iter()
            .any(|s| running.contains(&s.id))
        {
            return Err(Error::InvalidInput(format!(
                "an agent is working on \u{201c}{}\u{201d}; stop it first",
                project.name
            )));
        }
        self.projects().unwatch(id);
        let worktrees = self.projects().slots_dir(id);
        if let Ok(entries) = std::fs::read_dir(&worktrees) {
            for entry in entries.flatten() {
                if let Err(e) = project::remove_worktree(Path::new(&project.path), &entry.path()) {
                    tracing::warn!(
                        "a worktree of \u{201c}{}\u{201d} was not removed: {e}",
                        project.name
                    );
                }
            }
            let _ = std::fs::remove_dir_all(&worktrees);
        }
        // The agents' own settings for it (Codex's home, Claude Code's folder).
        let homes = project::agent_home(self.services.paths.data_dir(), id, AgentKind::Codex);
        if let Some(all) = homes.parent() {
            let _ = std::fs::remove_dir_all(all);
        }
        self.services.store.delete_project(id)?;
        self.services.bus.emit(Event::ProjectRemoved {
            project_id: id,
            name: project.name,
        })?;
        Ok(())
    }

    pub fn add_task(&self, project_id: i64, edit: TaskEdit) -> Result<Task> {
        let project = self.services.store.project(project_id)?;
        self.projects()
            .modify_tasks_settled(&project, "a task was added", |file| file.add(&edit, &now()))
    }

    pub fn edit_task(&self, project_id: i64, task_id: &str, edit: TaskEdit) -> Result<Task> {
        let project = self.services.store.project(project_id)?;
        self.projects()
            .modify_tasks(&project, "a task was changed", |file| {
                file.edit(task_id, &edit, &now())
            })
    }

    /// Put a task before another one (it takes that one's priority), or last of its column.
    pub fn move_task(&self, project_id: i64, task_id: &str, before: Option<&str>) -> Result<Task> {
        let project = self.services.store.project(project_id)?;
        self.projects()
            .modify_tasks(&project, "tasks were reordered", |file| {
                file.move_task(task_id, before, &now())
            })
    }

    /// Close, reopen or block a task by hand (in progress is the runner's to set).
    pub fn set_task_status(
        &self,
        project_id: i64,
        task_id: &str,
        status: TaskStatus,
        reason: Option<String>,
    ) -> Result<Task> {
        if status == TaskStatus::InProgress {
            return Err(Error::InvalidInput(
                "a task is in progress only while an agent works on it; run it instead".to_string(),
            ));
        }
        let project = self.services.store.project(project_id)?;
        let what = format!("a task was marked {}", status.as_str().replace('_', " "));
        self.projects().modify_tasks(&project, &what, |file| {
            if file.task(task_id).map(|t| t.status) == Some(TaskStatus::InProgress) {
                return Err(Error::InvalidInput(
                    "an agent is working on this task; stop it first".to_string(),
                ));
            }
            file.update(task_id, &now(), |t| {
                t.status = status;
                t.closed_reason = match status {
                    TaskStatus::Closed => Some(
                        reason
                            .clone()
                            .unwrap_or_else(|| "Closed by hand".to_string()),
                    ),
                    _ => None,
                };
                if status != TaskStatus::Closed {
                    t.commit = None;
                } else {
                    // Its worktree (and what was not committed there) goes to the next task.
                    t.worktree = None;
                }
                t.note = None;
            })
        })
    }

    /// Start an agent on `task_id`, or on the next ready task; answers once it is recorded.
    pub fn run_project(&self, project_id: i64, task_id: Option<&str>) -> Result<SessionRecord> {
        let project = self.services.store.project(project_id)?;
        self.projects().start(&project, task_id)
    }

    /// Wait for a session of this engine to end (settled: checks, commit), and say how.
    pub async fn wait_session(&self, session_id: i64) -> Result<SessionRecord> {
        self.projects().wait(session_id).await
    }

    /// Run and wait for the session to end.
    pub async fn run_project_and_wait(
        &self,
        project_id: i64,
        task_id: Option<&str>,
    ) -> Result<SessionRecord> {
        let session = self.run_project(project_id, task_id)?;
        let ended = self.projects().wait(session.id).await?;
        self.wait_for_healer(&ended).await?;
        Ok(ended)
    }

    /// After a failed session: until the healer service has done what it does without the
    /// person — its invocation ended, or waits for the person's answer (a stored state any
    /// engine carries on). A command's own engine must not stop while it works.
    async fn wait_for_healer(&self, session: &SessionRecord) -> Result<()> {
        if session.status == crate::session::SessionStatus::Finished {
            return Ok(());
        }
        let store = &self.services.store;
        let started = std::time::Instant::now();
        loop {
            let open = store
                .invocations(Some(session.project_id), Some(&session.task_id), 20)?
                .into_iter()
                .filter(|inv| inv.session_id == Some(session.id))
                .map(|inv| inv.status)
                .collect::<Vec<_>>();
            let under_way = open.contains(&crate::store::InvocationStatus::Running);
            // The failure reaches the service through the pipeline a moment after the session.
            let not_yet = open.is_empty() && started.elapsed() < HEALER_APPEARS;
            if !(under_way || not_yet) || started.elapsed() > HEALER_WORKS {
                return Ok(());
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    /// Resume the agent's own session `previous_session_id` of `task_id` with `message` (a new
    /// session of the task, linked to it); answers once it is recorded.
    pub fn resume_session(
        &self,
        project_id: i64,
        task_id: &str,
        previous_session_id: i64,
        message: &str,
    ) -> Result<SessionRecord> {
        let project = self.services.store.project(project_id)?;
        if self
            .services
            .store
            .open_invocation_for_task(project_id, task_id)?
            .is_some()
        {
            return Err(Error::InvalidInput(format!(
                "Healer is handling a failure of task {task_id:?}; it can be resumed once Healer is done or you answered its question"
            )));
        }
        self.projects()
            .resume_session(&project, task_id, previous_session_id, message)
    }

    /// Resume and wait for the new session to end.
    pub async fn resume_session_and_wait(
        &self,
        project_id: i64,
        task_id: &str,
        previous_session_id: i64,
        message: &str,
    ) -> Result<SessionRecord> {
        let session = self.resume_session(project_id, task_id, previous_session_id, message)?;
        self.projects().wait(session.id).await
    }

    /// Write the agent of a live session a message (see [`crate::store::Store::say_to_session`]).
    pub fn say_to_session(
        &self,
        session_id: i64,
        text: &str,
    ) -> Result<crate::store::SteeringEntry> {
        self.services.store.say_to_session(session_id, text)
    }

    /// Stop a session: the agent's processes end, the worktree stays.
    pub fn stop_session(&self, session_id: i64) -> Result<()> {
        self.projects().stop(session_id)
    }

    pub fn session_detail(&self, session_id: i64) -> Result<SessionDetail> {
        project::session_detail(&self.services.store, session_id)
    }

    /// A session as an ATIF-v1.7 trajectory (pretty JSON).
    pub fn export_session_atif(&self, session_id: i64) -> Result<String> {
        crate::spells::session_trajectory_with_heals(
            &self.services.store,
            Some(&self.services.paths),
            session_id,
        )
    }

    /// Steps of running sessions as they are stored.
    pub fn subscribe_session_steps(&self) -> broadcast::Receiver<StoredStep> {
        self.services.session_steps.subscribe()
    }

    /// End the sessions of this engine that showed no activity for steering's limit as of
    /// `now` (the engine checks every [`project::STUCK_CHECK_SECS`]; tests pass a later clock).
    pub fn end_stuck_sessions(&self, now: chrono::DateTime<chrono::Utc>) -> Result<Vec<i64>> {
        self.projects().end_stuck_sessions(now)
    }

    /// End a running session for a fresh agent: its work pinned as a snapshot, its worktree
    /// removed, its task open again (what the judge's replace does, once allowed).
    pub fn replace_session(&self, session_id: i64, reason: &str) -> Result<()> {
        self.projects().end_session(
            session_id,
            project::SessionStop::Replaced {
                reason: reason.to_string(),
            },
        )
    }

    /// [`Handle::live_sessions`] as of now.
    /// The sessions of every project, newest first (the Sessions page's history).
    pub fn session_history(&self) -> Result<Vec<crate::store::PastSession>> {
        let store = &self.services.store;
        let mut history = store.session_history(SESSION_HISTORY)?;
        let Some(first) = history.iter().map(|p| p.session.id).min() else {
            return Ok(history);
        };
        let providers = store.list_providers()?;
        let mut costs: std::collections::HashMap<i64, Option<f64>> = Default::default();
        for (session, model, usage) in store.session_model_usage(first)? {
            let price = providers.iter().find_map(|p| p.price(&model));
            let cost = costs.entry(session).or_insert(Some(0.0));
            *cost = match (*cost, price) {
                (Some(sum), Some(price)) => Some(sum + crate::llm::cost(&usage, price)),
                // A model without a price: the session's cost is not known.
                _ => None,
            };
        }
        for past in &mut history {
            past.cost_usd = costs.get(&past.session.id).copied().flatten();
        }
        Ok(history)
    }

    pub fn live_sessions_now(&self) -> Result<Vec<crate::steering::LiveSession>> {
        self.live_sessions(chrono::Utc::now())
    }

    /// Every live session for the Sessions page: Healer's running ones, and — when Settings
    /// allow watching them — the person's own Claude Code and opencode sessions that wrote within the
    /// stuck limit of `now`, each with its last activity and loop verdict.
    pub fn live_sessions(
        &self,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<Vec<crate::steering::LiveSession>> {
        use crate::steering::{LiveSession, SessionOrigin};
        let store = &self.services.store;
        let mut live = Vec::new();
        for session in store.running_sessions()? {
            let pulse = store.session_pulse(session.id)?;
            live.push(LiveSession {
                origin: SessionOrigin::Healer,
                session_id: Some(session.id),
                project_id: Some(session.project_id),
                task_id: Some(session.task_id.clone()),
                title: session.task_title.clone(),
                agent: session.agent,
                last_activity_at: pulse.last_activity_at.or(Some(session.started_at)),
                loop_message: pulse.loop_rule.map(|r| r.describe().to_string()),
                loop_rule: pulse.loop_rule,
            });
        }
        let settings = store.steering_settings()?;
        if let (true, Some(root)) = (
            settings.enabled && settings.watch_own_sessions,
            self.inner.claude_projects.as_deref(),
        ) {
            let healer_ids = crate::steering::own::healer_agent_ids(&self.services)?;
            let live_for = std::time::Duration::from_secs(u64::from(settings.zombie_after_secs));
            live.extend(crate::steering::own::person_sessions(
                root,
                now,
                live_for,
                &healer_ids,
                &self.inner.own_verdicts,
            ));
        }
        if let (true, Some(db)) = (
            settings.enabled && settings.watch_own_sessions,
            self.inner.opencode_db.as_deref(),
        ) {
            let live_for = std::time::Duration::from_secs(u64::from(settings.zombie_after_secs));
            live.extend(crate::steering::own_opencode::person_sessions(
                db, now, live_for,
            ));
            // Healer's sessions first, then the person's, the newest first.
            let first_person = live
                .iter()
                .position(|s| s.origin == SessionOrigin::Person)
                .unwrap_or(live.len());
            live[first_person..].sort_by(|a, b| b.last_activity_at.cmp(&a.last_activity_at));
        }
        Ok(live)
    }

    /// Ask the steering model about every task in progress due a look as of `now` (the
    /// engine does every [`crate::steering::JUDGE_CHECK_SECS`]; tests pass a later clock).
    pub async fn judge_tasks(
        &self,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<Vec<crate::steering::Judged>> {
        crate::steering::judge_due(self.projects(), now).await
    }
}

/// How often the engine looks whether watching the person's own sessions was turned on or off.
const OWN_SESSIONS_SETTING_SECS: u64 = 2;

/// Watches the person's own Claude Code sessions while Settings allow it: the watcher starts
/// when the setting is turned on and is dropped (stops) when it is turned off.
pub(super) async fn own_sessions_loop(handle: Handle, cancel: tokio_util::sync::CancellationToken) {
    let every = std::time::Duration::from_secs(OWN_SESSIONS_SETTING_SECS);
    let told = crate::steering::own::Told::default();
    let mut watch: Option<crate::steering::own::OwnWatch> = None;
    let mut opencode: Option<crate::steering::own::OwnWatch> = None;
    loop {
        let on = handle
            .services
            .store
            .steering_settings()
            .map(|s| s.enabled && s.watch_own_sessions)
            .unwrap_or(false);
        match (on, watch.is_some(), handle.inner.claude_projects.as_deref()) {
            (true, false, Some(root)) => {
                match crate::steering::own::watch(handle.services.clone(), root, told.clone()) {
                    Ok(w) => watch = Some(w),
                    Err(e) => tracing::warn!("cannot watch your own Claude Code sessions: {e}"),
                }
            }
            (false, true, _) => watch = None,
            _ => {}
        }
        match (on, opencode.is_some(), handle.inner.opencode_db.as_deref()) {
            (true, false, Some(db)) => {
                match crate::steering::own_opencode::watch(
                    handle.services.clone(),
                    db,
                    told.clone(),
                ) {
                    Ok(w) => opencode = Some(w),
                    Err(e) => tracing::warn!("cannot watch your own opencode sessions: {e}"),
                }
            }
            (false, true, _) => opencode = None,
            _ => {}
        }
        tokio::select! {
            () = cancel.cancelled() => return,
            () = tokio::time::sleep(every) => {}
        }
    }
}

/// Asks the steering model about each task in progress whose interval is up, while the engine
/// runs (each look is per task: see `steering::judge_due`).
pub(super) async fn judge_loop(handle: Handle, cancel: tokio_util::sync::CancellationToken) {
    let every = std::time::Duration::from_secs(crate::steering::JUDGE_CHECK_SECS);
    loop {
        tokio::select! {
            () = cancel.cancelled() => return,
            () = tokio::time::sleep(every) => {}
        }
        let judged = tokio::select! {
            () = cancel.cancelled() => return,
            judged = handle.judge_tasks(chrono::Utc::now()) => judged,
        };
        if let Err(e) = judged {
            tracing::warn!("the steering judge could not look at the tasks: {e}");
        }
    }
}

/// Looks for stuck sessions while the engine runs: wherever sessions run, in the app, the
/// daemon, or a command's own engine.
pub(super) async fn stuck_loop(handle: Handle, cancel: tokio_util::sync::CancellationToken) {
    let every = std::time::Duration::from_secs(project::STUCK_CHECK_SECS);
    loop {
        tokio::select! {
            () = cancel.cancelled() => return,
            () = tokio::time::sleep(every) => {}
        }
        if let Err(e) = handle.end_stuck_sessions(chrono::Utc::now()) {
            tracing::warn!("could not look for stuck sessions: {e}");
        }
        // The agents' questions whose time is up are denied here too (their hooks deny at
        // the same time on their own).
        if let Err(e) = handle.expire_questions(chrono::Utc::now()).await {
            tracing::warn!("could not look for agents' questions past their time: {e}");
        }
    }
}

/// Settings as stored: an empty init script is none, blank rows are dropped.
fn clean(mut settings: crate::store::ProjectSettings) -> crate::store::ProjectSettings {
    settings.init_script = settings
        .init_script
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty());
    settings
        .verify
        .retain(|v| !(v.name.trim().is_empty() && v.command.trim().is_empty()));
    for v in &mut settings.verify {
        v.name = v.name.trim().to_string();
        v.command = v.command.trim().to_string();
    }
    settings.main_branch = settings.main_branch.trim().to_string();
    let blank_none = |v: Option<String>| v.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
    settings.model = blank_none(settings.model);
    settings.agent_provider = blank_none(settings.agent_provider);
    settings.agent_program = blank_none(settings.agent_program);
    settings.allowed_tools = settings
        .allowed_tools
        .iter()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .collect();
    settings
}
