//! An action as the detector compares it: the tool and its arguments (without prose), and its
//! result normalised (what varies between runs of the same thing replaced) with the counts a
//! test runner prints kept, so improving output is not a repeat.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use serde_json::Value;

use super::effect::{as_they_were, canonical_command, changes_files};
use crate::failure::normalize_text;
use crate::session::SessionStep;

/// Argument keys that hold the agent's words about a call, not the call itself (Claude Code's
/// Bash `description`, and the like).
const PROSE_KEYS: [&str; 6] = [
    "description",
    "explanation",
    "reason",
    "thought",
    "justification",
    "summary",
];

/// The most characters of a result that are normalised; the rest of a huge output adds cost
/// and rarely tells two runs apart.
const MAX_RESULT_CHARS: usize = 16 * 1024;

/// Words whose neighbouring number is a count that shows progress (`3 failed`, `errors=2`).
const COUNT_WORDS: [&str; 16] = [
    "failed",
    "failing",
    "failure",
    "failures",
    "passed",
    "passing",
    "pass",
    "fail",
    "errors",
    "error",
    "ok",
    "skipped",
    "tests",
    "test",
    "warnings",
    "remaining",
];

#[derive(Debug, Clone)]
pub(super) struct PendingCall {
    pub call_id: Option<String>,
    key: u64,
    label: String,
    step: u32,
    changes: bool,
}

impl PendingCall {
    pub fn of(step: &SessionStep, n: u32) -> PendingCall {
        let tool = step.tool.as_deref().unwrap_or("tool");
        let args = step
            .arguments
            .as_deref()
            .and_then(|a| serde_json::from_str::<Value>(a).ok());
        let command = args.as_ref().and_then(command_of);
        let mut hasher = DefaultHasher::new();
        tool.hash(&mut hasher);
        // A command is its effect (the program and its files), however it is spelled.
        match (&command, &args) {
            (Some(c), _) => canonical_command(c).hash(&mut hasher),
            (None, Some(v)) => hash_value(v, true, &mut hasher),
            (None, None) => step.arguments.as_deref().unwrap_or("").hash(&mut hasher),
        }
        PendingCall {
            call_id: step.call_id.clone(),
            key: hasher.finish(),
            label: label(tool, args.as_ref()),
            step: n,
            changes: changes_files(tool, command.as_deref()),
        }
    }

    pub fn finish(self, result: &SessionStep) -> Action {
        let text = cut(&result.text, MAX_RESULT_CHARS);
        let normalised = normalize_text(text);
        let mut hasher = DefaultHasher::new();
        result.is_error.hash(&mut hasher);
        normalised.hash(&mut hasher);
        counts(text, &mut hasher);
        let mut exact = DefaultHasher::new();
        result.is_error.hash(&mut exact);
        as_they_were(text).hash(&mut exact);
        Action {
            key: self.key,
            result: hasher.finish(),
            exact: exact.finish(),
            is_error: result.is_error,
            label: self.label,
            outcome: outcome(text, result.is_error),
            call_step: self.step,
            changes: self.changes,
            epoch: 0,
        }
    }
}

/// A call and its result.
#[derive(Debug, Clone)]
pub(super) struct Action {
    /// The tool and its arguments.
    pub key: u64,
    /// The normalised result, its counts and whether it failed.
    pub result: u64,
    /// The result with only what varies between runs taken out (its numbers kept).
    pub exact: u64,
    pub is_error: bool,
    /// What was done, for a person: "ran `bash check.sh`", "edited greet.py".
    pub label: String,
    /// The result's telling line.
    pub outcome: String,
    pub call_step: u32,
    /// It changes the worktree (an edit, a write, a command that writes).
    pub changes: bool,
    /// How many changes to the worktree came before it in the session.
    pub epoch: u32,
}

impl Action {
    /// One action with one result: the same call (by effect) and, with nothing changed in
    /// between, the same normalised result; after a change, the same result as it was (a
    /// failure whose numbers moved after real edits is progress, not a repeat).
    pub fn same(&self, other: &Action) -> bool {
        self.key == other.key
            && if self.epoch == other.epoch {
                self.result == other.result
            } else {
                self.exact == other.exact
            }
    }

    pub fn evidence(&self) -> String {
        if self.outcome.is_empty() {
            format!("step {}: {}", self.call_step, self.label)
        } else {
            format!(
                "step {}: {} \u{2192} {}",
                self.call_step, self.label, self.outcome
            )
        }
    }
}

/// Hash a JSON value with object keys in order, leaving prose keys out at the top.
fn hash_value(value: &Value, top: bool, h: &mut DefaultHasher) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map
                .keys()
                .filter(|k| !(top && PROSE_KEYS.contains(&k.as_str())))
                .collect();
            keys.sort();
            for k in keys {
                k.hash(h);
                if let Some(v) = map.get(k) {
                    hash_value(v, false, h);
                }
            }
        }
        Value::Array(items) => {
            items.len().hash(h);
            for v in items {
                hash_value(v, false, h);
            }
        }
        Value::String(s) => s.split_whitespace().for_each(|w| w.hash(h)),
        other => other.to_string().hash(h),
    }
}

/// The shell command a call runs, if it runs one.
fn command_of(args: &Value) -> Option<String> {
    let command = args.get("command").or_else(|| args.get("cmd"))?;
    Some(match command {
        Value::String(s) => s.clone(),
        Value::Array(parts) => {
            let parts: Vec<&str> = parts.iter().filter_map(Value::as_str).collect();
            // Codex wraps commands as ["bash", "-lc", "…"].
            match parts.as_slice() {
                [_, flag, script] if flag.starts_with('-') => script.to_string(),
                _ => parts.join(" "),
            }
        }
        other => other.to_string(),
    })
}

/// The action in a few words.
fn label(tool: &str, args: Option<&Value>) -> String {
    let get = |k: &str| args.and_then(|a| a.get(k));
    if let Some(text) = args.and_then(command_of) {
        return format!("ran `{}`", short(text.trim(), 100));
    }
    if let Some(path) = ["file_path", "path", "file", "filename"]
        .into_iter()
        .find_map(|k| get(k).and_then(Value::as_str))
    {
        let verb = match tool.to_ascii_lowercase().as_str() {
            t if t.contains("edit") || t.contains("patch") || t.contains("replace") => "edited",
            t if t.contains("write") || t.contains("create") => "wrote",
            t if t.contains("read") || t.contains("view") || t.contains("cat") => "read",
            _ => return format!("used {tool} on {}", last_parts(path)),
        };
        return format!("{verb} {}", last_parts(path));
    }
    match args {
        Some(Value::Object(map)) if !map.is_empty() => {
            let mut shown = Value::Object(map.clone());
            if let Value::Object(m) = &mut shown {
                m.retain(|k, _| !PROSE_KEYS.contains(&k.as_str()));
            }
            format!("used {tool} with {}", short(&shown.to_string(), 80))
        }
        _ => format!("used {tool}"),
    }
}

/// The last two parts of a path: enough to know the file.
fn last_parts(path: &str) -> String {
    let parts: Vec<&str> = path.rsplit(['/', '\\']).take(2).collect();
    parts.into_iter().rev().collect::<Vec<_>>().join("/")
}

/// The line of a result that says the most: for a failure the first line naming an error,
/// else its last line; for a success its first line.
fn outcome(text: &str, is_error: bool) -> String {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let line = if is_error {
        let telling = |l: &&str| {
            let lower = l.to_ascii_lowercase();
            [
                "error",
                "failed",
                "exception",
                "not found",
                "missing",
                "denied",
            ]
            .iter()
            .any(|w| lower.contains(w))
        };
        text.lines()
            .map(str::trim)
            .find(telling)
            .or_else(|| text.lines().map(str::trim).rfind(|l| !l.is_empty()))
    } else {
        lines.next()
    };
    short(line.unwrap_or(""), 120)
}

/// Counts next to test-runner words, hashed: `3 failed`, `Ran 4 tests`, `failures=2`.
/// A number that is part of a time, a date, a version or a path is not a count.
fn counts(text: &str, h: &mut DefaultHasher) {
    let bytes = text.as_bytes();
    let mut found = 0;
    let mut i = 0;
    while i < bytes.len() && found < 32 {
        let Some(b) = bytes.get(i) else { break };
        if !b.is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while bytes.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        let before = start.checked_sub(1).and_then(|j| bytes.get(j)).copied();
        let after = bytes.get(i).copied();
        let glued = |c: Option<u8>| {
            c.is_some_and(|c| {
                c.is_ascii_alphanumeric() || matches!(c, b':' | b'.' | b'/' | b'-' | b'_')
            })
        };
        // `1.5s`, `12:03`, `v2`, `x_3` are not counts.
        if glued(before) || glued(after) && !matches!(after, Some(b'.')) || i - start > 5 {
            continue;
        }
        if after == Some(b'.') && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
            continue;
        }
        let number = &text[start..i];
        let next = word_after(text, i);
        let prev = word_before(text, start);
        for word in [next, prev].into_iter().flatten() {
            if COUNT_WORDS.contains(&word.as_str()) {
                word.hash(h);
                number.hash(h);
                found += 1;
            }
        }
    }
}

/// The word right after a number: one blank between them.
fn word_after(text: &str, i: usize) -> Option<String> {
    let rest = text.get(i..)?.strip_prefix(' ')?;
    let word: String = rest.chars().take_while(char::is_ascii_alphabetic).collect();
    (!word.is_empty()).then(|| word.to_ascii_lowercase())
}

/// The word right before a number, joined by `=` or `:`: `failures=2`, `errors: 3`.
fn word_before(text: &str, start: usize) -> Option<String> {
    let head = text.get(..start)?;
    let head = head
        .strip_suffix('=')
        .or_else(|| head.strip_suffix(": "))
        .or_else(|| head.strip_suffix(':'))?;
    let word: String = head
        .chars()
        .rev()
        .take_while(char::is_ascii_alphabetic)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    (!word.is_empty()).then(|| word.to_ascii_lowercase())
}

fn cut(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((i, _)) => text.get(..i).unwrap_or(text),
        None => text,
    }
}

/// At most `max` characters, with an ellipsis when cut.
pub(super) fn short(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}\u{2026}", text.get(..i).unwrap_or(text)),
        None => text.to_string(),
    }
}
