//! Failure evidence (error type, message, stack) parsed from what a script printed.
//!
//! Three readers look at the same lines: Python tracebacks, Node's uncaught-error report and
//! shell errors. A shell script may run Python or Node, so every reader runs and the report that
//! ends latest in the output wins: that is the one that ended the run. Plain string code, one
//! pass per reader: linear in the output, nothing that can backtrack.

mod chain;
mod node;
mod python;
mod shell;

use super::Evidence;
pub use chain::{chain, Link};
use node::node_error;
use python::python_traceback;
use shell::shell_error;

/// Longer messages are clipped: the logs are kept with the attempt, this is the summary.
const MESSAGE_LIMIT: usize = 2000;

/// Parse the evidence a failed script left in its output. `entry` is the script's file name
/// (e.g. "main.py"); its language is believed first when two readers claim the same line. The
/// stack keeps library frames too: folding them is the signature's business.
pub fn parse_evidence(stderr: &str, stdout: &str, entry: &str) -> Option<Evidence> {
    // stdout is only read when stderr says nothing: scripts print progress there, not errors.
    parse_stream(stderr, entry).or_else(|| parse_stream(stdout, entry))
}

fn parse_stream(text: &str, entry: &str) -> Option<Evidence> {
    let lines: Vec<&str> = text.lines().collect();
    // On a tie (two readers claim the same line) the script's own language is believed first.
    let readers: [Reader; 3] = if is_node_entry(entry) {
        [node_error, python_traceback, shell_error]
    } else {
        [python_traceback, node_error, shell_error]
    };
    let mut best: Option<Found> = None;
    for found in readers.into_iter().filter_map(|read| read(&lines)) {
        if best.as_ref().is_none_or(|b| found.line > b.line) {
            best = Some(found);
        }
    }
    if let Some(found) = best {
        return Some(found.evidence);
    }
    let last = lines.iter().rev().find(|l| is_meaningful(l))?;
    Some(Evidence {
        error_type: None,
        message: clip(last.trim()),
        stack: None,
    })
}

type Reader = fn(&[&str]) -> Option<Found>;

/// Evidence, and the index of the last output line it was read from.
struct Found {
    line: usize,
    evidence: Evidence,
}

fn is_node_entry(entry: &str) -> bool {
    [".js", ".mjs", ".cjs", ".ts", ".mts", ".cts"]
        .iter()
        .any(|ext| entry.ends_with(ext))
}

// What the readers share.

/// `json.decoder.JSONDecodeError: Expecting value` → (type, message); a bare `KeyboardInterrupt`
/// → (type, ""); Node's `Error [ERR_MODULE_NOT_FOUND]: Cannot find package …` → ("Error", …).
pub(super) fn exception_head(line: &str) -> Option<(String, String)> {
    let line = line.trim_end();
    let (head, rest) = match line.split_once(':') {
        Some((head, rest)) => (head, Some(rest)),
        None => (line, None),
    };
    let (name, code) = match head.split_once(" [") {
        Some((name, code)) => (name, Some(code.strip_suffix(']')?)),
        None => (head, None),
    };
    if !is_dotted_identifier(name) {
        return None;
    }
    let message = match rest {
        // "Name:value" with no space is a log field or a URL scheme, not an exception.
        Some(rest) if !rest.is_empty() && !rest.starts_with(' ') => return None,
        Some(rest) => rest.trim(),
        None => "",
    };
    let message = match code {
        Some(code) if message.is_empty() => code,
        _ => message,
    };
    Some((name.to_string(), message.to_string()))
}

fn is_dotted_identifier(name: &str) -> bool {
    !name.is_empty()
        && name.split('.').all(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        })
}

fn is_indented(line: &str) -> bool {
    line.starts_with(' ') || line.starts_with('\t')
}

/// `    ^^^^^`, `~~~^^^`: position markers under a code line, noise in a stack.
fn is_caret_line(line: &str) -> bool {
    let t = line.trim();
    !t.is_empty() && t.chars().all(|c| c == '^' || c == '~')
}

/// The marker the output cap leaves where it cut ("… 1234 bytes cut …").
fn is_cut_marker(line: &str) -> bool {
    line.contains(" bytes cut ")
}

/// A line that says something about the failure, not Node's trailer or a closing brace.
fn is_meaningful(line: &str) -> bool {
    let t = line.trim();
    !(t.is_empty()
        || t == "}"
        || is_caret_line(t)
        || is_cut_marker(t)
        || t.starts_with("(Use `node --trace-")
        || t.strip_prefix("Node.js v")
            .is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit())))
}

fn clip(text: &str) -> String {
    match text.char_indices().nth(MESSAGE_LIMIT) {
        Some((cut, _)) => format!("{}…", text.get(..cut).unwrap_or(text)),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests;
