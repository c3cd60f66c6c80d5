//! Classification of a failed attempt into a [`FailureClass`], by rules over how the process
//! ended and the evidence it left. A class names what fixes the failure (docs/classes.md): a
//! change to the code (logic), to the machine, its files, its configuration or a credential
//! (environment), waiting (transient), or more time, memory or disk (resource).
//!
//! How the process ended is asked first (it cannot be wrong), then the parsed evidence (the
//! error that ended the run), then the raw output (a wrapped cause, a traceback the output cap
//! cut before its last line). Rules are plain substring and token checks, one pass over the
//! output whatever their number.

mod text;

use super::evidence::exception_head;
use super::{Evidence, FailureClass};
use text::TextShows;

/// How a process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExitInfo {
    /// The exit code, when it exited on its own.
    pub code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
    /// Healer's own time limit was reached (and Healer killed it).
    pub timed_out: bool,
    /// The program could not be started at all (interpreter missing, not executable).
    pub spawn_failed: bool,
}

impl ExitInfo {
    /// A shell reports a child killed by a signal as 128 + the signal: 134 SIGABRT, 135 SIGBUS,
    /// 137 SIGKILL (the OOM killer's), 139 SIGSEGV, 152 SIGXCPU and 153 SIGXFSZ (a CPU-time or
    /// file-size limit). SIGINT/SIGTERM (130/143) are someone's choice, not a resource running
    /// out, so they stay out.
    fn died_of_a_resource_signal(&self) -> bool {
        self.signal.is_some() || matches!(self.code, Some(134 | 135 | 137 | 139 | 152 | 153))
    }

    /// 127: command not found; 126: found but not executable.
    fn could_not_run_a_command(&self) -> bool {
        matches!(self.code, Some(126 | 127))
    }

    /// An exit with no code and no signal is an ending we could not observe: count it failed.
    fn failed(&self) -> bool {
        self.code != Some(0)
    }
}

/// The class of a failed attempt. `output` is the captured stderr followed by stdout.
pub fn classify(exit: &ExitInfo, evidence: Option<&Evidence>, output: &str) -> FailureClass {
    if exit.timed_out {
        return FailureClass::Timeout;
    }
    if exit.spawn_failed {
        return FailureClass::Environment;
    }
    if exit.died_of_a_resource_signal() {
        return FailureClass::Resource;
    }
    // The parsed evidence is the failure that ended the run; the raw output also holds what
    // came before (a cause, a log line), so it is only asked when the evidence is silent.
    if let Some(class) = evidence.and_then(class_of_evidence) {
        return class;
    }
    if exit.could_not_run_a_command() {
        return FailureClass::Environment;
    }
    if let Some(class) = class_of_output(output) {
        return class;
    }
    let said_something = match evidence {
        Some(e) if e.error_type.is_some() => return FailureClass::Logic,
        Some(e) => !e.message.trim().is_empty(),
        None => !output.trim().is_empty(),
    };
    if said_something && exit.failed() {
        FailureClass::Logic
    } else {
        FailureClass::Unknown
    }
}

/// The classes that text can prove, in the order they win.
const ORDER: [FailureClass; 3] = [
    FailureClass::Resource,
    FailureClass::Environment,
    FailureClass::Transient,
];

fn class_of_evidence(evidence: &Evidence) -> Option<FailureClass> {
    if reads_a_missing_variable(evidence) {
        return Some(FailureClass::Environment);
    }
    let type_class = evidence.error_type.as_deref().and_then(class_of_type);
    let shown = TextShows::read(&evidence.message);
    ORDER
        .into_iter()
        .find(|&class| type_class == Some(class) || shown.shows(class))
}

fn class_of_output(output: &str) -> Option<FailureClass> {
    let types: Vec<Option<FailureClass>> = exception_types_in(output)
        .map(|t| class_of_type(&t))
        .collect();
    let shown = TextShows::read(output);
    ORDER
        .into_iter()
        .find(|&class| types.contains(&Some(class)) || shown.shows(class))
}

/// Python's `KeyError` raised by `os.environ[...]`: the configuration lacks a variable, which
/// no change to the code would supply.
fn reads_a_missing_variable(evidence: &Evidence) -> bool {
    evidence.error_type.as_deref() == Some("KeyError")
        && evidence
            .stack
            .as_deref()
            .is_some_and(|s| s.contains("os.environ") || s.contains("<frozen os>"))
}

/// Exception names printed at the start of a line (Python's last traceback line, Node's header,
/// a Node `[cause]: …`). In free output a name must look like an exception (dotted or ending in
/// Error/Exception), so that a log line such as "Timeout: 30s" is not taken for one.
fn exception_types_in(output: &str) -> impl Iterator<Item = String> + '_ {
    output.lines().filter_map(|line| {
        let line = match line.trim_start().strip_prefix("[cause]: ") {
            Some(cause) => cause,
            None if line.starts_with([' ', '\t']) => return None,
            None => line,
        };
        let (name, _) = exception_head(line)?;
        (name.contains('.') || name.ends_with("Error") || name.ends_with("Exception"))
            .then_some(name)
    })
}

/// A class from an exception's name alone (Python's, Node's, or the shell names the evidence
/// parser gives).
fn class_of_type(error_type: &str) -> Option<FailureClass> {
    let name = error_type.rsplit('.').next().unwrap_or(error_type);
    if name.ends_with("MemoryError") || name == "NoSpace" {
        return Some(FailureClass::Resource);
    }
    if matches!(
        name,
        "ModuleNotFoundError"
            | "PermissionError"
            | "CommandNotFound"
            | "PermissionDenied"
            | "FileNotFoundError"
            | "NotADirectoryError"
    ) {
        return Some(FailureClass::Environment);
    }
    let transient = matches!(
        name,
        "ConnectionRefusedError"
            | "ConnectionResetError"
            | "ConnectionAbortedError"
            | "BrokenPipeError"
            | "URLError"
            | "gaierror"
            | "RemoteDisconnected"
            | "IncompleteRead"
            | "ChunkedEncodingError"
            | "ServerDisconnectedError"
            // A non-blocking lock another process holds (`fcntl.flock(…, LOCK_NB)`).
            | "BlockingIOError"
    ) || error_type == "socket.timeout"
        // requests.exceptions.ConnectionError, aiohttp's ClientConnectionError, the builtin.
        || name.ends_with("ConnectionError")
        || name.ends_with("ConnectError")
        // TimeoutError, urllib3's ReadTimeoutError, requests' ReadTimeout / ConnectTimeout.
        || name.ends_with("TimeoutError")
        || name.ends_with("Timeout");
    transient.then_some(FailureClass::Transient)
}

#[cfg(test)]
mod tests;
