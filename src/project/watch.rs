//! Noticing hand edits of a task list: a debounced watcher (notify) on each project's
//! `.healer/` folder. A change whose content is not what Healer last wrote is announced, so
//! the board follows a person's or an agent's edit. Dropping a [`TaskWatch`] stops it.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::{Arc, Weak};
use std::time::Duration;

use notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{new_debouncer, DebounceEventResult, Debouncer, RecommendedCache};

use super::runner::Projects;
use crate::error::{Error, Result};
use crate::events::Event;
use crate::store::Project;
use crate::tasklist::{read_file, HEALER_DIR, TASKS_FILE};

/// Edits closer together than this are one change (an editor's save is several events).
const DEBOUNCE: Duration = Duration::from_millis(150);

/// A project's watcher; dropping it stops watching.
pub struct TaskWatch {
    _debouncer: Debouncer<RecommendedWatcher, RecommendedCache>,
}

pub fn content_hash(bytes: &[u8]) -> u64 {
    let mut hasher = DefaultHasher::new();
    bytes.hash(&mut hasher);
    hasher.finish()
}

impl Projects {
    /// Watch `project`'s task list (again, if it was watched already).
    pub fn watch(self: &Arc<Self>, project: &Project) -> Result<()> {
        let repo = PathBuf::from(&project.path);
        let dir = repo.join(HEALER_DIR);
        std::fs::create_dir_all(&dir)
            .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
        let file = repo.join(TASKS_FILE);
        if let Ok(bytes) = std::fs::read(&file) {
            self.lock_written().insert(project.id, content_hash(&bytes));
        }
        let me: Weak<Projects> = Arc::downgrade(self);
        let project_id = project.id;
        let mut debouncer = new_debouncer(DEBOUNCE, None, move |result: DebounceEventResult| {
            let Ok(events) = result else { return };
            let touched = events
                .iter()
                .any(|e| e.paths.iter().any(|p| p.ends_with("tasks.jsonl")));
            if touched {
                if let Some(projects) = me.upgrade() {
                    projects.tasks_file_changed(project_id, &file);
                }
            }
        })
        .map_err(|e| Error::Internal(format!("cannot watch {}: {e}", dir.display())))?;
        debouncer
            .watch(&dir, RecursiveMode::NonRecursive)
            .map_err(|e| Error::Internal(format!("cannot watch {}: {e}", dir.display())))?;
        self.lock_watchers().insert(
            project.id,
            TaskWatch {
                _debouncer: debouncer,
            },
        );
        Ok(())
    }

    pub fn unwatch(&self, project_id: i64) {
        self.lock_watchers().remove(&project_id);
    }

    /// Watch every project (the long-running engine, at start).
    pub fn watch_all(self: &Arc<Self>) -> Result<()> {
        for project in self.services.store.list_projects()? {
            if let Err(e) = self.watch(&project) {
                tracing::warn!(
                    "the task list of \u{201c}{}\u{201d} is not watched: {e}",
                    project.name
                );
            }
        }
        Ok(())
    }

    fn tasks_file_changed(&self, project_id: i64, file: &std::path::Path) {
        let bytes = std::fs::read(file).unwrap_or_default();
        let hash = content_hash(&bytes);
        if self.lock_written().insert(project_id, hash) == Some(hash) {
            return; // Healer's own write.
        }
        let Ok(project) = self.services.store.project(project_id) else {
            return;
        };
        let problems = read_file(file).map_or(0, |f| f.problems.len());
        let emitted = self.services.bus.emit(Event::ProjectTasksChanged {
            project_id,
            name: project.name.clone(),
            problems: u32::try_from(problems).unwrap_or(u32::MAX),
            what: "the file was changed outside Healer".to_string(),
        });
        if let Err(e) = emitted {
            tracing::warn!("a change of a task list was not announced: {e}");
        }
        // Another program's save may have undone a status Healer wrote.
        if let Err(e) = self.reconcile_tasks(&project) {
            tracing::warn!("the task list was not brought up to date: {e}");
        }
    }
}
