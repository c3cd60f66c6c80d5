//! Judging actions by their effect rather than their spelling: a shell command reduced to the
//! program and the files it runs on (`./check.sh`, `cd . && ./check.sh`, `bash check.sh -v`
//! are one action), whether an action changes the worktree (an edit, a write, `sed -i`, a
//! redirect into a file…), and a result's text with only what varies between two runs of the
//! same thing taken out (times, durations, pids, addresses, temp paths) — its other numbers
//! kept, so a failure whose numbers moved after real edits is not called the same.

use std::sync::OnceLock;

use regex::Regex;

/// Programs that read what they are given and print part of it: after a `|`, they shape the
/// output, not the effect.
const FILTERS: [&str; 9] = [
    "tail", "head", "grep", "cat", "less", "more", "sort", "uniq", "wc",
];

/// Shells that run the script named next (`bash check.sh` is `./check.sh`).
const SHELLS: [&str; 4] = ["bash", "sh", "zsh", "dash"];

/// The command as an effect: its segments (`&&`, `;`, `||`, `|`) without a `cd` into the same
/// folder (`.`, or an absolute path: the session's own worktree), without output filters after a
/// pipe, redirections, flags, a leading shell before a script, or `./`; `python` is `python3`.
pub(super) fn canonical_command(command: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut after_pipe = false;
    for segment in segments(command) {
        let (words, piped) = segment;
        let was_after_pipe = after_pipe;
        after_pipe = piped;
        let Some(first) = words.first() else { continue };
        if first == "cd" && words.get(1).is_none_or(|d| d == "." || d.starts_with('/')) {
            continue;
        }
        if was_after_pipe && FILTERS.contains(&first.as_str()) {
            continue;
        }
        let mut kept: Vec<String> = words
            .iter()
            .filter(|w| !w.starts_with('-') && !is_redirection(w))
            .map(|w| {
                let w = w.trim_start_matches("./");
                if w == "python" {
                    "python3".to_string()
                } else {
                    w.to_string()
                }
            })
            .collect();
        if kept.len() > 1 && kept.first().is_some_and(|p| SHELLS.contains(&p.as_str())) {
            kept.remove(0);
        }
        if !kept.is_empty() {
            out.push(kept.join(" "));
        }
    }
    out.join(" && ")
}

/// The command's segments as words, each with whether a `|` follows it.
fn segments(command: &str) -> Vec<(Vec<String>, bool)> {
    let mut all = Vec::new();
    let mut words: Vec<String> = Vec::new();
    for word in words_of(command) {
        match word.as_str() {
            "&&" | "||" | ";" => all.push((std::mem::take(&mut words), false)),
            "|" => all.push((std::mem::take(&mut words), true)),
            _ => words.push(word),
        }
    }
    all.push((words, false));
    all
}

/// Shell words: blanks split, quotes group (and are dropped), `&&`, `||`, `;`, `|` stand alone.
fn words_of(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut chars = command.chars().peekable();
    let flush = |word: &mut String, out: &mut Vec<String>| {
        if !word.is_empty() {
            out.push(std::mem::take(word));
        }
    };
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => quote = Some(c),
            (None, c) if c.is_whitespace() => flush(&mut word, &mut out),
            (None, ';') => {
                flush(&mut word, &mut out);
                out.push(";".to_string());
            }
            (None, '&' | '|') if chars.peek() == Some(&c) => {
                chars.next();
                flush(&mut word, &mut out);
                out.push(format!("{c}{c}"));
            }
            (None, '|') => {
                flush(&mut word, &mut out);
                out.push("|".to_string());
            }
            (None, c) => word.push(c),
        }
    }
    flush(&mut word, &mut out);
    out
}

fn is_redirection(word: &str) -> bool {
    let w = word.trim_start_matches(|c: char| c.is_ascii_digit());
    w.starts_with('>') || w.starts_with('<') || word.starts_with('&')
}

/// Whether a call changes the worktree: a tool that edits or writes, or a shell command that
/// writes (a redirect into a file, `sed -i`, `tee`, moving, copying, removing, git changing
/// files, installing packages).
pub(super) fn changes_files(tool: &str, command: Option<&str>) -> bool {
    let tool = tool.to_ascii_lowercase();
    if ["edit", "write", "patch", "replace", "create", "apply"]
        .iter()
        .any(|w| tool.contains(w))
    {
        return true;
    }
    let Some(command) = command else {
        return false;
    };
    static WRITES: OnceLock<Option<Regex>> = OnceLock::new();
    WRITES
        .get_or_init(|| {
            Regex::new(
                r"(?x)
                (^|[^0-9&>])>{1,2}\s*[^\s&/>]      # a redirect into a file (not /dev/null, not >&2)
                | >{1,2}\s*/(?:[^d]|d[^e]|de[^v])  # a redirect into an absolute path outside /dev
                | \bsed\s+(-[a-zA-Z]*\s+)*-i
                | \b(tee|mv|cp|rm|touch|mkdir|patch|truncate)\s
                | \bgit\s+(checkout|restore|apply|stash|reset|revert|cherry-pick|merge|rebase|am)\b
                | \b(npm|pnpm|yarn)\s+(install|add|ci)\b
                | \bpip3?\s+install\b
                | \bperl\s+-[a-z]*i
                ",
            )
            .ok()
        })
        .as_ref()
        .is_some_and(|re| re.is_match(command))
}

/// The text with only what varies between two runs of the same thing replaced: timestamps,
/// clock times, durations, pids, hex addresses, temp paths, ids. Every other number stays.
pub(super) fn as_they_were(text: &str) -> String {
    static VOLATILE: OnceLock<Option<Regex>> = OnceLock::new();
    let Some(re) = VOLATILE
        .get_or_init(|| {
            Regex::new(
                r"(?xi)
                \d{4}-\d{2}-\d{2}[T\ ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?
                | \b\d{1,2}:\d{2}:\d{2}(\.\d+)?\b
                | \b\d+(\.\d+)?\s?(ms|µs|us|ns|s|sec|secs|seconds|m|min)\b
                | \bpid[\s=:]*\d+
                | \b0x[0-9a-f]+\b
                | /tmp/[^\s'\x22:)]+
                | \b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b
                ",
            )
            .ok()
        })
        .as_ref()
    else {
        return text.to_string();
    };
    re.replace_all(text, "…").into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_of_one_run_are_one_action() {
        let one = canonical_command("./check.sh");
        for other in [
            "cd . && ./check.sh",
            "./check.sh -v",
            "bash check.sh",
            "sh ./check.sh --verbose 2>&1",
            "cd /work/repo && ./check.sh 2>&1 | tail -n 20",
            "\"./check.sh\"",
        ] {
            assert_eq!(canonical_command(other), one, "{other}");
        }
        assert_eq!(
            canonical_command("python -m pytest -q tests/test_a.py"),
            canonical_command("python3 -m pytest tests/test_a.py")
        );
        // Other files, another program, another folder: another action.
        assert_ne!(canonical_command("./check.sh a.txt"), one);
        assert_ne!(canonical_command("./other.sh"), one);
        assert_ne!(canonical_command("cd sub && ./check.sh"), one);
        assert_ne!(
            canonical_command("python3 -c 'print(1)'"),
            canonical_command("python3 -c 'print(2)'")
        );
    }

    #[test]
    fn what_changes_files_is_told_from_what_only_reads() {
        assert!(changes_files("Edit", None));
        assert!(changes_files("write_file", None));
        assert!(changes_files("apply_patch", None));
        assert!(!changes_files("Read", None));
        for writes in [
            "echo x > a.txt",
            "printf 'x' >> notes/a.md",
            "sed -i 's/a/b/' greet.py",
            "sed -E -i 's/a/b/' greet.py",
            "cat a | tee b.txt",
            "git checkout -- greet.py",
            "rm -f out.txt",
            "npm install left-pad",
            "echo x > /work/repo/a.txt",
        ] {
            assert!(changes_files("Bash", Some(writes)), "{writes}");
        }
        for reads in [
            "./check.sh",
            "./check.sh 2>&1",
            "./check.sh > /dev/null 2>&1",
            "python3 -m pytest -q 2>&1 | tail -5",
            "grep -n greet greet.py",
            "echo done >&2",
            "git status",
            "git diff",
        ] {
            assert!(!changes_files("Bash", Some(reads)), "{reads}");
        }
    }

    #[test]
    fn only_what_varies_between_runs_is_taken_out() {
        assert_eq!(
            as_they_were("2026-11-28T10:00:01.123Z pid 4242 took 1.5s at 0xdeadbeef in /tmp/x1/a"),
            as_they_were("2026-11-29T11:03:09Z pid 17 took 20 ms at 0x1f in /tmp/q/b")
        );
        assert_ne!(
            as_they_were("AssertionError: expected 10 lines, got 7"),
            as_they_were("AssertionError: expected 10 lines, got 8")
        );
    }
}
