//! Errors the shell itself prints (`command not found`, a permission, a full disk), with the
//! shell's line prefix taken off.

use super::{clip, Found};
use crate::failure::Evidence;

/// The last line a shell (`main.sh: line 3: …`, dash's `main.sh: 3: …`) or a command
/// (`cat: x: No such file or directory`) printed about a known system error.
pub(super) fn shell_error(lines: &[&str]) -> Option<Found> {
    for (i, line) in lines.iter().enumerate().rev() {
        let (body, error_type) = if let Some(body) = strip_bash_prefix(line) {
            (body, shell_error_type(body))
        } else if let Some(body) = strip_dash_prefix(line) {
            // "name: 3: text" is too common a shape (a log line) to claim when untyped.
            let error_type = if body.trim_end().ends_with(": not found") {
                Some("CommandNotFound")
            } else {
                shell_error_type(body)
            };
            match error_type {
                Some(t) => (body, Some(t)),
                None => continue,
            }
        } else {
            match shell_error_type(line) {
                Some(t) => (*line, Some(t)),
                None => continue,
            }
        };
        return Some(Found {
            line: i,
            evidence: Evidence {
                error_type: error_type.map(str::to_string),
                message: clip(body.trim()),
                stack: None,
            },
        });
    }
    None
}

pub(super) fn shell_error_type(text: &str) -> Option<&'static str> {
    if text.trim_end().ends_with("command not found") {
        Some("CommandNotFound")
    } else if text.contains("Permission denied") {
        Some("PermissionDenied")
    } else if text.contains("No space left on device") {
        Some("NoSpace")
    } else if text.contains("No such file or directory") {
        Some("NoSuchFile")
    } else {
        None
    }
}

/// `main.sh: line 3: rest` → `rest`.
pub(super) fn strip_bash_prefix(line: &str) -> Option<&str> {
    let (name, rest) = line.split_once(": line ")?;
    if name.is_empty() {
        return None;
    }
    after_number_and_colon(rest)
}

/// `main.sh: 3: rest` → `rest` (dash, when a script is run with `sh`).
pub(super) fn strip_dash_prefix(line: &str) -> Option<&str> {
    let (name, rest) = line.split_once(": ")?;
    if name.is_empty() || name.contains(' ') {
        return None;
    }
    after_number_and_colon(rest)
}

pub(super) fn after_number_and_colon(text: &str) -> Option<&str> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    text.get(digits..)?.strip_prefix(": ")
}
