//! How a CLI agent's session ended, in a sentence a person can act on: the parts both CLI
//! adapters share (a stop, the time limit, a stream that was not the agent's, a process that
//! ended without saying how it went, a program that would not start).

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::time::Duration;

use super::process::{Ending, Finished};
use super::SessionEnd;
use crate::session::SessionStatus;

/// Longest summary kept (an agent's final message can be long; the steps hold it whole).
const SUMMARY_CHARS: usize = 2_000;

/// What the stream told about a broken stream: how many lines were unreadable, the first.
pub(crate) struct Unreadable<'a> {
    pub count: usize,
    pub first: Option<&'a str>,
}

pub(crate) fn end(
    status: SessionStatus,
    finished: Option<&Finished>,
    summary: String,
    agent_session_id: Option<String>,
) -> SessionEnd {
    let mut summary = summary.trim().to_string();
    if summary.chars().count() > SUMMARY_CHARS {
        summary = summary.chars().take(SUMMARY_CHARS).collect::<String>() + "…";
    }
    SessionEnd {
        status,
        exit_code: finished.and_then(|f| f.status).and_then(|s| s.code()),
        summary,
        agent_session_id,
    }
}

/// The end when Healer ended the process (stop, time limit, unreadable stream); `None` when
/// the agent ended on its own and its own words decide.
pub(crate) fn ended_by_healer(
    agent: &str,
    finished: &Finished,
    time_limit: Duration,
    unreadable: &Unreadable<'_>,
    agent_session_id: Option<String>,
) -> Option<SessionEnd> {
    let (status, summary) = match finished.ending {
        Ending::Exited => return None,
        Ending::Stopped => (
            SessionStatus::Stopped,
            format!("{agent} was stopped before it finished."),
        ),
        Ending::TimedOut => (
            SessionStatus::TimedOut,
            format!(
                "{agent} was still working after its time limit of {} and was stopped. \
                 Give the task more time in the project's settings, or split it.",
                duration(time_limit)
            ),
        ),
        Ending::Unreadable => (
            SessionStatus::Failed,
            format!(
                "{agent}'s output was not its JSON stream ({} unreadable lines, the first: \
                 \"{}\"), so Healer stopped it. Check that the configured program is {agent}.",
                unreadable.count,
                unreadable.first.unwrap_or_default()
            ),
        ),
    };
    Some(end(status, Some(finished), summary, agent_session_id))
}

/// Why the process ended without the line that says how the session went.
pub(crate) fn no_final_word(
    agent: &str,
    finished: &Finished,
    unreadable: &Unreadable<'_>,
) -> String {
    let how = match finished.status {
        Some(s) if s.signal().is_some() => format!(
            "{agent} was killed (signal {}) before it finished",
            s.signal().unwrap_or_default()
        ),
        Some(s) => format!(
            "{agent} exited (code {}) without saying how its session went",
            s.code().unwrap_or_default()
        ),
        None => format!("{agent} ended without saying how its session went"),
    };
    let mut summary = how;
    if let Some(line) = last_line(&finished.stderr_tail) {
        summary.push_str(&format!(": {line}"));
    } else if let Some(first) = unreadable.first {
        summary.push_str(&format!(
            "; its output was not its JSON stream ({} unreadable lines, the first: \"{first}\")",
            unreadable.count
        ));
    }
    summary.push('.');
    summary
}

/// The end of a session whose program could not be started.
pub(crate) fn not_started(agent: &str, program: &Path, error: &std::io::Error) -> SessionEnd {
    let summary = if error.kind() == std::io::ErrorKind::NotFound {
        format!(
            "{agent} is not installed at {}. Install it, or set the path to its program in \
             the project's settings.",
            program.display()
        )
    } else {
        format!(
            "{agent} could not be started ({}): {error}. Check that the file is {agent}'s \
             program and that it may be executed.",
            program.display()
        )
    };
    end(SessionStatus::Failed, None, summary, None)
}

/// The most telling line of an error output: its last non-empty one.
pub(crate) fn last_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).rev().find(|l| !l.is_empty())
}

/// `90 s`, `5 min`, `2 h 30 min`.
pub(crate) fn duration(d: Duration) -> String {
    let secs = d.as_secs();
    match secs {
        0..120 => format!("{secs} s"),
        120..7200 => format!("{} min", secs / 60),
        _ if secs % 3600 >= 60 => format!("{} h {} min", secs / 3600, (secs % 3600) / 60),
        _ => format!("{} h", secs / 3600),
    }
}
