//! Words that may be ids: identifiers keep the digits glued to a letter; hex and random ids and
//! UUIDs become placeholders.

use super::bytes::{at, info, is_digit_at, ALPHA, DIGIT};
use super::chunks::tmp_name;
use super::numbers::number;
use super::{Cx, Mode};

/// Normalise the word bytes `s[p..e]`; number readers may go on past `e` (but not past `s`).
pub(super) fn word<'a>(
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
pub(super) fn ident<'a>(s: &'a [u8], p: usize, cx: &mut Cx<'a>, out: &mut Vec<u8>) -> usize {
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
pub(super) fn hash_like(s: &[u8], p: usize, run: usize, out: &mut Vec<u8>) -> Option<usize> {
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
pub(super) fn uuid_end(s: &[u8], p: usize) -> Option<usize> {
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
