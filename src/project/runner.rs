//! The project runner: which task runs next, at most `max_parallel` per project at once, each
//! in a task of its own that Stop can cancel; and the task list's changes, made under its lock
//! and announced.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::run::{run_session, Resume};
use super::worktree::branch_name;
use crate::agent::{agent_name, AgentRegistry};
use crate::error::{Error, Result};
use crate::events::Event;
use crate::services::Services;
use crate::session::SessionStatus;
use crate::store::{now, NewSession, Project, SessionRecord};
use crate::tasklist::{self, not_ready_reason, ready, Task, TaskFile, TaskStatus};

/// How long the engine's shutdown waits for running sessions to record how they ended.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(5);

/// Why steering ended a session (a Stop by the person has none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionStop {
    /// No activity for too long: ended as stuck; the task goes through the `SubtaskStuck`
    /// path of the pipeline and is open again with its worktree kept.
    Stuck { reason: String },
    /// The steering judge saw no way forward: the work is pinned as a snapshot, the
    /// worktree removed, the task open again for a fresh agent.
    Replaced { reason: String },
    /// The session passed the project's spending cap (the model gateway counted it): the
    /// task waits for the person, its worktree kept.
    OverCap { reason: String },
}

/// A session in flight.
struct Running {
    project_id: i64,
    cancel: CancellationToken,
    handle: JoinHandle<()>,
}

/// Projects at work: the agents this build has, the sessions running, what Healer last wrote
/// to each task list (so the watcher tells a person's edit from Healer's own).
pub struct Projects {
    pub(crate) services: Arc<Services>,
    pub(crate) agents: AgentRegistry,
    running: Mutex<HashMap<i64, Running>>,
    /// Why steering ended a session, until the session has settled.
    stops: Mutex<HashMap<i64, SessionStop>>,
    /// Cancelled when the engine stops: running sessions end as interrupted, not stopped.
    pub(crate) shutdown: CancellationToken,
    pub(super) written: Mutex<HashMap<i64, u64>>,
    pub(super) watchers: Mutex<HashMap<i64, super::watch::TaskWatch>>,
    /// The engine's runtime: the desktop shell calls `start` from its main thread, outside it.
    runtime: tokio::runtime::Handle,
    /// Spare worktrees being made, which no task may take yet.
    creating: Mutex<HashSet<PathBuf>>,
    /// Make a spare worktree ahead of the next task (the long-running engine does; a CLI
    /// command's engine ends too soon to finish one).
    pub(crate) spares: bool,
    /// The model gateway, started for the first session that needs it.
    gateway: tokio::sync::OnceCell<crate::gateway::Gateway>,
    /// Where it listens for workers (sessions on the cluster), once opened.
    pub(super) worker_gateway: tokio::sync::OnceCell<std::net::SocketAddr>,
}

impl Projects {
    /// Must be called within the engine's tokio runtime.
    pub(crate) fn new(
        services: Arc<Services>,
        agents: AgentRegistry,
        spares: bool,
    ) -> Arc<Projects> {
        Arc::new(Projects {
            gateway: tokio::sync::OnceCell::new(),
            worker_gateway: tokio::sync::OnceCell::new(),
            runtime: tokio::runtime::Handle::current(),
            creating: Mutex::new(HashSet::new()),
            spares,
            services,
            agents,
            running: Mutex::new(HashMap::new()),
            stops: Mutex::new(HashMap::new()),
            shutdown: CancellationToken::new(),
            written: Mutex::new(HashMap::new()),
            watchers: Mutex::new(HashMap::new()),
        })
    }

    pub fn agents(&self) -> &AgentRegistry {
        &self.agents
    }

    /// Where a project's worktrees live: in Healer's data folder, never inside the repository.
    /// Each is a slot (`slot-1`, `slot-2` …) that holds one task's work at a time.
    pub fn slots_dir(&self, project_id: i64) -> PathBuf {
        self.services
            .paths
            .data_dir()
            .join("worktrees")
            .join(project_id.to_string())
    }

    /// The worktree for `task`: the one holding its earlier work, else a slot no open task
    /// holds (finished work or a spare: switching it is cheap), else a new slot.
    fn slot_for(&self, project_id: i64, file: &TaskFile, task: &Task) -> PathBuf {
        let dir = self.slots_dir(project_id);
        if let Some(own) = task.worktree.as_ref().map(PathBuf::from) {
            if own.starts_with(&dir) && own.join(".git").exists() {
                return own;
            }
        }
        let mut busy: HashSet<PathBuf> = file
            .tasks()
            .into_iter()
            .filter(|t| t.status != TaskStatus::Closed && t.id != task.id)
            .filter_map(|t| t.worktree.as_ref().map(PathBuf::from))
            .collect();
        busy.extend(self.lock_creating().iter().cloned());
        let mut slots = slot_numbers(&dir);
        slots.sort_unstable();
        for n in &slots {
            let path = dir.join(format!("slot-{n}"));
            if !busy.contains(&path) && path.join(".git").exists() {
                return path;
            }
        }
        let next = slots.iter().max().map_or(1, |n| n + 1);
        let mut path = dir.join(format!("slot-{next}"));
        let mut n = next;
        while busy.contains(&path) {
            n += 1;
            path = dir.join(format!("slot-{n}"));
        }
        path
    }

    /// When every slot of `project` holds an open task's work, make a spare one in the
    /// background, so the next task starts without a whole checkout.
    pub fn ensure_spare(self: &Arc<Self>, project: &Project) {
        if !self.spares {
            return;
        }
        let file =
            match tasklist::read_file(&PathBuf::from(&project.path).join(tasklist::TASKS_FILE)) {
                Ok(file) => file,
                Err(_) => return,
            };
        let probe = Task::new("spare", "spare", "");
        let path = self.slot_for(project.id, &file, &probe);
        if path.join(".git").exists() || !self.lock_creating().insert(path.clone()) {
            return;
        }
        let me = self.clone();
        let (repo, main) = (
            PathBuf::from(&project.path),
            project.settings.main_branch.clone(),
        );
        self.runtime.spawn(async move {
            let made = path.clone();
            let result = tokio::task::spawn_blocking(move || {
                super::worktree::make_spare(&repo, &main, &made)
            })
            .await;
            if let Ok(Err(e)) = result {
                tracing::warn!("no spare worktree was made at {}: {e}", path.display());
            }
            me.lock_creating().remove(&path);
        });
    }

    /// Sessions this process is running, by id.
    pub fn running_ids(&self) -> Vec<i64> {
        let mut ids: Vec<i64> = self.lock_running().keys().copied().collect();
        ids.sort_unstable();
        ids
    }

    /// Start the agent on `task_id`, or on the next ready task. Answers as soon as the session
    /// is recorded; it runs on in the background.
    pub fn start(
        self: &Arc<Self>,
        project: &Project,
        task_id: Option<&str>,
    ) -> Result<SessionRecord> {
        self.start_with(project, task_id, true)
    }

    /// Start the next session of a task the healer service holds and has just fixed: the
    /// invocation that holds it starts it.
    pub fn start_for_healer(
        self: &Arc<Self>,
        project: &Project,
        task_id: &str,
    ) -> Result<SessionRecord> {
        self.start_with(project, Some(task_id), false)
    }

    fn start_with(
        self: &Arc<Self>,
        project: &Project,
        task_id: Option<&str>,
        respect_holds: bool,
    ) -> Result<SessionRecord> {
        let agent = self.agents.get(project.settings.agent)?;
        self.check_room(project)?;
        let held = if respect_holds {
            self.services.store.held_tasks(project.id)?
        } else {
            Vec::new()
        };
        if let Some(id) = task_id.filter(|id| held.iter().any(|h| h == id)) {
            return Err(Error::InvalidInput(self.held_reason(project, id)?));
        }
        let chosen = self.claim(project, task_id, agent.kind(), &held)?;
        let worktree = chosen
            .worktree
            .as_ref()
            .map(PathBuf::from)
            .unwrap_or_else(|| self.slots_dir(project.id));
        self.launch(project, chosen, &worktree, agent, None)
    }

    /// Resume the agent's own session of `previous_session_id` (a session of `task_id`) with
    /// `message`: `claude --resume`, `codex exec resume`, or the built-in agent's thread
    /// continued, in the same worktree, then verification and commit as for any session. The
    /// new session is recorded as one of the task's, linked to the one it resumes.
    pub fn resume_session(
        self: &Arc<Self>,
        project: &Project,
        task_id: &str,
        previous_session_id: i64,
        message: &str,
    ) -> Result<SessionRecord> {
        let store = &self.services.store;
        let previous = store.session(previous_session_id)?;
        if previous.project_id != project.id || previous.task_id != task_id {
            return Err(Error::InvalidInput(format!(
                "session {previous_session_id} is not a session of task {task_id:?} in \u{201c}{}\u{201d}",
                project.name
            )));
        }
        if self.lock_running().contains_key(&previous_session_id) {
            return Err(Error::InvalidInput(format!(
                "session {previous_session_id} is still running: a message reaches it through steering, not a resume"
            )));
        }
        let Some(agent_session_id) = previous.agent_session_id.clone() else {
            return Err(Error::InvalidInput(format!(
                "session {previous_session_id} cannot be resumed: {} never reported a session of its own",
                agent_name(previous.agent)
            )));
        };
        let agent = self.agents.get(previous.agent)?;
        self.check_room(project)?;
        let kind = agent.kind();
        let worktree = PathBuf::from(&previous.worktree);
        let kept = previous.worktree.clone();
        let chosen = self.modify_tasks(project, "a session resumed", |file| {
            let task = file.task(task_id).ok_or_else(|| Error::NotFound {
                what: format!("task {task_id:?} in \u{201c}{}\u{201d}", project.name),
            })?;
            if task.status == TaskStatus::Closed {
                return Err(Error::InvalidInput(format!(
                    "the task \u{201c}{}\u{201d} is closed: there is nothing to resume",
                    task.title
                )));
            }
            file.update(task_id, &now(), |t| {
                t.status = TaskStatus::InProgress;
                t.assignee = Some(kind.as_str().to_string());
                t.worktree = Some(kept.clone());
                t.branch = Some(branch_name(&t.id));
                t.note = Some(format!("{} is resuming its work", agent_name(kind)));
            })
        })?;
        let resume = Resume {
            agent_session_id: Some(agent_session_id),
            message: message.to_string(),
            verify: true,
            accept: None,
        };
        let session = self.launch(
            project,
            chosen,
            &worktree,
            agent,
            Some((Some(previous.id), resume)),
        )?;
        store.session(session.id)
    }

    /// Start a new session of `task_id` with `agent` given `message` as its prompt, in the
    /// task's kept worktree, without the init script: the healer service's emergency subtask
    /// (`verify: false`: the session ends when the agent does, the task goes back to open) or
    /// its retry with a minimal context (`verify: true`: verified and committed as usual).
    /// `accept`: a conflict the agent resolves first (see [`super::run::Resume::accept`]).
    pub fn run_with_message(
        self: &Arc<Self>,
        project: &Project,
        task_id: &str,
        agent: crate::session::AgentKind,
        message: &str,
        verify: bool,
        accept: Option<super::finish::AcceptHow>,
    ) -> Result<SessionRecord> {
        let agent = self.agents.get(agent)?;
        self.check_room(project)?;
        let kind = agent.kind();
        let mut worktree = None;
        let chosen = self.modify_tasks(project, "Healer started a session", |file| {
            let task = file.task(task_id).ok_or_else(|| Error::NotFound {
                what: format!("task {task_id:?} in \u{201c}{}\u{201d}", project.name),
            })?;
            if task.status == TaskStatus::Closed {
                return Err(Error::InvalidInput(format!(
                    "the task \u{201c}{}\u{201d} is closed",
                    task.title
                )));
            }
            let slot = self.slot_for(project.id, file, task);
            worktree = Some(slot.clone());
            file.update(task_id, &now(), |t| {
                t.status = TaskStatus::InProgress;
                t.assignee = Some(kind.as_str().to_string());
                t.worktree = Some(slot.display().to_string());
                t.branch = Some(branch_name(&t.id));
                t.note = Some(format!(
                    "{} is working on Healer's request",
                    agent_name(kind)
                ));
            })
        })?;
        let worktree = worktree.unwrap_or_else(|| self.slots_dir(project.id));
        let resume = Resume {
            agent_session_id: None,
            message: message.to_string(),
            verify,
            accept,
        };
        self.launch(project, chosen, &worktree, agent, Some((None, resume)))
    }

    /// Whether a session is still running here (settling included).
    pub fn is_running(&self, session_id: i64) -> bool {
        self.lock_running().contains_key(&session_id)
    }

    /// Refuse a start past the project's limit of sessions at once.
    /// Whether the project may start one more session now.
    pub fn has_room(&self, project: &Project) -> bool {
        self.check_room(project).is_ok()
    }

    fn check_room(&self, project: &Project) -> Result<()> {
        let busy = self
            .lock_running()
            .values()
            .filter(|r| r.project_id == project.id)
            .count();
        let limit = usize::try_from(project.settings.max_parallel.max(1)).unwrap_or(1);
        if busy >= limit {
            return Err(Error::InvalidInput(format!(
                "\u{201c}{}\u{201d} already runs {busy} task(s), its limit at once; wait for one to end or allow more in its settings",
                project.name
            )));
        }
        Ok(())
    }

    /// Record the session of a claimed task and run it in the background.
    fn launch(
        self: &Arc<Self>,
        project: &Project,
        chosen: Task,
        worktree: &std::path::Path,
        agent: Arc<dyn crate::agent::Agent>,
        resume: Option<(Option<i64>, Resume)>,
    ) -> Result<SessionRecord> {
        let branch = branch_name(&chosen.id);
        let session = self.services.store.insert_session(&NewSession {
            project_id: project.id,
            task_id: &chosen.id,
            task_title: &chosen.title,
            agent: agent.kind(),
            worktree: &worktree.display().to_string(),
            branch: &branch,
        })?;
        let resume = match resume {
            Some((earlier, resume)) => {
                if let Some(earlier) = earlier {
                    self.services
                        .store
                        .set_session_resumed_from(session.id, earlier)?;
                }
                Some(resume)
            }
            None => None,
        };
        self.services.bus.emit(Event::SessionStarted {
            session_id: session.id,
            project_id: project.id,
            task_id: chosen.id.clone(),
            task_title: chosen.title.clone(),
            agent: agent.kind(),
        })?;
        let cancel = self.shutdown.child_token();
        let me = self.clone();
        let (project, session_id, token) = (project.clone(), session.id, cancel.clone());
        // Registered before it can end, so its own removal always finds it.
        let mut running = self.lock_running();
        let handle = self.runtime.spawn(async move {
            run_session(
                &me,
                project.clone(),
                chosen,
                session_id,
                agent,
                token,
                resume,
            )
            .await;
            me.lock_running().remove(&session_id);
            // A save by another program while this session settled was not repaired then
            // (the session still counted as live).
            let _ = me.reconcile_tasks(&project);
        });
        running.insert(
            session.id,
            Running {
                project_id: session.project_id,
                cancel,
                handle,
            },
        );
        Ok(session)
    }

    /// Mark the chosen task in progress in the task list (one write, under its lock).
    /// Why a held task cannot start: what the healer service is doing about it.
    fn held_reason(&self, project: &Project, task_id: &str) -> Result<String> {
        let store = &self.services.store;
        let title = tasklist::read_file(&PathBuf::from(&project.path).join(tasklist::TASKS_FILE))
            .ok()
            .and_then(|f| f.task(task_id).map(|t| t.title.clone()))
            .unwrap_or_else(|| task_id.to_string());
        let waiting = store
            .open_invocation_for_task(project.id, task_id)?
            .and_then(|inv| inv.waiting_checkpoint);
        Ok(match waiting {
            Some(_) => format!(
                "Healer is handling a failure of the task \u{201c}{title}\u{201d} and waits for your answer to its question: answer it first, and the task is free again"
            ),
            None => format!(
                "Healer is handling a failure of the task \u{201c}{title}\u{201d}; it can run again once Healer is done"
            ),
        })
    }

    fn claim(
        &self,
        project: &Project,
        task_id: Option<&str>,
        agent: crate::session::AgentKind,
        held: &[String],
    ) -> Result<Task> {
        let branch_of = |id: &str| branch_name(id);
        self.modify_tasks(project, "a task started", |file| {
            let id = match task_id {
                Some(id) => {
                    let task = file.task(id).ok_or_else(|| Error::NotFound {
                        what: format!("task {id:?} in \u{201c}{}\u{201d}", project.name),
                    })?;
                    if let Some(why) = not_ready_reason(file, task) {
                        return Err(Error::InvalidInput(format!(
                            "the task \u{201c}{}\u{201d} cannot run now: {why}",
                            task.title
                        )));
                    }
                    id.to_string()
                }
                None => {
                    let ready = ready(file);
                    match (ready.iter().find(|t| !held.contains(&t.id)), ready.first()) {
                        (Some(free), _) => free.id.clone(),
                        // Ready, but Healer holds each: the reason is Healer's, as with --task.
                        (None, Some(first)) => {
                            return Err(Error::InvalidInput(self.held_reason(project, &first.id)?))
                        }
                        (None, None) => {
                            return Err(Error::InvalidInput(super::board::no_ready_task(
                                project, file,
                            )))
                        }
                    }
                }
            };
            let slot = file
                .task(&id)
                .map(|t| self.slot_for(project.id, file, t))
                .unwrap_or_else(|| self.slots_dir(project.id));
            file.update(&id, &now(), |t| {
                t.status = TaskStatus::InProgress;
                t.assignee = Some(agent.as_str().to_string());
                t.worktree = Some(slot.display().to_string());
                t.branch = Some(branch_of(&t.id));
                t.note = Some(format!("{} is working on it", agent_name(agent)));
            })
        })
    }

    /// Change the project's task list and announce it.
    pub fn modify_tasks<T>(
        &self,
        project: &Project,
        what: &str,
        change: impl FnMut(&mut TaskFile) -> Result<T>,
    ) -> Result<T> {
        self.modify_tasks_with(project, what, false, change)
    }

    /// [`Projects::modify_tasks`] for a change the person is told of (a task added): it is
    /// said only once the change is in the file, made again if another program saved over it
    /// ([`tasklist::modify_settled`]).
    pub fn modify_tasks_settled<T>(
        &self,
        project: &Project,
        what: &str,
        change: impl FnMut(&mut TaskFile) -> Result<T>,
    ) -> Result<T> {
        self.modify_tasks_with(project, what, true, change)
    }

    fn modify_tasks_with<T>(
        &self,
        project: &Project,
        what: &str,
        settled: bool,
        mut change: impl FnMut(&mut TaskFile) -> Result<T>,
    ) -> Result<T> {
        let repo = PathBuf::from(&project.path);
        let mut problems = 0u32;
        let mut hash = 0u64;
        let counted = |file: &mut TaskFile| {
            let out = change(file)?;
            problems = u32::try_from(file.problems.len()).unwrap_or(u32::MAX);
            hash = super::watch::content_hash(&file.render_bytes());
            Ok(out)
        };
        let result = match settled {
            true => tasklist::modify_settled(&repo, counted)?,
            false => tasklist::modify(&repo, counted)?,
        };
        self.lock_written().insert(project.id, hash);
        self.services.bus.emit(Event::ProjectTasksChanged {
            project_id: project.id,
            name: project.name.clone(),
            problems,
            what: what.to_string(),
        })?;
        Ok(result)
    }

    /// Stop a running session: its agent's processes end, its worktree stays.
    pub fn stop(&self, session_id: i64) -> Result<()> {
        let running = self.lock_running();
        match running.get(&session_id) {
            Some(r) => {
                r.cancel.cancel();
                Ok(())
            }
            None => {
                let session = self.services.store.session(session_id)?;
                if session.status == SessionStatus::Running {
                    Err(Error::InvalidInput(format!(
                        "session {session_id} runs in another Healer process; stop it there"
                    )))
                } else {
                    Err(Error::InvalidInput(format!(
                        "session {session_id} is not running any more"
                    )))
                }
            }
        }
    }

    /// End a running session on steering's behalf, for `stop`'s reason.
    pub fn end_session(&self, session_id: i64, stop: SessionStop) -> Result<()> {
        let running = self.lock_running();
        let Some(r) = running.get(&session_id) else {
            return Err(Error::InvalidInput(format!(
                "session {session_id} is not running in this Healer"
            )));
        };
        self.lock_stops().insert(session_id, stop);
        r.cancel.cancel();
        Ok(())
    }

    /// The engine's model gateway (started on first use, ended with the engine).
    pub(crate) async fn gateway(&self) -> Result<crate::gateway::Gateway> {
        self.gateway
            .get_or_try_init(|| crate::gateway::Gateway::start(self.shutdown.child_token()))
            .await
            .cloned()
    }

    /// Why steering ended the session, if it did.
    pub(super) fn stop_of(&self, session_id: i64) -> Option<SessionStop> {
        self.lock_stops().get(&session_id).cloned()
    }

    pub(super) fn forget_stop(&self, session_id: i64) {
        self.lock_stops().remove(&session_id);
    }

    /// Wait until session `id` has ended (in this process), then read it back.
    pub async fn wait(&self, session_id: i64) -> Result<SessionRecord> {
        let handle = self
            .lock_running()
            .get_mut(&session_id)
            .map(|r| std::mem::replace(&mut r.handle, self.runtime.spawn(async {})));
        if let Some(handle) = handle {
            let _ = handle.await;
        }
        self.services.store.session(session_id)
    }

    /// The engine is stopping: end every session (as interrupted) and wait, briefly, for them
    /// to record it.
    pub async fn shutdown(&self) {
        self.shutdown.cancel();
        self.lock_watchers().clear();
        let handles: Vec<JoinHandle<()>> = self
            .lock_running()
            .values_mut()
            .map(|r| std::mem::replace(&mut r.handle, self.runtime.spawn(async {})))
            .collect();
        let all = futures_join(handles);
        if tokio::time::timeout(SHUTDOWN_WAIT, all).await.is_err() {
            tracing::warn!("agent sessions did not end in time; the next start settles them");
        }
    }

    fn lock_creating(&self) -> std::sync::MutexGuard<'_, HashSet<PathBuf>> {
        self.creating.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn lock_stops(&self) -> std::sync::MutexGuard<'_, HashMap<i64, SessionStop>> {
        self.stops.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn lock_running(&self) -> std::sync::MutexGuard<'_, HashMap<i64, Running>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn lock_written(&self) -> std::sync::MutexGuard<'_, HashMap<i64, u64>> {
        self.written.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn lock_watchers(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<i64, super::watch::TaskWatch>> {
        self.watchers.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The numbers of the slot folders under `dir` (`slot-3` → 3).
fn slot_numbers(dir: &std::path::Path) -> Vec<u32> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| {
                    e.file_name()
                        .to_str()
                        .and_then(|n| n.strip_prefix("slot-"))
                        .and_then(|n| n.parse().ok())
                })
                .collect()
        })
        .unwrap_or_default()
}

async fn futures_join(handles: Vec<JoinHandle<()>>) {
    for handle in handles {
        let _ = handle.await;
    }
}
