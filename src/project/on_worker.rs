//! A session's work on a `healer worker` (issue 42): what the runner does at home, done from
//! the repository's remote in a scratch folder of the worker's. The repository is cloned with
//! the worker's own sign-in, `healer/<task>` is made from the commit the control room named
//! (or continued where an earlier session pushed it), the agent runs against the control
//! room's model gateway (through the worker's forwarder: the worker never holds a model key),
//! the project's checks run, and the work is committed and pushed — green or not, so the next
//! session (on any worker) and the healer service find it on the branch. Every step goes to
//! the [`SessionSink`], which the activity sends back in its heartbeats.

mod sink;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::agent_setup;
use super::command::{run_project_command, toolchain_env, CommandPlace};
use crate::agent::{AgentUpdate, ModelEndpoint, SessionEnd, SessionSpec};
use crate::cluster::session_flow::{SessionInput, WorkerEnding};
use crate::failure::Evidence;
use crate::llm::{scrub, ApiKey};
use crate::session::{AgentKind, SessionStatus};

use super::push::is_full_hash;
use super::quiet_git::{run as git, short};
use sink::lock;
pub use sink::{take_mail, SessionSink, WorkerBox};

/// After its own time limit, how long an agent gets before it is ended.
const AGENT_GRACE: Duration = Duration::from_secs(30);

/// Where a worker does a session.
pub struct WorkerPlace {
    pub worker: String,
    /// The session's own folder (removed afterwards).
    pub scratch: PathBuf,
    /// Where its processes' control groups are recorded (ended when a worker next starts).
    pub groups: PathBuf,
    /// The worker's forwarder to the control room's model gateway.
    pub gateway: Option<std::net::SocketAddr>,
}

/// How the work went.
pub struct Worked {
    pub ending: WorkerEnding,
    pub summary: String,
    pub pushed: Option<String>,
    /// The commit the worker made of what the agent left, when the session did not pass its
    /// checks: work not yet checked, which the control room opens as changes not committed.
    pub kept: Option<String>,
    pub agent_session_id: Option<String>,
}

impl Worked {
    fn not_run(summary: String) -> Worked {
        Worked {
            ending: WorkerEnding::NotRun,
            summary,
            pushed: None,
            kept: None,
            agent_session_id: None,
        }
    }
}

/// Do the session's work on this worker.
pub async fn work(
    place: &WorkerPlace,
    input: &SessionInput,
    sink: &Arc<SessionSink>,
    cancel: &CancellationToken,
) -> Worked {
    let tree = place.scratch.join("work");
    let branch = super::worktree::branch_name(&input.task_id);
    if input.remote.starts_with('-') || input.remote.trim().is_empty() {
        return Worked::not_run(format!("“{}” is not a repository's address", input.remote));
    }
    if let Err(e) = std::fs::create_dir_all(place.scratch.join("tmp")) {
        return Worked::not_run(format!("The worker could not make its scratch folder: {e}"));
    }
    sink.note(format!(
        "On the worker {}: fetching the repository from {}.",
        place.worker, input.remote
    ));
    let start = match checkout(input, &tree, &branch).await {
        Ok((start, continued)) => {
            sink.note(if continued {
                format!(
                    "Continuing {branch} where it was pushed ({}).",
                    short(&start)
                )
            } else {
                format!(
                    "A new branch {branch} from {}'s commit {}.",
                    input.settings.main_branch,
                    short(&start)
                )
            });
            start
        }
        Err(why) => return Worked::not_run(why),
    };
    // The clone's settings as they came: the agent and the project's commands can change
    // `.git/config` (a push URL elsewhere, a filter that runs a program, another worktree),
    // and the worker's own git must not act on that when it commits and pushes.
    let config = std::fs::read(tree.join(".git").join("config")).ok();
    let mut worked = agent_and_checks(place, input, sink, cancel, &tree).await;
    if let Some(config) = &config {
        // Removed first: a link the agent put in its place is not followed.
        let path = tree.join(".git").join("config");
        let _ = std::fs::remove_file(&path);
        if let Err(e) = write_new(&path, config) {
            return Worked::not_run(format!(
                "The worker could not restore the clone's settings: {e}"
            ));
        }
    }
    if cancel.is_cancelled() {
        worked.ending = WorkerEnding::Stopped;
    }
    // What the agent did is kept on the branch whatever the checks said (and whoever stopped
    // it): the next session continues from there, on any worker.
    match keep_work(input, &tree, &branch, &start, &worked).await {
        Ok(Some((pushed, own))) => {
            sink.note(format!("Pushed {branch} at {}.", short(&pushed)));
            if let WorkerEnding::Green { commit } = &mut worked.ending {
                *commit = pushed.clone();
            } else if own {
                worked.kept = Some(pushed.clone());
            }
            worked.pushed = Some(pushed);
        }
        Ok(None) => {
            if matches!(worked.ending, WorkerEnding::Green { .. }) {
                sink.note("The agent changed no file, so there is nothing to commit.");
                worked.ending = WorkerEnding::NoChange;
            }
        }
        Err(why) => {
            sink.note(why.clone());
            if matches!(worked.ending, WorkerEnding::Green { .. }) {
                return Worked::not_run(why);
            }
        }
    }
    worked
}

/// Clone the remote into `tree` and put `branch` where the session starts: where it was
/// pushed, else at the named commit. `(start, continued)`.
async fn checkout(
    input: &SessionInput,
    tree: &Path,
    branch: &str,
) -> Result<(String, bool), String> {
    let parent = tree.parent().unwrap_or(tree);
    git(
        parent,
        &[
            "clone",
            "--no-tags",
            "--quiet",
            "--no-checkout",
            "--",
            &input.remote,
            "work",
        ],
    )
    .await
    .map_err(|e| {
        format!(
            "The worker could not fetch the repository from {}: {e}",
            input.remote
        )
    })?;
    if !is_full_hash(&input.base)
        || git(
            tree,
            &["cat-file", "-e", &format!("{}^{{commit}}", input.base)],
        )
        .await
        .is_err()
    {
        return Err(format!(
            "The repository at {} does not have the commit {} of {} that this session starts \
             from: push {} there, then run the task again",
            input.remote,
            short(&input.base),
            input.settings.main_branch,
            input.settings.main_branch
        ));
    }
    let pushed = git(
        tree,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("refs/remotes/origin/{branch}^{{commit}}"),
        ],
    )
    .await
    .ok()
    .map(|s| s.trim().to_string())
    .filter(|s| is_full_hash(s));
    let start = pushed.clone().unwrap_or_else(|| input.base.clone());
    git(tree, &["checkout", "--quiet", "-B", branch, &start])
        .await
        .map_err(|e| format!("The worker could not make the branch {branch}: {e}"))?;
    Ok((start, pushed.is_some()))
}

/// The agent, then the checks.
async fn agent_and_checks(
    place: &WorkerPlace,
    input: &SessionInput,
    sink: &Arc<SessionSink>,
    cancel: &CancellationToken,
    tree: &Path,
) -> Worked {
    let settings = &input.settings;
    let marks = agent_setup::marks(&input.instance, input.session_id);
    let tmp = place.scratch.join("tmp");
    let command_place = CommandPlace {
        worktree: tree,
        tmp: &tmp,
        marker: &marks,
        groups: &place.groups,
    };
    let limit = Duration::from_secs(u64::from(settings.command_time_limit_secs));
    if let Some(init) = settings
        .init_script
        .as_deref()
        .filter(|s| !s.trim().is_empty() && input.resume.is_none())
    {
        sink.note(format!("Running the init script: {init}"));
        match run_command(&command_place, "init script", init, limit, sink, cancel).await {
            None => return Worked::not_run("Stopped".to_string()),
            Some(Err(failed)) => return failed_check(true, false, failed),
            Some(Ok(())) => {}
        }
    }
    let Some(pass) = &input.model else {
        return Worked::not_run(
            "A session on a worker needs a model provider configured in Healer: the worker \
             never uses a key or sign-in of its own. Choose one in the project's settings"
                .to_string(),
        );
    };
    let Some(gateway) = place.gateway else {
        return Worked::not_run(format!(
            "The worker {} has no connection to the control room's model gateway: start it \
             with --gateway and its token (docs/cluster.md)",
            place.worker
        ));
    };
    let token = ApiKey::new(pass.token.clone());
    *lock(&sink.secret) = Some(token.clone());
    let endpoint = ModelEndpoint {
        provider: pass.provider.clone(),
        base_url: format!("http://{gateway}{}", pass.path),
        key: Some(token),
        kind: pass.kind,
        prices: Vec::new(),
    };
    let asking = settings.approvals.preset != crate::approval::Preset::NeverAsk;
    if asking && settings.agent == AgentKind::Codex {
        // Safe by default: an agent that cannot ask runs nothing.
        return Worked::not_run(
            "Codex was not started on the worker: Healer judges what it runs through a hook it \
             cannot give Codex there yet. Let it work without asking in the project's settings, \
             or run the project's tasks on this computer"
                .to_string(),
        );
    }
    let Some(agent) = crate::agent::cli(settings.agent, None) else {
        return Worked::not_run(
            "Healer's own agent does not run on workers: choose Claude Code, Codex, opencode or \
             Gemini CLI for a project on the cluster"
                .to_string(),
        );
    };
    let agent: Arc<dyn crate::agent::Agent> = Arc::from(agent);
    let home = place.scratch.join("home");
    if let Err(e) = agent_setup::fresh_home(&home, settings.agent) {
        return Worked::not_run(format!(
            "The worker could not prepare the agent's folder: {e}"
        ));
    }
    let spec = SessionSpec {
        session_id: input.session_id,
        cwd: tree.to_path_buf(),
        prompt: input.prompt.clone(),
        resume: input.resume.clone(),
        allowed_tools: agent_setup::allowed_tools(settings),
        env: toolchain_env(&agent_setup::agent_env(settings, &home, &marks)),
        program: None,
        model: settings.model.clone().filter(|m| !m.trim().is_empty()),
        endpoint: Some(endpoint),
        agent_settings: (settings.agent == AgentKind::OpenCode)
            .then(|| crate::agent::opencode::agent_settings(settings)),
        time_limit: Duration::from_secs(u64::from(settings.agent_time_limit_secs)),
        groups: Some(place.groups.clone()),
        channel: None,
    };
    let spec = SessionSpec {
        agent_settings: spec
            .agent_settings
            .clone()
            .or_else(|| claude_hooks(place, input, sink, tree, &tmp)),
        ..spec
    };
    let mut end = run_agent(agent.clone(), spec.clone(), sink, cancel).await;
    for _ in 0..crate::cluster::session_flow::MAX_RESUMES {
        let Some(id) = end.agent_session_id.clone() else {
            break;
        };
        if end.status != SessionStatus::Finished || cancel.is_cancelled() {
            break;
        }
        let told = sink.take_told();
        if told.is_empty() {
            break;
        }
        sink.note("Resuming the agent with a message for it.");
        let again = SessionSpec {
            prompt: told.join("\n\n"),
            resume: Some(id),
            ..spec.clone()
        };
        end = run_agent(agent.clone(), again, sink, cancel).await;
    }
    let agent_session_id = end.agent_session_id.clone();
    let failed = |ending| Worked {
        ending,
        summary: end.summary.clone(),
        pushed: None,
        kept: None,
        agent_session_id: agent_session_id.clone(),
    };
    if cancel.is_cancelled() {
        return failed(WorkerEnding::Stopped);
    }
    if end.status != SessionStatus::Finished {
        return failed(WorkerEnding::AgentFailed {
            status: end.status,
            exit_code: end.exit_code,
            program_failed: end.program_failed,
        });
    }
    if !input.verify {
        return failed(WorkerEnding::HandedBack);
    }
    if settings.verify.is_empty() && !settings.commit_without_checks {
        sink.note("This project has no check, and its settings do not say that an agent's work may be committed without one: nothing is committed.");
        return failed(WorkerEnding::Unchecked);
    }
    for check in &settings.verify {
        sink.note(format!("Verifying: {} ({})", check.name, check.command));
        match run_command(
            &command_place,
            &check.name,
            &check.command,
            limit,
            sink,
            cancel,
        )
        .await
        {
            None => return failed(WorkerEnding::Stopped),
            Some(Err(result)) => {
                let could_not_run = super::detect::check_could_not_run(
                    &check.command,
                    &result.stack.clone().unwrap_or_default(),
                )
                .is_some();
                let mut worked = failed_check(false, could_not_run, result);
                worked.agent_session_id = agent_session_id;
                return worked;
            }
            Some(Ok(())) => {}
        }
    }
    Worked {
        ending: WorkerEnding::Green {
            commit: String::new(),
        },
        summary: end.summary,
        pushed: None,
        kept: None,
        agent_session_id,
    }
}

/// Claude Code's hooks on a worker: steering delivered before its next step, and each tool
/// call judged by the project's approvals — what would ask the person is refused there with a
/// sentence, as a worker cannot ask yet. `None` (no hooks) when the `healer` program is not
/// found or the box cannot be written.
fn claude_hooks(
    place: &WorkerPlace,
    input: &SessionInput,
    sink: &SessionSink,
    tree: &Path,
    tmp: &Path,
) -> Option<serde_json::Value> {
    if input.settings.agent != AgentKind::ClaudeCode {
        return None;
    }
    let program = super::hooks::cli_program()?;
    let dir = place.scratch.join("box");
    let mut checks: Vec<String> = input
        .settings
        .verify
        .iter()
        .map(|v| v.command.clone())
        .collect();
    checks.extend(input.settings.init_script.clone());
    let box_ = WorkerBox {
        approvals: input.settings.approvals.clone(),
        worktree: std::fs::canonicalize(tree).unwrap_or_else(|_| tree.to_path_buf()),
        tmp: tmp.to_path_buf(),
        home: std::env::var_os("HOME").map(PathBuf::from),
        checks,
    };
    box_.write(&dir).ok()?;
    let _ = sink.mailbox.set(dir.clone());
    let asking = input.settings.approvals.preset != crate::approval::Preset::NeverAsk;
    let command = super::hooks::worker_hook_command(&program, &dir);
    Some(super::hooks::settings(
        &command,
        asking.then_some(input.settings.approvals.time_limit_secs),
    ))
}

fn failed_check(init: bool, could_not_run: bool, evidence: Evidence) -> Worked {
    Worked {
        summary: evidence.message.clone(),
        ending: WorkerEnding::CheckFailed {
            init,
            could_not_run,
            evidence,
        },
        pushed: None,
        kept: None,
        agent_session_id: None,
    }
}

/// One of the project's commands as a step; `None` when stopped, `Err` with its evidence when
/// it failed.
async fn run_command(
    place: &CommandPlace<'_>,
    name: &str,
    command: &str,
    limit: Duration,
    sink: &SessionSink,
    cancel: &CancellationToken,
) -> Option<Result<(), Evidence>> {
    let result = tokio::select! {
        () = cancel.cancelled() => return None,
        result = run_project_command(place, name, command, limit) => result,
    };
    let result = match result {
        Ok(result) => result,
        Err(e) => {
            let message = format!("{name} ({command}) could not run: {e}");
            sink.note(message.clone());
            return Some(Err(Evidence {
                error_type: None,
                message,
                stack: None,
            }));
        }
    };
    sink.push(result.step());
    if result.passed() {
        return Some(Ok(()));
    }
    Some(Err(result.evidence()))
}

/// Run the agent, its steps into the sink, within its time limit.
async fn run_agent(
    agent: Arc<dyn crate::agent::Agent>,
    spec: SessionSpec,
    sink: &Arc<SessionSink>,
    cancel: &CancellationToken,
) -> SessionEnd {
    let limit = spec.time_limit;
    let (tx, mut rx) = mpsc::unbounded_channel::<AgentUpdate>();
    let agent_cancel = cancel.child_token();
    let stopper = agent_cancel.clone();
    let mut agent_session = None;
    let running = async move {
        let run = agent.run(spec, tx, agent_cancel);
        tokio::pin!(run);
        tokio::select! {
            end = &mut run => end,
            () = tokio::time::sleep(limit + AGENT_GRACE) => {
                stopper.cancel();
                let _ = tokio::time::timeout(Duration::from_secs(10), &mut run).await;
                Ok(SessionEnd {
                    status: SessionStatus::TimedOut,
                    exit_code: None,
                    summary: format!(
                        "The agent ran past its time limit of {} s and was ended",
                        limit.as_secs()
                    ),
                    agent_session_id: None,
                    program_failed: false,
                })
            }
        }
    };
    let consume = async {
        while let Some(update) = rx.recv().await {
            match update {
                AgentUpdate::Step(step) => sink.push(step),
                AgentUpdate::Started {
                    agent_session_id, ..
                } => agent_session = Some(agent_session_id),
                AgentUpdate::Process { .. } | AgentUpdate::Raw(_) => {}
            }
        }
    };
    let (end, ()) = tokio::join!(running, consume);
    let secret = lock(&sink.secret).clone();
    match end {
        Ok(mut end) => {
            end.summary = scrub(&end.summary, secret.as_ref());
            if end.agent_session_id.is_none() {
                end.agent_session_id = agent_session;
            }
            end
        }
        Err(e) => SessionEnd {
            status: SessionStatus::Failed,
            exit_code: None,
            summary: scrub(&format!("The agent could not run: {e}"), secret.as_ref()),
            agent_session_id: agent_session,
            program_failed: true,
        },
    }
}

/// Commit what the agent left (green or not) and push the branch; the commit pushed and
/// whether it is the worker's own commit of what the agent left, or `None` when there was
/// nothing new since `start`.
async fn keep_work(
    input: &SessionInput,
    tree: &Path,
    branch: &str,
    start: &str,
    worked: &Worked,
) -> Result<Option<(String, bool)>, String> {
    if matches!(worked.ending, WorkerEnding::NotRun) || !tree.join(".git").exists() {
        return Ok(None);
    }
    let message = match &worked.ending {
        WorkerEnding::Green { .. } => {
            super::commit::message_for(&input.task_title, &input.task_id, &worked.summary)
        }
        _ => format!(
            "Work in progress: {}\n\n{}\n\nHealer task: {}",
            input.task_title.trim(),
            worked.summary.trim(),
            input.task_id
        ),
    };
    // Everything the agent changed, but Healer's own folder (the task list).
    git(tree, &["add", "--all", "--", ".", ":(exclude).healer"])
        .await
        .map_err(|e| format!("The worker could not add the work: {e}"))?;
    let staged = git(tree, &["diff", "--cached", "--quiet"]).await.is_err();
    if staged {
        // Built from the files alone, on HEAD alone: a merge or cherry-pick the agent left
        // half done (its MERGE_HEAD) does not make the worker's commit a merge that drops a
        // parent's work.
        let failed = |e: String| format!("The worker could not commit the work: {e}");
        let files = git(tree, &["write-tree"]).await.map_err(failed)?;
        let parent = git(tree, &["rev-parse", "--verify", "HEAD^{commit}"])
            .await
            .map_err(failed)?;
        let name = format!("user.name={}", super::worktree::AGENT_NAME);
        let email = format!("user.email={}", super::worktree::AGENT_EMAIL);
        let made = git(
            tree,
            &[
                "-c",
                &name,
                "-c",
                &email,
                "commit-tree",
                files.trim(),
                "-p",
                parent.trim(),
                "-m",
                &message,
            ],
        )
        .await
        .map_err(failed)?;
        git(tree, &["update-ref", "HEAD", made.trim(), parent.trim()])
            .await
            .map_err(failed)?;
    }
    let head = git(tree, &["rev-parse", "HEAD"])
        .await
        .map(|h| h.trim().to_string())
        .map_err(|e| format!("The worker could not read the branch: {e}"))?;
    if head == start {
        return Ok(None);
    }
    let push = |to: String| {
        let remote = input.remote.clone();
        async move {
            git(
                tree,
                &[
                    "push",
                    "--quiet",
                    "--no-verify",
                    &remote,
                    &format!("HEAD:{to}"),
                ],
            )
            .await
        }
    };
    if let Err(e) = push(format!("refs/heads/{branch}")).await {
        // The branch moved there meanwhile (someone pushed to it), or the remote refused it:
        // the work is kept beside it, never lost, and never written over theirs.
        let aside = format!("refs/healer/kept/{}/{}", input.task_id, input.session_id);
        let remote = &input.remote;
        if push(aside.clone()).await.is_err() {
            return Err(format!(
                "The worker could not push {branch} to {remote}: {e}"
            ));
        }
        let moved = e.contains("fetch first") || e.contains("non-fast-forward");
        return Err(if moved {
            format!(
                "Someone pushed to {branch} on {remote} while the worker worked, so the worker did not push over their work: its own is kept there beside the branch, as {aside} ({})",
                short(&head)
            )
        } else {
            format!(
                "The worker could not push {branch} to {remote} ({e}): its work is kept there beside the branch, as {aside} ({})",
                short(&head)
            )
        });
    }
    Ok(Some((head, staged)))
}

/// Write a file that must not exist yet: a link the agent put at `path` is never followed.
fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?
        .write_all(bytes)
}
