//! git in the task's working copy: its local verbs look and change this working copy, but some
//! options run commands (`-c core.fsmonitor=…`, `rebase -x`), write elsewhere (`--output=`,
//! `config`, which worktrees share with the person's own checkout), reach another repository,
//! or move the project's own branches. Those ask.

use std::path::Path;

use super::commands::{exact, is, Looked, Risk};
use super::known::{GIT_LOCAL, GIT_NETWORK};
use super::paths::Place;
use super::shell::Word;

/// Options before the verb that change where git works or what it runs.
const GLOBAL_RISKY: &[&str] = &[
    "-c",
    "-C",
    "--git-dir",
    "--work-tree",
    "--exec-path",
    "--config-env",
    "--namespace",
    "--super-prefix",
];

/// Options of any verb that run a command or write a file git is told of.
const OPTION_RISKY: &[&str] = &[
    "-x",
    "--exec",
    "--output",
    "-O",
    "--open-files-in-pager",
    "--ext-diff",
    "--upload-pack",
    "--receive-pack",
    "--template",
    "--to-command",
];

/// Verbs that run commands of their own or change what git itself runs.
const RUNS: &[&str] = &[
    "bisect",
    "difftool",
    "mergetool",
    "filter-branch",
    "submodule",
    "config",
    "worktree",
    "update-ref",
    "replace",
    "hook",
    "daemon",
    "instaweb",
    "credential",
    "var",
];

pub(super) fn look(words: &[Word], _place: &Place, _cwd: Option<&Path>) -> Vec<Looked> {
    let risky = |why: String| {
        vec![Looked::Risky(Risk {
            why,
            key: exact(words),
        })]
    };
    let mut rest = &words[1..];
    while let Some(first) = rest.first() {
        let t = first.text.as_str();
        if GLOBAL_RISKY
            .iter()
            .any(|o| t == *o || t.starts_with(&format!("{o}=")))
        {
            return risky(format!(
                "it changes where git works or what it runs ({})",
                exact(words)
            ));
        }
        if t.starts_with('-') {
            rest = &rest[1..];
        } else {
            break;
        }
    }
    let verb = rest.first().map(|w| w.text.as_str()).unwrap_or("");
    let args = rest.get(1..).unwrap_or(&[]);
    if rest.iter().any(|w| w.expands()) && verb != "add" && verb != "rm" {
        return risky(format!(
            "Healer cannot tell ahead what this git command works on ({})",
            exact(words)
        ));
    }
    if is(GIT_NETWORK, verb)
        || (verb == "remote" && args.first().is_some_and(|a| a.text == "update"))
    {
        return risky(format!(
            "it reaches another repository over the network (git {verb})"
        ));
    }
    if verb == "config" {
        let reads_only = args.iter().any(|a| {
            matches!(
                a.text.as_str(),
                "--get" | "--get-all" | "--get-regexp" | "--list" | "-l"
            )
        }) && !args.iter().any(|a| {
            a.text.starts_with("--file")
                || a.text == "-f"
                || a.text == "--global"
                || a.text == "--system"
        });
        if reads_only {
            return vec![Looked::Free];
        }
        return risky(format!(
            "it changes git's settings, which the person's own checkout shares ({})",
            exact(words)
        ));
    }
    if args.iter().any(|a| {
        let t = a.text.as_str();
        OPTION_RISKY
            .iter()
            .any(|o| t == *o || t.starts_with(&format!("{o}=")))
    }) {
        return risky(format!(
            "it runs a command or writes a file git is told of ({})",
            exact(words)
        ));
    }
    // Moving or deleting a branch by force: the project's main branch is one.
    let forced = args.iter().any(|a| {
        matches!(
            a.text.as_str(),
            "-f" | "--force" | "-D" | "-M" | "-C" | "-B" | "--delete" | "-d" | "-m"
        )
    });
    if matches!(
        verb,
        "branch" | "checkout" | "switch" | "tag" | "symbolic-ref"
    ) && forced
    {
        return risky(format!(
            "it moves or deletes branches the project shares ({})",
            exact(words)
        ));
    }
    if is(RUNS, verb) {
        return risky(format!("git {verb} runs commands or changes what git runs"));
    }
    if is(GIT_LOCAL, verb) {
        return vec![Looked::Free];
    }
    vec![Looked::Unlisted {
        key: format!("git {verb}").trim().to_string(),
    }]
}
