//! Node's uncaught-error report: the constructor and message, then the `at` lines.

use super::{clip, exception_head, is_caret_line, Found};
use crate::failure::Evidence;

/// Node's uncaught-error report: a source excerpt and caret, a blank line, `Name: message`
/// (possibly over several lines, e.g. "Require stack:"), then `    at …` frames.
pub(super) fn node_error(lines: &[&str]) -> Option<Found> {
    let last_at = lines.iter().rposition(|l| is_node_frame(l))?;
    let mut first_at = last_at;
    while first_at > 0
        && lines
            .get(first_at - 1)
            .is_some_and(|l| is_node_frame(l) || l.starts_with("Emitted '"))
    {
        first_at -= 1;
    }

    // The header is the topmost error-looking line of the paragraph above the frames, so that a
    // multi-line message ("Require stack:\n- /x/main.js") stays out of the type.
    let mut header = None;
    let mut nearest = None;
    let floor = first_at.saturating_sub(50);
    let mut j = first_at;
    while j > floor {
        j -= 1;
        let Some(line) = lines.get(j) else { break };
        if line.trim().is_empty() || is_caret_line(line) || is_node_frame(line) {
            break;
        }
        nearest.get_or_insert(*line);
        if let Some(head) = exception_head(line) {
            header = Some(head);
        }
    }
    let (error_type, message) = match (header, nearest) {
        (Some((t, m)), _) => (Some(t), m),
        (None, Some(line)) => (None, line.trim().to_string()),
        (None, None) => return None,
    };

    let stack: Vec<&str> = lines
        .get(first_at..=last_at)
        .unwrap_or_default()
        .iter()
        .map(|l| {
            let l = l.trim_end();
            l.strip_suffix(" {").unwrap_or(l)
        })
        .collect();
    Some(Found {
        line: last_at,
        evidence: Evidence {
            error_type,
            message: clip(&message),
            stack: (!stack.is_empty()).then(|| stack.join("\n")),
        },
    })
}

/// A top-level stack frame (`    at fn (/x/main.js:3:15)`). Frames of a `[cause]` are indented
/// further and stay out: the outer error is the one that was thrown.
pub(super) fn is_node_frame(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("    at ") else {
        return false;
    };
    let rest = rest.trim_end();
    // A Python code line can start with "at " too; a frame ends like one.
    rest.ends_with(')')
        || rest.ends_with(" {")
        || rest
            .rsplit(':')
            .next()
            .is_some_and(|tail| !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit()))
}
