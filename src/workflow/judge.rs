//! How one attempt went, in the failure's terms: succeeded, or which class of failure with
//! which evidence and one line for the person. Pure, so that the local scheduler and the
//! `HealerRun` workflow on a Temporal cluster (which must be deterministic) judge alike.

use std::time::Duration;

use crate::failure::{
    self, parse_evidence, summary_line, Evidence, ExitInfo, FailureClass, Judgement,
};

/// What an attempt's end means.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    /// `None` when the attempt succeeded.
    pub class: Option<FailureClass>,
    pub evidence: Option<Evidence>,
    pub summary: String,
}

/// Judge an attempt that ended with `exit` after `duration`, having printed `stdout` and
/// `stderr`; `entry` is the script's file name (for tracebacks), `limit` its time limit.
pub fn judge(
    exit: &ExitInfo,
    stdout: &str,
    stderr: &str,
    duration: Duration,
    entry: &str,
    limit: Duration,
) -> Judged {
    if exit.code == Some(0) && !exit.timed_out && exit.signal.is_none() {
        return Judged {
            class: None,
            evidence: None,
            summary: format!("Succeeded in {}", seconds(duration)),
        };
    }
    let (evidence, judgement) = judge_failure(exit, stdout, stderr, entry, limit);
    let said = evidence.said();
    let summary = match judgement.class.in_words() {
        Some(words) => format!("{} ({words})", summary_line(&said)),
        None => summary_line(&said),
    };
    Judged {
        class: Some(judgement.class),
        evidence: Some(evidence),
        summary,
    }
}

/// A failed attempt's evidence and class, with what decided the class: what [`judge`] reads
/// from how the attempt ended and what it printed. `healer errors classify` asks this too, so
/// that the CLI judges an output and an exit code or signal as a run is judged.
pub fn judge_failure(
    exit: &ExitInfo,
    stdout: &str,
    stderr: &str,
    entry: &str,
    limit: Duration,
) -> (Evidence, Judgement) {
    // A script stopped at its time limit failed because of the limit, whatever its last line
    // said (often a traceback of the signal that ended it).
    let parsed = if exit.timed_out {
        None
    } else {
        parse_evidence(stderr, stdout, entry)
    };
    let evidence = parsed.unwrap_or_else(|| Evidence {
        error_type: None,
        message: describe_exit(exit, limit),
        stack: None,
    });
    let output = format!("{stderr}\n{stdout}");
    let judgement = failure::judge(exit, Some(&evidence), &output);
    (evidence, judgement)
}

fn describe_exit(exit: &ExitInfo, limit: Duration) -> String {
    if exit.timed_out {
        format!("stopped after {} s, its time limit", limit.as_secs())
    } else if let Some(signal) = exit.signal {
        format!("killed by signal {signal}")
    } else if let Some(code) = exit.code {
        format!("exited with code {code}")
    } else {
        "ended without an exit code".to_string()
    }
}

/// A duration as a person reads it: "1.2 s", "42 s".
pub fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 10.0 {
        format!("{s:.1} s")
    } else {
        format!("{s:.0} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clean_exit_is_a_success_and_a_traceback_is_a_logic_error() {
        let ok = ExitInfo {
            code: Some(0),
            ..ExitInfo::default()
        };
        let judged = judge(
            &ok,
            "",
            "",
            Duration::from_millis(1200),
            "main.py",
            Duration::from_secs(60),
        );
        assert_eq!(judged.class, None);
        assert_eq!(judged.summary, "Succeeded in 1.2 s");

        let failed = ExitInfo {
            code: Some(1),
            ..ExitInfo::default()
        };
        let stderr = "Traceback (most recent call last):\n  File \"main.py\", line 3, in <module>\n    print(d['total'])\nKeyError: 'total'\n";
        let judged = judge(
            &failed,
            "",
            stderr,
            Duration::from_secs(1),
            "main.py",
            Duration::from_secs(60),
        );
        assert_eq!(judged.class, Some(FailureClass::Logic));
        assert!(judged.summary.contains("KeyError"), "{}", judged.summary);
    }
}
