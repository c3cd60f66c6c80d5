//! One task's session, start to end: the worktree and branch from the main branch's last
//! commit, the init script, the agent with a prompt from the task, the verification commands,
//! then a commit (and a fast-forward) when green — or one `Failure` into the pipeline when the
//! init script, the agent or verification fails. Every step is stored as it happens.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::command::{run_project_command, session_tmp, toolchain_env, CommandResult};
use super::prompt::{read_progress, task_prompt};
use super::runner::Projects;
use super::settle::{settle, Ending};
use super::worktree;
use crate::agent::{Agent, AgentUpdate, SessionEnd, SessionSpec};
use crate::error::Result;
use crate::failure::{Evidence, FailureClass, ProjectScenario};
use crate::session::{SessionStatus, SessionStep, StepKind, StepSource};
use crate::store::{MergePolicy, Project, StoredStep};
use crate::tasklist::Task;

/// The variable that marks every process of a session (crash recovery finds leftovers by it).
pub const SESSION_MARKER_VAR: &str = "HEALER_AGENT_SESSION";

/// After its own time limit, how long an agent gets to end before the runner ends it.
const AGENT_GRACE: Duration = Duration::from_secs(30);
/// How long a cancelled agent gets to return before it is abandoned.
const CANCEL_WAIT: Duration = Duration::from_secs(10);
/// The most of one step's text that is stored (an agent's tool output can be huge).
const MAX_STEP_CHARS: usize = 64 * 1024;
/// Lines of a failed command's output kept as the failure's evidence.
const EVIDENCE_LINES: usize = 60;

/// What a session needs while it runs.
pub(super) struct Ctx<'a> {
    pub projects: &'a Arc<Projects>,
    pub project: Project,
    pub task: Task,
    pub session_id: i64,
    pub repo: PathBuf,
    pub worktree: PathBuf,
    pub tmp: PathBuf,
    pub marker: String,
    pub cancel: CancellationToken,
}

pub(super) async fn run_session(
    projects: &Arc<Projects>,
    project: Project,
    task: Task,
    session_id: i64,
    agent: Arc<dyn Agent>,
    cancel: CancellationToken,
) {
    let ctx = Ctx {
        repo: PathBuf::from(&project.path),
        worktree: task
            .worktree
            .as_ref()
            .map(PathBuf::from)
            .unwrap_or_else(|| projects.slots_dir(project.id)),
        tmp: session_tmp(projects.services.paths.data_dir(), session_id),
        marker: format!("{}-{session_id}", projects.services.instance()),
        projects,
        project,
        task,
        session_id,
        cancel,
    };
    let ending = match drive(&ctx, agent).await {
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
    super::recover::end_marked_processes(&ctx.marker);
    if let Err(e) = settle(&ctx, ending).await {
        tracing::error!(session_id, "could not record how the session ended: {e}");
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
    std::fs::create_dir_all(&ctx.tmp)
        .map_err(|e| crate::error::Error::io(format!("cannot create {}", ctx.tmp.display()), e))?;

    if let Some(init) = settings
        .init_script
        .as_deref()
        .filter(|s| !s.trim().is_empty())
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
                Some(evidence(&result)),
            ));
        }
    }

    let prompt = task_prompt(&ctx.task, &settings.verify, &read_progress(&ctx.repo));
    let end = ctx.run_agent(agent, prompt).await;
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
            let crashed = end.exit_code.is_some_and(|c| c != 0);
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

    for check in &settings.verify {
        ctx.note(&format!("Verifying: {} ({})", check.name, check.command))?;
        let Some(result) = ctx.command(&check.name, &check.command).await? else {
            return Ok(ctx.cancelled());
        };
        if !result.passed() {
            return Ok(Ending::failed(
                ProjectScenario::VerificationFailed,
                FailureClass::Logic,
                SessionStatus::Failed,
                format!("Verification failed: {} {}", check.name, result.verdict()),
                Some(evidence(&result)),
            ));
        }
    }
    ctx.commit(settings.merge, &end.summary).await
}

impl Ctx<'_> {
    /// The ending of a session whose token fired: stopped by the person, or interrupted by
    /// the engine stopping.
    pub fn cancelled(&self) -> Ending {
        if self.projects.shutdown.is_cancelled() {
            Ending::Interrupted
        } else {
            Ending::Stopped
        }
    }

    fn spec_env(&self) -> Vec<(String, String)> {
        toolchain_env(&[(SESSION_MARKER_VAR.to_string(), self.marker.clone())])
    }

    /// Run one of the project's commands; `None` when the session was cancelled meanwhile.
    async fn command(&self, name: &str, command: &str) -> Result<Option<CommandResult>> {
        let limit = Duration::from_secs(u64::from(self.project.settings.command_time_limit_secs));
        let env = [(SESSION_MARKER_VAR.to_string(), self.marker.clone())];
        let run = run_project_command(&self.worktree, &self.tmp, name, command, &env, limit);
        let result = tokio::select! {
            // Dropping the run ends its process group.
            () = self.cancel.cancelled() => return Ok(None),
            result = run => result?,
        };
        let mut step = system_step(format!("{}: {}", name, result.verdict()));
        step.kind = StepKind::ToolResult;
        step.tool = Some(name.to_string());
        step.is_error = !result.passed();
        let tail = result.tail(EVIDENCE_LINES);
        if !tail.is_empty() {
            step.text.push_str(&format!("\n{tail}"));
        }
        self.record(step)?;
        Ok(Some(result))
    }

    /// Run the agent, storing what it reports as it happens; its own time limit is backed by
    /// the runner's.
    async fn run_agent(&self, agent: Arc<dyn Agent>, prompt: String) -> Result<SessionEnd> {
        let settings = &self.project.settings;
        let time_limit = Duration::from_secs(u64::from(settings.agent_time_limit_secs));
        let spec = SessionSpec {
            session_id: self.session_id,
            cwd: self.worktree.clone(),
            prompt,
            resume: None,
            allowed_tools: settings.allowed_tools.clone(),
            env: self.spec_env(),
            program: None,
            model: settings.model.clone(),
            time_limit,
        };
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
        end
    }

    fn take(&self, update: AgentUpdate) -> Result<()> {
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
            AgentUpdate::Step(step) => self.record(step),
        }
    }

    /// Store a step and show it live.
    pub fn record(&self, mut step: SessionStep) -> Result<()> {
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

    async fn commit(&self, merge: MergePolicy, summary: &str) -> Result<Ending> {
        let message = commit_message(&self.task, summary);
        let path = self.worktree.clone();
        let committed = blocking(move || worktree::commit_all(&path, &message)).await?;
        let Some(commit) = committed else {
            self.note(
                "Verification passed; the agent changed no file, so there is nothing to commit.",
            )?;
            return Ok(Ending::Closed {
                commit: None,
                merged: false,
                summary: summary.to_string(),
                left: None,
            });
        };
        let short = super::repo::short(&commit);
        let branch = worktree::branch_name(&self.task.id);
        let left = match merge {
            MergePolicy::LeaveBranch => Some(format!(
                "left on {branch} for review, as the project's settings say"
            )),
            MergePolicy::FastForward => {
                let (repo, main, b) = (
                    self.repo.clone(),
                    self.project.settings.main_branch.clone(),
                    branch.clone(),
                );
                match blocking(move || worktree::fast_forward(&repo, &main, &b, commit)).await? {
                    worktree::Merge::Merged => None,
                    worktree::Merge::Left(why) => Some(why),
                }
            }
        };
        self.note(&match &left {
            None => format!(
                "Committed {short} on {branch} and fast-forwarded {} to it.",
                self.project.settings.main_branch
            ),
            Some(why) => format!("Committed {short} on {branch}; {why}."),
        })?;
        Ok(Ending::Closed {
            commit: Some(commit.to_string()),
            merged: left.is_none(),
            summary: summary.to_string(),
            left,
        })
    }
}

async fn blocking<T: Send + 'static>(
    job: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(job)
        .await
        .map_err(|e| crate::error::Error::Internal(format!("a git step stopped: {e}")))?
}

fn commit_message(task: &Task, summary: &str) -> String {
    let mut message = task.title.trim().to_string();
    if !summary.trim().is_empty() {
        message.push_str(&format!("\n\n{}", summary.trim()));
    }
    message.push_str(&format!("\n\nHealer task: {}", task.id));
    message
}

fn system_step(text: String) -> SessionStep {
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

fn evidence(result: &CommandResult) -> Evidence {
    let tail = result.tail(EVIDENCE_LINES);
    let last = tail
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default();
    Evidence {
        error_type: None,
        message: format!(
            "{} ({}) {}: {}",
            result.name,
            result.command,
            result.verdict(),
            last.trim()
        ),
        stack: Some(tail),
    }
}
