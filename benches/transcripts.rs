//! Figure for the agents (printed, not asserted): a 10 MB session record parsed into steps,
//! target ≥ 50 MB/s in release — a Claude Code transcript, and a Codex rollout of the same size.
//!
//! The records are built with the shapes the real CLIs write (Claude Code 2.1.328, Codex
//! 0.169.0): per turn an assistant text line, a tool call, its result (2–8 KB of command
//! output with quotes, tabs and newlines escaped), the request bookkeeping lines, and every
//! 20 turns the large snapshot lines (system prompt and request shape, 40–60 KB) that make up
//! most of a real transcript's bytes. The median of the rounds is printed.
//!
//! `cargo bench -p healer --bench transcripts` (or `make bench`; `HEALER_BENCH_QUICK=1`: 200 kB
//! records, one round).

#[path = "figures.rs"]
mod figures;

use std::hint::black_box;
use std::time::{Duration, Instant};

use figures::{Figures, Goal};
use healer::agent::claude_code::transcript;
use healer::agent::codex::rollout;
use serde_json::json;

const CLAUDE: &str = "Claude Code transcript read into steps";
const CODEX: &str = "Codex rollout read into steps";

fn main() {
    let figures = Figures::new("transcripts", &[CLAUDE.to_string(), CODEX.to_string()]);
    let bytes = figures::size(10 * 1000 * 1000, 200 * 1000);
    let claude = claude_transcript(bytes);
    let codex = codex_rollout(bytes);
    println!("Transcript figures:");
    report(&figures, CLAUDE, &claude, |t| transcript::read(t).0.len());
    report(&figures, CODEX, &codex, |t| rollout::read(t).0.len());
}

fn report(figures: &Figures, name: &str, text: &str, parse: impl Fn(&str) -> usize) {
    let rounds = figures::size(7, 1);
    let mb = text.len() as f64 / 1e6;
    let steps = parse(text);
    let mut times: Vec<Duration> = (0..rounds)
        .map(|_| {
            let start = Instant::now();
            black_box(parse(black_box(text)));
            start.elapsed()
        })
        .collect();
    times.sort();
    let median = times.get(rounds / 2).copied().unwrap_or_default();
    println!(
        "{name}: {mb:.1} MB, {} lines → {steps} steps (median of {rounds} rounds, {:.0} ms)",
        text.lines().count(),
        median.as_secs_f64() * 1e3
    );
    figures.report(
        name,
        mb / median.as_secs_f64().max(1e-9),
        "MB/s",
        Goal::AtLeast(50.0),
    );
}

/// Command output of `n` bytes that needs escaping, like a test run's.
fn output(turn: usize, n: usize) -> String {
    let line = format!(
        "test suite::case_{turn} ... ok\t(0.{turn:03}s) \"quoted\" path=/home/p/repo/src/m{turn}.rs\n"
    );
    line.repeat(n / line.len() + 1).chars().take(n).collect()
}

fn claude_transcript(size: usize) -> String {
    let sid = "1f21b35b-34ce-42a8-9f8d-3ddd897dc61c";
    let common = |uuid: usize| {
        json!({"parentUuid": format!("u-{}", uuid.saturating_sub(1)), "isSidechain": false,
               "uuid": format!("u-{uuid}"), "timestamp": "2026-11-25T11:01:05.879Z",
               "sessionId": sid, "cwd": "/home/p/repo", "gitBranch": "healer/t-1",
               "version": "2.1.328", "userType": "external", "entrypoint": "sdk-cli"})
    };
    let merge = |mut base: serde_json::Value, extra: serde_json::Value| {
        if let (Some(b), Some(e)) = (base.as_object_mut(), extra.as_object()) {
            b.extend(e.clone());
        }
        base.to_string()
    };
    let usage = json!({"input_tokens": 12466, "cache_creation_input_tokens": 0,
                       "cache_read_input_tokens": 11000, "output_tokens": 22});
    let mut lines = vec![merge(
        common(0),
        json!({"type": "user", "message": {"role": "user", "content": "Fix the failing tests"}}),
    )];
    let mut total = 0;
    let mut turn = 0;
    while total < size {
        turn += 1;
        let msg = format!("msg_{turn:024}");
        let tool = format!("toolu_{turn:024}");
        let mut turn_lines = vec![
            json!({"type": "api-request", "sessionId": sid, "id": format!("req-{turn}"),
                   "timestamp": "2026-11-25T11:01:05.873Z", "version": "2.1.328",
                   "querySource": "sdk", "shapeHash": "1e6437bd3215991cf35f87a8f7e6faf4",
                   "model": "claude-opus-5-5", "messageCount": turn * 2})
            .to_string(),
            merge(
                common(turn * 3),
                json!({"type": "assistant", "requestId": format!("req_{turn}"),
                       "message": {"id": msg, "type": "message", "role": "assistant",
                       "model": "claude-opus-5-5", "stop_reason": "tool_use", "usage": usage,
                       "content": [{"type": "text",
                                    "text": format!("Running the tests for module {turn} to see what fails.")}]}}),
            ),
            merge(
                common(turn * 3 + 1),
                json!({"type": "assistant", "requestId": format!("req_{turn}"),
                       "message": {"id": msg, "type": "message", "role": "assistant",
                       "model": "claude-opus-5-5", "stop_reason": "tool_use", "usage": usage,
                       "content": [{"type": "tool_use", "id": tool, "name": "Bash",
                                    "input": {"command": format!("cargo test -p m{turn} 2>&1 | tail -80"),
                                              "description": "run the tests"}}]}}),
            ),
            merge(
                common(turn * 3 + 2),
                json!({"type": "user", "message": {"role": "user", "content": [
                        {"tool_use_id": tool, "type": "tool_result",
                         "content": output(turn, 2_000 + (turn * 997) % 6_000), "is_error": false}]},
                       "toolUseResult": {"stdout": output(turn, 400), "stderr": "",
                                         "interrupted": false, "isImage": false},
                       "sourceToolAssistantUUID": format!("u-{}", turn * 3 + 1)}),
            ),
        ];
        if turn % 20 == 1 {
            turn_lines.push(merge(
                common(turn * 3 + 3),
                json!({"type": "attachment", "attachment": {"type": "prompt_snapshot",
                       "systemPrompt": [output(turn, 50_000)]}}),
            ));
            turn_lines.push(
                json!({"type": "api-request-shape", "sessionId": sid,
                       "shape": output(turn + 1, 38_000)})
                .to_string(),
            );
        }
        for line in turn_lines {
            total += line.len() + 1;
            lines.push(line);
        }
    }
    lines.join("\n") + "\n"
}

fn codex_rollout(size: usize) -> String {
    let line = |kind: &str, payload: serde_json::Value| {
        json!({"timestamp": "2026-11-25T11:13:45.747Z", "type": kind, "payload": payload})
            .to_string()
    };
    let totals = json!({"input_tokens": 100, "cached_input_tokens": 10, "output_tokens": 20,
                        "reasoning_output_tokens": 5, "total_tokens": 120});
    let mut lines = vec![line(
        "session_meta",
        json!({"id": "01a21269-610b-7a13-aea8-2437d8aed2bf", "cwd": "/home/p/repo",
               "originator": "codex_exec", "cli_version": "0.169.0",
               "base_instructions": {"text": output(0, 20_000)}}),
    )];
    let mut total = 0;
    let mut turn = 0;
    while total < size {
        turn += 1;
        let call = format!("call_{turn:012}");
        let turn_lines = [
            line(
                "response_item",
                json!({"type": "reasoning", "summary": [{"type": "summary_text",
                       "text": format!("Checking module {turn}")}]}),
            ),
            line(
                "response_item",
                json!({"type": "function_call", "name": "exec_command", "call_id": call,
                       "arguments": json!({"cmd": format!("cargo test -p m{turn}")}).to_string()}),
            ),
            line(
                "event_msg",
                json!({"type": "item_completed", "item": {"type": "CommandExecution",
                       "id": call, "aggregated_output": output(turn, 1_500), "exit_code": 0}}),
            ),
            line(
                "response_item",
                json!({"type": "function_call_output", "call_id": call,
                       "output": format!("Chunk ID: 3c8dfe\nWall time: 0.0 seconds\nProcess exited with code 0\nOutput:\n{}",
                                         output(turn, 2_000 + (turn * 997) % 6_000))}),
            ),
            line(
                "event_msg",
                json!({"type": "token_count", "info": {"total_token_usage": totals,
                       "last_token_usage": totals, "model_context_window": 121600}}),
            ),
            line(
                "response_item",
                json!({"type": "message", "role": "assistant", "content": [
                       {"type": "output_text", "text": format!("Module {turn} passes.")}]}),
            ),
        ];
        for l in turn_lines {
            total += l.len() + 1;
            lines.push(l);
        }
    }
    lines.join("\n") + "\n"
}
