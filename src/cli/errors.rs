//! `healer errors …`: what Healer makes of a failure's raw output, without running anything.
//! The same functions as a failed run: `parse_evidence`, `judge` (the classifier, as for an exit
//! with code 1, with what decided the class), `normalize` and `sign`.

use std::path::{Path, PathBuf};

use clap::Subcommand;
use healer::failure::{judge, normalize, parse_evidence, sign, Evidence, ExitInfo, FailureClass};
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
        ErrorsCommand::Classify { file, entry } => {
            let raw = read_input(file.as_deref())?;
            if raw.trim().is_empty() {
                return Err(Error::InvalidInput(
                    "the output to classify is empty".to_string(),
                ));
            }
            let entry = entry.unwrap_or_else(|| guess_entry(&raw));
            crate::print::print_json(&classified(&raw, &entry))
        }
    }
}

/// Judge `raw` as the output of a script that exited with code 1.
pub fn classified(raw: &str, entry: &str) -> Classified {
    let evidence = parse_evidence(raw, "", entry);
    let exit = ExitInfo {
        code: Some(1),
        ..ExitInfo::default()
    };
    let judgement = judge(&exit, evidence.as_ref(), raw);
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
        );
        assert_eq!(c.class, FailureClass::Environment);
        assert_eq!(c.error_type.as_deref(), Some("ModuleNotFoundError"));
        assert_eq!(c.signature.len(), 16);
        assert_eq!(
            c.normalized,
            "ModuleNotFoundError: No module named 'requests'\nFile \"main.py\", in <module>"
        );
    }
}
