//! Python's tracebacks, read from the block of frames they close (a `SyntaxError` has no
//! header, and the output cap may cut it away).

use super::{clip, exception_head, is_caret_line, is_cut_marker, is_indented, Found};
use crate::failure::Evidence;

/// The last exception line that closes an indented block of frames. Keying on the block rather
/// than on the `Traceback (most recent call last):` header also reads a `SyntaxError` (which has
/// no header) and a traceback whose header was cut away by the output cap.
///
/// A chained traceback ("The above exception was the direct cause of the following
/// exception:", "During handling of the above exception, another exception occurred:") keeps
/// the whole chain in the stack, root first: each earlier block's frames, its exception line and
/// the sentence that links it to the next. The class and the signature come from the root cause
/// (docs/classes.md), which a wrapper's own type and message do not name.
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
        let first = chain_start(lines, start);
        let stack: Vec<&str> = lines
            .get(first..i)
            .unwrap_or_default()
            .iter()
            .filter(|l| {
                !is_caret_line(l)
                    && !is_cut_marker(l)
                    && !l.trim().is_empty()
                    && l.trim_end() != TRACEBACK_HEADER
            })
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

const TRACEBACK_HEADER: &str = "Traceback (most recent call last):";

/// The sentences Python prints between the tracebacks of a chain.
pub(in crate::failure) const CHAIN_LINKS: [&str; 2] = [
    "The above exception was the direct cause of the following exception:",
    "During handling of the above exception, another exception occurred:",
];

/// Where the chain that ends in the frame block starting at `block_start` begins: the first
/// line of its root's frames, or `block_start` when the traceback is not chained.
fn chain_start(lines: &[&str], block_start: usize) -> usize {
    let mut first = block_start;
    // A chain is a handful of links; the bound keeps a pathological output linear.
    for _ in 0..32 {
        let Some(previous) = previous_link(lines, first) else {
            break;
        };
        first = previous;
    }
    first
}

/// The first frame line of the exception printed before the traceback whose frames start at
/// `block_start`, when the two are linked by one of [`CHAIN_LINKS`].
fn previous_link(lines: &[&str], block_start: usize) -> Option<usize> {
    let header = block_start.checked_sub(1)?;
    if lines.get(header)?.trim_end() != TRACEBACK_HEADER {
        return None;
    }
    let above = |from: usize| {
        (0..from)
            .rev()
            .find(|&j| lines.get(j).is_some_and(|l| !l.trim().is_empty()))
    };
    let link = above(header)?;
    if !CHAIN_LINKS.contains(&lines.get(link)?.trim_end()) {
        return None;
    }
    // The earlier exception's line, possibly followed by more lines of its message.
    let last = above(link)?;
    (last.saturating_sub(20)..=last).rev().find_map(|e| {
        let line = lines.get(e)?;
        if is_indented(line) || exception_head(line).is_none() {
            return None;
        }
        let start = frame_block_start(lines, e);
        let frames = lines.get(start..e)?;
        frames
            .iter()
            .any(|l| l.trim_start().starts_with("File \""))
            .then_some(start)
    })
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
