//! The scanner behind the signature: one forward pass over the bytes of each line, writing the
//! normalised text straight into one output buffer. The rules are listed at the top of
//! `signature.rs`; this file is how they are applied.
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

/// Byte classes, as bits of [`INFO`].
const ALPHA: u8 = 1; // ASCII letters, `_` and the bytes of non-ASCII characters
const DIGIT: u8 = 1 << 1;
const PUNCT: u8 = 1 << 2; // punctuation that belongs to a chunk: . - / \ : @ + # % ~ $ ? & !
const SLASH: u8 = 1 << 3; // / or \ (also PUNCT)
const COLON: u8 = 1 << 4; // : (also PUNCT)
const AT: u8 = 1 << 5; // @ (also PUNCT)
const SPACE: u8 = 1 << 6; // blanks and control characters
const DELIM: u8 = 1 << 7; // quotes, brackets and the other separators, copied as they are
const CHUNK: u8 = ALPHA | DIGIT | PUNCT;
const ESC: u8 = 0x1b;

static INFO: [u8; 256] = info_table();

const fn info_table() -> [u8; 256] {
    let mut table = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        table[i] = if b.is_ascii_alphabetic() || b == b'_' || b >= 0x80 {
            ALPHA
        } else if b.is_ascii_digit() {
            DIGIT
        } else if b == b'/' || b == b'\\' {
            PUNCT | SLASH
        } else if b == b':' {
            PUNCT | COLON
        } else if b == b'@' {
            PUNCT | AT
        } else if matches!(
            b,
            b'.' | b'-' | b'+' | b'#' | b'%' | b'~' | b'$' | b'?' | b'&' | b'!'
        ) {
            PUNCT
        } else if b == ESC {
            0
        } else if b <= b' ' || b == 0x7f {
            SPACE
        } else {
            DELIM
        };
        i += 1;
    }
    table
}

fn info(b: u8) -> u8 {
    INFO[usize::from(b)]
}

/// The byte at `i`, or 0 (a blank) past the end: lets the readers look ahead without bounds
/// checks of their own.
fn at(s: &[u8], i: usize) -> u8 {
    s.get(i).copied().unwrap_or(0)
}

fn is_digit_at(s: &[u8], i: usize) -> bool {
    at(s, i).is_ascii_digit()
}

fn digits_end(s: &[u8], mut i: usize) -> usize {
    while is_digit_at(s, i) {
        i += 1;
    }
    i
}

fn alnum_end(s: &[u8], mut i: usize) -> usize {
    while at(s, i).is_ascii_alphanumeric() {
        i += 1;
    }
    i
}

/// End of a run of [`ALPHA`] bytes (letters, `_`, non-ASCII).
fn alpha_end(s: &[u8], mut i: usize) -> usize {
    while info(at(s, i)) & ALPHA != 0 {
        i += 1;
    }
    i
}

fn two_digits(s: &[u8], i: usize) -> bool {
    is_digit_at(s, i) && is_digit_at(s, i + 1)
}

fn starts_with_ignore_case(s: &[u8], prefix: &[u8]) -> bool {
    s.get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
}

fn ends_with_ignore_case(s: &[u8], suffix: &[u8]) -> bool {
    s.len() >= suffix.len()
        && s.get(s.len() - suffix.len()..)
            .is_some_and(|tail| tail.eq_ignore_ascii_case(suffix))
}

/// Whether `needle` occurs in `haystack`: a scan for its first byte, then a compare.
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    let Some((&first, rest)) = needle.split_first() else {
        return true;
    };
    let last_start = haystack.len().saturating_sub(rest.len());
    let mut i = 0;
    while let Some(offset) = haystack
        .get(i..last_start)
        .and_then(|h| h.iter().position(|&b| b == first))
    {
        let at = i + offset;
        if haystack.get(at + 1..at + 1 + rest.len()) == Some(rest) {
            return true;
        }
        i = at + 1;
    }
    false
}

/// `word` in ASCII lowercase, in `buf`; None when it is longer than any listed word.
fn lowercase<'b>(word: &[u8], buf: &'b mut [u8; 16]) -> Option<&'b [u8]> {
    let dst = buf.get_mut(..word.len())?;
    for (d, s) in dst.iter_mut().zip(word) {
        *d = s.to_ascii_lowercase();
    }
    Some(dst)
}

// ---------------------------------------------------------------------------------------------
// Word lists (as `matches!`, which compiles to a switch on the length, then compares)

/// Words after which any number names the cause and is kept (any case): `[Errno 111]`,
/// `exit code 2`, `exit status 1`, `signal 9`, `curl: (7)`, `HTTP 404`.
fn is_cause_lead(word: &[u8]) -> bool {
    let mut buf = [0; 16];
    matches!(
        lowercase(word, &mut buf),
        Some(
            b"errno"
                | b"winerror"
                | b"code"
                | b"status"
                | b"exit"
                | b"exitcode"
                | b"exit_code"
                | b"returncode"
                | b"return_code"
                | b"rc"
                | b"signal"
                | b"sig"
                | b"signum"
                | b"statuscode"
                | b"status_code"
                | b"errorcode"
                | b"error_code"
                | b"curl"
                | b"http"
                | b"https"
        )
    )
}

/// Words after which a 3-digit HTTP status is kept (any case): `HTTP Error 404`,
/// `<Response [404]>`.
fn is_status_lead(word: &[u8]) -> bool {
    let mut buf = [0; 16];
    matches!(
        lowercase(word, &mut buf),
        Some(b"error" | b"err" | b"response")
    )
}

/// First words of HTTP reason phrases (any case): a status (100–599) just before one is kept
/// (`404 Client Error`, `503 Service Unavailable`, `200 OK`).
fn is_reason_word(word: &[u8]) -> bool {
    let mut buf = [0; 16];
    matches!(
        lowercase(word, &mut buf),
        Some(
            b"ok"
                | b"created"
                | b"accepted"
                | b"moved"
                | b"found"
                | b"see"
                | b"not"
                | b"temporary"
                | b"permanent"
                | b"bad"
                | b"unauthorized"
                | b"payment"
                | b"forbidden"
                | b"method"
                | b"proxy"
                | b"request"
                | b"conflict"
                | b"gone"
                | b"length"
                | b"precondition"
                | b"payload"
                | b"uri"
                | b"unsupported"
                | b"range"
                | b"expectation"
                | b"misdirected"
                | b"unprocessable"
                | b"locked"
                | b"failed"
                | b"too"
                | b"upgrade"
                | b"internal"
                | b"gateway"
                | b"service"
                | b"variant"
                | b"insufficient"
                | b"loop"
                | b"network"
                | b"client"
                | b"server"
        )
    )
}

/// Units glued to a number that make it a duration: `12ms`, `1.5s`, `3m`, `1h2m3s`.
fn is_duration_unit(unit: &[u8]) -> bool {
    matches!(
        unit,
        b"ns"
            | b"us"
            | b"\xc2\xb5s"
            | b"ms"
            | b"s"
            | b"sec"
            | b"secs"
            | b"m"
            | b"min"
            | b"mins"
            | b"h"
            | b"hr"
            | b"hrs"
            | b"d"
    )
}

/// Units after a number and a blank that make it a duration: `12 ms`, `3.2 s`, `3 seconds`.
fn is_duration_word(word: &[u8]) -> bool {
    matches!(
        word,
        b"ns"
            | b"us"
            | b"\xc2\xb5s"
            | b"ms"
            | b"s"
            | b"sec"
            | b"secs"
            | b"second"
            | b"seconds"
            | b"min"
            | b"mins"
            | b"minute"
            | b"minutes"
            | b"hr"
            | b"hrs"
            | b"hour"
            | b"hours"
            | b"day"
            | b"days"
            | b"millisecond"
            | b"milliseconds"
            | b"microsecond"
            | b"microseconds"
            | b"nanosecond"
            | b"nanoseconds"
    )
}

/// Units that make a number a size, glued (`10MB`) or after a blank (`1024 bytes`).
fn is_size_unit(unit: &[u8]) -> bool {
    matches!(
        unit,
        b"B" | b"KB"
            | b"kB"
            | b"MB"
            | b"GB"
            | b"TB"
            | b"KiB"
            | b"MiB"
            | b"GiB"
            | b"TiB"
            | b"K"
            | b"M"
            | b"G"
            | b"bytes"
            | b"byte"
    )
}

/// A month's name, short or long (`Jan`, `Sept`, `January`).
fn is_month(w: &[u8]) -> bool {
    matches!(
        w,
        b"Jan"
            | b"Feb"
            | b"Mar"
            | b"Apr"
            | b"May"
            | b"Jun"
            | b"Jul"
            | b"Aug"
            | b"Sep"
            | b"Sept"
            | b"Oct"
            | b"Nov"
            | b"Dec"
            | b"January"
            | b"February"
            | b"March"
            | b"April"
            | b"June"
            | b"July"
            | b"August"
            | b"September"
            | b"October"
            | b"November"
            | b"December"
    )
}

/// A weekday's name, short or long (`Tue`, `Tuesday`).
fn is_weekday(w: &[u8]) -> bool {
    matches!(
        w,
        b"Mon"
            | b"Tue"
            | b"Wed"
            | b"Thu"
            | b"Fri"
            | b"Sat"
            | b"Sun"
            | b"Monday"
            | b"Tuesday"
            | b"Wednesday"
            | b"Thursday"
            | b"Friday"
            | b"Saturday"
            | b"Sunday"
    )
}

// ---------------------------------------------------------------------------------------------
// Lines

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

// ---------------------------------------------------------------------------------------------
// Chunks

fn chunk<'a>(body: &'a [u8], s: usize, cx: &mut Cx<'a>, out: &mut Vec<u8>) -> usize {
    let mut e = s;
    let mut mask = 0;
    for &b in body.get(s..).unwrap_or_default() {
        let kind = info(b);
        if kind & CHUNK == 0 {
            break;
        }
        mask |= kind;
        e += 1;
    }
    if mask & !ALPHA == 0 {
        return letters(body, s, e, cx, out);
    }
    let url = mask & SLASH != 0
        && mask & COLON != 0
        && contains(body.get(s..e).unwrap_or_default(), b"://");
    if url {
        while body.get(e).is_some_and(|&b| is_url_byte(b)) {
            e += 1;
        }
        url_chunk(body.get(s..e).unwrap_or_default(), cx, out);
        return e;
    }
    let whole = body.get(s..e).unwrap_or_default();
    if mask & (DIGIT | SLASH | AT) == 0 && !(whole.len() >= 11 && contains(whole, b"tmp")) {
        // Letters and punctuation without digits (`json.decoder.JSONDecodeError:`,
        // `left-pad`): nothing in it varies.
        out.extend_from_slice(whole);
        let last = last_word(whole);
        if !last.is_empty() {
            cx.prev = last;
        }
        return e;
    }
    let (core, tail) = whole.split_at(trailing_punct_start(whole, b".:!?"));
    if core.is_empty() {
        out.extend_from_slice(whole);
        return e;
    }
    let quoted = is_quoted(body, s, e);
    if mask & SLASH != 0 {
        if starts_with_ignore_case(core, b"http/") {
            // HTTP/1.1: the status that follows names the cause.
            out.extend_from_slice(whole);
            cx.prev = b"http";
            return e;
        }
        if quoted && core.first() == Some(&b'@') {
            // A scoped package's name ('@scope/name'), not a path.
            out.extend_from_slice(whole);
            cx.prev = core;
            return e;
        }
        if is_path(core) {
            path(core, cx, out);
            out.extend_from_slice(tail);
            return e;
        }
    }
    if mask & AT != 0 && is_email(core) {
        out.extend_from_slice(b"<email>");
        out.extend_from_slice(tail);
        return e;
    }
    if mask & COLON != 0 {
        if is_ipv6(core) {
            out.extend_from_slice(b"<ip>");
            out.extend_from_slice(tail);
            return e;
        }
        if let Some(file) = strip_file_location(core) {
            word(file, 0, file.len(), Mode::Plain, cx, out);
            out.extend_from_slice(tail);
            return e;
        }
    }
    let mode = match (quoted, mask & ALPHA != 0) {
        (false, _) => Mode::Plain,
        (true, false) => Mode::QuotedValue,
        (true, true) => Mode::QuotedName,
    };
    word(body, s, e, mode, cx, out)
}

/// The last run of letters in a chunk without digits (`HTTPError` in `urllib.error.HTTPError:`).
fn last_word(chunk: &[u8]) -> &[u8] {
    let end = chunk
        .iter()
        .rposition(|&b| info(b) & ALPHA != 0)
        .map_or(0, |i| i + 1);
    let start = chunk
        .get(..end)
        .unwrap_or_default()
        .iter()
        .rposition(|&b| info(b) & ALPHA == 0)
        .map_or(0, |i| i + 1);
    chunk.get(start..end).unwrap_or_default()
}

fn is_url_byte(b: u8) -> bool {
    info(b) & CHUNK != 0 || matches!(b, b'=' | b',' | b';' | b'*')
}

/// Index where the trailing run of `set` bytes starts (sentence punctuation after a path).
fn trailing_punct_start(word: &[u8], set: &[u8]) -> usize {
    word.iter()
        .rposition(|b| !set.contains(b))
        .map_or(0, |i| i + 1)
}

/// The chunk is the whole of a quoted string: `'total'`, `"left-pad"`.
fn is_quoted(body: &[u8], s: usize, e: usize) -> bool {
    s > 0 && matches!(at(body, s - 1), b'\'' | b'"' | b'`') && at(body, e) == at(body, s - 1)
}

/// A chunk of letters only: copied, unless it is a location's `line N`, a month or weekday
/// of a date, or a temp name.
fn letters<'a>(s: &'a [u8], p: usize, e: usize, cx: &mut Cx<'a>, out: &mut Vec<u8>) -> usize {
    let w = s.get(p..e).unwrap_or_default();
    if w == b"line" {
        if let Some(q) = location_line(s, e, out) {
            return q;
        }
    }
    if is_date_word(s, w, e) {
        out.extend_from_slice(b"<date>");
    } else if w.len() == 11 && tmp_name(w) {
        out.extend_from_slice(b"<tmp>");
    } else {
        out.extend_from_slice(w);
    }
    cx.prev = w;
    e
}

/// `File "main.py", line 12, in f` and `main.sh: line 3: x`: the location's line number goes,
/// with the `, `/`: ` before it. Elsewhere (`line 1 column 2`) `line` stays and its number
/// folds like any other.
fn location_line(s: &[u8], e: usize, out: &mut Vec<u8>) -> Option<usize> {
    if at(s, e) != b' ' || !is_digit_at(s, e + 1) {
        return None;
    }
    let end = digits_end(s, e + 1);
    if !matches!(at(s, end), 0 | b',' | b':' | b')') {
        return None;
    }
    if !(out.ends_with(b", ") || out.ends_with(b": ")) {
        return None;
    }
    out.truncate(out.len() - 2);
    Some(end)
}

/// A month or weekday name that is part of a date: followed by a number (`Jan 2`, `May 2024`),
/// or a weekday followed by a comma or a month (`Tue, 02 Jan`, `Tue Jan  2`).
fn is_date_word(s: &[u8], w: &[u8], e: usize) -> bool {
    if !(3..=9).contains(&w.len()) || !w.first().is_some_and(u8::is_ascii_uppercase) {
        return false;
    }
    let month = is_month(w);
    let weekday = !month && is_weekday(w);
    if !month && !weekday {
        return false;
    }
    let mut q = e;
    while at(s, q) == b' ' {
        q += 1;
    }
    if is_digit_at(s, q) {
        return true;
    }
    weekday && (at(s, q) == b',' || is_month(next_word(s, e)))
}

/// The run of ASCII letters (and `µ`) after the blanks at `q`.
fn next_word(s: &[u8], q: usize) -> &[u8] {
    let (start, end) = next_word_span(s, q);
    s.get(start..end).unwrap_or_default()
}

fn next_word_span(s: &[u8], mut q: usize) -> (usize, usize) {
    while at(s, q) == b' ' {
        q += 1;
    }
    let mut end = q;
    loop {
        if at(s, end).is_ascii_alphabetic() {
            end += 1;
        } else if at(s, end) == 0xc2 && at(s, end + 1) == 0xb5 {
            end += 2;
        } else {
            break;
        }
    }
    (q, end)
}

/// Python's `tempfile` names (`tmp` and eight of `[a-z0-9_]`), and `tmp…` names with digits.
fn tmp_name(w: &[u8]) -> bool {
    let Some(rest) = w.strip_prefix(b"tmp") else {
        return false;
    };
    let lower = rest
        .iter()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'_');
    let alnum = rest.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_');
    let digit = rest.iter().any(u8::is_ascii_digit);
    (rest.len() == 8 && lower) || (rest.len() >= 6 && alnum && digit)
}

// ---------------------------------------------------------------------------------------------
// Paths, URLs, addresses

/// A file-system path: absolute (`/x`, `\x`, `C:\x`), home- or dot-relative (`~/x`, `./x`,
/// `../x`), or relative with two separators or a file name (`src/app/main.py`, `lib/x.js`).
/// `and/or`, `application/json` and `I/O` are words, not paths.
fn is_path(core: &[u8]) -> bool {
    let first = at(core, 0);
    if first == b'/' || first == b'\\' {
        return core.len() > 1;
    }
    if [&b"~/"[..], b"./", b"../", b".\\", b"..\\"]
        .iter()
        .any(|p| core.starts_with(p))
    {
        return true;
    }
    if first.is_ascii_alphabetic() && at(core, 1) == b':' && matches!(at(core, 2), b'\\' | b'/') {
        return true;
    }
    if first.is_ascii_digit() {
        // 2024/01/02, 3/4: dates and fractions.
        return false;
    }
    let separators = core.iter().filter(|&&b| b == b'/' || b == b'\\').count();
    separators >= 2 || has_extension(base_name(core))
}

fn base_name(path: &[u8]) -> &[u8] {
    let start = path
        .iter()
        .rposition(|&b| b == b'/' || b == b'\\')
        .map_or(0, |i| i + 1);
    path.get(start..).unwrap_or_default()
}

/// `main.py`, `example.com`: a dot, then 1 to 6 letters or digits starting with a letter.
fn has_extension(name: &[u8]) -> bool {
    let Some(dot) = name.iter().rposition(|&b| b == b'.') else {
        return false;
    };
    let ext = name.get(dot + 1..).unwrap_or_default();
    (1..=6).contains(&ext.len())
        && ext.first().is_some_and(u8::is_ascii_alphabetic)
        && ext.iter().all(u8::is_ascii_alphanumeric)
}

/// `path:12:5` → `path`: the line and column after a file.
fn strip_location(mut core: &[u8]) -> &[u8] {
    for _ in 0..2 {
        let digits = core.iter().rev().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 || digits == core.len() {
            break;
        }
        let colon = core.len() - digits - 1;
        if at(core, colon) != b':' || colon == 0 {
            break;
        }
        core = core.get(..colon).unwrap_or(core);
    }
    core
}

/// `main.py:12`, `main.js:12:5` (and `example.com:8080`) → the name without its numbers.
fn strip_file_location(core: &[u8]) -> Option<&[u8]> {
    let stripped = strip_location(core);
    (stripped.len() < core.len() && has_extension(stripped)).then_some(stripped)
}

/// A path becomes its base name, normalised like any word; a directory (`/tmp/x/`) `<path>`.
fn path<'a>(core: &'a [u8], cx: &mut Cx<'a>, out: &mut Vec<u8>) {
    let base = base_name(strip_location(core));
    if base.is_empty() {
        out.extend_from_slice(b"<path>");
    } else {
        word(base, 0, base.len(), Mode::Plain, cx, out);
    }
}

/// `scheme://user@host:port/a/123?q=1#f` → `scheme://<user>@host:<port>/a/<n>?<query>`;
/// `file://` URLs are paths.
fn url_chunk<'a>(whole: &'a [u8], cx: &mut Cx<'a>, out: &mut Vec<u8>) {
    let (core, tail) = whole.split_at(trailing_punct_start(whole, b".,;:!?"));
    let Some(sep) = core.windows(3).position(|w| w == b"://") else {
        out.extend_from_slice(whole);
        return;
    };
    let (scheme, rest) = (
        core.get(..sep).unwrap_or_default(),
        core.get(sep + 3..).unwrap_or_default(),
    );
    if scheme.eq_ignore_ascii_case(b"file") {
        path(rest, cx, out);
        out.extend_from_slice(tail);
        return;
    }
    out.extend_from_slice(scheme);
    out.extend_from_slice(b"://");
    let authority_end = rest
        .iter()
        .position(|b| matches!(b, b'/' | b'?' | b'#'))
        .unwrap_or(rest.len());
    let (authority, mut rest) = rest.split_at(authority_end);
    let host_port = match authority.iter().rposition(|&b| b == b'@') {
        Some(i) => {
            out.extend_from_slice(b"<user>@");
            authority.get(i + 1..).unwrap_or_default()
        }
        None => authority,
    };
    let port_digits = host_port
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_digit())
        .count();
    let (host, port) = if port_digits > 0
        && port_digits < host_port.len()
        && at(host_port, host_port.len() - port_digits - 1) == b':'
    {
        (
            host_port
                .get(..host_port.len() - port_digits - 1)
                .unwrap_or_default(),
            true,
        )
    } else {
        (host_port, false)
    };
    if host.first() == Some(&b'[') || is_ipv6(host) {
        out.extend_from_slice(b"<ip>");
    } else {
        word(host, 0, host.len(), Mode::Plain, cx, out);
    }
    if port {
        out.extend_from_slice(b":<port>");
    }
    let path_end = rest
        .iter()
        .position(|b| matches!(b, b'?' | b'#'))
        .unwrap_or(rest.len());
    let (url_path, after) = rest.split_at(path_end);
    rest = url_path;
    while let Some(slash) = rest.first().filter(|&&b| b == b'/') {
        out.push(*slash);
        rest = rest.get(1..).unwrap_or_default();
        let end = rest.iter().position(|&b| b == b'/').unwrap_or(rest.len());
        let (segment, next) = rest.split_at(end);
        word(segment, 0, segment.len(), Mode::Plain, cx, out);
        rest = next;
    }
    if after.first() == Some(&b'?') && after.len() > 1 {
        out.extend_from_slice(b"?<query>");
    }
    out.extend_from_slice(tail);
}

/// `name@domain.tld`.
fn is_email(core: &[u8]) -> bool {
    let Some(at_sign) = core.iter().position(|&b| b == b'@') else {
        return false;
    };
    let (local, domain) = (
        core.get(..at_sign).unwrap_or_default(),
        core.get(at_sign + 1..).unwrap_or_default(),
    );
    let tld = domain
        .iter()
        .rposition(|&b| b == b'.')
        .and_then(|i| domain.get(i + 1..))
        .unwrap_or_default();
    !local.is_empty()
        && local
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'%' | b'+' | b'-'))
        && domain
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-'))
        && tld.len() >= 2
        && tld.iter().all(u8::is_ascii_alphabetic)
}

/// `::1`, `fe80::1ff:fe23:4567:890a`: hex groups and colons, with a digit, and either `::` or
/// all eight groups.
fn is_ipv6(core: &[u8]) -> bool {
    let colons = core.iter().filter(|&&b| b == b':').count();
    colons >= 2
        && core.iter().any(u8::is_ascii_digit)
        && core
            .iter()
            .all(|b| b.is_ascii_hexdigit() || matches!(b, b':' | b'.'))
        && (contains(core, b"::") || colons >= 7)
}

// ---------------------------------------------------------------------------------------------
// Words and numbers

/// Normalise the word bytes `s[p..e]`; number readers may go on past `e` (but not past `s`).
fn word<'a>(
    s: &'a [u8],
    mut p: usize,
    e: usize,
    mode: Mode,
    cx: &mut Cx<'a>,
    out: &mut Vec<u8>,
) -> usize {
    while let Some(&b) = s.get(p).filter(|_| p < e) {
        let kind = info(b);
        p = if kind & DIGIT != 0 {
            number(s, p, mode, cx, out)
        } else if kind & ALPHA != 0 {
            ident(s, p, cx, out)
        } else {
            out.push(b);
            p + 1
        };
    }
    p
}

/// An identifier starting at a letter: copied with the digits that follow letters
/// (`python3`, `utf8`, `sha256`); digits after `_` start a number of their own (`job_<n>`).
/// Hex ids, UUIDs, random ids and temp names become placeholders.
fn ident<'a>(s: &'a [u8], p: usize, cx: &mut Cx<'a>, out: &mut Vec<u8>) -> usize {
    let mut run = p;
    let mut digit = false;
    while at(s, run).is_ascii_alphanumeric() {
        digit |= is_digit_at(s, run);
        run += 1;
    }
    // Ids have digits; a UUID may start with eight letters (`deadbeef-…`).
    if run - p >= 8 && (digit || at(s, run) == b'-') {
        if let Some(q) = hash_like(s, p, run, out) {
            cx.prev = b"";
            return q;
        }
    }
    let mut q = p;
    while let Some(&b) = s.get(q) {
        let kind = info(b);
        if kind & ALPHA != 0 || (kind & DIGIT != 0 && q > p && at(s, q - 1) != b'_') {
            q += 1;
        } else {
            break;
        }
    }
    let w = s.get(p..q).unwrap_or_default();
    if at(s, p) == b't' {
        let name_end = {
            let mut r = p;
            while at(s, r).is_ascii_alphanumeric() || at(s, r) == b'_' {
                r += 1;
            }
            r
        };
        if tmp_name(s.get(p..name_end).unwrap_or_default()) {
            out.extend_from_slice(b"<tmp>");
            return name_end;
        }
    }
    out.extend_from_slice(w);
    cx.prev = w;
    q
}

/// A UUID, a long hex id or a random id starting at `p` (`run`: end of its ASCII letters and
/// digits), written as its placeholder.
fn hash_like(s: &[u8], p: usize, run: usize, out: &mut Vec<u8>) -> Option<usize> {
    let len = run - p;
    if len == 8 && at(s, run) == b'-' {
        if let Some(q) = uuid_end(s, p) {
            out.extend_from_slice(b"<uuid>");
            return Some(q);
        }
    }
    let bytes = s.get(p..run).unwrap_or_default();
    let digits = bytes.iter().filter(|b| b.is_ascii_digit()).count();
    if digits > 0 && digits < len && bytes.iter().all(u8::is_ascii_hexdigit) {
        out.extend_from_slice(b"<hex>");
        return Some(run);
    }
    if len >= 10 && digits >= 3 && len - digits >= 3 {
        let switches = bytes
            .windows(2)
            .filter(|w| {
                w.first().is_some_and(u8::is_ascii_digit)
                    != w.get(1).is_some_and(u8::is_ascii_digit)
            })
            .count();
        if switches >= 4 {
            out.extend_from_slice(b"<id>");
            return Some(run);
        }
    }
    None
}

/// `8-4-4-4-12` hex digits, not glued to more letters or digits.
fn uuid_end(s: &[u8], p: usize) -> Option<usize> {
    for (k, b) in s.get(p..p + 36)?.iter().enumerate() {
        let ok = if matches!(k, 8 | 13 | 18 | 23) {
            *b == b'-'
        } else {
            b.is_ascii_hexdigit()
        };
        if !ok {
            return None;
        }
    }
    (!at(s, p + 36).is_ascii_alphanumeric()).then_some(p + 36)
}

/// A number at the digit `s[p]` (not glued to a letter before it): a hex address, UUID, id,
/// date, time, IP, duration, size, a kept cause number, or `<n>`.
fn number<'a>(s: &'a [u8], p: usize, mode: Mode, cx: &mut Cx<'a>, out: &mut Vec<u8>) -> usize {
    let q = number_inner(s, p, mode, cx, out);
    cx.prev = b"";
    q
}

fn number_inner(s: &[u8], p: usize, mode: Mode, cx: &Cx<'_>, out: &mut Vec<u8>) -> usize {
    // The digits, and what follows them, decide which readers can apply.
    let int_end = digits_end(s, p);
    let next = at(s, int_end);
    if next.is_ascii_alphabetic() {
        if int_end == p + 1
            && at(s, p) == b'0'
            && matches!(next, b'x' | b'X')
            && at(s, p + 2).is_ascii_hexdigit()
        {
            let mut q = p + 2;
            while at(s, q).is_ascii_hexdigit() {
                q += 1;
            }
            out.extend_from_slice(b"<hex>");
            return q;
        }
        let run = alnum_end(s, int_end);
        if run - p >= 8 {
            if let Some(q) = hash_like(s, p, run, out) {
                return q;
            }
        }
    } else if matches!(next, b'-' | b'/' | b'.' | b':') {
        if next == b'-' && int_end == p + 8 {
            if let Some(q) = uuid_end(s, p) {
                out.extend_from_slice(b"<uuid>");
                return q;
            }
        }
        if let Some(q) = date_time(s, p) {
            out.extend_from_slice(b"<time>");
            return q;
        }
        if next == b'.' {
            if let Some(mut q) = ipv4_end(s, p) {
                out.extend_from_slice(b"<ip>");
                if at(s, q) == b':' && is_digit_at(s, q + 1) {
                    q = digits_end(s, q + 1);
                    out.extend_from_slice(b":<port>");
                }
                return q;
            }
        }
    }

    let mut q = int_end;
    let mut integer = true;
    loop {
        match at(s, q) {
            b'.' if is_digit_at(s, q + 1) => {
                q = digits_end(s, q + 1);
                integer = false;
            }
            // 1,234,567 (but not 1,2 nor a list of 1,2345).
            b',' if digits_end(s, q + 1) == q + 4 && integer_grouping(s, p, q) => {
                q += 4;
            }
            _ => break,
        }
    }

    let unit_end = alpha_end(s, q);
    if unit_end > q {
        let unit = s.get(q..unit_end).unwrap_or_default();
        if is_duration_unit(unit) {
            out.extend_from_slice(b"<duration>");
            return compound_duration(s, unit_end);
        }
        if is_size_unit(unit) {
            out.extend_from_slice(b"<size>");
            return unit_end;
        }
        // Letters glued on (3rd, 64bit): the number, then the word on its own.
    } else if at(s, q) == b' ' {
        let (w_start, w_end) = next_word_span(s, q);
        let w = s.get(w_start..w_end).unwrap_or_default();
        if !w.is_empty() {
            let glued = info(at(s, w_end)) & (ALPHA | DIGIT) != 0;
            if !glued && is_duration_word(w) {
                out.extend_from_slice(b"<duration>");
                return w_end;
            }
            if !glued && is_size_unit(w) {
                out.extend_from_slice(b"<size>");
                return w_end;
            }
        }
    }

    let digits = s.get(p..q).unwrap_or_default();
    let kept = match mode {
        Mode::QuotedName => true,
        Mode::QuotedValue => false,
        Mode::Plain => integer && names_the_cause(cx.prev, digits, s, q),
    };
    if kept {
        out.extend_from_slice(digits);
    } else if cx.prev.eq_ignore_ascii_case(b"port") {
        out.extend_from_slice(b"<port>");
    } else {
        out.extend_from_slice(b"<n>");
    }
    q
}

/// The digits before the comma at `q` are a 1–3 digit group, or groups of 3 after one.
fn integer_grouping(s: &[u8], p: usize, q: usize) -> bool {
    let first = digits_end(s, p);
    if first - p > 3 {
        return false;
    }
    let mut i = first;
    while i < q {
        if at(s, i) != b',' || digits_end(s, i + 1) != i + 4 {
            return false;
        }
        i += 4;
    }
    true
}

/// `1h2m3s`, `1m30.5s`: more number-and-unit pairs glued on.
fn compound_duration(s: &[u8], mut end: usize) -> usize {
    while is_digit_at(s, end) {
        let mut r = digits_end(s, end);
        if at(s, r) == b'.' && is_digit_at(s, r + 1) {
            r = digits_end(s, r + 1);
        }
        let u = alpha_end(s, r);
        if u > r && is_duration_unit(s.get(r..u).unwrap_or_default()) {
            end = u;
        } else {
            break;
        }
    }
    end
}

/// Whether the integer `digits` names the cause: after a word of [`is_cause_lead`] or a signal
/// name; or, for an HTTP status (100–599), after `error`, `err`, `response` or a name ending in
/// `HTTPError`, `StatusError`, `ResponseError`, or before an HTTP reason phrase. (Not after
/// any `…Error`: Python prints `KeyError: 404` for a missing integer key.)
fn names_the_cause(prev: &[u8], digits: &[u8], s: &[u8], q: usize) -> bool {
    if is_cause_lead(prev) || (prev.len() > 3 && prev.starts_with(b"SIG")) {
        return true;
    }
    let http = digits.len() == 3 && matches!(digits.first(), Some(b'1'..=b'5'));
    if !http {
        return false;
    }
    is_status_lead(prev)
        || ends_with_ignore_case(prev, b"httperror")
        || ends_with_ignore_case(prev, b"statuserror")
        || ends_with_ignore_case(prev, b"responseerror")
        || is_reason_word(next_word(s, q))
}

/// A date (`2024-01-02`, `2024/01/02`, `02/01/2024`), optionally followed by `T` or a blank and a
/// time, or a time alone (`03:04:05`, `3:04`, `03:04:05.123`, `03:04:05,123`); with a zone
/// (`Z`, `+02:00`). Returns the end.
fn date_time(s: &[u8], p: usize) -> Option<usize> {
    if let Some(mut q) = date_end(s, p) {
        if matches!(at(s, q), b'T' | b' ' | b'_') {
            if let Some(t) = time_end(s, q + 1) {
                q = t;
            }
        }
        return Some(zone_end(s, q));
    }
    time_end(s, p).map(|q| zone_end(s, q))
}

fn date_end(s: &[u8], p: usize) -> Option<usize> {
    let first = digits_end(s, p);
    let sep = at(s, first);
    if !matches!(sep, b'-' | b'/' | b'.') {
        return None;
    }
    if first - p == 4 {
        let ok = two_digits(s, first + 1)
            && at(s, first + 3) == sep
            && two_digits(s, first + 4)
            && !is_digit_at(s, first + 6);
        return ok.then_some(first + 6);
    }
    if (1..=2).contains(&(first - p)) {
        let second = digits_end(s, first + 1);
        if (1..=2).contains(&(second - first - 1)) && at(s, second) == sep {
            let third = digits_end(s, second + 1);
            if third - second - 1 == 4 {
                return Some(third);
            }
        }
    }
    None
}

fn time_end(s: &[u8], p: usize) -> Option<usize> {
    let hours = digits_end(s, p);
    if !(1..=2).contains(&(hours - p)) || at(s, hours) != b':' || !two_digits(s, hours + 1) {
        return None;
    }
    let mut q = hours + 3;
    if at(s, q) == b':' && two_digits(s, q + 1) {
        q += 3;
    }
    if matches!(at(s, q), b'.' | b',') && is_digit_at(s, q + 1) {
        q = digits_end(s, q + 1);
    }
    (!is_digit_at(s, q)).then_some(q)
}

fn zone_end(s: &[u8], q: usize) -> usize {
    match at(s, q) {
        b'Z' if !at(s, q + 1).is_ascii_alphanumeric() => q + 1,
        b'+' | b'-' if two_digits(s, q + 1) => {
            let mut r = q + 3;
            if at(s, r) == b':' {
                r += 1;
            }
            if two_digits(s, r) && !is_digit_at(s, r + 2) {
                r + 2
            } else {
                q
            }
        }
        _ => q,
    }
}

/// Four groups of 1–3 digits joined by dots, and no fifth.
fn ipv4_end(s: &[u8], p: usize) -> Option<usize> {
    let mut q = p;
    for group in 0..4 {
        let end = digits_end(s, q);
        if end == q || end - q > 3 {
            return None;
        }
        q = end;
        if group < 3 {
            if at(s, q) != b'.' {
                return None;
            }
            q += 1;
        }
    }
    (!(at(s, q) == b'.' && is_digit_at(s, q + 1))).then_some(q)
}
