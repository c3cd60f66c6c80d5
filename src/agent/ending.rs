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
        program_failed: false,
    }
}

/// The end of a session whose program failed rather than the agent: it would not start, ended
/// without its final word, or printed no usable stream.
pub(crate) fn program_failed(end: SessionEnd) -> SessionEnd {
    SessionEnd {
        program_failed: true,
        ..end
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
        Ending::Unreadable => {
            let summary = format!(
                "{agent}'s output was not its JSON stream ({} unreadable lines, the first: \
                 \"{}\"), so Healer stopped it. Check that the configured program is {agent}.",
                unreadable.count,
                unreadable.first.unwrap_or_default()
            );
            return Some(program_failed(end(
                SessionStatus::Failed,
                Some(finished),
                summary,
                agent_session_id,
            )));
        }
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
    program_failed(end(SessionStatus::Failed, None, summary, None))
}

/// The most telling line of an error output: its last line in words. A line of JSON (an API's
/// error body, printed raw) gives way to a line in words before it ("Invalid API key"), or
/// gives its own `message` when there is none.
pub(crate) fn last_line(text: &str) -> Option<String> {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let json = |line: &str| serde_json::from_str::<serde_json::Value>(line).ok();
    if let Some(words) = lines.iter().rev().find(|l| json(l).is_none()) {
        return Some((*words).to_string());
    }
    let last = lines.last()?;
    Some(
        json(last)
            .as_ref()
            .and_then(said_in_json)
            .unwrap_or_else(|| (*last).to_string()),
    )
}

/// The `message` an error body carries (`{"error": {"message": …}}`, `{"message": …}`).
fn said_in_json(value: &serde_json::Value) -> Option<String> {
    let message = value
        .pointer("/error/message")
        .or_else(|| value.get("message"))
        .or_else(|| value.get("error").filter(|e| e.is_string()))?;
    message.as_str().map(str::to_string)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_telling_line_of_an_error_output_is_in_words_not_an_apis_raw_json() {
        let out = "Invalid API key \u{b7} Please run /login\n{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key\"}}\n";
        assert_eq!(
            last_line(out).as_deref(),
            Some("Invalid API key \u{b7} Please run /login")
        );
        let only_json = "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key\"}}";
        assert_eq!(last_line(only_json).as_deref(), Some("invalid x-api-key"));
        assert_eq!(last_line("{\"a\":1}").as_deref(), Some("{\"a\":1}"));
        assert_eq!(last_line("first\nlast\n\n").as_deref(), Some("last"));
        assert_eq!(last_line("  \n"), None);
    }
}
