//! HTTP statuses in a failure's text, read wherever they are said and however a library says
//! them, each classed by what fixes it (docs/classes.md): a credential or a permission
//! (environment), or waiting (transient).

use crate::failure::FailureClass;

/// Bytes that stand between a status and the words around it: `status: 503`, `(403)`,
/// `"statusCode":503`, `'403 Forbidden'`.
const SEPARATORS: &[u8] = b" \t:=\"'`()[],#<>-";

/// How far either side of a status its line is read (for "rate limit").
const LINE_REACH: usize = 512;
/// The longest exception name looked for before a status.
const NAME_REACH: usize = 96;

/// Words that introduce a status said after them, with the reasons said before their number
/// (`Forbidden: 403 GET …`, `Unauthorized (401)`, `ServiceUnavailable: 503`).
const LEADS: [&str; 17] = [
    "http",
    "http/1.0",
    "http/1.1",
    "http/2",
    "http/2.0",
    "http/3",
    "status",
    "error occurred",
    "unauthorized",
    "forbidden",
    "too many requests",
    "toomanyrequests",
    "service unavailable",
    "serviceunavailable",
    "internalservererror",
    "badgateway",
    "gatewaytimeout",
];

/// Words that introduce a status only when the number ends what is said (`Error 403: …`,
/// `HTTPError: 500`, `fetch failed: 503`, `expected 200, got 503`, `returned 502 for GET /x`),
/// not when it counts something (`error: 500 records failed`, `got 500 rows`). "error" and
/// "exception" also end the names of exceptions (`APIError: 503`, `HttpException: 401`).
const LOOSE_LEADS: [&str; 9] = [
    "error",
    "exception",
    "response",
    "returned",
    "responded with",
    "answered",
    "got",
    "failed",
    "failed with",
];

/// Words that go on about the request after a status: `Error 503 while fetching …`, `got 502
/// from the gateway`.
const FOLLOWERS: [&str; 9] = [
    "from",
    "when",
    "while",
    "for",
    "on",
    "after",
    "calling",
    "fetching",
    "requesting",
];

/// What follows a status: its reason phrase, or the kind of error it is.
const REASONS: [&str; 20] = [
    "unauthorized",
    "forbidden",
    "proxy authentication required",
    "request timeout",
    "request time-out",
    "too many requests",
    "internal server error",
    "not implemented",
    "bad gateway",
    "service unavailable",
    "service temporarily unavailable",
    "server unavailable",
    "gateway timeout",
    "gateway time-out",
    "http version not supported",
    "insufficient storage",
    "network authentication required",
    "client error",
    "server error",
    // urllib3: "too many 503 error responses".
    "error response",
];

/// HTTP methods, as Google's client libraries put one after the status: `403 GET https://…`.
const METHODS: [&str; 7] = ["get", "post", "put", "patch", "delete", "head", "options"];

/// HTTP statuses said anywhere in the text (the last line, a wrapper's message, a cause, a log
/// line), each classed by what fixes it: 401, 403 and 407 (a credential or a permission must
/// change) → environment, unless its line says it is a rate limit (GitHub answers 403 "API rate
/// limit exceeded": waiting fixes that); 408, 429 and 5xx → transient. Other statuses are the
/// request's own fault and prove nothing here.
///
/// A three-digit number is a status when it is said the way libraries say one: after a word
/// that introduces it (`HTTP 502`, `HTTP Error 503`, `HTTP/1.1 503`, `status 502`,
/// `statusCode: 503`, `Error code: 401`, `Response code 503`, `HttpError 403 when requesting`,
/// `returned error: 500`, `An error occurred (403)`, `Forbidden: 403`, npm's `code E401`, a
/// script's own `fetch failed: 503` or `expected 200, got 503`), or before its reason or kind
/// (`401 Unauthorized`, `401 (Unauthorized)`, `401 Client Error`, `503 Server Error`, urllib3's
/// `too many 503 error responses`, aiohttp's `401, message='Unauthorized'`, `403 GET
/// https://…`). A number alone (`500 rows`) is not one.
pub(super) fn http_statuses(lower: &[u8], text: &str) -> (bool, bool) {
    let (mut environment, mut transient) = (false, false);
    let mut at = 0;
    while let Some(offset) = lower
        .get(at..)
        .and_then(|rest| rest.iter().position(u8::is_ascii_digit))
    {
        let start = at + offset;
        let digits = lower.get(start..).map_or(0, |rest| {
            rest.iter().take_while(|b| b.is_ascii_digit()).count()
        });
        at = start + digits.max(1);
        let (Some(number), Some(before), Some(after)) =
            (lower.get(start..at), lower.get(..start), lower.get(at..))
        else {
            continue;
        };
        if digits != 3 {
            continue;
        }
        let status = number
            .iter()
            .fold(0u16, |n, d| n * 10 + u16::from(d - b'0'));
        let class = match status {
            401 | 403 | 407 => FailureClass::Environment,
            408 | 429 | 500..=599 => FailureClass::Transient,
            _ => continue,
        };
        let known = match class {
            FailureClass::Environment => environment,
            _ => transient,
        };
        if known || glued(before, after) {
            continue;
        }
        if !(introduced(before, after, text) || qualified(after)) {
            continue;
        }
        // The status's line, within `LINE_REACH` of it either way: a script's output may be
        // one line of megabytes, and each status read costs no more than this.
        let reach = start.saturating_sub(LINE_REACH);
        let line_start = before
            .get(reach..)
            .unwrap_or_default()
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(reach, |i| reach + i + 1);
        let line_end = after
            .iter()
            .take(LINE_REACH)
            .position(|&b| b == b'\n')
            .map_or((at + LINE_REACH).min(lower.len()), |i| at + i);
        let line = lower.get(line_start..line_end).unwrap_or_default();
        if class == FailureClass::Environment && !rate_limited(line) {
            environment = true;
        } else {
            transient = true;
        }
        if environment && transient {
            break;
        }
    }
    (environment, transient)
}

/// The number is part of a word, a version or a longer number (`v503`, `1.503`, `503.2`,
/// `503ms`) — all but npm's `E401` after `code`.
fn glued(before: &[u8], after: &[u8]) -> bool {
    let word = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_';
    let decimal = |sep: Option<&u8>, digit: Option<&u8>| {
        sep == Some(&b'.') && digit.is_some_and(u8::is_ascii_digit)
    };
    let npm = before
        .strip_suffix(b"e")
        .is_some_and(|head| trim_end(head).ends_with(b"code"));
    let prev = before.last();
    let prev2 = before.len().checked_sub(2).and_then(|i| before.get(i));
    (prev.is_some_and(word) && !npm)
        || after.first().is_some_and(word)
        || decimal(prev, prev2)
        || decimal(after.first(), after.get(1))
}

/// Said after a word that introduces a status.
fn introduced(before: &[u8], after: &[u8], text: &str) -> bool {
    let head = trim_end(before);
    // npm: `code E401`.
    let head = match head.strip_suffix(b"e") {
        Some(rest) if trim_end(rest).ends_with(b"code") => trim_end(rest),
        _ => head,
    };
    if let Some(rest) = head.strip_suffix(b"code") {
        return match rest.last() {
            // `statusCode`, `errorcode`; `status_code`, `http_code`.
            Some(c) if c.is_ascii_alphanumeric() => ends_with_lead(rest, after, text),
            Some(b'_') => {
                ends_with_lead(rest.get(..rest.len() - 1).unwrap_or_default(), after, text)
            }
            // A word of its own: `code 503`, `Error code: 401`, `(code 429)`. An exit code is
            // never above 255, so a `code` of 401 to 599 is an HTTP one.
            _ => true,
        };
    }
    ends_with_lead(head, after, text)
}

fn ends_with_lead(head: &[u8], after: &[u8], text: &str) -> bool {
    if LEADS.iter().any(|lead| head.ends_with(lead.as_bytes())) {
        return true;
    }
    LOOSE_LEADS.iter().any(|lead| {
        let Some(before) = head.strip_suffix(lead.as_bytes()) else {
            return false;
        };
        // An exception's name is short: looked for in the last `NAME_REACH` bytes only.
        let reach = head.len().saturating_sub(NAME_REACH);
        let name_start = head
            .get(reach..)
            .unwrap_or_default()
            .iter()
            .rposition(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.')))
            .map_or(reach, |i| reach + i + 1);
        let named = matches!(*lead, "error" | "exception" | "response");
        // "forgot", "unanswered": another word.
        if !named && before.last().is_some_and(u8::is_ascii_alphanumeric) {
            return false;
        }
        // `KeyError: 500`, `ValueError: 503 is not a valid port` are the code's own.
        if named
            && text
                .get(name_start..head.len())
                .is_some_and(super::is_a_code_error)
        {
            return false;
        }
        // Google's `<HttpError 403 when requesting …>`: the name says HTTP.
        let name = head.get(name_start..).unwrap_or_default();
        (named && name.windows(4).any(|w| w == b"http")) || ends_what_is_said(after)
    })
}

/// The number ends what is said: nothing follows it but punctuation, its reason, or words
/// about the request.
fn ends_what_is_said(after: &[u8]) -> bool {
    // The rest of its line: what the next line says is not said of this number.
    let blanks = after
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\t'))
        .count();
    let rest = after.get(blanks..).unwrap_or_default();
    if !rest.first().is_some_and(u8::is_ascii_alphabetic) || qualified(after) {
        return true;
    }
    let word_len = rest.iter().take_while(|b| b.is_ascii_alphabetic()).count();
    let word = rest.get(..word_len).unwrap_or_default();
    FOLLOWERS.iter().any(|f| f.as_bytes() == word)
}

/// Followed by its reason phrase, the kind of error it is, or the request it answered.
fn qualified(after: &[u8]) -> bool {
    let rest = trim_start(after);
    let rest = rest.strip_prefix(b"message=").map_or(rest, trim_start);
    REASONS.iter().any(|r| rest.starts_with(r.as_bytes()))
        || METHODS.iter().any(|m| {
            rest.strip_prefix(m.as_bytes())
                .and_then(|r| r.strip_prefix(b" "))
                .is_some_and(|r| r.starts_with(b"http") || r.starts_with(b"/"))
        })
}

/// The line says the refusal is a rate limit.
fn rate_limited(line: &[u8]) -> bool {
    ["rate limit", "rate-limit", "ratelimit", "rate_limit"]
        .iter()
        .any(|p| line.windows(p.len()).any(|w| w == p.as_bytes()))
}

fn trim_end(mut bytes: &[u8]) -> &[u8] {
    while let Some((last, head)) = bytes.split_last() {
        if !SEPARATORS.contains(last) {
            break;
        }
        bytes = head;
    }
    bytes
}

fn trim_start(mut bytes: &[u8]) -> &[u8] {
    while let Some((first, tail)) = bytes.split_first() {
        if !SEPARATORS.contains(first) {
            break;
        }
        bytes = tail;
    }
    bytes
}
