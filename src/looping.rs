//! The loop detector: reads a session's steps one at a time and says when the agent goes in
//! circles — the same action with the same result 4 times in a row, the same action failing 3
//! times (with the same error, or with nothing changed in between whatever the errors say), 3
//! messages in a row without a tool, an A/B/A/B/A/B alternation, a longer cycle (edit, test,
//! revert, test, edit, test …), or a context compacted 3 times with no progress in between.
//! Pure and incremental: each new step costs a bounded amount of work whatever the session's
//! length, and no model is asked.
//!
//! "The same" is judged on effects, never on the assistant's prose or spelling: an action is
//! the tool and its arguments (prose arguments such as Claude Code's `description` left out), a
//! shell command reduced to the program and the files it runs on (`./check.sh`, `cd . &&
//! ./check.sh`, `bash check.sh -v` are one action: `effect.rs`). With nothing changed in the
//! worktree in between, a result is its text normalised the way error signatures are (times,
//! durations, pids, temp paths, addresses replaced), plus the counts a test runner prints next
//! to `failed`, `passed`, `errors` … — so `3 failed` then `1 failed` is progress, not a repeat.
//! After a change (an edit, a write, a command that writes), only what varies between runs is
//! taken out and every other number kept: a failure whose numbers moved after real edits is
//! progress too.
//!
//! A failure is a failure whatever its words: the same action failing again and again with
//! nothing changed in between is a loop even when each error reads differently (a flaky
//! network, a tool that words its refusal anew). And a session whose context is compacted
//! (or trimmed) again and again, having changed nothing and tried nothing new in between, is
//! stuck: what it does fills its context and is summarised away before it leads anywhere.

mod action;
mod effect;
mod rules;
#[cfg(test)]
mod tests;

use std::collections::{HashSet, VecDeque};

use serde::{Deserialize, Serialize};

use crate::session::{is_compaction, SessionStep, StepKind, StepSource};
use action::{Action, PendingCall};

/// Which rule saw a loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "kebab-case")]
pub enum LoopRule {
    /// The same action with the same result, [`REPEATS`] times in a row.
    Repeat,
    /// The same action failing [`ERROR_REPEATS`] times among the last [`ERROR_WINDOW`]
    /// actions: with the same error, or with nothing changed in between whatever the errors.
    RepeatedError,
    /// [`MONOLOGUE`] messages in a row with no tool call.
    Monologue,
    /// A/B/A/B/A/B: two actions, each with its same result, three times each.
    Alternation,
    /// A sequence of 3 to [`MAX_CYCLE`] actions done twice over with the same results.
    Cycle,
    /// The context compacted (or trimmed) [`COMPACTIONS`] times with no progress in between:
    /// nothing changed in the worktree and no action that was not done before.
    Compaction,
}

impl LoopRule {
    pub fn as_str(self) -> &'static str {
        match self {
            LoopRule::Repeat => "repeat",
            LoopRule::RepeatedError => "repeated-error",
            LoopRule::Monologue => "monologue",
            LoopRule::Alternation => "alternation",
            LoopRule::Cycle => "cycle",
            LoopRule::Compaction => "compaction",
        }
    }

    pub fn parse(s: &str) -> Option<LoopRule> {
        [
            LoopRule::Repeat,
            LoopRule::RepeatedError,
            LoopRule::Monologue,
            LoopRule::Alternation,
            LoopRule::Cycle,
            LoopRule::Compaction,
        ]
        .into_iter()
        .find(|r| r.as_str() == s)
    }

    /// The rule in words, for the window.
    pub fn describe(self) -> &'static str {
        match self {
            LoopRule::Repeat => "the same action with the same result 4 times in a row",
            LoopRule::RepeatedError => {
                "the same action failing 3 times, with the same error or nothing changed"
            }
            LoopRule::Monologue => "3 messages in a row without using a tool",
            LoopRule::Alternation => "two actions alternating 3 times with the same results",
            LoopRule::Cycle => "the same sequence of actions done twice with the same results",
            LoopRule::Compaction => "the context compacted 3 times with no progress in between",
        }
    }
}

/// The same action with the same result this many times in a row is a loop.
pub const REPEATS: usize = 4;
/// The same action ending in the same error this many times …
pub const ERROR_REPEATS: usize = 3;
/// … among this many of the last actions.
pub const ERROR_WINDOW: usize = 10;
/// Messages in a row without a tool call.
pub const MONOLOGUE: u32 = 3;
/// The longest cycle looked for.
pub const MAX_CYCLE: usize = 8;
/// Actions kept: enough for the longest rule.
const WINDOW: usize = 2 * MAX_CYCLE;
/// Calls waiting for their result; an agent that never answers its calls cannot grow this.
const MAX_PENDING: usize = 64;
/// Compactions of the context with no progress in between.
pub const COMPACTIONS: usize = 3;
/// Distinct actions remembered to tell a new one from a repeat; past this many the memory
/// starts again (every action is then new: a compaction loop is missed, never made up).
const MAX_KNOWN: usize = 4096;

/// A loop, as the detector saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct Detection {
    pub rule: LoopRule,
    /// What to tell the agent, plainly and specifically.
    pub message: String,
    /// The steps that make the loop, one line each ("step 12: ran `bash check.sh` → …").
    pub evidence: Vec<String>,
    /// The step (1-based, as pushed) at which it was seen.
    pub step: u32,
}

/// The detector's state for one session.
#[derive(Debug, Default)]
pub struct Detector {
    steps: u32,
    actions: VecDeque<Action>,
    /// Actions seen in all; `since` is the count at the last detection, so a loop is told once
    /// and told again only when it goes on for the rule's whole length after that.
    seen: usize,
    since: usize,
    pending: VecDeque<PendingCall>,
    monologue: Vec<u32>,
    /// Changes to the worktree so far (edits, writes, commands that write).
    epoch: u32,
    /// The steps at which the context was compacted since the last progress.
    compactions: Vec<u32>,
    /// The actions done so far (their keys), to tell progress from a repeat.
    known: HashSet<u64>,
}

impl Detector {
    pub fn new() -> Detector {
        Detector::default()
    }

    /// Steps pushed so far.
    pub fn steps(&self) -> u32 {
        self.steps
    }

    /// Take the next step of the session; a loop it completes is returned.
    pub fn push(&mut self, step: &SessionStep) -> Option<Detection> {
        self.steps += 1;
        let n = self.steps;
        if is_compaction(step) {
            self.compactions.push(n);
            if self.compactions.len() >= COMPACTIONS {
                let steps = std::mem::take(&mut self.compactions);
                return Some(rules::compaction(&steps, n));
            }
            return None;
        }
        match (step.source, step.kind) {
            (StepSource::Agent, StepKind::ToolCall) => {
                self.monologue.clear();
                if self.pending.len() >= MAX_PENDING {
                    self.pending.pop_front();
                }
                self.pending.push_back(PendingCall::of(step, n));
                None
            }
            (StepSource::Agent, StepKind::ToolResult) => {
                let at = match &step.call_id {
                    Some(id) => self
                        .pending
                        .iter()
                        .position(|c| c.call_id.as_deref() == Some(id.as_str())),
                    None => self.pending.iter().position(|c| c.call_id.is_none()),
                };
                let call = at.and_then(|i| self.pending.remove(i))?;
                self.add(call.finish(step))
            }
            (StepSource::Agent, StepKind::Text) if !step.text.trim().is_empty() => {
                self.monologue.push(n);
                if self.monologue.len() >= usize::try_from(MONOLOGUE).unwrap_or(usize::MAX) {
                    let steps = std::mem::take(&mut self.monologue);
                    return Some(rules::monologue(&steps, n));
                }
                None
            }
            _ => None,
        }
    }

    fn add(&mut self, mut action: Action) -> Option<Detection> {
        action.epoch = self.epoch;
        if action.changes {
            self.epoch += 1;
        }
        if self.known.len() >= MAX_KNOWN {
            self.known.clear();
        }
        // Progress, for the compaction rule: a change, or something not done before.
        if self.known.insert(action.key) || action.changes {
            self.compactions.clear();
        }
        if self.actions.len() >= WINDOW {
            self.actions.pop_front();
        }
        self.actions.push_back(action);
        self.seen += 1;
        let fresh = (self.seen - self.since).min(self.actions.len());
        let recent: Vec<&Action> = self
            .actions
            .iter()
            .skip(self.actions.len() - fresh)
            .collect();
        let found = rules::check(&recent, self.steps);
        if found.is_some() {
            self.since = self.seen;
        }
        found
    }
}

/// A whole record's verdict (`healer session check`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct Verdict {
    /// `looping` or `progressing`.
    pub verdict: String,
    /// The first rule that fired.
    pub rule: Option<LoopRule>,
    pub steps: u32,
    pub evidence: Vec<String>,
    /// What the agent would have been told.
    pub message: Option<String>,
    /// How many times a loop was seen over the whole record.
    pub detections: u32,
}

/// Run the detector over a whole record.
pub fn check(steps: &[SessionStep]) -> Verdict {
    let mut detector = Detector::new();
    let mut first: Option<Detection> = None;
    let mut detections = 0u32;
    for step in steps {
        if let Some(found) = detector.push(step) {
            detections += 1;
            first.get_or_insert(found);
        }
    }
    Verdict {
        verdict: if first.is_some() {
            "looping"
        } else {
            "progressing"
        }
        .to_string(),
        rule: first.as_ref().map(|d| d.rule),
        steps: detector.steps(),
        evidence: first
            .as_ref()
            .map(|d| d.evidence.clone())
            .unwrap_or_default(),
        message: first.map(|d| d.message),
        detections,
    }
}
