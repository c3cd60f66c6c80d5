//! `run_tasks_doctor_like_checks`: the task list's structure — lines that are not tasks, bad
//! or duplicate ids, unknown statuses, dependencies on missing tasks, cycles, and tasks marked
//! in progress with no session running. The safe repair is made (a dead in-progress task goes
//! back to open); the rest is reported for a person.

use std::collections::HashSet;

use async_trait::async_trait;

use super::{Spell, SpellContext, SpellReport};
use crate::error::Result;
use crate::store::now;
use crate::tasklist::{TaskFile, TaskStatus};

pub const NAME: &str = "run_tasks_doctor_like_checks";

pub struct TasksDoctor;

/// What the checks found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Doctor {
    /// Problems for a person, in sentences.
    pub problems: Vec<String>,
    /// Tasks marked in progress that no session is working on.
    pub dead_in_progress: Vec<String>,
}

/// Check `file`; `live`: the tasks a session is running on now.
pub fn doctor(file: &TaskFile, live: &HashSet<String>) -> Doctor {
    Doctor {
        problems: file
            .problems
            .iter()
            .map(|p| match p.line {
                Some(line) => format!("line {line}: {}", p.message),
                None => p.message.clone(),
            })
            .collect(),
        dead_in_progress: file
            .tasks()
            .into_iter()
            .filter(|t| t.status == TaskStatus::InProgress && !live.contains(&t.id))
            .map(|t| t.id.clone())
            .collect(),
    }
}

#[async_trait]
impl Spell for TasksDoctor {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn cast(&self, cx: &SpellContext<'_>) -> Result<SpellReport> {
        let live: HashSet<String> = cx
            .services
            .store
            .running_sessions()?
            .into_iter()
            .filter(|s| s.project_id == cx.project.id && cx.projects.is_running(s.id))
            .map(|s| s.task_id)
            .collect();
        let at = now();
        let found = cx.projects.modify_tasks(cx.project, "Healer checked the task list", |file| {
            // Checked on the file as it is now, under its lock: a hand edit made meanwhile
            // is seen and kept.
            let found = doctor(file, &live);
            for id in &found.dead_in_progress {
                file.update(id, &at, |t| {
                    t.status = TaskStatus::Open;
                    t.assignee = None;
                    t.note = Some("Was marked in progress with no session running; Healer set it back to open".to_string());
                })?;
            }
            Ok(found)
        })?;
        let mut said = Vec::new();
        if !found.dead_in_progress.is_empty() {
            said.push(format!(
                "set {} back to open (in progress with no session running)",
                found.dead_in_progress.join(", ")
            ));
        }
        if !found.problems.is_empty() {
            said.push(format!(
                "{} problem(s) need a person: {}",
                found.problems.len(),
                found.problems.join("; ")
            ));
        }
        Ok(if said.is_empty() {
            SpellReport::not_done("The task list is in order; nothing to repair")
        } else {
            SpellReport::done(format!("The task list: {}", said.join("; ")))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dead_in_progress_task_and_the_files_problems_are_found() {
        let text = concat!(
            r#"{"id":"t1","title":"a","status":"in_progress"}"#,
            "\n",
            r#"{"id":"t2","title":"b","status":"in_progress"}"#,
            "\n",
            r#"{"id":"t3","title":"c","status":"open","deps":["nope"]}"#,
            "\n",
            r#"{"id":"t3","title":"dup","status":"open"}"#,
            "\n",
            r#"{"id":"t4","title":"d","status":"someday"}"#,
            "\n",
            "not json\n",
            r#"{"id":"t5","title":"e","status":"open","deps":["t6"]}"#,
            "\n",
            r#"{"id":"t6","title":"f","status":"open","deps":["t5"]}"#,
            "\n",
        );
        let file = TaskFile::parse(text);
        let live: HashSet<String> = ["t2".to_string()].into();
        let found = doctor(&file, &live);
        assert_eq!(found.dead_in_progress, vec!["t1"]);
        let all = found.problems.join("\n");
        assert!(all.contains("line 6"), "{all}");
        assert!(found.problems.len() >= 5, "{all}");
        assert!(all.contains("nope"), "{all}");
        assert!(all.contains("circle"), "{all}");
    }
}
