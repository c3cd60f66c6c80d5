//! The rules over the most recent actions, and the plain message each one sends. Checked in
//! order, from the one that needs the fewest actions; each looks only at actions after the
//! last detection.

use super::action::{short, Action};
use super::{Detection, LoopRule, ERROR_REPEATS, ERROR_WINDOW, MAX_CYCLE, REPEATS};

pub(super) fn check(recent: &[&Action], step: u32) -> Option<Detection> {
    repeated_error(recent, step)
        .or_else(|| failing_again(recent, step))
        .or_else(|| repeat(recent, step))
        .or_else(|| alternation(recent, step))
        .or_else(|| cycle(recent, step))
}

/// The newest action ended in an error, and the same action ended in the same error at least
/// [`ERROR_REPEATS`] times among the last [`ERROR_WINDOW`].
fn repeated_error(recent: &[&Action], step: u32) -> Option<Detection> {
    let last = *recent.last()?;
    if !last.is_error {
        return None;
    }
    let window = recent.get(recent.len().saturating_sub(ERROR_WINDOW)..)?;
    let same: Vec<&Action> = window.iter().copied().filter(|a| a.same(last)).collect();
    if same.len() < ERROR_REPEATS {
        return None;
    }
    let error = match quoted(&same) {
        q if q.is_empty() => String::new(),
        q => format!(" with {q}"),
    };
    Some(Detection {
        rule: LoopRule::RepeatedError,
        message: format!(
            "You {} {} times and it failed each time{error}. Running it again will fail the same way: stop re-running it, fix what the error says first (or try another approach), or ask for help.",
            last.label,
            same.len()
        ),
        evidence: same.iter().map(|a| a.evidence()).collect(),
        step,
    })
}

/// The newest action failed, and so did the same action at least [`ERROR_REPEATS`] times in
/// all among the last [`ERROR_WINDOW`], with nothing changed in between (no other action
/// changed the worktree, and it did not succeed meanwhile) — whatever each error said. A
/// failure is a failure: another wording of it (a flaky network, a tool phrasing its refusal
/// anew) is no progress.
fn failing_again(recent: &[&Action], step: u32) -> Option<Detection> {
    let last = *recent.last()?;
    if !last.is_error {
        return None;
    }
    let window = recent.get(recent.len().saturating_sub(ERROR_WINDOW)..)?;
    let mut failed: Vec<&Action> = Vec::new();
    for action in window.iter().rev().copied() {
        if action.key == last.key {
            if !action.is_error {
                break;
            }
            failed.push(action);
        } else if action.changes {
            break;
        }
    }
    if failed.len() < ERROR_REPEATS {
        return None;
    }
    failed.reverse();
    let errors = match quoted(&failed) {
        q if q.is_empty() => String::new(),
        q => format!(" ({q})"),
    };
    Some(Detection {
        rule: LoopRule::RepeatedError,
        message: format!(
            "You {} {} times with nothing changed in between, and it failed each time{errors}. The errors read differently but it is the same failure: running it again will not make it pass. Stop re-running it: find out why it fails (or try another approach), or ask for help.",
            last.label,
            failed.len()
        ),
        evidence: failed.iter().map(|a| a.evidence()).collect(),
        step,
    })
}

/// The last [`REPEATS`] actions are one action with one result.
fn repeat(recent: &[&Action], step: u32) -> Option<Detection> {
    let tail = tail(recent, REPEATS)?;
    let first = *tail.first()?;
    if !tail.iter().all(|a| a.same(first)) {
        return None;
    }
    let result = match quoted(tail) {
        q if q.is_empty() => String::new(),
        q => format!(" ({q})"),
    };
    Some(Detection {
        rule: LoopRule::Repeat,
        message: format!(
            "You {} {REPEATS} times in a row and got the same result each time{result}. Doing it again will not change anything: change something first, or try another approach.",
            first.label
        ),
        evidence: tail.iter().map(|a| a.evidence()).collect(),
        step,
    })
}

/// A/B/A/B/A/B over the last six actions.
fn alternation(recent: &[&Action], step: u32) -> Option<Detection> {
    let tail = tail(recent, 6)?;
    let (a, b) = (*tail.first()?, *tail.get(1)?);
    if a.same(b) {
        return None;
    }
    let periodic = tail
        .iter()
        .enumerate()
        .all(|(i, x)| x.same(if i % 2 == 0 { a } else { b }));
    if !periodic {
        return None;
    }
    Some(Detection {
        rule: LoopRule::Alternation,
        message: format!(
            "You are going back and forth: you {} and {} 3 times each, with the same results every time. This is a loop: stop, think about why neither helps, and try a different approach.",
            a.label, b.label
        ),
        evidence: tail.iter().map(|a| a.evidence()).collect(),
        step,
    })
}

/// The last `2k` actions are one sequence of `k` (3 ≤ k ≤ [`MAX_CYCLE`]) done twice, with at
/// least two different actions in it.
fn cycle(recent: &[&Action], step: u32) -> Option<Detection> {
    for k in 3..=MAX_CYCLE {
        let Some(tail) = tail(recent, 2 * k) else {
            break;
        };
        let (first, second) = tail.split_at(k);
        if !first.iter().zip(second).all(|(x, y)| x.same(y)) {
            continue;
        }
        let distinct = first
            .first()
            .is_some_and(|one| first.iter().any(|x| x.key != one.key));
        if !distinct {
            continue;
        }
        let steps: Vec<String> = first.iter().map(|a| a.label.clone()).collect();
        return Some(Detection {
            rule: LoopRule::Cycle,
            message: format!(
                "You did the same {k} steps twice with the same results: {}. What you change is being undone again: choose one approach and keep it, or ask for help.",
                short(&steps.join(", then "), 400)
            ),
            evidence: tail.iter().map(|a| a.evidence()).collect(),
            step,
        });
    }
    None
}

/// The context compacted at `steps` ([`super::COMPACTIONS`] of them), with no progress in
/// between.
pub(super) fn compaction(steps: &[u32], step: u32) -> Detection {
    Detection {
        rule: LoopRule::Compaction,
        message: format!(
            "Your context was compacted {} times with no progress in between: nothing in the worktree changed and you tried nothing new, so what you do fills the context and is summarised away before it leads anywhere. Stop re-reading and re-running what you already did: take the smallest next step and make it now (change one file, or write down what you learned), read only what that step needs, or ask for help.",
            steps.len()
        ),
        evidence: steps
            .iter()
            .map(|s| format!("step {s}: the context was compacted"))
            .collect(),
        step,
    }
}

/// Three messages in a row with no tool call.
pub(super) fn monologue(steps: &[u32], step: u32) -> Detection {
    Detection {
        rule: LoopRule::Monologue,
        message: format!(
            "You wrote {} messages in a row without using a tool. Talking it over again will not move the task: act on your plan with a tool now, or say what blocks you.",
            steps.len()
        ),
        evidence: steps
            .iter()
            .map(|s| format!("step {s}: a message with no tool call"))
            .collect(),
        step,
    }
}

/// The outputs of `actions` as they were: one quote when they read the same, else each
/// different one in turn ("`1 failed in 0.2s`, then `1 failed in 0.3s`").
fn quoted(actions: &[&Action]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for a in actions {
        if !a.outcome.is_empty() && !seen.contains(&a.outcome.as_str()) {
            seen.push(&a.outcome);
        }
    }
    let shown: Vec<String> = seen.iter().take(3).map(|o| format!("`{o}`")).collect();
    let more = seen.len().saturating_sub(3);
    let mut out = shown.join(", then ");
    if more > 0 {
        out.push_str(&format!(" and {more} more like them"));
    }
    out
}

fn tail<'a, 'b>(recent: &'b [&'a Action], n: usize) -> Option<&'b [&'a Action]> {
    recent.get(recent.len().checked_sub(n)?..)
}
