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
            .is_some_and(|l| is_node_frame(l) || l.starts_with("Emitted '") || is_folded_frames(l))
    {
        first_at -= 1;
    }

    // The header is the topmost error-looking line of the paragraph above the frames, so that a
    // multi-line message ("Require stack:\n- /x/main.js") stays out of the type.
    let mut header = None;
    let mut nearest = None;
    let floor = first_at.saturating_sub(50);
    // A message may hold blank lines (an assertion's "expected three regions\n\n2 !== 3"):
    // the paragraph ends at a source excerpt's caret, a frame, two blank lines, or a blank
    // line above the header.
    let mut j = first_at;
    let mut blanks = 0;
    while j > floor {
        j -= 1;
        let Some(line) = lines.get(j) else { break };
        if is_caret_line(line) || is_node_frame(line) {
            break;
        }
        if line.trim().is_empty() {
            blanks += 1;
            if header.is_some() || blanks >= 2 {
                break;
            }
            continue;
        }
        blanks = 0;
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

    let mut stack: Vec<&str> = lines
        .get(first_at..=last_at)
        .unwrap_or_default()
        .iter()
        .map(|l| {
            let l = l.trim_end();
            l.strip_suffix(" {").unwrap_or(l)
        })
        .collect();
    let trailer = trailer(lines, last_at);
    let last = last_at + trailer.len();
    stack.extend(
        trailer
            .iter()
            .map(|l| l.trim_end())
            .filter(|l| !matches!(l.trim(), "" | "}" | "{")),
    );
    Some(Found {
        line: last,
        evidence: Evidence {
            error_type,
            message: clip(&message),
            stack: (!stack.is_empty()).then(|| stack.join("\n")),
        },
    })
}

/// What Node prints after the last frame when the error has properties or a cause: `{`, then
/// `  code: 'ECONNREFUSED',` and the like, `  [cause]: Error: …` with the cause's own frames and
/// properties indented further, up to the closing `}` at the start of a line. The properties and
/// the causes name the root cause (a wrapper's message often does not); the closing brace and the
/// rest of the output are not part of it.
fn trailer<'a, 'b>(lines: &'b [&'a str], last_at: usize) -> &'b [&'a str] {
    let opens = lines
        .get(last_at)
        .is_some_and(|l| l.trim_end().ends_with(" {"));
    let rest = lines.get(last_at + 1..).unwrap_or_default();
    if !opens {
        return &[];
    }
    // A runaway object (no closing brace in sight) is not read past this many lines.
    let end = rest
        .iter()
        .take(400)
        .position(|l| l.trim_end() == "}")
        .unwrap_or(0);
    rest.get(..end).unwrap_or_default()
}

/// Node's `    ... 5 lines matching cause stack trace ...` inside a stack.
fn is_folded_frames(line: &str) -> bool {
    line.trim_start().starts_with("... ") && line.contains(" lines matching cause stack trace")
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
