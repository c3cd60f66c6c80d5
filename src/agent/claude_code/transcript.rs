//! Claude Code's transcript file, `<config dir>/projects/<escaped cwd>/<session id>.jsonl`: where
//! it is, and its steps read back without a live process (`healer session check FILE`).
//!
//! The file holds much more than the conversation (request snapshots of tens of kilobytes,
//! attachments, queue operations); only `user` and `assistant` lines of the main chain become
//! steps, and its `compact_boundary` system lines (the conversation compacted) a compaction
//! step each. Assistant lines hold one content block each, all with the call's final usage,
//! which the call's last step carries — as on the live stream.

use std::path::{Path, PathBuf};

use super::lines::{message_steps, CompactLine, Head, MessageLine};
use crate::agent::now;
use crate::session::{SessionStep, StepSource, StepUsage};

/// Longest escaped folder name Claude Code uses as it is; longer ones are cut and given a hash.
const MAX_ESCAPED_LEN: usize = 200;

/// Where Claude Code keeps its state: `CLAUDE_CONFIG_DIR`, else `~/.claude`.
pub fn config_dir(home: Option<&str>, claude_config_dir: Option<&str>) -> Option<PathBuf> {
    match (claude_config_dir, home) {
        (Some(dir), _) if !dir.is_empty() => Some(PathBuf::from(dir)),
        (_, Some(home)) if !home.is_empty() => Some(Path::new(home).join(".claude")),
        _ => None,
    }
}

/// The transcript of session `session_id` started in `cwd` (the physical path Claude Code
/// reports in its `init` line).
pub fn transcript_path(config_dir: &Path, cwd: &str, session_id: &str) -> PathBuf {
    config_dir
        .join("projects")
        .join(escape_cwd(cwd))
        .join(format!("{session_id}.jsonl"))
}

/// Claude Code's folder name for a working directory: every character but ASCII letters and
/// digits becomes `-` (per UTF-16 unit, as JavaScript counts); past 200 characters the name is
/// cut and `-` plus the base-36 Java string hash of the path is added.
pub fn escape_cwd(cwd: &str) -> String {
    let mut escaped = String::with_capacity(cwd.len());
    for c in cwd.chars() {
        if c.is_ascii_alphanumeric() {
            escaped.push(c);
        } else {
            escaped.extend(std::iter::repeat_n('-', c.len_utf16()));
        }
    }
    if escaped.len() <= MAX_ESCAPED_LEN {
        return escaped;
    }
    let hash = cwd.encode_utf16().fold(0_i32, |h, unit| {
        h.wrapping_mul(31).wrapping_add(i32::from(unit))
    });
    let mut cut: String = escaped.chars().take(MAX_ESCAPED_LEN).collect();
    cut.push('-');
    cut.push_str(&base36(i64::from(hash).unsigned_abs()));
    cut
}

fn base36(mut n: u64) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS.get((n % 36) as usize).copied().unwrap_or(b'0'));
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8_lossy(&out).into_owned()
}

/// The steps of a transcript's text. Lines that are not JSON (a line cut by a crash) are
/// skipped; `skipped` says how many.
pub fn read(text: &str) -> (Vec<SessionStep>, usize) {
    let mut steps = Vec::new();
    let mut skipped = 0;
    // The newest step of the current model call and the call's id and final usage.
    let mut held: Option<SessionStep> = None;
    let mut call: Option<String> = None;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(head) = serde_json::from_str::<Head>(line) else {
            skipped += 1;
            continue;
        };
        let source = match head.kind.as_str() {
            "assistant" => StepSource::Agent,
            "user" => StepSource::User,
            "system" if head.subtype.as_deref() == Some("compact_boundary") => {
                match serde_json::from_str::<CompactLine>(line) {
                    Ok(compact) if !compact.is_sidechain => {
                        steps.extend(held.take());
                        call = None;
                        steps.push(compact.step(now));
                    }
                    Ok(_) => {}
                    Err(_) => skipped += 1,
                }
                continue;
            }
            _ => continue,
        };
        let Ok(parsed) = serde_json::from_str::<MessageLine>(line) else {
            skipped += 1;
            continue;
        };
        if parsed.is_sidechain {
            continue;
        }
        let at = parsed.timestamp.unwrap_or_else(now);
        let id = parsed.message.id.clone();
        let usage = parsed.message.usage;
        if source == StepSource::User || id != call {
            steps.extend(held.take());
        }
        let mut new = message_steps(parsed.message, source, &at);
        if source == StepSource::User {
            call = None;
            steps.extend(new);
            continue;
        }
        call = id;
        if let Some(mut last) = new.pop() {
            // Another block of the same call: the newer step carries the call's usage.
            steps.extend(held.take().map(|h| SessionStep { usage: None, ..h }));
            steps.extend(new);
            last.usage = usage
                .map(|u| u.step_usage())
                .filter(|u| *u != StepUsage::default());
            held = Some(last);
        }
    }
    steps.extend(held);
    (steps, skipped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_working_directory_escapes_as_claude_code_escapes_it() {
        assert_eq!(
            escape_cwd("/tmp/ccr/runs/escape/my.repo_v1 x-y"),
            "-tmp-ccr-runs-escape-my-repo-v1-x-y"
        );
        // A 242-character path, whose folder name was read off a real run of Claude Code.
        let long = format!(
            "/tmp/ccr/runs/escape/{}/{}",
            "d".repeat(120),
            "e".repeat(100)
        );
        let expected = format!(
            "-tmp-ccr-runs-escape-{}-{}-gqjn7o",
            "d".repeat(120),
            "e".repeat(58)
        );
        assert_eq!(escape_cwd(&long), expected);
    }

    /// Lines in the shape Claude Code 2.1.328 writes them (its `compact_boundary` entry and the
    /// summary that opens the compacted conversation).
    #[test]
    fn a_compact_boundary_is_a_compaction_step_in_its_place() {
        let session = r#""cwd":"/w","sessionId":"s1","version":"2.1.328","userType":"external""#;
        let text = [
            format!(r#"{{"parentUuid":null,"isSidechain":false,{session},"type":"user","message":{{"role":"user","content":"Fix the build"}},"uuid":"u1","timestamp":"2026-01-02T10:00:00.000Z"}}"#),
            format!(r#"{{"parentUuid":"u1","isSidechain":false,{session},"type":"assistant","message":{{"id":"msg_1","role":"assistant","model":"claude-sonnet-4-5","content":[{{"type":"text","text":"Looking."}}],"usage":{{"input_tokens":10,"output_tokens":5}}}},"uuid":"a1","timestamp":"2026-01-02T10:00:01.000Z"}}"#),
            format!(r#"{{"parentUuid":null,"logicalParentUuid":"a1","isSidechain":false,{session},"type":"system","subtype":"compact_boundary","content":"Conversation compacted","isMeta":false,"timestamp":"2026-01-02T10:05:00.000Z","uuid":"c1","level":"info","compactMetadata":{{"trigger":"auto","preTokens":155012}}}}"#),
            format!(r#"{{"parentUuid":"c1","isSidechain":false,{session},"type":"user","message":{{"role":"user","content":"This session is being continued from a previous conversation that ran out of context."}},"isCompactSummary":true,"uuid":"u2","timestamp":"2026-01-02T10:05:01.000Z"}}"#),
            format!(r#"{{"parentUuid":null,"isSidechain":true,{session},"type":"system","subtype":"compact_boundary","content":"Conversation compacted","timestamp":"2026-01-02T10:06:00.000Z","uuid":"c2","compactMetadata":{{"trigger":"manual","preTokens":9000}}}}"#),
        ]
        .join("\n");
        let (steps, skipped) = read(&text);
        assert_eq!(skipped, 0);
        let texts: Vec<&str> = steps.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "Fix the build",
                "Looking.",
                "The conversation was compacted to fit the model's context (automatically, at 155012 tokens).",
                "This session is being continued from a previous conversation that ran out of context.",
            ]
        );
        let compaction = &steps[2];
        assert_eq!(compaction.source, StepSource::System);
        assert_eq!(compaction.at, "2026-01-02T10:05:00.000Z");
        assert!(crate::session::is_compaction(compaction));
    }

    #[test]
    fn the_config_folder_follows_claude_config_dir_then_home() {
        assert_eq!(
            config_dir(Some("/h"), Some("/c")),
            Some(PathBuf::from("/c"))
        );
        assert_eq!(
            config_dir(Some("/h"), None),
            Some(PathBuf::from("/h/.claude"))
        );
        assert_eq!(config_dir(None, None), None);
    }
}
