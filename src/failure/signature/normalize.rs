//! The scanner behind the signature: one forward pass over the bytes of each line, writing the
//! normalised text straight into one output buffer. The rules are listed at the top of
//! `signature.rs`; this file and the readers in `normalize/` are how they are applied.
//!
//! A line is cut into *chunks* (runs of letters, digits and the punctuation that holds a path,
//! a URL or a number together) separated by blanks and *delimiters* (quotes, brackets, `,;=`),
//! which are copied as they are. A chunk of plain letters, the common case, is copied at once;
//! the others are classified by the bytes they contain. Number readers may read past the end of
//! their chunk (a date followed by its time, `1,234`, `12 ms`) but never past the line, and every
//! byte is looked at a bounded number of times: no backtracking, no regular expressions.
//!
//! Everything written is either copied input or ASCII, and input is only ever cut at ASCII
//! bytes, so the output stays valid UTF-8.

mod bytes;
mod chunks;
mod numbers;
mod places;
mod word_lists;
mod words;

use bytes::{at, contains, info, DELIM, ESC, SPACE};
use chunks::chunk;

/// Append the normalised form of `raw` to `out`: one normalised line per meaningful input line,
/// separated by `\n`, nothing before the first nor after the last.
pub(super) fn normalize_into(raw: &str, out: &mut Vec<u8>) {
    let mut lines = Lines::default();
    // `str::split` on a char finds each newline with memchr.
    for line in raw.split('\n') {
        lines.push(line.as_bytes(), out);
    }
}

#[derive(Default)]
struct Lines {
    /// A line was written: the next one starts with `\n`.
    wrote: bool,
    /// The last line written is the `<library>` marker: more library frames fold into it.
    in_library: bool,
    /// After a Python frame at this indent: its source lines (indented deeper) go.
    skip_deeper_than: Option<usize>,
}

impl Lines {
    fn push(&mut self, line: &[u8], out: &mut Vec<u8>) {
        let indent = line
            .iter()
            .take_while(|&&b| b == b' ' || b == b'\t')
            .count();
        let body = trim(line);
        if body.is_empty() {
            self.skip_deeper_than = None;
            return;
        }
        if let Some(frame_indent) = self.skip_deeper_than {
            if indent > frame_indent && !body.starts_with(b"File \"") {
                return;
            }
            self.skip_deeper_than = None;
        }
        if is_caret_line(body) {
            return;
        }
        match frame(body) {
            Some(Frame::PythonLibrary) => {
                self.skip_deeper_than = Some(indent);
                self.library(out);
                return;
            }
            Some(Frame::NodeLibrary) => {
                self.library(out);
                return;
            }
            Some(Frame::PythonOwn) => self.skip_deeper_than = Some(indent),
            None => {}
        }
        let mark = out.len();
        if self.wrote {
            out.push(b'\n');
        }
        let start = out.len();
        scan_line(body, out);
        if out.len() == start {
            // Nothing but escape sequences.
            out.truncate(mark);
        } else {
            self.wrote = true;
            self.in_library = false;
        }
    }

    fn library(&mut self, out: &mut Vec<u8>) {
        if self.in_library {
            return;
        }
        if self.wrote {
            out.push(b'\n');
        }
        out.extend_from_slice(b"<library>");
        self.wrote = true;
        self.in_library = true;
    }
}

fn trim(line: &[u8]) -> &[u8] {
    let blank = |b: &u8| (*b <= b' ' && *b != ESC) || *b == 0x7f;
    let start = line.iter().position(|b| !blank(b)).unwrap_or(line.len());
    let end = line
        .iter()
        .rposition(|b| !blank(b))
        .map_or(start, |i| i + 1);
    line.get(start..end).unwrap_or_default()
}

/// `    ^^^^^`, `~~~^^^`: position markers under a code line.
fn is_caret_line(body: &[u8]) -> bool {
    matches!(body.first(), Some(b'^' | b'~'))
        && body.iter().all(|b| matches!(b, b'^' | b'~' | b' '))
}

enum Frame {
    /// A Python frame in a library's code: folds into `<library>` with its source lines.
    PythonLibrary,
    /// A Node frame in Node's or a package's code: folds into `<library>`.
    NodeLibrary,
    /// A Python frame of the script's own, in a function: kept, its source lines dropped (the
    /// file and function name the place; the line changes whenever the script is edited). A
    /// frame without a function (a `SyntaxError`'s) keeps its line: it is the evidence.
    PythonOwn,
}

/// The kind of stack frame `body` is, if it is one that is folded or trimmed.
fn frame(body: &[u8]) -> Option<Frame> {
    if let Some(rest) = body.strip_prefix(b"File \"") {
        let quote = rest.iter().position(|&b| b == b'"').unwrap_or(rest.len());
        let (file, after) = rest.split_at(quote);
        if is_python_library(file) {
            return Some(Frame::PythonLibrary);
        }
        return contains(after, b", in ").then_some(Frame::PythonOwn);
    }
    let rest = body.strip_prefix(b"at ")?;
    is_node_library(rest).then_some(Frame::NodeLibrary)
}

/// A Python frame's file in a library: the standard library (`…/lib/python3.11/…`,
/// `…\Lib\…`), an installed package (`site-packages`, `dist-packages`), or frozen
/// (`<frozen runpy>`). One pass over the path.
fn is_python_library(file: &[u8]) -> bool {
    file.starts_with(b"<frozen ")
        || file.iter().enumerate().any(|(i, &b)| {
            let rest = file.get(i + 1..).unwrap_or_default();
            match b {
                b'/' => {
                    rest.starts_with(b"lib/python")
                        || rest.starts_with(b"lib64/python")
                        || rest.starts_with(b"site-packages/")
                        || rest.starts_with(b"dist-packages/")
                }
                b'\\' => rest.starts_with(b"Lib\\") || rest.starts_with(b"site-packages\\"),
                _ => false,
            }
        })
}

/// A Node frame (after `at `) in Node's own code (`node:…`, `internal/…`), a package's
/// (`node_modules`), or native (`(<anonymous>)`). One pass over the line.
fn is_node_library(frame: &[u8]) -> bool {
    frame.starts_with(b"internal/")
        || frame.iter().enumerate().any(|(i, &b)| {
            let rest = frame.get(i + 1..).unwrap_or_default();
            match b {
                b'n' => rest.starts_with(b"ode:"),
                b'/' | b'\\' => rest.starts_with(b"node_modules"),
                b'(' => rest.starts_with(b"internal/") || rest.starts_with(b"<anonymous>)"),
                _ => false,
            }
        })
}

/// How a chunk's plain numbers are read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Unquoted text: numbers fold unless they name the cause.
    Plain,
    /// The whole of a quoted string without letters (`'123'`): a value, folded.
    QuotedValue,
    /// The whole of a quoted string with a letter (`'user_2'`): a name, its numbers kept.
    QuotedName,
}

/// What the line said before: the last word, for numbers that name the cause.
#[derive(Default)]
struct Cx<'a> {
    prev: &'a [u8],
}

fn scan_line(body: &[u8], out: &mut Vec<u8>) {
    let start = out.len();
    let mut cx = Cx::default();
    let mut space = false;
    let mut i = 0;
    while let Some(&b) = body.get(i) {
        if b == ESC {
            i = skip_escape(body, i);
            continue;
        }
        let kind = info(b);
        if kind & SPACE != 0 {
            space = true;
            i += 1;
            continue;
        }
        if space && out.len() > start {
            out.push(b' ');
        }
        space = false;
        if kind & DELIM != 0 {
            out.push(b);
            i += 1;
        } else {
            i = chunk(body, i, &mut cx, out);
        }
    }
}

/// Past an ANSI escape sequence (`ESC [ 31 m`); a lone ESC is dropped.
fn skip_escape(s: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    if at(s, j) != b'[' {
        return j;
    }
    j += 1;
    while (0x20..0x40).contains(&at(s, j)) {
        j += 1;
    }
    if (0x40..0x7f).contains(&at(s, j)) {
        j += 1;
    }
    j
}
