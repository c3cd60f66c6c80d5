//! Normalise failure evidence so that the same root cause gives the same text, then sign it:
//! the signature is the first 16 hex characters of SHA-256 of the normalised text. Pure
//! functions, one pass over the bytes (see `signature/normalize.rs`).
//!
//! # What varies from run to run is replaced
//!
//! | In the output                                                  | Becomes              |
//! |----------------------------------------------------------------|----------------------|
//! | a path, absolute or relative (`/tmp/x/main.py`, `C:\a\b.js`, `./lib/x`, `src/a/b.py`, `file:///x/m.mjs`) | its base name (`main.py`), normalised like any word; a directory `<path>` |
//! | a line and column after a file (`main.js:12:5`, `main.py:12:`) | dropped (`main.js`)  |
//! | a location's line (`File "x.py", line 12, in f`, `x.sh: line 3: …`, `(x.py, line 3)`) | dropped with its `, ` / `: ` |
//! | a date, time or timestamp (`2024-01-02T03:04:05.123Z`, `2024-01-02 03:04:05,123`, `03:04:05`, `02/01/2024`) | `<time>` |
//! | a month or weekday name in a date (`Tue Jan  2`, `Jan 2`)      | `<date>`             |
//! | a duration (`12ms`, `1.5s`, `1h2m3s`, `12 ms`, `3.2 s`, `3 seconds`) | `<duration>`      |
//! | a size (`10MB`, `1.5GiB`, `1024 bytes`)                        | `<size>`             |
//! | a hex address (`0x7f3a9c`)                                     | `<hex>`              |
//! | a UUID                                                         | `<uuid>`             |
//! | a hex id of 8+ characters with letters and digits (`5f3e2a1b9c`, a git hash) | `<hex>` |
//! | a random id: 10+ letters and digits, mixed back and forth (`ch_3MmlLrLkdIwHu7ix0snN0B15`) | `<id>` |
//! | an e-mail address                                              | `<email>`            |
//! | an IPv4 or IPv6 address, with its port                         | `<ip>`, `<ip>:<port>` |
//! | a URL (`https://u:p@api.x.com:8443/v1/users/42?page=2`)        | scheme and host kept, `<user>@`, `:<port>`, each path segment normalised, `?<query>` (`https://<user>@api.x.com:<port>/v<n>/users/<n>?<query>`) |
//! | a number after `port`                                          | `<port>`             |
//! | a temp name (`tmpk3j2_x1a`, `tmp…` with digits)                | `<tmp>`              |
//! | any other number: counts, sizes, offsets, PIDs, ids, versions (`42`, `-3`, `1,234`, `3.14`, `1.2.3`) | `<n>` |
//! | ANSI colour codes, runs of blanks, blank lines, caret lines (`~~^^^`) | dropped / one blank |
//! | library frames (Python's standard library and `site-packages`, `<frozen …>`; Node's `node:…`, `internal/…`, `node_modules`, `(<anonymous>)`), with a Python frame's source line | one `<library>` line per run |
//! | the source line under the script's own Python frame in a function (it changes whenever the script is edited; the file and function name the place) | dropped (a `SyntaxError`'s frame, which has no function, keeps it) |
//!
//! # What names the cause is kept
//!
//! - Exception types (the evidence's `error_type` is kept as it is), the message's words, and
//!   the script's own frames: `File "main.py", in load`, `at load (main.js)`.
//! - Digits that are part of an identifier, after a letter: `python3`, `utf8`, `sha256`,
//!   `E11000`. (Digits after `_` or `-` are a number of their own: `job_<n>`, `worker-<n>`.)
//! - Quoted names exactly: a quoted string that is one chunk with a letter in it (the missing
//!   key, module, attribute, package: `'totl'`, `'user_2'`, `'left-pad'`, `'@scope/pkg'`) keeps
//!   its digits; only UUIDs, hex and random ids, dates, times and IPs in it are replaced, and a
//!   quoted path still becomes its base name.
//! - Numbers that name the cause:
//!   - any integer right after `errno`, `WinError`, `code`, `status`, `exit`, `exitcode`,
//!     `returncode`, `rc`, `signal`, `sig`, `signum`, `status_code`, `statusCode`,
//!     `error_code`, `curl`, `HTTP` (any case, ignoring the `:`/`=`/`[`/`(` in between):
//!     `[Errno 111]`, `exit code 2`, `exit status 1`, `signal 9`, `status=404`, `curl: (7)`,
//!     `HTTP/1.1 404`; and after a signal name (`SIGKILL 9`);
//!   - a 3-digit HTTP status (100–599) after `error`, `err` or `response` (`HTTP Error 404`,
//!     `<Response [404]>`) or a name ending in `HTTPError`, `StatusError`, `ResponseError`
//!     (`HTTPError: 500`), or before the first word of a reason phrase (`404 Client Error`,
//!     `503 Service Unavailable`, `200 OK`); not after any `…Error` (`KeyError: 404` is a
//!     missing integer key);
//!   - never a number that is the whole of a quoted string (`'404'` is a value).
//!
//! Placeholders are ASCII in angle brackets, so they cannot be confused with words; the
//! normalised text is also what `healer errors classify` shows.

mod normalize;

use sha2::{Digest, Sha256};

use super::Evidence;

/// The text that is hashed: the error type as it is, `: `, the normalised message, then the
/// normalised stack, one line per frame or source line.
pub fn normalize(evidence: &Evidence) -> String {
    let stack_len = evidence.stack.as_ref().map_or(0, String::len);
    let mut out = Vec::with_capacity(evidence.message.len() + stack_len + 64);
    if let Some(t) = evidence.error_type.as_deref().map(str::trim) {
        out.extend_from_slice(t.as_bytes());
        out.extend_from_slice(b": ");
    }
    out.extend_from_slice(normalize_text(evidence.message.trim()).as_bytes());
    if let Some(stack) = &evidence.stack {
        let mark = out.len();
        out.push(b'\n');
        normalize::normalize_into(stack, &mut out);
        if out.len() == mark + 1 {
            out.truncate(mark);
        }
    }
    into_string(out)
}

/// The normalised form of a whole log or output: the same rules, line by line.
pub fn normalize_text(raw: &str) -> String {
    let mut out = Vec::with_capacity(raw.len());
    normalize::normalize_into(raw, &mut out);
    into_string(out)
}

/// First 16 hex characters of SHA-256 of the text.
pub fn sign(normalized: &str) -> String {
    let digest = Sha256::digest(normalized.as_bytes());
    let mut hex = String::with_capacity(16);
    for b in digest.iter().take(8) {
        hex.push(HEX[usize::from(b >> 4)]);
        hex.push(HEX[usize::from(b & 0x0f)]);
    }
    hex
}

const HEX: [char; 16] = [
    '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'a', 'b', 'c', 'd', 'e', 'f',
];

/// The scanner only cuts the input at ASCII bytes and only adds ASCII, so this is valid UTF-8;
/// the lossy path is a safety net, never expected.
fn into_string(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests;
