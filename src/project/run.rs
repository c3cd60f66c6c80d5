//! One task's session, start to end: the worktree and branch from the main branch's last
//! commit, the init script, the agent with a prompt from the task, the verification commands,
//! then a commit (and a fast-forward) when green — or one `Failure` into the pipeline when the
//! init script, the agent or verification fails. Every step is stored as it happens.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::agent_setup::{self, marks};
use super::command::{
    run_project_command, session_tmp, toolchain_env, CommandPlace, CommandResult, EVIDENCE_LINES,
};
use super::prompt::{read_progress, task_prompt};
use super::runner::{Projects, SessionStop};
use super::settle::{settle, Ending};
use super::worktree;
use crate::agent::{Agent, AgentUpdate, ModelEndpoint, SessionChannel, SessionEnd, SessionSpec};
use crate::error::Result;
use crate::failure::{FailureClass, ProjectScenario};
use crate::llm::{scrub, ApiKey};
use crate::session::{AgentKind, SessionStatus, SessionStep, StepKind, StepSource};
use crate::store::{Project, StoredStep};
use crate::tasklist::Task;

/// The variable that marks every process of a session with its id (with `HEALER_INSTANCE`:
/// crash recovery finds leftovers by both).
pub const SESSION_MARKER_VAR: &str = crate::agent::process::SESSION_VAR;

/// After its own time limit, how long an agent gets to end before the runner ends it.
const AGENT_GRACE: Duration = Duration::from_secs(30);
/// How long a cancelled agent gets to return before it is abandoned.
const CANCEL_WAIT: Duration = Duration::from_secs(10);
/// The most of one step's text that is stored (an agent's tool output can be huge).
const MAX_STEP_CHARS: usize = 64 * 1024;

/// What a session needs while it runs.
pub(super) struct Ctx<'a> {
    pub projects: &'a Arc<Projects>,
    pub project: Project,
    pub task: Task,
    pub session_id: i64,
    pub repo: PathBuf,
    pub worktree: PathBuf,
    pub tmp: PathBuf,
    /// What every process of the session carries in its environment.
    pub marks: Vec<(String, String)>,
    pub cancel: CancellationToken,
    /// The key of the provider the agent was given, kept out of every stored step.
    pub secret: std::sync::OnceLock<ApiKey>,
    pub loops: super::looped::LiveLoops,
    /// This session resumes the agent's earlier session with a message.
    pub resume: Option<Resume>,
    /// Healer's settings layer for the agent (Claude Code's steering hooks), set once before
    /// it starts; unset: no hooks reach this session.
    pub agent_settings: std::sync::OnceLock<serde_json::Value>,
    /// What the agent's program said its version was (read once, as the session starts).
    pub version: std::sync::OnceLock<Option<String>>,
    /// Steps of the agent's own it reported, and lines of its stream Healer did not understand.
    pub understood: std::sync::atomic::AtomicU32,
    pub raw: std::sync::atomic::AtomicU32,
}

/// A session the healer service (or steering) starts with its own message instead of the
/// task's prompt, in the task's worktree as it was left (the init script is not run again).
#[derive(Debug, Clone)]
pub(super) struct Resume {
    /// The agent's own session to continue (`claude --resume`, `codex exec resume`, the
    /// built-in agent's thread); `None`: a new agent session given `message` as its prompt.
    pub agent_session_id: Option<String>,
    pub message: String,
    /// Verify and commit as any session does; `false` for an emergency subtask, whose work
    /// the service checks itself before the task goes on.
    pub verify: bool,
    /// The person asked to accept the work and the agent resolves a conflict with the main
    /// branch first: the main branch is merged into the worktree before the agent starts, and
    /// the work is accepted this way once it passes its checks.
    pub accept: Option<super::finish::AcceptHow>,
}

pub(super) async fn run_session(
    projects: &Arc<Projects>,
    project: Project,
    task: Task,
    session_id: i64,
    agent: Arc<dyn Agent>,
    cancel: CancellationToken,
    resume: Option<Resume>,
) {
    let ctx = Ctx {
        resume,
        repo: PathBuf::from(&project.path),
        worktree: task
            .worktree
            .as_ref()
            .map(PathBuf::from)
            .unwrap_or_else(|| projects.slots_dir(project.id)),
        tmp: session_tmp(projects.services.paths.data_dir(), session_id),
        marks: marks(projects.services.instance(), session_id),
        secret: std::sync::OnceLock::new(),
        projects,
        project,
        task,
        session_id,
        cancel,
        loops: super::looped::LiveLoops::default(),
        agent_settings: std::sync::OnceLock::new(),
        version: std::sync::OnceLock::new(),
        understood: std::sync::atomic::AtomicU32::new(0),
        raw: std::sync::atomic::AtomicU32::new(0),
    };
    // A conflict with main the agent resolves before the work is accepted runs here, in the
    // task's worktree (which holds the pushed branch): accepting happens here.
    let resolving = ctx.resume.as_ref().is_some_and(|r| r.accept.is_some());
    let driven = match ctx.project.settings.runs_on {
        crate::store::RunsOn::Cluster { .. } if !resolving => ctx.drive_on_cluster().await,
        _ => drive(&ctx, agent).await,
    };
    let ending = match driven {
        Ok(ending) => ending,
        Err(e) => Ending::failed(
            ProjectScenario::RuntimeError,
            FailureClass::Unknown,
            SessionStatus::Failed,
            format!("Healer could not run the session: {e}"),
            None,
        ),
    };
    let ending = if ctx.cancel.is_cancelled() && !matches!(ending, Ending::Closed { .. }) {
        ctx.cancelled()
    } else {
        ending
    };
    super::recover::end_marked_processes(ctx.projects.services.instance(), ctx.session_id);
    ctx.scrub_key();
    if let Err(e) = settle(&ctx, ending).await {
        tracing::error!(session_id, "could not record how the session ended: {e}");
    }
    ctx.drop_undelivered();
    ctx.projects.forget_stop(session_id);
}

/// What the session says about the repository's submodules in its worktree, if it has any.
fn submodules_note(found: &worktree::Submodules) -> Option<String> {
    let list = |paths: &[String]| paths.join(", ");
    match (found.filled.is_empty(), found.empty.is_empty()) {
        (true, true) => None,
        (false, true) => Some(format!(
            "Submodules copied from your checkout: {}.",
            list(&found.filled)
        )),
        (_, false) => Some(format!(
            "The submodules {} are empty in this worktree: your checkout has no copy of the \
             commit the branch records, and Healer fetches nothing from the network. Fetch them \
             in your checkout and run the task again.{}",
            list(&found.empty),
            if found.filled.is_empty() {
                String::new()
            } else {
                format!(" Copied from your checkout: {}.", list(&found.filled))
            }
        )),
    }
}

async fn drive(ctx: &Ctx<'_>, agent: Arc<dyn Agent>) -> Result<Ending> {
    let settings = &ctx.project.settings;
    let (repo, main, id, path) = (
        ctx.repo.clone(),
        settings.main_branch.clone(),
        ctx.task.id.clone(),
        ctx.worktree.clone(),
    );
    let prepared = tokio::task::spawn_blocking(move || worktree::prepare(&repo, &main, &id, &path))
        .await
        .map_err(|e| crate::error::Error::Internal(format!("the worktree task stopped: {e}")))??;
    ctx.projects
        .services
        .store
        .set_session_base(ctx.session_id, &prepared.base.to_string())?;
    ctx.note(&if prepared.reused {
        format!(
            "Continuing in the kept worktree on {} (at {}).",
            prepared.branch,
            super::repo::short(&prepared.base)
        )
    } else {
        format!(
            "Worktree ready on a new branch {} from {}'s last commit ({}).",
            prepared.branch,
            settings.main_branch,
            super::repo::short(&prepared.base)
        )
    })?;
    let conflicted = ctx.merge_main_for_agent(&prepared.branch).await?;
    let (repo, path) = (ctx.repo.clone(), ctx.worktree.clone());
    let submodules = tokio::task::spawn_blocking(move || worktree::fill_submodules(&repo, &path))
        .await
        .unwrap_or_default();
    if let Some(said) = submodules_note(&submodules) {
        ctx.note(&said)?;
    }
    std::fs::create_dir_all(&ctx.tmp)
        .map_err(|e| crate::error::Error::io(format!("cannot create {}", ctx.tmp.display()), e))?;

    // A resumed session continues in the worktree as it was left: its init script ran.
    if let Some(init) = settings
        .init_script
        .as_deref()
        .filter(|s| !s.trim().is_empty() && ctx.resume.is_none())
    {
        ctx.note(&format!("Running the init script: {init}"))?;
        let Some(result) = ctx.command("init script", init).await? else {
            return Ok(ctx.cancelled());
        };
        if !result.passed() {
            let output = result.tail(EVIDENCE_LINES);
            let scenario = ProjectScenario::of_init_output(&output);
            return Ok(Ending::failed(
                scenario,
                scenario.class(),
                SessionStatus::Failed,
                format!("The init script {}", result.verdict()),
                Some(result.evidence()),
            ));
        }
    }

    let endpoint = match agent_setup::endpoint(&ctx.projects.services.llm, settings).await {
        Ok(endpoint) => endpoint,
        Err(why) => {
            return Ok(Ending::failed(
                ProjectScenario::RuntimeError,
                FailureClass::Environment,
                SessionStatus::Failed,
                why,
                None,
            ))
        }
    };
    // The agent gets the gateway's pass for this session, never the provider's key.
    let (endpoint, pass) = match endpoint {
        Some(endpoint) => {
            let pass = ctx.open_pass(&endpoint, false).await?;
            let given = ModelEndpoint {
                base_url: pass.base_url.clone(),
                key: Some(pass.token.clone()),
                ..endpoint
            };
            (Some(given), Some(pass))
        }
        None => (None, None),
    };
    if let Some(pass) = &pass {
        let _ = ctx.secret.set(pass.token.clone());
    }
    ctx.fresh_agent_home()?;
    let prompt = match &ctx.resume {
        Some(resume) => {
            ctx.note(&format!(
                "Resuming the agent's earlier session with: {}",
                resume.message
            ))?;
            resume.message.clone()
        }
        None => task_prompt(&ctx.task, &settings.verify, &read_progress(&ctx.repo)),
    };
    let asking = settings.approvals.preset != crate::approval::Preset::NeverAsk;
    let hooked = match settings.agent {
        AgentKind::ClaudeCode => ctx.install_hooks(asking),
        AgentKind::Codex if asking => ctx.install_hooks(asking),
        // opencode asks through its server, which Healer drives: its permission table sends
        // what the project's approvals judge to them (Gemini CLI cannot ask: the project's
        // choice becomes its allowed tools, in the spec).
        AgentKind::OpenCode => {
            let _ = ctx
                .agent_settings
                .set(crate::agent::opencode::agent_settings(settings));
            true
        }
        _ => true,
    };
    if asking && !hooked {
        // Safe by default: an agent that cannot ask runs nothing.
        return Ok(Ending::failed(
            ProjectScenario::RuntimeError,
            FailureClass::Environment,
            SessionStatus::Failed,
            format!(
                "{} was not started: to ask you before it runs anything risky, Healer needs its                  `healer` program beside the app (or named by HEALER_CLI), and it was not found.                  Reinstall Healer, or let the agent work without asking in the project's settings",
                settings.agent.name()
            ),
            None,
        ));
    }
    let resume = ctx.resume.as_ref().and_then(|r| r.agent_session_id.clone());
    let end = ctx
        .run_agent(agent.clone(), prompt, endpoint.clone(), resume)
        .await;
    let end = match end {
        Ok(end) => ctx.resume_with_messages(agent, endpoint, end).await,
        Err(e) => Err(e),
    };
    // The agent is done: its pass is refused from here on (the checks never had it).
    drop(pass);
    let end = match end {
        Ok(end) => end,
        Err(e) => {
            return Ok(Ending::failed(
                ProjectScenario::RuntimeError,
                FailureClass::Unknown,
                SessionStatus::Failed,
                format!("The agent could not run: {e}"),
                None,
            ))
        }
    };
    if ctx.cancel.is_cancelled() {
        return Ok(ctx.cancelled());
    }
    match end.status {
        SessionStatus::Finished => {}
        SessionStatus::Stopped | SessionStatus::Interrupted | SessionStatus::Running => {
            return Ok(ctx.cancelled())
        }
        SessionStatus::TimedOut => {
            return Ok(Ending::failed(
                ProjectScenario::RuntimeError,
                FailureClass::Timeout,
                SessionStatus::TimedOut,
                end.summary,
                None,
            ))
        }
        SessionStatus::Failed => {
            // The program failed (would not start, crashed, no usable stream, a non-zero exit)
            // rather than the agent giving up: a runtime error, not a task it could not do.
            let crashed = end.program_failed || end.exit_code.is_some_and(|c| c != 0);
            let scenario = if crashed {
                ProjectScenario::RuntimeError
            } else {
                ProjectScenario::SubtaskFailed
            };
            let class = if crashed {
                FailureClass::Unknown
            } else {
                FailureClass::Logic
            };
            return Ok(Ending::failed_with_code(scenario, class, end));
        }
    }

    if ctx.resume.as_ref().is_some_and(|r| !r.verify) {
        return Ok(Ending::HandedBack {
            summary: end.summary,
        });
    }
    if let Some(unresolved) = ctx.conflict_left(conflicted).await? {
        return Ok(unresolved);
    }
    if settings.verify.is_empty() && !settings.commit_without_checks {
        // Never skipped silently: with no check and no word from the person, nothing is
        // committed.
        ctx.note("This project has no check, and its settings do not say that an agent's work may be committed without one: nothing is committed.")?;
        return Ok(Ending::Unchecked);
    }
    for check in &settings.verify {
        ctx.note(&format!("Verifying: {} ({})", check.name, check.command))?;
        let Some(result) = ctx.command(&check.name, &check.command).await? else {
            return Ok(ctx.cancelled());
        };
        if !result.passed() {
            // A check that could not start says nothing of the agent's work.
            if let Some(why) =
                super::detect::check_could_not_run(&check.command, &result.tail(EVIDENCE_LINES))
            {
                return Ok(Ending::failed(
                    ProjectScenario::VerificationFailed,
                    FailureClass::Environment,
                    SessionStatus::Failed,
                    format!(
                        "The check \u{201c}{}\u{201d} could not run on this computer: {why}. \
                         Install it, or change the project's check; the agent's work is kept",
                        check.name
                    ),
                    Some(result.evidence()),
                ));
            }
            return Ok(Ending::failed(
                ProjectScenario::VerificationFailed,
                FailureClass::Logic,
                SessionStatus::Failed,
                format!("Verification failed: {} {}", check.name, result.verdict()),
                Some(result.evidence()),
            ));
        }
    }
    let accept = ctx.resume.as_ref().and_then(|r| r.accept);
    ctx.commit(settings.merge, accept, &end.summary).await
}

impl Ctx<'_> {
    /// The ending of a session whose token fired: interrupted by the engine stopping, ended
    /// by steering (stuck), or stopped by the person.
    pub fn cancelled(&self) -> Ending {
        if self.projects.shutdown.is_cancelled() {
            return Ending::Interrupted;
        }
        match self.projects.stop_of(self.session_id) {
            Some(SessionStop::Stuck { reason }) => Ending::Stuck { reason },
            Some(SessionStop::OverCap { reason }) => Ending::OverCap { reason },
            Some(SessionStop::Replaced { reason }) => Ending::Replaced { reason },
            None => Ending::Stopped,
        }
    }

    fn spec_env(&self) -> Vec<(String, String)> {
        let settings = &self.project.settings;
        let home = self.agent_home();
        toolchain_env(&agent_setup::agent_env(settings, &home, &self.marks))
    }

    /// The folder of the agent's own settings for this project.
    pub fn agent_home(&self) -> PathBuf {
        agent_setup::agent_home(
            self.projects.services.paths.data_dir(),
            self.project.id,
            self.project.settings.agent,
        )
    }

    /// The key of the provider the agent was given, out of the agent's own files (its home:
    /// transcripts, rollouts) and the session's temp folder, where commands had their HOME.
    fn scrub_key(&self) {
        let Some(key) = self.secret.get() else {
            return;
        };
        let key = key.expose();
        let scrubbed = agent_setup::scrub_home(&self.agent_home(), key)
            + agent_setup::scrub_folder(&self.tmp, key);
        if scrubbed > 0 {
            tracing::info!(
                session_id = self.session_id,
                "the provider's key was taken out of {scrubbed} file(s) the agent wrote"
            );
        }
    }

    /// `text` without the key of the provider the agent was given.
    pub fn scrub(&self, text: &str) -> String {
        scrub(text, self.secret.get())
    }

    /// Run one of the project's commands; `None` when the session was cancelled meanwhile.
    async fn command(&self, name: &str, command: &str) -> Result<Option<CommandResult>> {
        let limit = Duration::from_secs(u64::from(self.project.settings.command_time_limit_secs));
        let groups = self.projects.services.paths.groups_dir();
        let place = CommandPlace {
            worktree: &self.worktree,
            tmp: &self.tmp,
            marker: &self.marks,
            groups: &groups,
        };
        let run = run_project_command(&place, name, command, limit);
        let result = tokio::select! {
            // Dropping the run ends its process group.
            () = self.cancel.cancelled() => return Ok(None),
            result = run => result?,
        };
        self.record(result.step())?;
        self.alive("a check's output");
        Ok(Some(result))
    }

    /// Run the agent, storing what it reports as it happens; its own time limit is backed by
    /// the runner's.
    pub(super) async fn run_agent(
        &self,
        agent: Arc<dyn Agent>,
        prompt: String,
        endpoint: Option<ModelEndpoint>,
        resume: Option<String>,
    ) -> Result<SessionEnd> {
        let settings = &self.project.settings;
        let time_limit = Duration::from_secs(u64::from(settings.agent_time_limit_secs));
        let program = settings
            .agent_program
            .as_deref()
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(PathBuf::from);
        self.read_version(agent.as_ref(), program.as_deref()).await;
        let spec = SessionSpec {
            session_id: self.session_id,
            cwd: self.worktree.clone(),
            prompt,
            resume,
            allowed_tools: agent_setup::allowed_tools(settings),
            env: self.spec_env(),
            program,
            model: settings.model.clone().filter(|m| !m.trim().is_empty()),
            endpoint,
            agent_settings: self.agent_settings.get().cloned(),
            time_limit,
            groups: Some(self.projects.services.paths.groups_dir()),
            // opencode's server takes messages and asks questions while it works.
            channel: (agent.kind() == AgentKind::OpenCode).then(|| {
                SessionChannel(Arc::new(super::channel::RunnerChannel {
                    services: self.projects.services.clone(),
                    session_id: self.session_id,
                    key: self.secret.get().cloned(),
                }))
            }),
        };
        let kind = agent.kind();
        let (tx, mut rx) = mpsc::unbounded_channel::<AgentUpdate>();
        let agent_cancel = self.cancel.child_token();
        let stopper = agent_cancel.clone();
        let running = async move {
            let run = agent.run(spec, tx, agent_cancel);
            tokio::pin!(run);
            tokio::select! {
                end = &mut run => end,
                () = tokio::time::sleep(time_limit + AGENT_GRACE) => {
                    stopper.cancel();
                    let _ = tokio::time::timeout(CANCEL_WAIT, &mut run).await;
                    Ok(SessionEnd {
                        status: SessionStatus::TimedOut,
                        exit_code: None,
                        summary: format!(
                            "The agent ran past its time limit of {} s and was ended",
                            time_limit.as_secs()
                        ),
                        agent_session_id: None,
                        program_failed: false,
                    })
                }
            }
        };
        let consume = async {
            while let Some(update) = rx.recv().await {
                if let Err(e) = self.take(update) {
                    tracing::warn!(session_id = self.session_id, "a step was not stored: {e}");
                }
            }
        };
        let (end, ()) = tokio::join!(running, consume);
        end.map(|end| {
            let end = self.followed(kind, end);
            SessionEnd {
                summary: self.scrub(&end.summary),
                ..end
            }
        })
    }

    pub(super) fn take(&self, update: AgentUpdate) -> Result<()> {
        let store = &self.projects.services.store;
        match update {
            AgentUpdate::Started {
                agent_session_id,
                transcript,
            } => store.set_agent_session(
                self.session_id,
                &agent_session_id,
                transcript
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .as_deref(),
            ),
            AgentUpdate::Process { pgid } => store.set_session_process(self.session_id, Some(pgid)),
            AgentUpdate::Raw(line) => self.take_raw(&line),
            AgentUpdate::Step(step) => {
                if step.source == StepSource::Agent {
                    self.understood
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
                self.alive("a new step");
                // Seen before it is stored: the step may be cut for storage, the detector
                // compares whole results.
                if let Err(e) = self.check_loop(&step) {
                    tracing::warn!(session_id = self.session_id, "the loop check failed: {e}");
                }
                self.record(step)
            }
        }
    }

    /// The session produced something: its true heartbeat (Healer's own notes never count).
    fn alive(&self, source: &str) {
        let store = &self.projects.services.store;
        if let Err(e) = store.touch_session(self.session_id, &crate::store::now(), source) {
            tracing::warn!(
                session_id = self.session_id,
                "the heartbeat was not kept: {e}"
            );
        }
    }

    /// Store a step and show it live.
    pub fn record(&self, mut step: SessionStep) -> Result<()> {
        if let Some(key) = self.secret.get() {
            // An agent's tool may print its environment: its key stays out of the store.
            step.text = scrub(&step.text, Some(key));
            step.arguments = step.arguments.map(|a| scrub(&a, Some(key)));
        }
        if let Some((cut, _)) = step.text.char_indices().nth(MAX_STEP_CHARS) {
            let rest = step.text.len() - cut;
            step.text.truncate(cut);
            step.text
                .push_str(&format!("\n[{rest} more bytes not kept]"));
        }
        let services = &self.projects.services;
        let seq = services.store.append_step(self.session_id, &step)?;
        // No viewer is not an error: the step is stored.
        let _ = services.session_steps.send(StoredStep {
            session_id: self.session_id,
            seq,
            step,
        });
        Ok(())
    }

    /// A line from Healer in the session.
    pub fn note(&self, text: &str) -> Result<()> {
        self.record(system_step(text.to_string()))
    }
}

pub(super) fn system_step(text: String) -> SessionStep {
    SessionStep {
        at: crate::store::now(),
        source: StepSource::System,
        kind: StepKind::Text,
        text,
        tool: None,
        arguments: None,
        call_id: None,
        is_error: false,
        model: None,
        usage: None,
    }
}
