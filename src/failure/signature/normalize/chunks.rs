//! Chunks: a run of letters, digits and the punctuation that holds a path, a URL or a number
//! together, classified by the bytes it contains.

use super::bytes::{
    at, contains, digits_end, info, is_digit_at, starts_with_ignore_case, ALPHA, AT, CHUNK, COLON,
    DIGIT, SLASH,
};
use super::places::{is_email, is_ipv6, is_path, path, strip_file_location, url_chunk};
use super::word_lists::{is_month, is_weekday};
use super::words::word;
use super::{Cx, Mode};

pub(super) fn chunk<'a>(body: &'a [u8], s: usize, cx: &mut Cx<'a>, out: &mut Vec<u8>) -> usize {
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
pub(super) fn last_word(chunk: &[u8]) -> &[u8] {
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

pub(super) fn is_url_byte(b: u8) -> bool {
    info(b) & CHUNK != 0 || matches!(b, b'=' | b',' | b';' | b'*')
}

/// Index where the trailing run of `set` bytes starts (sentence punctuation after a path).
pub(super) fn trailing_punct_start(word: &[u8], set: &[u8]) -> usize {
    word.iter()
        .rposition(|b| !set.contains(b))
        .map_or(0, |i| i + 1)
}

/// The chunk is the whole of a quoted string: `'total'`, `"left-pad"`.
pub(super) fn is_quoted(body: &[u8], s: usize, e: usize) -> bool {
    s > 0 && matches!(at(body, s - 1), b'\'' | b'"' | b'`') && at(body, e) == at(body, s - 1)
}

/// A chunk of letters only: copied, unless it is a location's `line N`, a month or weekday
/// of a date, or a temp name.
pub(super) fn letters<'a>(
    s: &'a [u8],
    p: usize,
    e: usize,
    cx: &mut Cx<'a>,
    out: &mut Vec<u8>,
) -> usize {
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
pub(super) fn location_line(s: &[u8], e: usize, out: &mut Vec<u8>) -> Option<usize> {
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
pub(super) fn is_date_word(s: &[u8], w: &[u8], e: usize) -> bool {
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
pub(super) fn next_word(s: &[u8], q: usize) -> &[u8] {
    let (start, end) = next_word_span(s, q);
    s.get(start..end).unwrap_or_default()
}

pub(super) fn next_word_span(s: &[u8], mut q: usize) -> (usize, usize) {
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
pub(super) fn tmp_name(w: &[u8]) -> bool {
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
