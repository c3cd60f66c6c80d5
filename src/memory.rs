//! Healing memory: every error signature Healer has seen, where and how often, and every fix
//! tried for it — the unified diff from the failing code, the hash of the code it applied to,
//! and whether its re-run passed. A fix that worked is applied again at zero tokens where its
//! diff applies cleanly (the maintainer's `KnownFix`); fixes that failed are told to the
//! maintainer as "do not repeat". Shapes and pure functions only: the store keeps them.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// An error signature as the Memory page lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct Pattern {
    pub signature: String,
    pub error_type: Option<String>,
    pub normalized: String,
    pub first_seen: String,
    pub last_seen: String,
    /// Failures seen with it.
    pub count: u32,
    /// Fixes tried, and how many of them worked.
    pub fixes: u32,
    pub successes: u32,
    /// Of the fixes tried, how many wait for their re-run to say whether they worked.
    pub pending: u32,
}

/// Whether a recorded fix held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum FixVerdict {
    /// Its re-run has not finished yet.
    Pending,
    Success,
    Failed,
}

impl FixVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            FixVerdict::Pending => "pending",
            FixVerdict::Success => "success",
            FixVerdict::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [FixVerdict::Pending, FixVerdict::Success, FixVerdict::Failed]
            .into_iter()
            .find(|v| v.as_str() == s)
    }
}

/// One fix tried for a signature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct PatternFix {
    pub id: i64,
    pub signature: String,
    pub workflow_id: Option<i64>,
    pub workflow_title: Option<String>,
    pub task_id: Option<i64>,
    pub description: String,
    /// Unified diff from the failing code to the fix.
    pub diff: String,
    /// Hash of the code it applied to.
    pub code_hash: String,
    pub result: FixVerdict,
    pub created_at: String,
    pub settled_at: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct PatternDetail {
    pub pattern: Pattern,
    /// Newest first.
    pub fixes: Vec<PatternFix>,
}

/// What kind of decision Healer made on its own (a breaker, a rollback, a hold).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum DecisionKind {
    /// The same error in several workflows: repairs for it wait for the person.
    Systemic,
    /// A workflow's healing used its tokens for the day.
    Cost,
    /// Fixed too often lately: flagged for review.
    Review,
    /// A fix made it fail earlier or broke loading: undone.
    FixRolledBack,
    /// A fix cured its error and the script got further: kept, and the next error repaired.
    FixKept,
    /// Processes outlived their runs: scheduled runs paused.
    Survivors,
    SchedulerResumed,
    /// Repairs did not hold: the last green version of the major is back.
    CatastrophicRollback,
    /// Repairs did not hold and the major never ran green (or its green version fails too):
    /// the person decides.
    RollbackEscalated,
    /// A repair gave up: further failures wait for the person without a repair.
    RepairsHeld,
    /// The person acted on a held workflow: repairs may start again.
    RepairsResumed,
}

impl DecisionKind {
    pub const ALL: [DecisionKind; 11] = [
        DecisionKind::Systemic,
        DecisionKind::Cost,
        DecisionKind::Review,
        DecisionKind::FixRolledBack,
        DecisionKind::FixKept,
        DecisionKind::Survivors,
        DecisionKind::SchedulerResumed,
        DecisionKind::CatastrophicRollback,
        DecisionKind::RollbackEscalated,
        DecisionKind::RepairsHeld,
        DecisionKind::RepairsResumed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DecisionKind::Systemic => "systemic",
            DecisionKind::Cost => "cost",
            DecisionKind::Review => "review",
            DecisionKind::FixRolledBack => "fix_rolled_back",
            DecisionKind::FixKept => "fix_kept",
            DecisionKind::Survivors => "survivors",
            DecisionKind::SchedulerResumed => "scheduler_resumed",
            DecisionKind::CatastrophicRollback => "catastrophic_rollback",
            DecisionKind::RollbackEscalated => "rollback_escalated",
            DecisionKind::RepairsHeld => "repairs_held",
            DecisionKind::RepairsResumed => "repairs_resumed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        DecisionKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// A decision Healer made on its own, in the decisions log (shown in Activity).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct LoggedDecision {
    pub id: i64,
    pub workflow_id: Option<i64>,
    pub workflow_title: Option<String>,
    pub kind: DecisionKind,
    pub summary: String,
    pub detail: String,
    pub created_at: String,
}

/// The unified diff from `old` to `new`.
pub fn diff(old: &str, new: &str) -> String {
    diffy::create_patch(old, new).to_string()
}

/// `code` with `diff` applied, when it applies cleanly.
pub fn apply(diff: &str, code: &str) -> Option<String> {
    let patch = diffy::Patch::from_str(diff).ok()?;
    diffy::apply(code, &patch).ok()
}

/// The first 16 hex characters of SHA-256 of `code`.
pub fn code_hash(code: &str) -> String {
    Sha256::digest(code.as_bytes())
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Where line `line` (1-based) of `new` sits in `old`, on a half-line scale so that positions
/// compare in execution order: a line both have is at twice its old number; a line that
/// replaced old lines is where the first of them was; a line only inserted is just before the
/// old line it precedes (twice that number, less one).
pub fn position_in_old(old: &str, new: &str, line: u32) -> u32 {
    let target = usize::try_from(line).unwrap_or(usize::MAX);
    let patch = diffy::create_patch(old, new);
    let (mut old_at, mut new_at) = (1usize, 1usize);
    let scale = |old_line: usize, inserted: bool| {
        let doubled = old_line.saturating_mul(2) - usize::from(inserted);
        u32::try_from(doubled).unwrap_or(u32::MAX)
    };
    for hunk in patch.hunks() {
        let first = |r: diffy::HunkRange| {
            if r.is_empty() {
                r.start() + 1
            } else {
                r.start()
            }
        };
        let (first_old, first_new) = (first(hunk.old_range()), first(hunk.new_range()));
        if target < first_new {
            return scale(old_at + (target - new_at), false);
        }
        old_at = first_old;
        new_at = first_new;
        // Where the current run of changed lines began in the old code, and whether it
        // replaced any old line.
        let mut change: Option<(usize, bool)> = None;
        for l in hunk.lines() {
            match l {
                diffy::Line::Context(_) => {
                    if new_at == target {
                        return scale(old_at, false);
                    }
                    change = None;
                    old_at += 1;
                    new_at += 1;
                }
                diffy::Line::Delete(_) => {
                    change = Some((change.map_or(old_at, |(start, _)| start), true));
                    old_at += 1;
                }
                diffy::Line::Insert(_) => {
                    let (start, replaced) = *change.get_or_insert((old_at, false));
                    if new_at == target {
                        return if replaced {
                            scale(start, false)
                        } else {
                            scale(old_at, true)
                        };
                    }
                    new_at += 1;
                }
            }
        }
    }
    scale(old_at + target.saturating_sub(new_at), false)
}

/// Code as compared for "the same fix again": every run of whitespace (indentation, blank
/// lines, spaces around operators' neighbours) becomes one space, so a fix re-sent with other
/// spacing is still recognised.
pub fn same_code_key(code: &str) -> String {
    code.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_a_fix_are_placed_where_they_sit_in_the_old_code() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\n";
        // b changed, a line inserted before k, l removed.
        let new = "a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nnew\nk\n";
        assert_eq!(position_in_old(old, new, 1), 2, "a is old line 1");
        assert_eq!(position_in_old(old, new, 2), 4, "B replaced b: where b was");
        assert_eq!(position_in_old(old, new, 7), 14, "g is old line 7");
        assert_eq!(
            position_in_old(old, new, 11),
            21,
            "new sits before old k (11)"
        );
        assert_eq!(position_in_old(old, new, 12), 22, "k is old line 11");
        assert_eq!(position_in_old(old, old, 5), 10, "nothing changed");
        assert_eq!(position_in_old("x\n", "import y\nx\n", 1), 1);
        assert_eq!(position_in_old("x\n", "import y\nx\n", 2), 2);
    }

    #[test]
    fn code_that_differs_only_in_whitespace_is_the_same_fix() {
        let a = "import json\ndata = {\"totl\": 3}\nprint(data[\"total\"])\n";
        let b = "import  json\n\n\ndata = {\"totl\": 3}   \n\tprint(data[\"total\"])";
        assert_eq!(same_code_key(a), same_code_key(b));
        assert_ne!(same_code_key(a), same_code_key(&a.replace("total", "totl")));
    }

    #[test]
    fn a_diff_applies_to_the_same_code_and_not_to_other_code() {
        let old = "import json\nrows = load()\nprint(rows['total'])\n";
        let new = "import json\nrows = load()\nprint(rows['totl'])\n";
        let d = diff(old, new);
        assert!(d.contains("-print(rows['total'])"), "{d}");
        assert_eq!(apply(&d, old).as_deref(), Some(new));
        // The same lines inside a longer script still take the fix.
        let longer = format!("# header\n{old}print('done')\n");
        assert_eq!(
            apply(&d, &longer),
            Some(format!("# header\n{new}print('done')\n"))
        );
        assert_eq!(apply(&d, "print('something else')\n"), None);
        assert_ne!(code_hash(old), code_hash(new));
        assert_eq!(code_hash(old).len(), 16);
    }
}
