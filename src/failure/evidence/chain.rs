//! The links of a chained failure, read back from the evidence's stack: Python's tracebacks
//! joined by "The above exception was the direct cause…" / "During handling of the above
//! exception…", and Node's `[cause]: …` blocks. The root cause comes first, the exception that
//! ended the run last; a failure that is not chained is one link.

use super::python::CHAIN_LINKS;
use super::{exception_head, is_indented};
use crate::failure::Evidence;

/// One exception of a chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub error_type: Option<String>,
    pub message: String,
    /// The message with what the runtime printed about this exception beside its frames (Node's
    /// `code: 'ECONNREFUSED'`, `input: 'undefined/v1'`), one item per line: the text that
    /// patterns are read in. Frames and source lines are not in it: a source line such as
    /// `except ConnectionError:` says nothing about what happened.
    pub said: String,
    /// The exception's frames (and Python's source lines under them).
    pub frames: String,
}

impl Link {
    /// "KeyError: 'amount'", or the message alone when the exception has no type.
    pub fn describe(&self) -> String {
        match &self.error_type {
            Some(t) if !self.message.is_empty() => format!("{t}: {}", self.message),
            Some(t) => t.clone(),
            None => self.message.clone(),
        }
    }
}

/// The links of `evidence`, root cause first; never empty.
pub fn chain(evidence: &Evidence) -> Vec<Link> {
    let last = |frames: Vec<&str>, said: Vec<&str>| {
        let mut lines = vec![evidence.message.as_str()];
        lines.extend(said);
        Link {
            error_type: evidence.error_type.clone(),
            message: evidence.message.clone(),
            said: lines.join("\n"),
            frames: frames.join("\n"),
        }
    };
    let Some(stack) = evidence.stack.as_deref() else {
        return vec![last(Vec::new(), Vec::new())];
    };
    let lines: Vec<&str> = stack.lines().collect();
    if lines.iter().any(|l| CHAIN_LINKS.contains(&l.trim_end())) {
        let segments: Vec<&[&str]> = lines
            .split(|l| CHAIN_LINKS.contains(&l.trim_end()))
            .collect();
        let Some((own, earlier)) = segments.split_last() else {
            return vec![last(Vec::new(), Vec::new())];
        };
        let mut links: Vec<Link> = earlier.iter().filter_map(|s| python_link(s)).collect();
        links.push(last(own.to_vec(), Vec::new()));
        return links;
    }
    let segments: Vec<&[&str]> = split_before(&lines, |l| l.trim_start().starts_with("[cause]: "));
    let Some((top, causes)) = segments.split_first() else {
        return vec![last(Vec::new(), Vec::new())];
    };
    let (frames, said) = node_parts(top);
    let mut links: Vec<Link> = causes.iter().rev().map(|s| node_cause(s)).collect();
    links.push(last(frames, said));
    links
}

/// An earlier traceback of a Python chain: frames, then the exception's line and any further
/// lines of its message.
fn python_link(segment: &[&str]) -> Option<Link> {
    let at = segment
        .iter()
        .enumerate()
        .position(|(i, line)| i > 0 && !is_indented(line) && exception_head(line).is_some())?;
    let (error_type, message) = exception_head(segment.get(at)?)?;
    let rest: Vec<&str> = segment.get(at + 1..).unwrap_or_default().to_vec();
    let mut said = vec![message.as_str()];
    said.extend(rest);
    Some(Link {
        error_type: Some(error_type.clone()),
        message: message.clone(),
        said: said.join("\n"),
        frames: segment.get(..at).unwrap_or_default().join("\n"),
    })
}

/// A Node `[cause]: …` block: its header line, then its frames and properties.
fn node_cause(segment: &[&str]) -> Link {
    let head = segment
        .first()
        .map(|l| l.trim_start().trim_start_matches("[cause]: "))
        .unwrap_or_default();
    let (error_type, message) = match exception_head(head) {
        Some((t, m)) => (Some(t), m),
        None => (None, head.trim().to_string()),
    };
    let (frames, props) = node_parts(segment.get(1..).unwrap_or_default());
    let mut said = vec![message.as_str()];
    said.extend(props);
    Link {
        error_type,
        said: said.join("\n"),
        message,
        frames: frames.join("\n"),
    }
}

/// A Node block's `at …` frames, and the rest (its properties).
fn node_parts<'a>(lines: &[&'a str]) -> (Vec<&'a str>, Vec<&'a str>) {
    lines
        .iter()
        .copied()
        .partition(|l| l.trim_start().starts_with("at "))
}

/// `lines` cut before each line that `starts` a new part; the first part may be empty.
fn split_before<'a, 'b>(lines: &'b [&'a str], starts: impl Fn(&str) -> bool) -> Vec<&'b [&'a str]> {
    let mut parts = Vec::new();
    let mut from = 0;
    for (i, line) in lines.iter().enumerate() {
        if starts(line) {
            parts.push(lines.get(from..i).unwrap_or_default());
            from = i;
        }
    }
    parts.push(lines.get(from..).unwrap_or_default());
    parts
}
