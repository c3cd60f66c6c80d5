//! What every benchmark shares: its quick mode and the figures it reports.
//!
//! `HEALER_BENCH_QUICK=1` runs one round on small inputs: `make test` runs every benchmark so,
//! so that one which no longer runs to its end fails the tests (its figures' values are not
//! judged there, only that each was produced). `scripts/bench.sh` collects what each benchmark
//! reports through `HEALER_BENCH_FIGURES` (a file it names) and prints one table at the end.
//!
//! A benchmark first says which figures it will report (`Figures::new`), then reports each;
//! a figure announced and never reported is caught by the script even when the benchmark
//! itself exits 0.

// Each benchmark includes this file and uses part of it.
#![allow(dead_code)]

use std::io::Write;

/// The runtime every benchmark runs in: two workers, as on the machines the figures are for.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// Whether this is the quick run of `make test` (`HEALER_BENCH_QUICK=1`).
pub fn quick() -> bool {
    std::env::var("HEALER_BENCH_QUICK").is_ok_and(|v| v == "1")
}

/// `full` normally, `small` in quick mode.
pub fn size(full: usize, small: usize) -> usize {
    if quick() {
        small
    } else {
        full
    }
}

/// What a figure must be to meet its goal.
#[derive(Clone, Copy, Debug)]
pub enum Goal {
    AtMost(f64),
    AtLeast(f64),
    /// A yes/no figure: 1 is yes.
    Yes,
    /// Shown beside a figure that has the goal (a p50 beside the p90 that must be met).
    Shown,
}

impl Goal {
    fn met(self, value: f64) -> Option<bool> {
        match self {
            Goal::AtMost(limit) => Some(value <= limit),
            Goal::AtLeast(floor) => Some(value >= floor),
            Goal::Yes => Some(value >= 1.0),
            Goal::Shown => None,
        }
    }

    fn describe(self, unit: &str) -> String {
        match self {
            Goal::AtMost(limit) => format!("≤ {}", with_unit(&number(limit), unit)),
            Goal::AtLeast(floor) => format!("≥ {}", with_unit(&number(floor), unit)),
            Goal::Yes => "yes".to_string(),
            Goal::Shown => "—".to_string(),
        }
    }
}

/// The figures of one benchmark.
pub struct Figures {
    bench: &'static str,
}

impl Figures {
    /// Announces the figures this benchmark will report, by name.
    pub fn new(bench: &'static str, names: &[String]) -> Self {
        for name in names {
            write_line(&["expect", bench, name]);
        }
        Figures { bench }
    }

    /// Reports one figure: printed now, and kept for the summary table.
    pub fn report(&self, name: &str, value: f64, unit: &str, goal: Goal) {
        let shown = match goal {
            Goal::Yes if value >= 1.0 => "yes".to_string(),
            Goal::Yes => "no".to_string(),
            _ => with_unit(&number(value), unit),
        };
        let target = goal.describe(unit);
        let met = match goal.met(value) {
            Some(true) => "met",
            Some(false) => "NOT met",
            None => "—",
        };
        match goal {
            Goal::Shown => println!("  → {name}: {shown}"),
            _ => println!("  → {name}: {shown} (target {target}: {met})"),
        }
        write_line(&["figure", self.bench, name, &shown, &target, met]);
    }
}

/// A number as a person reads it: three significant figures at most, no trailing zeros.
fn number(value: f64) -> String {
    let text = if value.abs() >= 100.0 {
        format!("{value:.0}")
    } else if value.abs() >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    };
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

fn with_unit(number: &str, unit: &str) -> String {
    if unit.is_empty() {
        number.to_string()
    } else {
        format!("{number} {unit}")
    }
}

fn write_line(fields: &[&str]) {
    let Ok(path) = std::env::var("HEALER_BENCH_FIGURES") else {
        return;
    };
    let line = fields
        .iter()
        .map(|f| f.replace(['\t', '\n'], " "))
        .collect::<Vec<_>>()
        .join("\t");
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .expect("the figures file named in HEALER_BENCH_FIGURES");
    writeln!(file, "{line}").expect("a figure written");
}
