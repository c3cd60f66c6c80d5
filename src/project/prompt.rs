//! The first message of a task's session, and the progress log the agents and Healer keep.
//! The task list and the log are written by people and agents: they go into the prompt
//! inside fences the text cannot close, as data about the work, not as instructions from
//! Healer.

use std::path::Path;

use crate::error::{Error, Result};
use crate::store::VerifyCommand;
use crate::tasklist::{Task, PROGRESS_FILE};

/// How much of the end of progress.md the prompt carries.
const PROGRESS_TAIL_CHARS: usize = 4_000;

/// The prompt for `task`.
pub fn task_prompt(task: &Task, verify: &[VerifyCommand], progress: &str) -> String {
    let mut text = format!("Your task: {}\n", task.title.trim());
    if !task.description.trim().is_empty() {
        text.push_str(&fenced("The task's description", task.description.trim()));
    }
    if !task.acceptance.is_empty() {
        let list: Vec<String> = task
            .acceptance
            .iter()
            .map(|a| format!("- {}", a.trim()))
            .collect();
        text.push_str(&fenced("Done when", &list.join("\n")));
    }
    if verify.is_empty() {
        text.push_str("\nThe project has no verification commands: make sure your change works before you finish.\n");
    } else {
        text.push_str("\nWhen you finish, Healer runs these commands in the worktree; your change is committed only if all of them pass, so run them yourself first:\n");
        for v in verify {
            text.push_str(&format!("- {}: {}\n", v.name, v.command));
        }
    }
    let tail = tail_chars(progress.trim(), PROGRESS_TAIL_CHARS);
    if !tail.is_empty() {
        text.push_str(&fenced(
            "The end of the project's progress log (what was done before)",
            tail,
        ));
    }
    text
}

/// Text in a fence its content cannot close: the fence grows past any run of backticks in it.
fn fenced(label: &str, body: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in body.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat((longest + 1).max(3));
    format!("\n{label}:\n{fence}text\n{body}\n{fence}\n")
}

fn tail_chars(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    text.get(start..).unwrap_or_default()
}

/// The progress log of the repository at `repo` (empty when there is none).
pub fn read_progress(repo: &Path) -> String {
    std::fs::read_to_string(repo.join(PROGRESS_FILE)).unwrap_or_default()
}

/// Append an entry to the progress log (created with a heading when missing).
pub fn append_progress(repo: &Path, entry: &str) -> Result<()> {
    use std::io::Write;
    let path = repo.join(PROGRESS_FILE);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
    }
    let new = !path.exists();
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| Error::io(format!("cannot open {}", path.display()), e))?;
    let mut text = String::new();
    if new {
        text.push_str(
            "# Progress\n\nWhat the agents did, newest last. Healer and the agents append here.\n",
        );
    }
    text.push_str(&format!("\n{}\n", entry.trim_end()));
    file.write_all(text.as_bytes())
        .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))
}
