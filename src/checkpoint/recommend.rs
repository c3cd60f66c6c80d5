//! The recommendation: the option chosen most in past decisions — for the same trigger in the
//! same workflow, else for the same error signature, else for the same trigger anywhere — with
//! the reason in words; with no history, the trigger's default.

use super::{CheckpointAction, CheckpointOption, CheckpointTrigger};

/// Past choices (action keys, newest first) at each scope.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct History {
    pub workflow: Vec<String>,
    pub signature: Vec<String>,
    pub anywhere: Vec<String>,
    /// How the signature's scope is said ("for this error" when `None`).
    pub signature_scope: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recommendation {
    /// Index into the options.
    pub index: usize,
    pub sentence: String,
}

/// Choose among `options` by `history`; `None` only when there are no options.
pub fn recommend(
    trigger: CheckpointTrigger,
    options: &[CheckpointOption],
    history: &History,
) -> Option<Recommendation> {
    recommend_with(trigger, options, history, None)
}

/// As [`recommend`], with the default (when there is no history) given by the situation:
/// `(action, why)`.
pub fn recommend_with(
    trigger: CheckpointTrigger,
    options: &[CheckpointOption],
    history: &History,
    fallback: Option<(CheckpointAction, &str)>,
) -> Option<Recommendation> {
    if options.is_empty() {
        return None;
    }
    let scopes: [(&[String], &str); 3] = [
        (&history.workflow, "for this workflow"),
        (
            &history.signature,
            history
                .signature_scope
                .as_deref()
                .unwrap_or("for this error"),
        ),
        (&history.anywhere, "for this kind of decision"),
    ];
    for (choices, scope) in scopes {
        if let Some((index, count)) = most_chosen(options, choices) {
            let label = &options[index].label;
            let sentence = if choices.len() == 1 {
                format!("{label} — you chose it the last time {scope}")
            } else {
                format!(
                    "{label} — you chose it {count} of the last {} times {scope}",
                    choices.len()
                )
            };
            return Some(Recommendation { index, sentence });
        }
    }
    let (key, why) = match fallback {
        Some((action, why)) => (action.key(), why),
        None => default_for(trigger),
    };
    let index = options
        .iter()
        .position(|o| o.action.key() == key)
        .unwrap_or(0);
    Some(Recommendation {
        index,
        sentence: format!("{} — {why}", options[index].label),
    })
}

/// The option chosen most among `choices` (ties: the most recent choice wins), with its count.
fn most_chosen(options: &[CheckpointOption], choices: &[String]) -> Option<(usize, usize)> {
    let mut best: Option<(usize, usize, usize)> = None; // (index, count, first position)
    for (index, option) in options.iter().enumerate() {
        let key = option.action.key();
        let count = choices.iter().filter(|c| c.as_str() == key).count();
        if count == 0 {
            continue;
        }
        let first = choices.iter().position(|c| c == key).unwrap_or(usize::MAX);
        let better = match best {
            None => true,
            Some((_, c, f)) => count > c || (count == c && first < f),
        };
        if better {
            best = Some((index, count, first));
        }
    }
    best.map(|(index, count, _)| (index, count))
}

fn default_for(trigger: CheckpointTrigger) -> (&'static str, &'static str) {
    match trigger {
        CheckpointTrigger::Hiccup => (
            CheckpointAction::Proceed.key(),
            "a failure like this often passes on the next try",
        ),
        CheckpointTrigger::Environment => (
            CheckpointAction::Pause.key(),
            "it will keep failing until the machine is fixed; resume it when it is",
        ),
        CheckpointTrigger::Cost | CheckpointTrigger::Systemic => (
            CheckpointAction::Pause.key(),
            "stop spending until you have looked at it",
        ),
        CheckpointTrigger::Approval => (CheckpointAction::Proceed.key(), "it is what was planned"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint::standard_options;

    fn keys(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_workflows_own_history_comes_first_and_says_why() {
        let history = History {
            workflow: keys(&["skip", "skip", "proceed", "skip", "skip"]),
            signature: keys(&["pause", "pause", "pause"]),
            anywhere: keys(&["pause"]),
            signature_scope: None,
        };
        let r = recommend(CheckpointTrigger::Hiccup, &standard_options(), &history).expect("one");
        assert_eq!(r.index, 1);
        assert_eq!(
            r.sentence,
            "Skip — you chose it 4 of the last 5 times for this workflow"
        );
    }

    #[test]
    fn then_the_signature_then_anywhere_then_the_default() {
        let options = standard_options();
        let by_signature = History {
            signature: keys(&["pause", "proceed", "pause"]),
            ..History::default()
        };
        let r = recommend(CheckpointTrigger::Hiccup, &options, &by_signature).expect("one");
        assert_eq!(
            r.sentence,
            "Pause — you chose it 2 of the last 3 times for this error"
        );
        let anywhere = History {
            anywhere: keys(&["proceed"]),
            ..History::default()
        };
        let r = recommend(CheckpointTrigger::Environment, &options, &anywhere).expect("one");
        assert_eq!(
            r.sentence,
            "Proceed — you chose it the last time for this kind of decision"
        );
        let none = recommend(
            CheckpointTrigger::Environment,
            &options,
            &History::default(),
        )
        .expect("one");
        assert_eq!(options[none.index].label, "Pause");
        assert!(none.sentence.starts_with("Pause — "), "{}", none.sentence);
    }

    #[test]
    fn a_tie_goes_to_the_most_recent_choice() {
        let history = History {
            workflow: keys(&["pause", "proceed"]),
            ..History::default()
        };
        let r = recommend(CheckpointTrigger::Hiccup, &standard_options(), &history).expect("one");
        assert_eq!(r.index, 2);
    }
}
