//! Which task runs next: open, every task it waits for closed, not in a cycle; the most urgent
//! priority first (lower number), then the order of the file (which the board's reordering
//! changes).

use std::collections::{HashMap, HashSet};

use super::check::in_cycles;
use super::{Task, TaskFile, TaskStatus};

/// The ready tasks, the one to run first at the front.
pub fn ready(file: &TaskFile) -> Vec<&Task> {
    ready_order(&file.tasks())
}

/// [`ready`] over a list of tasks (each id once, in file order).
pub fn ready_order<'a>(tasks: &[&'a Task]) -> Vec<&'a Task> {
    let status: HashMap<&str, TaskStatus> =
        tasks.iter().map(|t| (t.id.as_str(), t.status)).collect();
    let cyclic = in_cycles(tasks);
    let mut ready: Vec<(usize, &Task)> = tasks
        .iter()
        .enumerate()
        .filter(|(_, t)| t.status == TaskStatus::Open && !cyclic.contains(&t.id))
        .filter(|(_, t)| {
            t.blocking_deps()
                .all(|d| status.get(d) == Some(&TaskStatus::Closed))
        })
        .map(|(i, t)| (i, *t))
        .collect();
    ready.sort_by_key(|(i, t)| (t.priority, *i));
    ready.into_iter().map(|(_, t)| t).collect()
}

/// Why `task` is not ready, in a sentence; `None` when it is.
pub fn not_ready_reason(file: &TaskFile, task: &Task) -> Option<String> {
    TaskIndex::new(file).not_ready_reason(task)
}

/// The tasks of a file looked up by id, with the cycles found once: what the board needs for
/// every task, without reading the list again for each (10,000 tasks in milliseconds).
pub struct TaskIndex<'a> {
    pub tasks: Vec<&'a Task>,
    by_id: HashMap<&'a str, &'a Task>,
    cyclic: HashSet<String>,
}

impl<'a> TaskIndex<'a> {
    pub fn new(file: &'a TaskFile) -> TaskIndex<'a> {
        let tasks = file.tasks();
        let by_id = tasks.iter().map(|t| (t.id.as_str(), *t)).collect();
        let cyclic = in_cycles(&tasks);
        TaskIndex {
            tasks,
            by_id,
            cyclic,
        }
    }

    pub fn task(&self, id: &str) -> Option<&'a Task> {
        self.by_id.get(id).copied()
    }

    /// Why `task` is not ready, in a sentence; `None` when it is.
    pub fn not_ready_reason(&self, task: &Task) -> Option<String> {
        match task.status {
            TaskStatus::Open => {}
            TaskStatus::InProgress => return Some("it is already in progress".to_string()),
            TaskStatus::Blocked => return Some("it is marked blocked".to_string()),
            TaskStatus::Closed => return Some("it is closed".to_string()),
        }
        if self.cyclic.contains(&task.id) {
            return Some("it waits for itself through a cycle of dependencies".to_string());
        }
        let waiting: Vec<String> = task
            .blocking_deps()
            .filter(|d| self.task(d).map(|t| t.status) != Some(TaskStatus::Closed))
            .map(|d| match self.task(d) {
                Some(t) => format!("\u{201c}{}\u{201d}", t.title),
                None => format!("{d} (not in the list)"),
            })
            .collect();
        if waiting.is_empty() {
            None
        } else {
            Some(format!("it waits for {}", waiting.join(", ")))
        }
    }
}
