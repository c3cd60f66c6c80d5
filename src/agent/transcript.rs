//! A session's record read back without a live process: a Claude Code transcript, a Codex
//! rollout or an exported ATIF trajectory, told apart by their first line and turned into
//! the same steps the live adapters produce (`healer session check FILE` reads them).

use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::{atif, claude_code, codex};
use crate::error::{Error, Result};
use crate::session::SessionStep;

/// Which kind of record a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "kebab-case")]
pub enum TranscriptKind {
    ClaudeCode,
    CodexRollout,
    Atif,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Transcript {
    pub kind: TranscriptKind,
    pub steps: Vec<SessionStep>,
    /// Lines that were not JSON (a line cut short by a crash), left out.
    pub skipped_lines: usize,
}

/// Codex's rollout line types (`{"timestamp", "type", "payload"}`).
const ROLLOUT_TYPES: [&str; 5] = [
    "session_meta",
    "response_item",
    "event_msg",
    "turn_context",
    "world_state",
];

pub fn read_file(path: &Path) -> Result<Transcript> {
    let bytes = crate::capped::read_file(path, crate::capped::TRANSCRIPT_BYTES, "the transcript")?;
    let text = String::from_utf8_lossy(&bytes);
    read_text(&text).map_err(|e| Error::InvalidInput(format!("{}: {e}", path.display())))
}

/// The steps of a record's text, whichever of the three kinds it is.
pub fn read_text(text: &str) -> std::result::Result<Transcript, String> {
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let head = serde_json::from_str::<Value>(first).ok();
    let kind = match &head {
        Some(v) if atif::is_trajectory(v) => TranscriptKind::Atif,
        // A pretty-printed document's first line is `{` alone.
        None if text.trim_start().starts_with('{') => TranscriptKind::Atif,
        Some(v) if v.get("payload").is_some() && type_in(v, &ROLLOUT_TYPES) => {
            TranscriptKind::CodexRollout
        }
        Some(v) if v.get("type").is_some_and(Value::is_string) && claude_code_line(v) => {
            TranscriptKind::ClaudeCode
        }
        _ => {
            return Err(
                "this is not a Claude Code transcript, a Codex rollout or an ATIF \
                        trajectory (its first line says neither)"
                    .to_string(),
            )
        }
    };
    let (steps, skipped_lines) = match kind {
        TranscriptKind::Atif => (atif::read(text)?, 0),
        TranscriptKind::CodexRollout => codex::rollout::read(text),
        TranscriptKind::ClaudeCode => claude_code::transcript::read(text),
    };
    Ok(Transcript {
        kind,
        steps,
        skipped_lines,
    })
}

fn type_in(v: &Value, types: &[&str]) -> bool {
    v.get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| types.contains(&t))
}

/// Claude Code's transcript lines name their session (`sessionId`) or are a conversation line.
fn claude_code_line(v: &Value) -> bool {
    v.get("sessionId").is_some() || type_in(v, &["user", "assistant", "summary", "system"])
}
