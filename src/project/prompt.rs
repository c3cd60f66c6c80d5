//! The first message of a task's session, and the progress log the agents and Healer keep.
//! The task list and the log are written by people and agents: they go into the prompt
//! inside fences the text cannot close, as data about the work, not as instructions from
//! Healer.

use std::path::Path;

use crate::error::Result;
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

/// The progress log of the repository at `repo` (empty when there is none, or when the
/// repository made it a link: it is not followed).
pub fn read_progress(repo: &Path) -> String {
    crate::beneath::read(repo, Path::new(PROGRESS_FILE))
        .ok()
        .flatten()
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default()
}

/// `text` without terminal escape sequences (an agent's summary may carry its colours) and
/// other control characters but line breaks and tabs: the log is read in editors and shown
/// rendered on the board.
fn plain(text: &str) -> String {
    anstream::adapter::strip_str(text)
        .to_string()
        .chars()
        .filter(|c| !c.is_control() || matches!(c, '\n' | '\t'))
        .collect()
}

/// Append an entry to the progress log (created with a heading when missing). The log and
/// its folder are opened without following links: a repository could commit them as links.
pub fn append_progress(repo: &Path, entry: &str) -> Result<()> {
    let path = repo.join(PROGRESS_FILE);
    let rel = Path::new(PROGRESS_FILE);
    let context = || format!("cannot write {}", path.display());
    let (folder, name) = crate::beneath::parent(repo, rel, true)
        .map_err(|e| crate::beneath::engine_error(context(), e))?;
    let new = !folder
        .exists(name)
        .map_err(|e| crate::beneath::engine_error(context(), e))?;
    let mut text = String::new();
    if new {
        text.push_str(
            "# Progress\n\nWhat the agents did, newest last. Healer and the agents append here.\n",
        );
    }
    text.push_str(&format!("\n{}\n", plain(entry).trim_end()));
    folder
        .append(name, text.as_bytes())
        .map(|_| ())
        .map_err(|e| crate::beneath::engine_error(context(), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_progress_entry_keeps_no_terminal_escapes() {
        let dir = tempfile::tempdir().expect("test setup");
        append_progress(
            dir.path(),
            "\u{1b}[32mAll tests pass\u{1b}[0m\u{7}\nnext:\tship\u{1b}]0;title\u{7}",
        )
        .expect("appended");
        let log = read_progress(dir.path());
        assert!(log.ends_with("\nAll tests pass\nnext:\tship\n"), "{log:?}");
    }
}
