//! Classification of a failed attempt into a [`FailureClass`], by rules over how the process
//! ended and the evidence it left. A class names what fixes the failure (docs/classes.md): a
//! change to the code (logic), to the machine, its files, its configuration or a credential
//! (environment), waiting (transient), or more time, memory or disk (resource).
//!
//! How the process ended is asked first (it cannot be wrong), then the parsed evidence (the
//! error that ended the run), then the raw output (a wrapped cause, a traceback the output cap
//! cut before its last line). Rules are plain substring and token checks, one pass over the
//! output whatever their number.

mod lookalike;
mod status;
mod text;

use super::evidence::exception_head;
use super::{chain, Evidence, FailureClass, Link};
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

    /// 124: `timeout(1)` stopped the command it ran (the script's own limit, not Healer's).
    fn ran_out_of_time(&self) -> bool {
        self.code == Some(124)
    }

    /// How it ended, as printed: "exit code 137", "signal 9".
    fn describe(&self) -> String {
        match (self.signal, self.code) {
            (Some(signal), _) => format!("signal {signal}"),
            (None, Some(code)) => format!("exit code {code}"),
            (None, None) => "an ending Healer could not observe".to_string(),
        }
    }

    /// An exit with no code and no signal is an ending we could not observe: count it failed.
    fn failed(&self) -> bool {
        self.code != Some(0)
    }
}

/// The class of a failed attempt. `output` is the captured stderr followed by stdout.
pub fn classify(exit: &ExitInfo, evidence: Option<&Evidence>, output: &str) -> FailureClass {
    judge(exit, evidence, output).class
}

/// A class, and what it was read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    pub class: FailureClass,
    /// What decided it, as printed: the exception it was classed by ("KeyError: 'amount'"), a
    /// line of the output, or how the process ended ("exit code 124"). `None` when nothing did.
    pub by: Option<String>,
    /// The first exception of a chain, when the one that ended the run wraps another:
    /// "ConnectionRefusedError: [Errno 111] Connection refused".
    pub root_cause: Option<String>,
}

/// [`classify`], with what decided the class.
pub fn judge(exit: &ExitInfo, evidence: Option<&Evidence>, output: &str) -> Judgement {
    let links = evidence.map(chain).unwrap_or_default();
    let root_cause = (links.len() > 1)
        .then(|| links.first().map(Link::describe))
        .flatten();
    let verdict = |class: FailureClass, by: Option<String>| Judgement {
        class,
        by,
        root_cause: root_cause.clone(),
    };
    if exit.timed_out {
        return verdict(
            FailureClass::Timeout,
            Some("Healer's time limit".to_string()),
        );
    }
    if exit.spawn_failed {
        return verdict(
            FailureClass::Environment,
            Some("the program could not be started".to_string()),
        );
    }
    if exit.died_of_a_resource_signal() {
        return verdict(FailureClass::Resource, Some(exit.describe()));
    }
    // Each exception of the chain, root cause first: a wrapper's own words rarely name what
    // went wrong underneath. The raw output also holds what came before the report (a log
    // line, a warning), which is only asked when there is no report.
    for (i, link) in links.iter().enumerate() {
        if let Some(class) = class_of_link(link) {
            let class = lookalike::reconsidered(class, link, output);
            return verdict(class, Some(link.describe()));
        }
        // A root cause in the code or the data (a missing key, a bad value) is what a retrying
        // or friendly wrapper reports, whatever its words ("try again later").
        if i == 0 && links.len() > 1 && link.error_type.as_deref().is_some_and(is_a_code_error) {
            return verdict(FailureClass::Logic, Some(link.describe()));
        }
    }
    let report = evidence.filter(|e| {
        e.error_type.is_some() && e.stack.is_some() && !lookalike::reports_a_failed_child(e)
    });
    if let Some(report) = report {
        // A full exception report whose chain names no outside cause: the code is at fault.
        let by = links.first().map_or_else(|| report.said(), Link::describe);
        return verdict(FailureClass::Logic, Some(by));
    }
    if exit.ran_out_of_time() {
        return verdict(FailureClass::Resource, Some(exit.describe()));
    }
    if exit.could_not_run_a_command() {
        return verdict(FailureClass::Environment, Some(exit.describe()));
    }
    let quiet = lookalike::without_noise(output);
    if let Some((class, line)) = class_of_output(&quiet) {
        let class = match links.last() {
            Some(link) => lookalike::reconsidered(class, link, output),
            None => class,
        };
        return verdict(class, Some(line));
    }
    match evidence {
        Some(e) if e.error_type.is_some() => verdict(FailureClass::Logic, Some(e.said())),
        Some(e) if exit.failed() && lookalike::names_a_failure(&e.message) => {
            verdict(FailureClass::Logic, Some(e.said()))
        }
        _ => verdict(FailureClass::Unknown, None),
    }
}

/// The classes that text can prove, in the order they win.
const ORDER: [FailureClass; 3] = [
    FailureClass::Resource,
    FailureClass::Environment,
    FailureClass::Transient,
];

/// The class one exception of a chain proves: by its type, by what it says, or by a missing
/// piece of configuration it reveals.
fn class_of_link(link: &Link) -> Option<FailureClass> {
    if lookalike::reads_a_missing_variable(link) || lookalike::url_from_an_unset_variable(link) {
        return Some(FailureClass::Environment);
    }
    let type_class = link.error_type.as_deref().and_then(class_of_type);
    if type_class == Some(FailureClass::Resource) || lookalike::short_write(&link.said) {
        return Some(FailureClass::Resource);
    }
    let shown = TextShows::read(&link.said);
    ORDER
        .into_iter()
        .find(|&class| type_class == Some(class) || shown.shows(class))
}

/// The class the output proves, with the line that proves it.
fn class_of_output(output: &str) -> Option<(FailureClass, String)> {
    let types: Vec<Option<FailureClass>> = exception_types_in(output)
        .map(|t| class_of_type(&t))
        .collect();
    let shown = TextShows::read(output);
    let class = if lookalike::short_write(output) {
        FailureClass::Resource
    } else {
        ORDER
            .into_iter()
            .find(|&class| types.contains(&Some(class)) || shown.shows(class))?
    };
    // The line to show: the last one that proves the class on its own.
    let line = output
        .lines()
        .rev()
        .map(str::trim)
        .find(|line| {
            !line.is_empty()
                && (TextShows::read(line).shows(class)
                    || (class == FailureClass::Resource && lookalike::short_write(line))
                    || exception_types_in(line).any(|t| class_of_type(&t) == Some(class)))
        })
        .unwrap_or_default();
    Some((class, line.to_string()))
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

/// Exceptions raised by a mistake in the code or a shape of data it did not expect.
fn is_a_code_error(error_type: &str) -> bool {
    let name = error_type.rsplit('.').next().unwrap_or(error_type);
    matches!(
        name,
        "KeyError"
            | "IndexError"
            | "ValueError"
            | "TypeError"
            | "AttributeError"
            | "NameError"
            | "UnboundLocalError"
            | "ZeroDivisionError"
            | "JSONDecodeError"
            | "UnicodeDecodeError"
            | "AssertionError"
            | "SyntaxError"
            | "ReferenceError"
            | "RangeError"
    )
}

/// A class from an exception's name alone (Python's, Node's, or the shell names the evidence
/// parser gives).
fn class_of_type(error_type: &str) -> Option<FailureClass> {
    let name = error_type.rsplit('.').next().unwrap_or(error_type);
    // subprocess.TimeoutExpired: a command the script ran needed more time than it gave it.
    if name.ends_with("MemoryError") || name == "NoSpace" || name == "TimeoutExpired" {
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
