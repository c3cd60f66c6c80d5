//! Changing the file: read it again under a lock, change what was asked, write it atomically
//! (a temp file beside it, then a rename), so a reader never sees half a file and a line Healer
//! cannot read is never lost.

use std::ffi::OsStr;
use std::fs::File;
use std::path::Path;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::read::{Line, TaskFile};
use super::{Dep, Task, HEALER_DIR, TASKS_FILE};
use crate::beneath;
use crate::error::{Error, Result};
use nix::fcntl::OFlag;

/// The longest task title, as a workflow's (one line on a card).
pub const MAX_TASK_TITLE_CHARS: usize = 120;

/// The longest description (and, in all, acceptance criteria): a task's text goes into every
/// prompt of its sessions.
pub const MAX_TASK_DESCRIPTION_CHARS: usize = 20_000;

/// How long a writer waits for another writer (the app, the CLI) to finish.
const LOCK_WAIT: Duration = Duration::from_secs(5);

/// What a person fills in for a task (the board's form, `healer project task add`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename = "ProjectTaskEdit")]
pub struct TaskEdit {
    pub title: String,
    pub description: String,
    pub acceptance: Vec<String>,
    pub priority: Option<i64>,
    pub labels: Vec<String>,
    /// Ids of tasks this one waits for.
    pub deps: Vec<String>,
}

impl TaskEdit {
    /// What is wrong with it for `file`, in a sentence; `None` when it can be saved.
    pub fn problem(&self, file: &TaskFile, own_id: Option<&str>) -> Option<String> {
        if self.title.trim().is_empty() {
            return Some("give the task a title".to_string());
        }
        let title = self.title.trim().chars().count();
        if title > MAX_TASK_TITLE_CHARS {
            return Some(format!(
                "keep the title to {MAX_TASK_TITLE_CHARS} characters or fewer (it has {title}); \
                 the details go in the description"
            ));
        }
        if self.title.trim().chars().any(char::is_control) {
            return Some("keep the title to one line of plain text".to_string());
        }
        let description = self.description.trim().chars().count();
        if description > MAX_TASK_DESCRIPTION_CHARS {
            return Some(format!(
                "keep the description to {MAX_TASK_DESCRIPTION_CHARS} characters or fewer (it \
                 has {description}); put long material in a file in the repository and name it"
            ));
        }
        let criteria: usize = self.acceptance.iter().map(|a| a.chars().count()).sum();
        if criteria > MAX_TASK_DESCRIPTION_CHARS {
            return Some(format!(
                "keep the acceptance criteria to {MAX_TASK_DESCRIPTION_CHARS} characters or \
                 fewer in all (they have {criteria})"
            ));
        }
        if let Some(p) = self.priority.filter(|p| !(0..=9).contains(p)) {
            return Some(format!(
                "the priority {p} is not between 0 (most urgent) and 9"
            ));
        }
        for dep in &self.deps {
            if Some(dep.as_str()) == own_id {
                return Some("a task cannot wait for itself".to_string());
            }
            if file.task(dep).is_none() {
                return Some(format!("there is no task {dep:?} to wait for"));
            }
        }
        None
    }

    fn apply(&self, task: &mut Task) {
        task.title = self.title.trim().to_string();
        task.description = self.description.trim().to_string();
        task.acceptance = clean(&self.acceptance);
        if let Some(p) = self.priority {
            task.priority = p;
        }
        task.labels = clean(&self.labels);
        // Links other than "blocks" (discovered-from …) are kept as they were.
        let mut deps: Vec<Dep> = task.deps.iter().filter(|d| !d.blocks()).cloned().collect();
        deps.extend(clean(&self.deps).into_iter().map(Dep::Id));
        task.deps = deps;
    }
}

fn clean(items: &[String]) -> Vec<String> {
    items
        .iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

impl TaskFile {
    /// An id no task has: `t1`, `t2`, …
    pub fn next_id(&self) -> String {
        let highest = self
            .lines
            .iter()
            .filter_map(|l| match l {
                Line::Task(t) => t.id.strip_prefix('t').and_then(|n| n.parse::<u64>().ok()),
                Line::Kept(_) | Line::Raw(_) => None,
            })
            .max()
            .unwrap_or(0);
        format!("t{}", highest + 1)
    }

    /// Add a new open task from `edit`; returns it.
    pub fn add(&mut self, edit: &TaskEdit, now: &str) -> Result<Task> {
        if let Some(problem) = edit.problem(self, None) {
            return Err(Error::InvalidInput(problem));
        }
        let mut task = Task::new(&self.next_id(), edit.title.trim(), now);
        edit.apply(&mut task);
        self.lines.push(Line::Task(Box::new(task.clone())));
        self.check();
        Ok(task)
    }

    /// Change a task's fields from `edit`.
    pub fn edit(&mut self, id: &str, edit: &TaskEdit, now: &str) -> Result<Task> {
        if let Some(problem) = edit.problem(self, Some(id)) {
            return Err(Error::InvalidInput(problem));
        }
        self.update(id, now, |task| edit.apply(task))
    }

    /// Change the first task with `id` in place.
    pub fn update(&mut self, id: &str, now: &str, change: impl FnOnce(&mut Task)) -> Result<Task> {
        let task = self
            .lines
            .iter_mut()
            .find_map(|l| match l {
                Line::Task(t) if t.id == id => Some(t),
                _ => None,
            })
            .ok_or_else(|| Error::NotFound {
                what: format!("task {id:?} in {TASKS_FILE}"),
            })?;
        change(task);
        task.updated_at = now.to_string();
        let changed = task.as_ref().clone();
        self.check();
        Ok(changed)
    }

    /// Put task `id` just before task `before` and give it that task's priority, so it runs
    /// first of the two; with no `before`, last of its column (the least urgent priority there).
    pub fn move_task(&mut self, id: &str, before: Option<&str>, now: &str) -> Result<Task> {
        let from = self.line_of(id)?;
        let target = match before {
            Some(other) if other != id => {
                Some((self.line_of(other)?, self.task(other).map(|t| t.priority)))
            }
            _ => None,
        };
        let Line::Task(mut task) = self.lines.remove(from) else {
            return Err(Error::Internal(
                "a task line changed under the edit".to_string(),
            ));
        };
        task.updated_at = now.to_string();
        match target {
            Some((at, priority)) => {
                task.priority = priority.unwrap_or(task.priority);
                // Removing the line moved the ones after it up by one.
                let at = if at > from { at - 1 } else { at };
                self.lines.insert(at, Line::Task(task.clone()));
            }
            None => {
                let least_urgent = self
                    .tasks()
                    .into_iter()
                    .filter(|t| t.status == task.status)
                    .map(|t| t.priority)
                    .max()
                    .unwrap_or(task.priority);
                task.priority = task.priority.max(least_urgent);
                self.lines.push(Line::Task(task.clone()));
            }
        }
        self.check();
        Ok(*task)
    }

    fn line_of(&self, id: &str) -> Result<usize> {
        self.lines
            .iter()
            .position(|l| matches!(l, Line::Task(t) if t.id == id))
            .ok_or_else(|| Error::NotFound {
                what: format!("task {id:?} in {TASKS_FILE}"),
            })
    }
}

/// Read the task list of the repository at `repo`, change it with `change`, and write it back
/// atomically, under a lock so that the app and the CLI never write over each other.
///
/// A person's editor or shell takes no lock: the file can change between Healer's read and
/// its write. So the write goes in only over exactly what was read (`beneath::replace_if`);
/// otherwise the file is read again and `change` applied again to what the person wrote —
/// their edit is kept, Healer's change is made on top of it. `change` is never applied to a
/// file that already holds its result. `.healer/` and its files are opened without following
/// links: a repository that commits them as links to elsewhere is refused with a sentence.
pub fn modify<T>(repo: &Path, mut change: impl FnMut(&mut TaskFile) -> Result<T>) -> Result<T> {
    write_once(repo, &mut change).map(|(result, _)| result)
}

/// What a write put in: the file as read, and as written (`None`: nothing needed writing).
type Written = Option<(Option<Vec<u8>>, Vec<u8>)>;

/// After a write, how long another program's save may still land on top of it: an editor that
/// saves by copying the file, changing the copy and renaming it back does all of that in
/// milliseconds, and a copy taken before Healer's write puts the file back without it.
pub const SETTLE: Duration = Duration::from_millis(250);
/// Times a change saved over that way is made again before Healer gives up and says so.
const SETTLE_ROUNDS: usize = 10;

/// [`modify`], then a look once [`SETTLE`] has passed: if another program saved over the file
/// from a copy taken before Healer's write (Healer's change gone, the other program's in), the
/// change is made again on what it wrote. For changes a person is told were made ("Added
/// task t41"): the sentence is said only once the change is in the file. Not for the engine's
/// own bookkeeping on every step (a status it sets is checked again against its records).
pub fn modify_settled<T>(
    repo: &Path,
    mut change: impl FnMut(&mut TaskFile) -> Result<T>,
) -> Result<T> {
    let path = repo.join(TASKS_FILE);
    for _ in 0..SETTLE_ROUNDS {
        let (result, written) = write_once(repo, &mut change)?;
        let Some((before, after)) = written else {
            return Ok(result);
        };
        std::thread::sleep(SETTLE);
        let dir = beneath::dir(repo, Path::new(HEALER_DIR), false)
            .map_err(|e| beneath::engine_error(format!("cannot open {}", path.display()), e))?;
        let now = dir
            .read(OsStr::new(TASKS_NAME))
            .map_err(|e| beneath::engine_error(format!("cannot read {}", path.display()), e))?;
        if !saved_over(before.as_deref(), &after, now.as_deref()) {
            return Ok(result);
        }
        tracing::info!(
            "another program saved {} over Healer's change; Healer makes it again",
            path.display()
        );
    }
    Err(Error::InvalidInput(format!(
        "another program saved {} over Healer's change {SETTLE_ROUNDS} times in a row, so it \
         is not in the file; try again when that program has finished",
        path.display()
    )))
}

/// Whether `now` lost a change that went from `before` to `after`: a task the change touched
/// is back as it was before it (a new task gone, an edited one as it was). A task changed
/// again since (by anyone, on top of Healer's change) is not lost.
fn saved_over(before: Option<&[u8]>, after: &[u8], now: Option<&[u8]>) -> bool {
    let by_id = |bytes: Option<&[u8]>| -> std::collections::HashMap<String, Task> {
        bytes
            .map(TaskFile::parse_bytes)
            .unwrap_or_default()
            .tasks()
            .into_iter()
            .map(|t| (t.id.clone(), t.clone()))
            .collect()
    };
    let (before, after, now) = (by_id(before), by_id(Some(after)), by_id(now));
    let ids: std::collections::HashSet<&String> = before.keys().chain(after.keys()).collect();
    ids.into_iter()
        .filter(|id| before.get(*id) != after.get(*id))
        .any(|id| now.get(id) == before.get(id))
}

fn write_once<T>(
    repo: &Path,
    change: &mut impl FnMut(&mut TaskFile) -> Result<T>,
) -> Result<(T, Written)> {
    let path = repo.join(TASKS_FILE);
    let dir = beneath::dir(repo, Path::new(HEALER_DIR), true).map_err(|e| {
        beneath::engine_error(
            format!("cannot open {}", repo.join(HEALER_DIR).display()),
            e,
        )
    })?;
    ensure_ignore(&dir)?;
    let _lock = lock(&dir)?;
    let name = OsStr::new(TASKS_NAME);
    let written = |e| beneath::engine_error(format!("cannot write {}", path.display()), e);
    for _ in 0..MERGE_TRIES {
        let before = dir
            .read(name)
            .map_err(|e| beneath::engine_error(format!("cannot read {}", path.display()), e))?;
        let mut file = before
            .as_deref()
            .map(TaskFile::parse_bytes)
            .unwrap_or_default();
        let result = change(&mut file)?;
        let after = file.render_bytes();
        if before.as_deref() == Some(after.as_slice()) {
            return Ok((result, None));
        }
        if dir
            .replace_if(name, &after, before.as_deref())
            .map_err(written)?
        {
            return Ok((result, Some((before, after))));
        }
    }
    Err(Error::InvalidInput(format!(
        "{} kept changing while Healer wrote it ({MERGE_TRIES} tries); nothing of Healer's \
         change was written — try again when the other program has finished",
        path.display()
    )))
}

/// How often a write is tried again over a file that keeps changing underneath.
const MERGE_TRIES: usize = 50;

/// The task list's name in `.healer/`.
const TASKS_NAME: &str = "tasks.jsonl";
const LOCK_NAME: &str = ".tasks.lock";

/// A `.gitignore` in `.healer/` for Healer's own lock and temp files.
fn ensure_ignore(dir: &beneath::Dir) -> Result<()> {
    let name = OsStr::new(".gitignore");
    let present = dir.exists(name).map_err(|e| {
        beneath::engine_error(format!("cannot look into {}", dir.path().display()), e)
    })?;
    if !present {
        dir.replace(name, b".tasks.lock\n*.tmp\n").map_err(|e| {
            beneath::engine_error(
                format!("cannot write {}", dir.path().join(name).display()),
                e,
            )
        })?;
    }
    Ok(())
}

fn lock(dir: &beneath::Dir) -> Result<File> {
    let path = dir.path().join(LOCK_NAME);
    let flags = OFlag::O_WRONLY | OFlag::O_CREAT;
    let file = dir
        .open(OsStr::new(LOCK_NAME), flags, 0o644)
        .map_err(|e| beneath::engine_error(format!("cannot open {}", path.display()), e))?;
    let deadline = Instant::now() + LOCK_WAIT;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(std::fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(Error::InvalidInput(format!(
                    "another program has been changing {} for {} s; try again in a moment",
                    path.display(),
                    LOCK_WAIT.as_secs()
                )))
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(Error::io(format!("cannot lock {}", path.display()), e))
            }
        }
    }
}
