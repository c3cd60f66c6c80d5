//! How answers look on the terminal: JSON for scripts, and the few shapes more than one command
//! prints (a run with its attempts, one step of a task's thread).

use healer::llm::{MessageRole, ThreadMessage};
use healer::workflow::{RunDetail, RunStatus};
use healer::{Error, Result};
use serde::Serialize;

/// Write one line to standard output, made safe for a terminal (see [`safe`]). A closed pipe
/// (`healer events | head`) ends the output quietly.
pub fn line(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stdout().lock(), "{}", safe(text));
}

/// Write one line to standard error, made safe for a terminal.
pub fn error_line(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{}", safe(text));
}

/// Text as a terminal may show it: escape sequences removed, other control characters (but
/// newlines and tabs) shown as �.
pub fn safe(text: &str) -> String {
    anstream::adapter::strip_str(text)
        .to_string()
        .chars()
        .map(|c| {
            if c.is_control() && c != '\n' && c != '\t' {
                '\u{fffd}'
            } else {
                c
            }
        })
        .collect()
}

/// Text on one line: a line break inside is shown as ⏎, so that nothing can start a line that
/// looks like another record.
pub fn one_line(text: &str) -> String {
    text.replace("\r\n", "⏎").replace(['\n', '\r'], "⏎")
}

/// Print as pretty JSON; `Ok(true)` so a command can end with it.
pub fn print_json<T: Serialize>(value: &T) -> Result<bool> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| Error::Internal(format!("cannot print JSON: {e}")))?;
    println!("{text}");
    Ok(true)
}

/// How an attempt ended, in a few words.
fn attempt_how(attempt: &healer::workflow::Attempt) -> String {
    match (attempt.exit_code, attempt.signal, attempt.timed_out) {
        (_, _, true) => "timed out".to_string(),
        (_, Some(signal), _) => format!("killed by signal {signal}"),
        (Some(code), _, _) => format!("exit {code}"),
        _ if attempt
            .evidence
            .as_ref()
            .is_some_and(|e| e.message.starts_with(healer::cluster::flow::LOST)) =>
        {
            "its worker was lost before it ended".to_string()
        }
        _ => "did not start".to_string(),
    }
}

pub fn print_run(title: &str, detail: &RunDetail) {
    let run = &detail.run;
    println!(
        "Run #{} of \"{title}\" (version {}): {}",
        run.number, run.version, run.summary
    );
    if let Some(hint) = &run.hint {
        println!("  ran with Healer's hint (HEALER_RECOVERY_HINT): {hint}");
    }
    for attempt in &detail.attempts {
        let how = attempt_how(attempt);
        let class = attempt
            .class
            .map(|c| format!(" [{}]", c.as_str()))
            .unwrap_or_default();
        println!("  attempt {}: {how}{class}", attempt.number);
        if let Some(e) = &attempt.evidence {
            match &e.error_type {
                Some(t) => println!("    {t}: {}", e.message),
                None => println!("    {}", e.message),
            }
        }
        if let Some(note) = &attempt.note {
            println!("    {note}");
        }
    }
    if run.status != RunStatus::Succeeded {
        if let Some(last) = detail.attempts.last() {
            let tail: Vec<&str> = last.stderr.lines().rev().take(15).collect();
            if !tail.is_empty() {
                println!("  last lines of stderr:");
                for line in tail.iter().rev() {
                    println!("    {}", clip_line(line));
                }
            }
        }
    }
}

/// Characters of one step `task show` prints.
const SHOWN_CHARS: usize = 4_000;

/// One step of a thread, whole (long texts cut, saying so).
pub fn print_message(m: &ThreadMessage) {
    let who = match m.role {
        MessageRole::System => "system prompt".to_string(),
        MessageRole::User => "evidence / message".to_string(),
        MessageRole::Nudge => "Healer's reminder to the model".to_string(),
        MessageRole::Assistant => match &m.model {
            Some(model) => format!("assistant ({model})"),
            None => "assistant".to_string(),
        },
        MessageRole::Tool => format!(
            "{} result{}",
            m.tool_name.as_deref().unwrap_or("tool"),
            if m.is_error { " (error)" } else { "" }
        ),
    };
    println!("── {who} · {}", m.at);
    if m.role == MessageRole::System {
        return;
    }
    if !m.content.trim().is_empty() {
        println!("{}", cut(m.content.trim()));
    }
    for call in &m.tool_calls {
        println!("→ {}({})", call.name, cut(&call.arguments));
    }
}

/// Characters of one line of a script's output that a run's summary prints.
const LINE_CHARS: usize = 300;

/// One line of output, cut at [`LINE_CHARS`] characters (saying how many more there were).
fn clip_line(line: &str) -> String {
    match line.char_indices().nth(LINE_CHARS) {
        Some((at, _)) => format!(
            "{}… [{} more characters]",
            line.get(..at).unwrap_or_default(),
            line.get(at..).unwrap_or_default().chars().count()
        ),
        None => line.to_string(),
    }
}

fn cut(text: &str) -> String {
    match text.char_indices().nth(SHOWN_CHARS) {
        Some((at, _)) => format!(
            "{}\n[{} more characters]",
            &text[..at],
            text[at..].chars().count()
        ),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_control_characters_are_shown_harmlessly() {
        assert_eq!(
            safe("\u{1b}[31mred\u{1b}[0m \u{1b}]0;title\u{7}ok\tdone\nnext\u{8}"),
            "red ok\tdone\nnext"
        );
        let shown = safe("a\u{0}b\u{7f}c\u{9b}d");
        assert!(!shown.chars().any(|c| c.is_control()), "{shown:?}");
        assert_eq!(one_line("a\nb\r\nc"), "a⏎b⏎c");
    }

    #[test]
    fn an_attempt_whose_worker_was_lost_says_so_not_that_it_did_not_start() {
        let attempt: healer::workflow::Attempt = serde_json::from_value(serde_json::json!({
            "id": 1, "run_id": 1, "number": 1, "status": "failed", "started_at": "",
            "finished_at": null, "duration_ms": 0, "exit_code": null, "signal": null,
            "timed_out": false, "class": "transient",
            "evidence": {"error_type": null, "message": format!("{} (activity Heartbeat timeout)", healer::cluster::flow::LOST), "stack": null},
            "stdout": "", "stderr": "", "stdout_cut": 0, "stderr_cut": 0, "result": null,
            "note": null, "worker": null
        }))
        .expect("an attempt");
        assert_eq!(attempt_how(&attempt), "its worker was lost before it ended");
    }
}
