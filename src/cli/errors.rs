//! `healer errors …`: what Healer makes of a failure's raw output, without running anything.
//! The same functions as a failed run: the runner's own judgement (`judge_failure`: the
//! evidence, the class and what decided it, for the exit code or signal given, code 1 when
//! none is), `normalize` and `sign`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Subcommand;
use healer::failure::{normalize, parse_evidence, sign, Evidence, ExitInfo, FailureClass};
use healer::workflow::judge::judge_failure;
use healer::{Error, Result};
use serde::Serialize;

#[derive(Subcommand)]
pub enum ErrorsCommand {
    /// Read a failure's raw output (a traceback, a log) and print its class, error type,
    /// signature and normalised text as JSON
    Classify {
        /// A file holding the output, or - (the default) for standard input
        file: Option<PathBuf>,
        /// The script's file name (e.g. main.py), which settles ties between languages;
        /// guessed from the output's frames when left out
        #[arg(long)]
        entry: Option<String>,
        /// The exit code the program ended with (1 when neither this nor --signal is given):
        /// 137 after a shell's "Killed", 124 from timeout(1)
        #[arg(long = "exit", value_name = "CODE", conflicts_with = "signal",
              value_parser = clap::value_parser!(i32).range(1..=255))]
        exit_code: Option<i32>,
        /// The signal that ended the program (9 for SIGKILL, as the OOM killer sends)
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(i32).range(1..=64))]
        signal: Option<i32>,
    },
}

/// What `healer errors classify` prints.
#[derive(Debug, Serialize)]
pub struct Classified {
    pub class: FailureClass,
    pub error_type: Option<String>,
    /// What decided the class: the exception (type and message) it was classed by, a line of
    /// the output, or how the process ended; null when nothing did (unknown).
    pub classed_by: Option<String>,
    /// The first exception of a chain, when the one printed last wraps another.
    pub root_cause: Option<String>,
    pub signature: String,
    pub normalized: String,
}

pub fn run(command: ErrorsCommand) -> Result<bool> {
    match command {
        ErrorsCommand::Classify {
            file,
            entry,
            exit_code,
            signal,
        } => {
            let raw = read_input(file.as_deref())?;
            if raw.trim().is_empty() {
                return Err(Error::InvalidInput(
                    "the output to classify is empty".to_string(),
                ));
            }
            let entry = entry.unwrap_or_else(|| guess_entry(&raw));
            crate::print::print_json(&classified(&raw, &entry, &ended(exit_code, signal)))
        }
    }
}

/// How the program ended, as the runner records it: killed by `signal` (no exit code then),
/// or exited with `code`; code 1 when neither is given.
fn ended(code: Option<i32>, signal: Option<i32>) -> ExitInfo {
    match signal {
        Some(signal) => ExitInfo {
            signal: Some(signal),
            ..ExitInfo::default()
        },
        None => ExitInfo {
            code: Some(code.unwrap_or(1)),
            ..ExitInfo::default()
        },
    }
}

/// Judge `raw` as the output (its standard error) of a script that ended as `exit` says.
pub fn classified(raw: &str, entry: &str, exit: &ExitInfo) -> Classified {
    let (_, judgement) = judge_failure(exit, "", raw, entry, Duration::ZERO);
    let evidence = parse_evidence(raw, "", entry);
    // Output with no meaningful line (only `}` or carets) still gets a signature: of its text.
    let evidence = evidence.unwrap_or_else(|| Evidence {
        error_type: None,
        message: raw.trim().to_string(),
        stack: None,
    });
    let normalized = normalize(&evidence);
    Classified {
        class: judgement.class,
        error_type: evidence.error_type,
        classed_by: judgement.by,
        root_cause: judgement.root_cause,
        signature: sign(&normalized),
        normalized,
    }
}

fn read_input(file: Option<&Path>) -> Result<String> {
    use healer::capped::{self, OUTPUT_BYTES};
    let bytes = match file {
        Some(path) if path != Path::new("-") => {
            capped::read_file(path, OUTPUT_BYTES, "the failure's output")?
        }
        _ => capped::read(std::io::stdin().lock(), OUTPUT_BYTES, "standard input")?,
    };
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The script's file name, from the output's own frames: Node's first `at` frame outside
/// Node, Python's last `File "…"` frame, or a shell's `name: line N:` prefix; "" if none.
fn guess_entry(raw: &str) -> String {
    let mut python = None;
    let mut shell = None;
    for line in raw.lines() {
        let t = line.trim();
        if let Some(frame) = t.strip_prefix("at ") {
            if !frame.contains("node:") && !frame.contains("node_modules") {
                let location = match (frame.rfind('('), frame.rfind(')')) {
                    (Some(open), Some(close)) if open < close => frame.get(open + 1..close),
                    _ => Some(frame),
                };
                if let Some(name) = location.and_then(script_name) {
                    return name;
                }
            }
        } else if let Some(rest) = t.strip_prefix("File \"") {
            if let Some(path) = rest.split('"').next() {
                python = script_name(path).or(python);
            }
        } else if let Some((name, _)) = t.split_once(": line ") {
            if shell.is_none() {
                shell = script_name(name);
            }
        }
    }
    python.or(shell).unwrap_or_default()
}

/// `/tmp/w/main.js:3:7` → `main.js`; None unless the name has an extension.
fn script_name(location: &str) -> Option<String> {
    let location = location.trim_start_matches("file://");
    let path = location
        .trim_end_matches(|c: char| c.is_ascii_digit() || c == ':')
        .trim_end_matches(':');
    let name = path.rsplit(['/', '\\']).next()?;
    let (stem, ext) = name.rsplit_once('.')?;
    (!stem.is_empty() && !ext.is_empty() && ext.chars().all(|c| c.is_ascii_alphanumeric()))
        .then(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entry_is_guessed_from_frames() {
        let node = "TypeError: x\n    at f (/tmp/w/main.js:2:14)\n    at node:internal/x:1:1\n";
        assert_eq!(guess_entry(node), "main.js");
        let esm = "Error: x\n    at file:///tmp/w/main.mjs:3:7\n";
        assert_eq!(guess_entry(esm), "main.mjs");
        let python = "Traceback (most recent call last):\n  File \"/tmp/w/main.py\", line 5, in <module>\nKeyError: 'x'\n";
        assert_eq!(guess_entry(python), "main.py");
        assert_eq!(
            guess_entry("/tmp/w/run.sh: line 3: foo: command not found\n"),
            "run.sh"
        );
        assert_eq!(guess_entry("just a line\n"), "");
    }

    #[test]
    fn output_is_judged_as_a_failed_run() {
        let c = classified(
            "Traceback (most recent call last):\n  File \"/tmp/w/main.py\", line 5, in <module>\nModuleNotFoundError: No module named 'requests'\n",
            "main.py",
            &ended(None, None),
        );
        assert_eq!(c.class, FailureClass::Environment);
        assert_eq!(c.error_type.as_deref(), Some("ModuleNotFoundError"));
        assert_eq!(c.signature.len(), 16);
        assert_eq!(
            c.normalized,
            "ModuleNotFoundError: No module named 'requests'\nFile \"main.py\", in <module>"
        );
    }

    #[test]
    fn an_exit_code_or_a_signal_is_judged_as_the_runner_judges_it() {
        let killed = "main.sh: line 2: 14417 Killed                  python3 big.py\n";
        for exit in [
            ended(Some(137), None),
            ended(None, Some(9)),
            ended(None, None),
        ] {
            assert_eq!(
                classified(killed, "main.sh", &exit).class,
                FailureClass::Resource,
                "{exit:?}"
            );
        }
        let quiet = "fetching page 3 of 10\n";
        let timed_out = classified(quiet, "main.sh", &ended(Some(124), None));
        assert_eq!(timed_out.class, FailureClass::Resource);
        assert_eq!(timed_out.classed_by.as_deref(), Some("exit code 124"));
        let signalled = classified(quiet, "main.sh", &ended(None, Some(9)));
        assert_eq!(signalled.class, FailureClass::Resource);
        assert_eq!(signalled.classed_by.as_deref(), Some("signal 9"));
        // Exit code 1, as before: a progress line names no cause.
        assert_eq!(
            classified(quiet, "main.sh", &ended(None, None)).class,
            FailureClass::Unknown
        );
    }
}
