//! Numbers: hex addresses, dates, times, IPv4, durations, sizes, numbers that name the cause,
//! and `<n>` for the rest. Readers may read past their chunk, never past the line.

use super::bytes::{
    alnum_end, alpha_end, at, digits_end, ends_with_ignore_case, info, is_digit_at, two_digits,
    ALPHA, DIGIT,
};
use super::chunks::{next_word, next_word_span};
use super::word_lists::{
    is_cause_lead, is_duration_unit, is_duration_word, is_reason_word, is_size_unit, is_status_lead,
};
use super::words::{hash_like, uuid_end};
use super::{Cx, Mode};

/// A number at the digit `s[p]` (not glued to a letter before it): a hex address, UUID, id,
/// date, time, IP, duration, size, a kept cause number, or `<n>`.
pub(super) fn number<'a>(
    s: &'a [u8],
    p: usize,
    mode: Mode,
    cx: &mut Cx<'a>,
    out: &mut Vec<u8>,
) -> usize {
    let q = number_inner(s, p, mode, cx, out);
    cx.prev = b"";
    q
}

pub(super) fn number_inner(
    s: &[u8],
    p: usize,
    mode: Mode,
    cx: &Cx<'_>,
    out: &mut Vec<u8>,
) -> usize {
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
pub(super) fn integer_grouping(s: &[u8], p: usize, q: usize) -> bool {
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
pub(super) fn compound_duration(s: &[u8], mut end: usize) -> usize {
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
pub(super) fn names_the_cause(prev: &[u8], digits: &[u8], s: &[u8], q: usize) -> bool {
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
pub(super) fn date_time(s: &[u8], p: usize) -> Option<usize> {
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

pub(super) fn date_end(s: &[u8], p: usize) -> Option<usize> {
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

pub(super) fn time_end(s: &[u8], p: usize) -> Option<usize> {
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

pub(super) fn zone_end(s: &[u8], q: usize) -> usize {
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
pub(super) fn ipv4_end(s: &[u8], p: usize) -> Option<usize> {
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
