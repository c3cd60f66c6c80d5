//! Figures for steering (printed, not asserted): the loop detector's cost per new step on a
//! 2,000-step session, target ≤ 1 ms at p99; and how many loops it catches in a session that
//! goes in circles. The detector asks no model, so what it catches costs 0 tokens (the engine
//! test `a_looping_built_in_agent_is_told_at_once_at_zero_tokens…` counts the requests).
//!
//! The session is 1,000 tool calls with their results: varied commands and file reads, with
//! realistic output (a test run's counts, paths, timings) of a few kilobytes each, and no loop.
//!
//! `cargo bench -p healer --bench steering` (or `make bench`; `HEALER_BENCH_QUICK=1`: 200 steps).

#[path = "figures.rs"]
mod figures;

use std::hint::black_box;
use std::time::{Duration, Instant};

use figures::{Figures, Goal};
use healer::looping::Detector;
use healer::session::{SessionStep, StepKind, StepSource};

const COST: &str = "loop detector per new step, p99";
const FALSE: &str = "loops seen in a session without one";
const CAUGHT: &str = "loops caught in a looping session";

fn step(
    kind: StepKind,
    text: String,
    tool: Option<&str>,
    arguments: Option<String>,
    id: usize,
) -> SessionStep {
    SessionStep {
        at: format!("2026-11-25T10:{:02}:{:02}.000Z", (id / 60) % 60, id % 60),
        source: StepSource::Agent,
        kind,
        text,
        tool: tool.map(str::to_string),
        arguments,
        call_id: Some(format!("call_{id}")),
        is_error: false,
        model: None,
        usage: None,
    }
}

/// The `i`-th call and its result: never the same action twice in a row, output that moves.
fn pair(i: usize) -> [SessionStep; 2] {
    let (tool, args, output) = match i % 4 {
        0 => (
            "Bash",
            format!(r#"{{"command": "pytest -q tests/test_{i}.py"}}"#),
            (0..40)
                .map(|l| {
                    format!(
                        "tests/test_{i}.py::test_case_{l} PASSED [{:>3}%] in 0.{l:03}s pid {}\n",
                        l * 2,
                        4000 + i
                    )
                })
                .collect::<String>()
                + &format!("{} failed, {} passed in {}.21s\n", i % 7, 40 - i % 7, i % 9),
        ),
        1 => (
            "Read",
            format!(r#"{{"file_path": "/work/repo/src/module_{i}.py"}}"#),
            (0..60)
                .map(|l| format!("{l:>5}\tdef function_{i}_{l}(x):  # /tmp/tmp.{i:06}\n"))
                .collect(),
        ),
        2 => (
            "Edit",
            format!(
                r#"{{"file_path": "/work/repo/src/module_{}.py", "old_string": "x + {i}", "new_string": "x - {i}"}}"#,
                i - 1
            ),
            format!(
                "The file /work/repo/src/module_{}.py has been updated.\n",
                i - 1
            ),
        ),
        _ => (
            "Bash",
            format!(r#"{{"command": "git diff --stat HEAD~{}"}}"#, i % 13),
            format!(
                " src/module_{i}.py | {} +++--\n 1 file changed at 10:{:02}:11\n",
                i % 17,
                i % 60
            ),
        ),
    };
    [
        step(StepKind::ToolCall, String::new(), Some(tool), Some(args), i),
        step(StepKind::ToolResult, output, None, None, i),
    ]
}

fn main() {
    let figures = Figures::new(
        "steering",
        &[COST.to_string(), FALSE.to_string(), CAUGHT.to_string()],
    );
    let steps = figures::size(2_000, 200);
    let session: Vec<SessionStep> = (0..steps / 2).flat_map(pair).collect();
    let mut times: Vec<Duration> = Vec::with_capacity(session.len());
    let mut detector = Detector::new();
    let mut loops = 0usize;
    for step in &session {
        let start = Instant::now();
        let found = detector.push(black_box(step));
        times.push(start.elapsed());
        loops += usize::from(found.is_some());
    }
    times.sort();
    let at = |q: f64| {
        let i = ((times.len() as f64 - 1.0) * q).round() as usize;
        times.get(i).copied().unwrap_or_default()
    };
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "Loop detector on a {steps}-step session: p50 {:.1} µs, max {:.1} µs per new step",
        us(at(0.5)),
        us(at(1.0))
    );
    figures.report(COST, us(at(0.99)), "µs", Goal::AtMost(1_000.0));
    figures.report(FALSE, loops as f64, "", Goal::AtMost(0.0));

    // A session that goes in circles: the same failing check, again and again.
    let mut detector = Detector::new();
    let mut caught = 0usize;
    for i in 0..steps / 2 {
        let call = step(
            StepKind::ToolCall,
            String::new(),
            Some("Bash"),
            Some(r#"{"command": "bash check.sh"}"#.to_string()),
            i,
        );
        let mut result = step(
            StepKind::ToolResult,
            format!(
                "{:02}:00:01 [pid {}] error: config.ini missing\n",
                i % 24,
                5000 + i
            ),
            None,
            None,
            i,
        );
        result.is_error = true;
        detector.push(&call);
        caught += usize::from(detector.push(&result).is_some());
    }
    println!("A {steps}-step looping session: the detector asks no model, so what it catches costs 0 tokens");
    figures.report(CAUGHT, caught as f64, "", Goal::AtLeast(1.0));
}
