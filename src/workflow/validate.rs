//! What is wrong with a workflow before it is saved, field by field, in words for the person.

use serde::{Deserialize, Serialize};

use super::{capitalise, Runtime, WorkflowInput};
use crate::error::{Error, Result};

/// The longest time limit a run may have (a day).
pub const MAX_TIMEOUT_SECS: u32 = 86_400;

/// The longest title, in characters: it is a name in lists and notifications, not a text.
pub const MAX_TITLE_CHARS: usize = 120;

/// The largest script a workflow version may hold (1 MiB): every version is kept in the
/// database, and a script is read whole into memory to run or repair it.
pub const MAX_SCRIPT_BYTES: usize = 1 << 20;

/// A size as a person reads it ("1.5 MB", "800 KB").
pub fn size(bytes: usize) -> String {
    let b = bytes as f64;
    if b >= 1024.0 * 1024.0 {
        format!("{:.1} MB", b / (1024.0 * 1024.0))
    } else if b >= 1024.0 {
        format!("{:.0} KB", b / 1024.0)
    } else {
        format!("{bytes} bytes")
    }
}

/// The longest one-line summary of what a workflow does, in characters.
pub const MAX_SUMMARY_CHARS: usize = 500;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct FieldProblem {
    /// The input field: "title", "summary", "code", "schedule", "runtime", "entry",
    /// "timeout_secs", "env", "retry".
    pub field: String,
    pub message: String,
}

fn problem(field: &str, message: impl Into<String>) -> FieldProblem {
    FieldProblem {
        field: field.to_string(),
        message: message.into(),
    }
}

/// Every problem with `input`; empty when it can be saved. `check_code` is false when only
/// the settings are being changed.
pub fn validate(input: &WorkflowInput, check_code: bool) -> Vec<FieldProblem> {
    let mut problems = Vec::new();
    if input.title.trim().is_empty() {
        problems.push(problem("title", "Give the workflow a title"));
    } else if input.title.trim().chars().count() > MAX_TITLE_CHARS {
        problems.push(problem(
            "title",
            format!("Keep the title to {MAX_TITLE_CHARS} characters or fewer"),
        ));
    }
    // A line break or an escape code in a title would forge lines in lists and logs.
    if input.title.chars().any(char::is_control) {
        problems.push(problem(
            "title",
            "The title must be one line of plain text (no line breaks or control characters)",
        ));
    }
    if input.summary.chars().count() > MAX_SUMMARY_CHARS {
        problems.push(problem(
            "summary",
            format!("Keep the summary to {MAX_SUMMARY_CHARS} characters or fewer"),
        ));
    }
    if input.code.len() > MAX_SCRIPT_BYTES {
        problems.push(problem(
            "code",
            format!(
                "The script is {}; a workflow's script may be {} at most — keep data in a file \
                 beside it and read that",
                size(input.code.len()),
                size(MAX_SCRIPT_BYTES)
            ),
        ));
    } else if check_code && input.code.trim().is_empty() {
        problems.push(problem("code", "The script is empty"));
    }
    if let Some(p) = input.schedule.problem() {
        problems.push(problem("schedule", capitalise(&p)));
    }
    if let Some(p) = runtime_problem(&input.runtime) {
        problems.push(problem("runtime", p));
    }
    if let Some(entry) = &input.entry {
        if !plain_entry_name(entry) {
            problems.push(problem(
                "entry",
                "The script's file name must be a plain name like main.py",
            ));
        }
    }
    if input.timeout_secs == 0 || input.timeout_secs > MAX_TIMEOUT_SECS {
        problems.push(problem(
            "timeout_secs",
            format!("The time limit must be between 1 second and {MAX_TIMEOUT_SECS} seconds"),
        ));
    }
    for var in &input.env {
        let valid = !var.name.is_empty()
            && !var.name.starts_with(|c: char| c.is_ascii_digit())
            && var
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            problems.push(problem(
                "env",
                format!(
                    "{:?} is not a valid variable name (letters, digits and _)",
                    var.name
                ),
            ));
        } else if var.name.starts_with("HEALER_") {
            problems.push(problem(
                "env",
                format!("{} is reserved for Healer itself", var.name),
            ));
        }
    }
    if let Some(p) = input.retry.as_ref().and_then(|r| r.problem()) {
        problems.push(problem("retry", capitalise(&p)));
    }
    problems
}

/// Turn validation problems into one error that names them all.
pub(crate) fn refuse(problems: Vec<FieldProblem>) -> Result<()> {
    if problems.is_empty() {
        return Ok(());
    }
    let text: Vec<_> = problems
        .iter()
        .map(|p| format!("{}: {}", p.field, p.message))
        .collect();
    Err(Error::InvalidInput(text.join("; ")))
}

/// The interpreter must be on PATH, or the run can only fail.
pub fn runtime_problem(runtime: &Runtime) -> Option<String> {
    if let Runtime::Custom { command } = runtime {
        if !command.contains("{file}") {
            return Some("A custom command must contain {file} where the script goes".to_string());
        }
    }
    let program = runtime.program();
    if program.is_empty() {
        return Some("The command is empty".to_string());
    }
    match which::which(&program) {
        Ok(_) => None,
        Err(_) => Some(format!(
            "{program} was not found on PATH. Install it, or choose another runtime"
        )),
    }
}

/// Whether `entry` is a plain file name a script can be written under inside its folder: not
/// empty, no folder in it (`/`, `\\`), not hidden or `..`, no NUL, at most 255 bytes. Checked
/// when a workflow is saved, and again by a worker before it writes what it was handed.
pub fn plain_entry_name(entry: &str) -> bool {
    !entry.trim().is_empty()
        && entry.len() <= 255
        && !entry.contains(['/', '\\', '\0'])
        && !entry.starts_with('.')
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::workflow::Schedule;

    fn input() -> WorkflowInput {
        WorkflowInput {
            title: "Daily report".to_string(),
            runtime: Runtime::Bash,
            entry: None,
            schedule: Schedule::Manual,
            env: vec![],
            timeout_secs: 60,
            retry: None,
            code: "echo hi".to_string(),
            summary: String::new(),
        }
    }

    #[test]
    fn a_script_over_one_megabyte_is_refused_naming_the_cap() {
        let mut input = input();
        input.code = "#".repeat(MAX_SCRIPT_BYTES);
        assert!(validate(&input, true).is_empty());
        input.code.push('#');
        let problems = validate(&input, true);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].field, "code");
        assert!(
            problems[0].message.contains("may be 1.0 MB at most"),
            "{problems:?}"
        );
    }

    fn fields(problems: &[FieldProblem]) -> Vec<&str> {
        problems.iter().map(|p| p.field.as_str()).collect()
    }

    #[test]
    fn a_title_longer_than_the_cap_is_refused_at_the_cap_it_is_not() {
        let mut input = input();
        input.title = "x".repeat(MAX_TITLE_CHARS);
        assert!(validate(&input, true).is_empty());
        input.title = "x".repeat(MAX_TITLE_CHARS + 1);
        let problems = validate(&input, true);
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].field, "title");
        assert_eq!(
            problems[0].message,
            "Keep the title to 120 characters or fewer"
        );
    }

    #[test]
    fn a_good_workflow_has_no_problems() {
        assert!(validate(&input(), true).is_empty());
    }

    #[test]
    fn each_bad_field_is_named() {
        let bad = WorkflowInput {
            title: " ".to_string(),
            code: "\n".to_string(),
            schedule: Schedule::Cron {
                expression: "61 * * * *".to_string(),
            },
            runtime: Runtime::Custom {
                command: "no-such-interpreter-xyz {file}".to_string(),
            },
            timeout_secs: 0,
            ..input()
        };
        assert_eq!(
            fields(&validate(&bad, true)),
            ["title", "code", "schedule", "runtime", "timeout_secs"]
        );
    }

    #[test]
    fn a_title_is_one_short_line_and_a_summary_is_bounded() {
        let long = WorkflowInput {
            title: "t".repeat(MAX_TITLE_CHARS + 1),
            ..input()
        };
        assert_eq!(fields(&validate(&long, true)), ["title"]);
        let at_cap = WorkflowInput {
            title: "é".repeat(MAX_TITLE_CHARS),
            ..input()
        };
        assert!(validate(&at_cap, true).is_empty());
        for forged in [
            "Report\n#999 2026-01-01 Engine started",
            "Red \u{1b}[31mtitle",
        ] {
            let bad = WorkflowInput {
                title: forged.to_string(),
                ..input()
            };
            assert_eq!(fields(&validate(&bad, true)), ["title"], "{forged:?}");
        }
        let wordy = WorkflowInput {
            summary: "s".repeat(MAX_SUMMARY_CHARS + 1),
            ..input()
        };
        assert_eq!(fields(&validate(&wordy, true)), ["summary"]);
    }

    #[test]
    fn a_missing_interpreter_is_named() {
        let message = runtime_problem(&Runtime::Custom {
            command: "no-such-interpreter-xyz {file}".to_string(),
        })
        .unwrap_or_default();
        assert!(
            message.contains("no-such-interpreter-xyz was not found on PATH"),
            "{message}"
        );
    }
}
