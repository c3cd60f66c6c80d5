//! How answers look on the terminal: JSON for scripts, and the few shapes more than one command
//! prints (a run with its attempts, one step of a task's thread).

use healer::llm::{MessageRole, ThreadMessage};
use healer::workflow::{RunDetail, RunStatus};
use healer::{Error, Result};
use serde::Serialize;

/// Print as pretty JSON; `Ok(true)` so a command can end with it.
pub fn print_json<T: Serialize>(value: &T) -> Result<bool> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| Error::Internal(format!("cannot print JSON: {e}")))?;
    println!("{text}");
    Ok(true)
}

pub fn print_run(title: &str, detail: &RunDetail) {
    let run = &detail.run;
    println!(
        "Run {} of \"{title}\" (version {}): {}",
        run.id, run.version, run.summary
    );
    if let Some(hint) = &run.hint {
        println!("  ran with Healer's hint (HEALER_RECOVERY_HINT): {hint}");
    }
    for attempt in &detail.attempts {
        let how = match (attempt.exit_code, attempt.signal, attempt.timed_out) {
            (_, _, true) => "timed out".to_string(),
            (_, Some(signal), _) => format!("killed by signal {signal}"),
            (Some(code), _, _) => format!("exit {code}"),
            _ => "did not start".to_string(),
        };
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
                    println!("    {line}");
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
