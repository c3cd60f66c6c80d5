//! Reading the file: every line is kept in order, good or not, with what is wrong with it.

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use super::check::check_graph;
use super::{id_problem, Problem, ProblemKind, Task, TaskStatus};
use crate::error::Result;

/// One line of the file.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    Task(Box<Task>),
    /// Blank, or not a usable task: written back exactly as it was.
    Kept(String),
    /// Not UTF-8 text: written back byte for byte.
    Raw(Vec<u8>),
}

/// The file as read: its lines, and the problems found in them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TaskFile {
    pub(super) lines: Vec<Line>,
    pub problems: Vec<Problem>,
}

/// Read the task list at `path` (`<repository>/.healer/tasks.jsonl`); a missing file is an
/// empty list. The file and its folder are opened without following links: a repository
/// could commit either as a link to a file of the person's elsewhere.
pub fn read_file(path: &Path) -> Result<TaskFile> {
    let (Some(name), Some(folder)) = (path.file_name(), path.parent()) else {
        return Ok(TaskFile::default());
    };
    let (root, below) = match (folder.parent(), folder.file_name()) {
        (Some(root), Some(below)) => (root, Path::new(below).join(name)),
        _ => (folder, Path::new(name).to_path_buf()),
    };
    let context = || format!("cannot read {}", path.display());
    match crate::beneath::read(root, &below) {
        Ok(Some(bytes)) => Ok(TaskFile::parse_bytes(&bytes)),
        Ok(None) => Ok(TaskFile::default()),
        Err(e) => Err(crate::beneath::engine_error(context(), e)),
    }
}

impl TaskFile {
    pub fn parse(text: &str) -> TaskFile {
        TaskFile::parse_bytes(text.as_bytes())
    }

    /// The file's bytes, line by line: a line that is not UTF-8 text is reported with its
    /// number and kept byte for byte; the rest of the list works as usual.
    pub fn parse_bytes(bytes: &[u8]) -> TaskFile {
        let mut file = TaskFile::default();
        let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        let lines = (!bytes.is_empty()).then(|| body.split(|b| *b == b'\n'));
        for (index, raw) in lines.into_iter().flatten().enumerate() {
            let number = u32::try_from(index + 1).unwrap_or(u32::MAX);
            let whole = raw;
            let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
            let Ok(raw) = std::str::from_utf8(raw) else {
                file.problems.push(Problem {
                    line: Some(number),
                    kind: ProblemKind::InvalidJson,
                    message: format!(
                        "Line {number}: not UTF-8 text (a file saved in another encoding?); the \
                         line is kept as it is until you fix it"
                    ),
                });
                file.lines.push(Line::Raw(whole.to_vec()));
                continue;
            };
            match parse_line(raw) {
                Ok(Some(task)) => file.lines.push(Line::Task(Box::new(task))),
                Ok(None) => file.lines.push(Line::Kept(raw.to_string())),
                Err((kind, message)) => {
                    file.problems.push(Problem {
                        line: Some(number),
                        kind,
                        message: format!("Line {number}: {message}"),
                    });
                    file.lines.push(Line::Kept(raw.to_string()));
                }
            }
        }
        file.check();
        file
    }

    /// Duplicates, unknown dependencies and cycles, found again after every change.
    pub(super) fn check(&mut self) {
        self.problems.retain(|p| {
            matches!(
                p.kind,
                ProblemKind::InvalidJson
                    | ProblemKind::NotATask
                    | ProblemKind::BadId
                    | ProblemKind::UnknownStatus
            )
        });
        let mut first_line: HashMap<&str, u32> = HashMap::new();
        let mut duplicates = Vec::new();
        for (number, task) in self.numbered_tasks() {
            match first_line.get(task.id.as_str()) {
                Some(first) => duplicates.push(Problem {
                    line: Some(number),
                    kind: ProblemKind::DuplicateId,
                    message: format!(
                        "Line {number}: the id {:?} is already used on line {first}; this line is kept in the file but left off the board until it has an id of its own",
                        task.id
                    ),
                }),
                None => {
                    first_line.insert(&task.id, number);
                }
            }
        }
        let graph = check_graph(&self.tasks());
        self.problems.extend(duplicates);
        self.problems.extend(graph);
        self.problems.sort_by_key(|p| p.line.unwrap_or(u32::MAX));
    }

    /// The tasks the board and the runner use: each id once (its first line), in file order.
    pub fn tasks(&self) -> Vec<&Task> {
        let mut seen = std::collections::HashSet::new();
        self.lines
            .iter()
            .filter_map(|l| match l {
                Line::Task(t) => Some(t.as_ref()),
                Line::Kept(_) | Line::Raw(_) => None,
            })
            .filter(|t| seen.insert(t.id.as_str()))
            .collect()
    }

    /// The task with `id` (its first line, as [`TaskFile::tasks`] has it).
    pub fn task(&self, id: &str) -> Option<&Task> {
        self.lines.iter().find_map(|l| match l {
            Line::Task(t) if t.id == id => Some(t.as_ref()),
            _ => None,
        })
    }

    /// Every task line with its line number, duplicates included.
    fn numbered_tasks(&self) -> impl Iterator<Item = (u32, &Task)> {
        self.lines.iter().enumerate().filter_map(|(i, l)| match l {
            Line::Task(t) => Some((u32::try_from(i + 1).unwrap_or(u32::MAX), t.as_ref())),
            Line::Kept(_) | Line::Raw(_) => None,
        })
    }

    /// The file's text: tasks as JSON, every other line exactly as it was read (a line that is
    /// not UTF-8 shown with replacement characters; [`TaskFile::render_bytes`] is what is
    /// written).
    pub fn render(&self) -> String {
        String::from_utf8_lossy(&self.render_bytes()).into_owned()
    }

    /// The file's bytes: tasks as JSON, every other line byte for byte as it was read.
    pub fn render_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for line in &self.lines {
            match line {
                Line::Task(task) => match serde_json::to_vec(task) {
                    Ok(json) => out.extend_from_slice(&json),
                    // Cannot happen for these types; never lose the line if it did.
                    Err(_) => out.extend_from_slice(format!("{{\"id\":{:?}}}", task.id).as_bytes()),
                },
                Line::Kept(text) => out.extend_from_slice(text.as_bytes()),
                Line::Raw(bytes) => out.extend_from_slice(bytes),
            }
            out.push(b'\n');
        }
        out
    }
}

/// `Ok(None)`: a blank line. `Err`: what is wrong with the line.
fn parse_line(raw: &str) -> std::result::Result<Option<Task>, (ProblemKind, String)> {
    if raw.trim().is_empty() {
        return Ok(None);
    }
    let value: Value = serde_json::from_str(raw).map_err(|e| {
        (
            ProblemKind::InvalidJson,
            format!("not valid JSON ({e}); the line is kept as it is until you fix it"),
        )
    })?;
    let Value::Object(mut object) = value else {
        return Err((
            ProblemKind::NotATask,
            "not a JSON object; each line must be one task like {\"id\": \"t1\", \"title\": \"…\"}"
                .to_string(),
        ));
    };
    let id = match object.get("id") {
        Some(Value::String(id)) => id.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => return Err((ProblemKind::NotATask, "the task has no \"id\"".to_string())),
    };
    if let Some(problem) = id_problem(&id) {
        return Err((ProblemKind::BadId, problem));
    }
    if !matches!(object.get("title"), Some(Value::String(t)) if !t.trim().is_empty()) {
        return Err((
            ProblemKind::NotATask,
            format!("the task {id:?} has no \"title\""),
        ));
    }
    match object.get("status") {
        None | Some(Value::Null) => {
            object.insert("status".to_string(), Value::from("open"));
        }
        Some(Value::String(s)) if TaskStatus::parse(s).is_some() => {}
        Some(other) => {
            let shown = other
                .as_str()
                .map_or_else(|| other.to_string(), |s| format!("{s:?}"));
            return Err((
                ProblemKind::UnknownStatus,
                format!(
                    "the task {id:?} has the status {shown}, which is not one of open, in_progress, blocked, closed"
                ),
            ));
        }
    }
    if let Some(priority) = object.get("priority").filter(|p| !p.is_null()) {
        if !priority.as_i64().is_some_and(|p| (0..=9).contains(&p)) {
            return Err((
                ProblemKind::NotATask,
                format!(
                    "the task {id:?} has the priority {priority}, which is not a whole number \
                     between 0 (most urgent) and 9; it is left off the board until it is"
                ),
            ));
        }
    }
    object.insert("id".to_string(), Value::from(id.clone()));
    serde_json::from_value::<Task>(Value::Object(object))
        .map(Some)
        .map_err(|e| {
            (
                ProblemKind::NotATask,
                format!("the task {id:?} cannot be read ({e})"),
            )
        })
}
