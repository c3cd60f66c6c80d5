//! Reading what a host answered, tolerantly: a field that is missing or of another type is
//! `None`, never a panic; a host's error message is taken from whichever shape it uses; a log
//! is cut to its end and cleaned of terminal escapes.

use serde_json::Value;

use super::LOG_TAIL_BYTES;

/// How much of a host's error message is kept in a sentence.
const MESSAGE_CHARS: usize = 300;

/// The non-empty text at `pointer` (`/head/sha`).
pub(super) fn text(value: &Value, pointer: &str) -> Option<String> {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// The whole number at `pointer`, written as a number or as digits.
pub(super) fn number(value: &Value, pointer: &str) -> Option<u64> {
    match value.pointer(pointer)? {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// The items of the array at `pointer` ("" for the answer itself); none when it is not one.
pub(super) fn items<'v>(value: &'v Value, pointer: &str) -> &'v [Value] {
    value
        .pointer(pointer)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// What a host's error body says, in one short line: GitHub's `message` and `errors`,
/// GitLab's `message` (a string, a list, or fields with lists) or `error`, Forgejo's
/// `message`, or plain text. `None` for an empty body or a web page, which says nothing a
/// person can use in a sentence.
pub(super) fn host_message(body: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() || looks_like_a_web_page(text) {
        return None;
    }
    let said = match serde_json::from_str::<Value>(text) {
        Ok(value) => {
            let mut parts = Vec::new();
            for key in ["message", "error", "error_description", "errors"] {
                if let Some(part) = value.get(key).and_then(flatten) {
                    if !parts.contains(&part) {
                        parts.push(part);
                    }
                }
            }
            parts.join("; ")
        }
        Err(_) => text.to_string(),
    };
    let line = said.split_whitespace().collect::<Vec<_>>().join(" ");
    (!line.is_empty()).then(|| shorten(&line, MESSAGE_CHARS))
}

/// Strings, lists of them, objects of them (`{"title": ["can't be blank"]}` →
/// "title can't be blank"), GitHub's `[{"message": …}]`.
fn flatten(value: &Value) -> Option<String> {
    let text = match value {
        Value::String(s) => s.trim().to_string(),
        Value::Array(list) => list
            .iter()
            .filter_map(|item| {
                item.get("message")
                    .and_then(flatten)
                    .or_else(|| flatten(item))
            })
            .collect::<Vec<_>>()
            .join("; "),
        Value::Object(fields) => fields
            .iter()
            .filter_map(|(field, v)| flatten(v).map(|said| format!("{field} {said}")))
            .collect::<Vec<_>>()
            .join("; "),
        Value::Number(n) => n.to_string(),
        _ => String::new(),
    };
    (!text.is_empty()).then_some(text)
}

fn looks_like_a_web_page(text: &str) -> bool {
    let start: String = text
        .chars()
        .take(200)
        .collect::<String>()
        .to_ascii_lowercase();
    start.starts_with("<!doctype html") || start.starts_with("<html") || start.contains("<html")
}

pub(super) fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// The last `max` bytes of `text`, cut where a character starts.
pub(super) fn tail(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut at = text.len() - max;
    while !text.is_char_boundary(at) {
        at += 1;
    }
    &text[at..]
}

/// A log's bytes as text a person (or a model) reads: invalid UTF-8 replaced, terminal
/// colours and cursor moves stripped, and of each line only what a terminal would show after
/// its last carriage return (GitLab's section markers, progress bars); `scrub` removes
/// secrets. At most [`LOG_TAIL_BYTES`], its end.
pub(super) fn log_text(bytes: &[u8], scrub: impl Fn(&str) -> String) -> String {
    let raw = String::from_utf8_lossy(bytes);
    let plain = anstream::adapter::strip_str(&raw).to_string();
    let lines: Vec<&str> = plain
        .split('\n')
        .map(|line| {
            let line = line.trim_end_matches('\r');
            line.rsplit('\r').next().unwrap_or(line)
        })
        .collect();
    let text = scrub(&lines.join("\n"));
    tail(&text, LOG_TAIL_BYTES).to_string()
}

/// What a failed check says: the host's summary first (bounded), then the end of its log,
/// together within [`LOG_TAIL_BYTES`].
pub(super) fn failure_log(summary: Option<String>, log: Option<String>) -> Option<String> {
    const SUMMARY_BYTES: usize = 8 * 1024;
    match (summary, log) {
        (None, None) => None,
        (Some(summary), None) => Some(tail(&summary, LOG_TAIL_BYTES).to_string()),
        (None, Some(log)) => Some(tail(&log, LOG_TAIL_BYTES).to_string()),
        (Some(summary), Some(log)) => {
            let summary = head(&summary, SUMMARY_BYTES);
            let room = LOG_TAIL_BYTES.saturating_sub(summary.len() + 2);
            Some(format!("{summary}\n\n{}", tail(&log, room)))
        }
    }
}

/// The first `max` bytes of `text`, cut where a character starts.
fn head(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut at = max;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    &text[..at]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hosts_message_is_read_from_each_shape_it_comes_in() {
        let github = br#"{"message":"Validation Failed","errors":[{"resource":"PullRequest","code":"custom","message":"No commits between main and feature"}],"documentation_url":"https://docs.github.com/rest"}"#;
        assert_eq!(
            host_message(github).as_deref(),
            Some("Validation Failed; No commits between main and feature")
        );
        let gitlab = br#"{"message":{"target_branch":["does not exist"]}}"#;
        assert_eq!(
            host_message(gitlab).as_deref(),
            Some("target_branch does not exist")
        );
        let gitlab_list =
            br#"{"message":["Another open merge request already exists for this source branch: !4"]}"#;
        assert!(
            host_message(gitlab_list).is_some_and(|m| m.starts_with("Another open merge request"))
        );
        assert_eq!(host_message(b"  \n").as_deref(), None);
        assert_eq!(
            host_message(b"<!DOCTYPE html><html><title>502</title></html>").as_deref(),
            None
        );
        let long = "x".repeat(5000);
        assert!(host_message(long.as_bytes()).is_some_and(|m| m.chars().count() == 301));
    }

    #[test]
    fn a_log_keeps_its_end_without_escapes_or_overwritten_text() {
        let raw =
            "section_start:1700000000:step_script\r\u{1b}[0K\u{1b}[32mRunning tests\u{1b}[0m\r\n\
                   progress 10%\rprogress 100%\nerror: 2 tests failed\n";
        let text = log_text(raw.as_bytes(), str::to_string);
        assert_eq!(
            text,
            "Running tests\nprogress 100%\nerror: 2 tests failed\n"
        );
        let long = format!("{}é{}", "a".repeat(LOG_TAIL_BYTES), "the end");
        let cut = log_text(long.as_bytes(), str::to_string);
        assert!(cut.len() <= LOG_TAIL_BYTES && cut.ends_with("the end"));
    }

    #[test]
    fn a_summary_and_a_log_together_stay_within_the_bound() {
        let log = "l".repeat(LOG_TAIL_BYTES * 2);
        let both = failure_log(Some("Tests failed".to_string()), Some(log)).expect("log");
        assert!(both.starts_with("Tests failed\n\nl"));
        assert!(both.len() <= LOG_TAIL_BYTES);
        assert_eq!(failure_log(None, None), None);
    }
}
