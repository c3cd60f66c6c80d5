//! Failures that look like another class at first sight (docs/classes.md, principles 3 to 6):
//! a missing file whose name the script built wrong, a `KeyError` that is an unset variable, a
//! URL built from one, a write cut short, a last line that names no cause, and the noise before
//! an error. Plain string checks, linear in the text.

use super::Link;
use crate::failure::{Evidence, FailureClass};

/// `class` as the whole output reconsiders it: a file "not found" while the output lists files
/// of the same name pattern (`sales-2026-11-27.csv` beside the missing `sales_2026_11_27.csv`)
/// was looked for under a name the script built wrong — a logic error, not a missing file.
pub(super) fn reconsidered(class: FailureClass, link: &Link, output: &str) -> FailureClass {
    if class != FailureClass::Environment {
        return class;
    }
    match missing_file(link) {
        Some(missing) if a_sibling_is_listed(&missing, output) => FailureClass::Logic,
        _ => class,
    }
}

/// The base name of the file a "no such file" error names: Python's and Node's quoted path,
/// or the shell's `cat: reports/x.txt: No such file or directory`.
fn missing_file(link: &Link) -> Option<String> {
    let lower = link.message.to_ascii_lowercase();
    let is_missing = matches!(
        link.error_type.as_deref(),
        Some("FileNotFoundError" | "NoSuchFile")
    ) || lower.contains("no such file or directory")
        || lower.contains("enoent");
    if !is_missing {
        return None;
    }
    let message = &link.message;
    let quoted = message
        .rsplit('\'')
        .nth(1)
        .filter(|_| message.matches('\'').count() >= 2);
    let path = match quoted {
        Some(path) => path,
        None => {
            let before = message.split(": No such file or directory").next()?;
            before.rsplit(": ").next()?
        }
    };
    let name = path.rsplit(['/', '\\']).next()?.trim();
    (name.contains('.') && !name.is_empty()).then(|| name.to_string())
}

/// Whether `output` names another file with the same extension and the same leading word as
/// `missing` (at least three letters): the pattern exists on disk, spelled otherwise.
fn a_sibling_is_listed(missing: &str, output: &str) -> bool {
    let Some((stem, extension)) = missing.rsplit_once('.') else {
        return false;
    };
    let word = leading_letters(stem);
    if word.len() < 3 || extension.is_empty() {
        return false;
    }
    output
        .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
        .filter(|token| *token != missing)
        .any(|token| {
            token.rsplit_once('.').is_some_and(|(other, ext)| {
                ext == extension && other != stem && leading_letters(other) == word
            })
        })
}

fn leading_letters(stem: &str) -> &str {
    let end = stem
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(stem.len());
    stem.get(..end).unwrap_or_default()
}

/// A `KeyError` for a variable of the process's environment: raised by `os.environ[...]`
/// (its frames say so), or for a key spelled like one (`'SHOP_API_TOKEN'`: capitals, digits and
/// at least one underscore), which data fields rarely are. The configuration lacks it; no
/// change to the code would supply it.
pub(super) fn reads_a_missing_variable(link: &Link) -> bool {
    if link.error_type.as_deref() != Some("KeyError") {
        return false;
    }
    if link.frames.contains("os.environ") || link.frames.contains("<frozen os>") {
        return true;
    }
    let key = link.message.trim();
    let Some(key) = key
        .strip_prefix('\'')
        .and_then(|k| k.strip_suffix('\''))
        .or_else(|| key.strip_prefix('"').and_then(|k| k.strip_suffix('"')))
    else {
        return false;
    };
    key.starts_with(|c: char| c.is_ascii_uppercase())
        && key.contains('_')
        && key
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// A URL that could not be parsed because it was built from a variable that is not set:
/// `Invalid URL` with `input: 'undefined/v1/items'` (Node), `unknown url type: 'None/v1'`
/// (Python).
pub(super) fn url_from_an_unset_variable(link: &Link) -> bool {
    let said = link.said.to_ascii_lowercase();
    let bad_url = [
        "invalid url",
        "failed to parse url",
        "unknown url type",
        "url rejected",
    ]
    .iter()
    .any(|p| said.contains(p));
    bad_url
        && ["'undefined", "undefined/", "'none", "'null", "null/"]
            .iter()
            .any(|p| said.contains(p))
}

/// A report that only says a child process failed (Python's `CalledProcessError`, Node's
/// "Command failed: …"): the child's own words, printed above it, name the cause.
pub(super) fn reports_a_failed_child(evidence: &Evidence) -> bool {
    let name = evidence.error_type.as_deref().unwrap_or_default();
    name.rsplit('.').next() == Some("CalledProcessError")
        || evidence.message.starts_with("Command failed")
}

/// "Wrote only 4096 of 10240 bytes", "short write": a write that a full disk or a file size
/// limit cut short.
pub(super) fn short_write(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.match_indices("wrote ").any(|(at, _)| {
        let rest = lower.get(at + "wrote ".len()..).unwrap_or_default();
        let rest = rest.strip_prefix("only ").unwrap_or(rest);
        let mut words = rest.split_whitespace();
        let (Some(done), Some(of), Some(total), Some(unit)) =
            (words.next(), words.next(), words.next(), words.next())
        else {
            return false;
        };
        let number = |w: &str| !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit());
        number(done)
            && of == "of"
            && number(total)
            && unit.trim_end_matches(['.', ',', ')']) == "bytes"
            && done != total
    })
}

/// Log levels below an error: a line at one of these levels tells what went on, not what
/// ended the run.
const QUIET_LEVELS: [&str; 7] = [
    "trace", "debug", "info", "notice", "warn", "warning", "verbose",
];

/// The output without its noise: log lines below the error level (after any timestamp,
/// bracket or colour), deprecation and npm warnings, and progress lines redrawn with `\r`.
/// A retry that was logged and then succeeded does not decide the class of what failed after.
pub(super) fn without_noise(output: &str) -> String {
    output
        .lines()
        .filter(|line| !is_noise(line))
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_noise(line: &str) -> bool {
    if line.contains('\r') {
        return true;
    }
    let lower = strip_ansi(line).to_ascii_lowercase();
    if lower.contains("deprecationwarning")
        || lower.contains("futurewarning")
        || lower.contains("[dep0")
        || lower.trim_start().starts_with("npm warn")
    {
        return true;
    }
    let level = after_prefix(&lower)
        .split_whitespace()
        .next()
        .unwrap_or_default();
    let level = level.trim_matches(|c: char| !c.is_ascii_alphabetic());
    QUIET_LEVELS.contains(&level)
}

/// The line after its leading timestamp, date, time and bracketed fields: `2026-11-28
/// 07:00:01,123 [worker-3] INFO x` → `INFO x`.
fn after_prefix(line: &str) -> &str {
    let mut rest = line.trim_start();
    loop {
        let Some(word) = rest.split_whitespace().next() else {
            return rest;
        };
        let stamp = word.bytes().any(|b| b.is_ascii_digit())
            && word
                .bytes()
                .all(|b| b.is_ascii_digit() || b"-:.,tz+/[]()".contains(&b));
        let bracketed = word.starts_with('[') && word.ends_with(']') && word.len() > 2;
        if !(stamp || bracketed) {
            return rest;
        }
        rest = rest.get(word.len()..).unwrap_or_default().trim_start();
    }
}

fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// Words that say something failed.
const FAILURE_WORDS: [&str; 24] = [
    "error",
    "fail",
    "invalid",
    "cannot",
    "can't",
    "could not",
    "couldn't",
    "unable",
    "missing",
    "expected",
    "unexpected",
    "not found",
    "no such",
    "bad ",
    "wrong",
    "denied",
    "refused",
    "unbound",
    "syntax",
    "exception",
    "fatal",
    "panic",
    "must ",
    "mismatch",
];

/// Generic endings that name no cause: "upload step failed", "sync failed.", "export job
/// error".
const GENERIC_ENDINGS: [&str; 7] = [
    "failed",
    "failure",
    "error",
    "errored",
    "aborted",
    "did not complete",
    "unsuccessful",
];

/// Whether an untyped last line states what went wrong, rather than a step's progress
/// ("writing report.csv") or a bare "<step> failed" that names no cause. Only a line that
/// states one is read as the script's own error (logic); the others leave the class unknown.
pub(super) fn names_a_failure(message: &str) -> bool {
    let lower = strip_ansi(message).to_ascii_lowercase();
    let body = after_prefix(lower.trim());
    // The log level of a line that reports an error ("ERROR export job failed") is not part of
    // what it says; "error: amount is not a number" is a statement.
    let body = ["error ", "critical ", "fatal ", "err "]
        .iter()
        .find_map(|level| body.strip_prefix(level))
        .unwrap_or(body)
        .trim();
    if !FAILURE_WORDS.iter().any(|w| body.contains(w)) {
        return false;
    }
    let bare = body.trim_end_matches(['.', '!', ' ']);
    let generic = !bare.contains(':')
        && bare.split_whitespace().count() <= 5
        && GENERIC_ENDINGS.iter().any(|end| bare.ends_with(end));
    !generic
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(error_type: Option<&str>, message: &str) -> Link {
        Link {
            error_type: error_type.map(str::to_string),
            message: message.to_string(),
            said: message.to_string(),
            frames: String::new(),
        }
    }

    #[test]
    fn a_missing_file_beside_files_of_its_pattern_was_named_wrong() {
        let missing = link(
            Some("FileNotFoundError"),
            "[Errno 2] No such file or directory: 'exports/sales_2026_11_27.csv'",
        );
        let listed = "files in exports: sales-2026-11-26.csv, sales-2026-11-27.csv";
        assert_eq!(
            reconsidered(FailureClass::Environment, &missing, listed),
            FailureClass::Logic
        );
        let other = "conf holds: ['README.txt', 'main.py']";
        assert_eq!(
            reconsidered(FailureClass::Environment, &missing, other),
            FailureClass::Environment
        );
        let shell = link(
            Some("NoSuchFile"),
            "cat: reports/report_2026-11-27.txt: No such file or directory",
        );
        assert_eq!(
            missing_file(&shell).as_deref(),
            Some("report_2026-11-27.txt")
        );
        assert_eq!(
            reconsidered(
                FailureClass::Environment,
                &shell,
                "report-2026-11-26.txt\nreport_2026-11-27.txt: No such file"
            ),
            FailureClass::Logic
        );
        // The missing name alone, however often repeated, is not a sibling.
        assert_eq!(
            reconsidered(
                FailureClass::Environment,
                &shell,
                "cat: reports/report_2026-11-27.txt: No such file or directory"
            ),
            FailureClass::Environment
        );
    }

    #[test]
    fn a_key_error_for_a_variable_name_is_configuration() {
        assert!(reads_a_missing_variable(&link(
            Some("KeyError"),
            "'SHOP_API_TOKEN'"
        )));
        assert!(!reads_a_missing_variable(&link(Some("KeyError"), "'CHF'")));
        assert!(!reads_a_missing_variable(&link(
            Some("KeyError"),
            "'event_type'"
        )));
        assert!(!reads_a_missing_variable(&link(
            Some("ValueError"),
            "'API_KEY'"
        )));
    }

    #[test]
    fn a_url_built_from_an_unset_variable_is_configuration() {
        let node = Link {
            said: "Invalid URL\ncode: 'ERR_INVALID_URL',\ninput: 'undefined/v1/items'".into(),
            ..link(Some("TypeError"), "Invalid URL")
        };
        assert!(url_from_an_unset_variable(&node));
        assert!(url_from_an_unset_variable(&link(
            Some("ValueError"),
            "unknown url type: 'None/v1/summary'"
        )));
        assert!(!url_from_an_unset_variable(&link(
            Some("TypeError"),
            "Invalid URL: 'htp//x'"
        )));
    }

    #[test]
    fn a_short_write_is_read_with_its_numbers() {
        assert!(short_write("Wrote only 4096 of 10240 bytes to export.bin"));
        assert!(short_write("short write: wrote 4096 of 10240 bytes"));
        assert!(!short_write("wrote 3 of 3 bytes"));
        assert!(!short_write("export wrote only 3 of 5 rows"));
    }

    #[test]
    fn noise_lines_are_dropped_and_errors_kept() {
        let out = "2026-11-28 07:00:01,123 WARNING  sync: connection refused, retrying\n\
                   \u{1b}[2m2026-11-28T07:00:01Z\u{1b}[0m \u{1b}[33mWARN\u{1b}[0m status 503\n\
                   [2026-11-28 07:00:02] INFO connected\n\
                   npm warn config production Use `--omit=dev` instead.\n\
                   main.py:3: DeprecationWarning: old\n\
                   2026-11-28 07:00:03 ERROR connection refused\n\
                   ValueError: bad";
        assert_eq!(
            without_noise(out),
            "2026-11-28 07:00:03 ERROR connection refused\nValueError: bad"
        );
    }

    #[test]
    fn a_line_names_a_failure_only_with_a_cause() {
        assert!(!names_a_failure("upload step failed"));
        assert!(!names_a_failure(
            "2026-11-28 20:09:34,757 ERROR step 3 failed"
        ));
        assert!(!names_a_failure("writing report.csv"));
        assert!(!names_a_failure("step 2/3: transform"));
        assert!(names_a_failure(
            "error: amount for south is not a number: x"
        ));
        assert!(names_a_failure("totl: unbound variable"));
        assert!(names_a_failure(
            "upload failed: the bucket has no object named report.csv"
        ));
    }
}
