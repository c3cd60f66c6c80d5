//! Python's tracebacks, read from the block of frames they close (a `SyntaxError` has no
//! header, and the output cap may cut it away).

use super::{clip, exception_head, is_caret_line, is_cut_marker, is_indented, Found};
use crate::failure::Evidence;

/// The last exception line that closes an indented block of frames. Keying on the block rather
/// than on the `Traceback (most recent call last):` header also reads a `SyntaxError` (which has
/// no header) and a traceback whose header was cut away by the output cap.
pub(super) fn python_traceback(lines: &[&str]) -> Option<Found> {
    for (i, line) in lines.iter().enumerate().rev() {
        if is_indented(line) || line.trim().is_empty() || is_cut_marker(line) {
            continue;
        }
        let Some((error_type, message)) = exception_head(line) else {
            continue;
        };
        let start = frame_block_start(lines, i);
        let Some(block) = lines.get(start..i) else {
            continue;
        };
        let has_frame = block.iter().any(|l| l.trim_start().starts_with("File \""));
        let was_cut = block.iter().any(|l| is_cut_marker(l));
        if !has_frame && !was_cut {
            continue;
        }
        let stack: Vec<&str> = block
            .iter()
            .filter(|l| !is_caret_line(l) && !is_cut_marker(l) && !l.trim().is_empty())
            .map(|l| l.trim_end())
            .collect();
        return Some(Found {
            line: i,
            evidence: Evidence {
                error_type: Some(error_type),
                message: clip(&message),
                stack: (!stack.is_empty()).then(|| stack.join("\n")),
            },
        });
    }
    None
}

/// Index of the first line of the indented run directly above `end`. A cut marker and the
/// partial line after it belong to the run: the cap may have sliced a frame line in two.
pub(super) fn frame_block_start(lines: &[&str], end: usize) -> usize {
    let mut start = end;
    while start > 0 {
        let Some(above) = lines.get(start - 1) else {
            break;
        };
        let after_cut = start >= 2 && lines.get(start - 2).is_some_and(|l| is_cut_marker(l));
        if is_indented(above) || is_cut_marker(above) || after_cut {
            start -= 1;
        } else {
            break;
        }
    }
    start
}
