//! What the Projects page, the board and the task page show, assembled from the store (the
//! project, its sessions) and the repository (its task list, its progress log, its state).

use std::collections::HashSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::prompt::read_progress;
use super::repo::{inspect, RepoCheck};
use crate::error::{Error, Result};
use crate::store::{Project, SessionRecord, Store, StoredStep};
use crate::tasklist::{
    read_file, ready, ready_order, Problem, Task, TaskFile, TaskIndex, TaskStatus, TASKS_FILE,
};

/// How many sessions a project page lists.
const RECENT_SESSIONS: u32 = 20;

/// Tasks per column of the board.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct Columns {
    pub open: u32,
    pub in_progress: u32,
    pub blocked: u32,
    pub closed: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct ProjectSummary {
    pub project: Project,
    pub columns: Columns,
    /// Open tasks whose dependencies are closed.
    pub ready: u32,
    /// Lines of the task list that are wrong (each reported, none dropped).
    pub problems: u32,
    /// Sessions running now.
    pub running: u32,
    /// Why the task list could not be read, if it could not.
    pub unreadable: Option<String>,
}

/// A task as the board shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct BoardTask {
    pub task: Task,
    /// It would run next if asked (open, dependencies closed).
    pub ready: bool,
    /// Why it is not ready, when it is open but waits.
    pub waiting: Option<String>,
    /// The titles of the tasks it waits for (for the card).
    pub waits_for: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ProjectDetail {
    pub project: Project,
    pub repo: RepoCheck,
    /// In file order; the UI sorts each column by priority, then this order.
    pub tasks: Vec<BoardTask>,
    pub problems: Vec<Problem>,
    /// The id of the task "Run next" would start.
    pub next: Option<String>,
    /// progress.md as written (Markdown; the UI renders and sanitises it).
    pub progress: String,
    pub sessions: Vec<SessionRecord>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct TaskDetail {
    pub project: Project,
    pub task: BoardTask,
    /// Newest first.
    pub sessions: Vec<SessionRecord>,
    /// What steering saw and did on this task, oldest first.
    pub steering: Vec<crate::store::SteeringEntry>,
    /// What the healer service did on this task's failures, newest first.
    pub heals: Vec<crate::store::HealerInvocation>,
    /// Snapshots of the task's worktree Healer pinned, newest first.
    pub snapshots: Vec<crate::store::SnapshotRecord>,
    /// Work of the task on its branch that the main branch does not hold yet (what *Accept*
    /// and *Discard* act on); `None` when there is none.
    pub unaccepted: Option<Unaccepted>,
    /// The pull request Healer opened for the task's branch, if it did.
    pub pull_request: Option<crate::store::PullRequestRecord>,
}

/// A task's work waiting on its branch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct Unaccepted {
    pub branch: String,
    pub main_branch: String,
    /// The main branch has commits the task's branch does not: accepting brings them in first.
    pub main_moved: bool,
    /// How the project accepts work unless the person picks another way.
    pub how: super::finish::AcceptHow,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct SessionDetail {
    pub session: SessionRecord,
    pub project_name: String,
    pub steps: Vec<StoredStep>,
    /// What it used of its model through Healer's gateway (`None`: the agent's own sign-in, or
    /// the built-in agent, whose use is on its thread).
    pub model_use: Option<crate::store::SessionModelUse>,
    /// What its agent asked the person, oldest first (one waiting: the session waits for you).
    pub questions: Vec<crate::approval::AgentAsk>,
}

fn tasks_of(project: &Project) -> Result<TaskFile> {
    read_file(&Path::new(&project.path).join(TASKS_FILE))
}

/// A task as a person names it: its title in quotes, or "a task that is no longer in the list".
pub fn task_words(project: &Project, task_id: &str) -> String {
    tasks_of(project)
        .ok()
        .and_then(|file| {
            file.task(task_id)
                .map(|t| format!("\u{201c}{}\u{201d}", t.title))
        })
        .unwrap_or_else(|| "a task that is no longer in the list".to_string())
}

/// Why a task Healer holds does not start: said on its card and on its page.
pub const HELD_WORDS: &str =
    "Healer is handling its failure (or waits for your answer); no agent starts on it until then";

fn board_task(
    index: &TaskIndex<'_>,
    task: &Task,
    ready: &HashSet<&str>,
    held: &HashSet<&str>,
) -> BoardTask {
    let waits_for = task
        .blocking_deps()
        .filter_map(|d| index.task(d))
        .filter(|t| t.status != TaskStatus::Closed)
        .map(|t| t.title.clone())
        .collect();
    BoardTask {
        ready: ready.contains(task.id.as_str()),
        waiting: if task.status == TaskStatus::Open && held.contains(task.id.as_str()) {
            Some(HELD_WORDS.to_string())
        } else if task.status == TaskStatus::Open {
            index.not_ready_reason(task)
        } else {
            None
        },
        waits_for,
        task: task.clone(),
    }
}

pub fn summary(store: &Store, project: Project) -> Result<ProjectSummary> {
    let mut columns = Columns::default();
    let running_here = store
        .list_sessions(project.id, None, RECENT_SESSIONS)?
        .iter()
        .filter(|s| s.status == crate::session::SessionStatus::Running)
        .count();
    let (ready_count, problems, unreadable) = match tasks_of(&project) {
        Ok(file) => {
            for task in file.tasks() {
                let slot = match task.status {
                    TaskStatus::Open => &mut columns.open,
                    TaskStatus::InProgress => &mut columns.in_progress,
                    TaskStatus::Blocked => &mut columns.blocked,
                    TaskStatus::Closed => &mut columns.closed,
                };
                *slot += 1;
            }
            let held = store.held_tasks(project.id)?;
            let ready_here = ready(&file)
                .iter()
                .filter(|t| !held.iter().any(|h| h == &t.id))
                .count();
            (ready_here, file.problems.len(), None)
        }
        Err(e) => (0, 0, Some(e.to_string())),
    };
    Ok(ProjectSummary {
        project,
        columns,
        ready: u32::try_from(ready_count).unwrap_or(u32::MAX),
        problems: u32::try_from(problems).unwrap_or(u32::MAX),
        running: u32::try_from(running_here).unwrap_or(u32::MAX),
        unreadable,
    })
}

pub fn detail(store: &Store, project: Project) -> Result<ProjectDetail> {
    // A list that cannot be read (a link, a permission) leaves the rest of the page usable:
    // its settings, its sessions, removing it — and says why the board is empty.
    let (file, unreadable) = match tasks_of(&project) {
        Ok(file) => (file, None),
        Err(e) => (TaskFile::default(), Some(e.to_string())),
    };
    let mut repo = inspect(Path::new(&project.path));
    if let Some(why) = unreadable {
        repo.notes.insert(
            0,
            format!("The task list cannot be read, so the board is empty: {why}"),
        );
    }
    let index = TaskIndex::new(&file);
    // A task Healer holds (an invocation works on it or waits) is not ready: Run next passes
    // over it, and the board says why.
    let held_ids = store.held_tasks(project.id)?;
    let held: HashSet<&str> = held_ids.iter().map(String::as_str).collect();
    let next: Vec<&Task> = ready_order(&index.tasks)
        .into_iter()
        .filter(|t| !held.contains(t.id.as_str()))
        .collect();
    let ready_ids: HashSet<&str> = next.iter().map(|t| t.id.as_str()).collect();
    let tasks = index
        .tasks
        .iter()
        .map(|t| board_task(&index, t, &ready_ids, &held))
        .collect();
    Ok(ProjectDetail {
        repo,
        next: next.first().map(|t| t.id.clone()),
        progress: read_progress(Path::new(&project.path)),
        sessions: store.list_sessions(project.id, None, RECENT_SESSIONS)?,
        problems: file.problems.clone(),
        tasks,
        project,
    })
}

pub fn task_detail(store: &Store, project: Project, task_id: &str) -> Result<TaskDetail> {
    let file = tasks_of(&project)?;
    let index = TaskIndex::new(&file);
    let held_ids = store.held_tasks(project.id)?;
    let held: HashSet<&str> = held_ids.iter().map(String::as_str).collect();
    let ready_ids: HashSet<&str> = ready_order(&index.tasks)
        .into_iter()
        .map(|t| t.id.as_str())
        .filter(|id| !held.contains(id))
        .collect();
    let task = index.task(task_id).ok_or_else(|| Error::NotFound {
        what: format!("task {task_id:?} in \u{201c}{}\u{201d}", project.name),
    })?;
    let unaccepted = unaccepted(&project, task_id);
    Ok(TaskDetail {
        unaccepted,
        pull_request: store.pull_request(project.id, task_id)?,
        task: board_task(&index, task, &ready_ids, &held),
        sessions: store.list_sessions(project.id, Some(task_id), RECENT_SESSIONS)?,
        steering: store.steering_timeline(project.id, task_id)?,
        heals: store.invocations(Some(project.id), Some(task_id), RECENT_SESSIONS)?,
        snapshots: store.snapshots(Some(project.id), Some(task_id))?,
        project,
    })
}

/// The task's work on its branch that the main branch does not hold (none while it is in
/// progress, or when its branch is gone).
fn unaccepted(project: &Project, task_id: &str) -> Option<Unaccepted> {
    let repo = Path::new(&project.path);
    let main = &project.settings.main_branch;
    let branch = super::worktree::branch_name(task_id);
    if !super::finish::has_work(repo, main, &branch).unwrap_or(false) {
        return None;
    }
    Some(Unaccepted {
        main_moved: super::finish::main_moved(repo, main, &branch).unwrap_or(false),
        branch,
        main_branch: main.clone(),
        how: project.settings.finishing.accept,
    })
}

pub fn session_detail(store: &Store, session_id: i64) -> Result<SessionDetail> {
    let session = store.session(session_id)?;
    let project_name = store
        .project(session.project_id)
        .map(|p| p.name)
        .unwrap_or_default();
    Ok(SessionDetail {
        steps: store.session_steps(session_id, 0)?,
        model_use: store.session_model_use(session_id)?,
        questions: store.session_approvals(session_id)?,
        session,
        project_name,
    })
}

/// Why nothing can run, in a sentence.
pub(super) fn no_ready_task(project: &Project, file: &TaskFile) -> String {
    let tasks = file.tasks();
    if tasks.is_empty() {
        return format!(
            "\u{201c}{}\u{201d} has no tasks yet; add one first",
            project.name
        );
    }
    let open = tasks
        .iter()
        .filter(|t| t.status == TaskStatus::Open)
        .count();
    if open == 0 {
        format!(
            "\u{201c}{}\u{201d} has no open task: every task is in progress, blocked or closed",
            project.name
        )
    } else {
        format!(
            "none of the {open} open task(s) of \u{201c}{}\u{201d} is ready: each waits for a task that is not closed yet",
            project.name
        )
    }
}
