//! What went wrong: one `Failure` value for every source of trouble, so that everything that
//! fails goes through the one heal pipeline. Pure types and pure functions only.

mod classify;
mod evidence;
mod position;
mod scenario;
mod signature;

use serde::{Deserialize, Serialize};

pub use classify::{classify, judge, ExitInfo, Judgement};
pub use evidence::{chain, parse_evidence, Link};
pub use position::{broke_loading, entry_frames};
pub use scenario::{type_error_lines, ProjectScenario};
pub use signature::{normalize, normalize_text, sign};

/// Why something failed, which decides the first remedy (DESIGN.md, "One failure pipeline").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum FailureClass {
    /// Network trouble, 429/5xx, a remote timing out: worth retrying.
    Transient,
    /// An exception in the script's own code or a bad data shape: worth a repair.
    Logic,
    /// A missing module or command, a permission, a full disk: the machine needs a person.
    Environment,
    /// Killed, out of memory.
    Resource,
    /// Our own time limit was reached.
    Timeout,
    /// Not (yet) classified.
    Unknown,
}

impl FailureClass {
    pub fn as_str(self) -> &'static str {
        match self {
            FailureClass::Transient => "transient",
            FailureClass::Logic => "logic",
            FailureClass::Environment => "environment",
            FailureClass::Resource => "resource",
            FailureClass::Timeout => "timeout",
            FailureClass::Unknown => "unknown",
        }
    }

    /// The class as a person would say it, after a run's summary: "KeyError: 'total' (a script
    /// or data error)". `None` when the message says it already (a time limit).
    pub fn in_words(self) -> Option<&'static str> {
        match self {
            FailureClass::Transient => Some("a passing problem"),
            FailureClass::Logic => Some("a script or data error"),
            FailureClass::Environment => Some("something missing on this machine"),
            FailureClass::Resource => Some("out of memory or killed"),
            FailureClass::Timeout => None,
            FailureClass::Unknown => Some("cause unclear"),
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            FailureClass::Transient,
            FailureClass::Logic,
            FailureClass::Environment,
            FailureClass::Resource,
            FailureClass::Timeout,
            FailureClass::Unknown,
        ]
        .into_iter()
        .find(|c| c.as_str() == s)
    }
}

/// Where a failure came from. Later sources (a verification in a project, an agent session)
/// are new variants; the pipeline treats them all alike.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FailureSource {
    /// A test alert sent on purpose, to prove the pipeline end to end.
    SelfCheck,
    /// A run of a workflow's script.
    ScriptRun { workflow_id: i64, run_id: i64 },
    /// A project's task: its init script, its agent session or its verification
    /// (`scenario` is a [`ProjectScenario`]).
    ProjectTask {
        project_id: i64,
        task_id: String,
        session_id: i64,
    },
}

impl FailureSource {
    pub fn describe(&self) -> String {
        match self {
            FailureSource::SelfCheck => "self-check".to_string(),
            FailureSource::ScriptRun {
                workflow_id,
                run_id,
            } => format!("workflow {workflow_id}, run {run_id}"),
            FailureSource::ProjectTask {
                project_id,
                task_id,
                session_id,
            } => format!("project {project_id}, task {task_id}, session {session_id}"),
        }
    }
}

/// The evidence a failure leaves behind.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct Evidence {
    pub error_type: Option<String>,
    pub message: String,
    pub stack: Option<String>,
}

/// Labels Healer gives the shell's own errors: the shell's message already says what happened
/// ("report-tool: command not found"), so a person is shown the message alone.
const SHELL_LABELS: &[&str] = &[
    "CommandNotFound",
    "PermissionDenied",
    "NoSpace",
    "NoSuchFile",
];

impl Evidence {
    /// What the program said, as a person reads it: "ValueError: bad shape", or the shell's
    /// own words without Healer's label for them.
    pub fn said(&self) -> String {
        match self.error_type.as_deref() {
            Some(t) if !t.is_empty() && !SHELL_LABELS.contains(&t) => {
                format!("{t}: {}", self.message)
            }
            _ => self.message.clone(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    pub source: FailureSource,
    /// A short name for the situation ("script-run", "self-check"), which rules can match on.
    pub scenario: String,
    pub class: FailureClass,
    /// First 16 hex chars of SHA-256 of the normalised evidence.
    pub signature: String,
    pub evidence: Evidence,
}

/// The most characters of a failure's one-line summary.
pub const SUMMARY_CHARS: usize = 300;

/// `text` as one line of at most [`SUMMARY_CHARS`] characters (… when cut).
pub fn summary_line(text: &str) -> String {
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(SUMMARY_CHARS) {
        Some((cut, _)) => format!("{}…", one_line.get(..cut).unwrap_or_default()),
        None => one_line,
    }
}

impl Failure {
    pub fn new(
        source: FailureSource,
        scenario: impl Into<String>,
        class: FailureClass,
        evidence: Evidence,
    ) -> Self {
        let signature = sign(&normalize(&evidence));
        Failure {
            source,
            scenario: scenario.into(),
            class,
            signature,
            evidence,
        }
    }

    /// One line for a person: "ValueError: bad shape".
    /// One line for a run's summary, a checkpoint or a notification: the error type and
    /// message, on one line, at most [`SUMMARY_CHARS`] characters (the evidence keeps more).
    pub fn summary(&self) -> String {
        summary_line(&self.evidence.said())
    }
}

#[cfg(test)]
mod said {
    use super::Evidence;

    #[test]
    fn the_shells_own_words_are_shown_without_healers_label() {
        let shell = Evidence {
            error_type: Some("CommandNotFound".into()),
            message: "report-tool: command not found".into(),
            stack: None,
        };
        assert_eq!(shell.said(), "report-tool: command not found");
        let python = Evidence {
            error_type: Some("KeyError".into()),
            message: "'amount'".into(),
            stack: None,
        };
        assert_eq!(python.said(), "KeyError: 'amount'");
    }
}
