//! Programs whose options change what they do: those that run another command (`env`, `xargs`,
//! `timeout` …), those that write the files they are given (`cp`, `ln`, `sort -o` …), and the
//! harmless-looking ones that can run commands (`sed`'s `e`, `awk`'s `system`, `rg --pre`,
//! `fd -x`). Each is looked at closely enough to say what it runs and writes, or not at all.

use std::path::Path;

use super::commands::{deleted, is, look_words, operands, read_from, written, Looked, Risk};
use super::known::WRAPPERS;
use super::paths::{Place, Where};
use super::shell::Word;

/// The command a wrapper runs (`nohup CMD`, `env A=b CMD`, `timeout 5 CMD`, `xargs CMD`):
/// `None` when `name` is no wrapper, `Err` with why when what it runs cannot be read ahead.
pub(super) fn wrapped(name: &str, args: &[Word]) -> Option<Result<Vec<Word>, String>> {
    let rest = |skip_values: &[&str]| -> Vec<Word> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < args.len() {
            let a = &args[i].text;
            if out.is_empty() && a.starts_with('-') && a != "-" {
                i += if skip_values.contains(&a.as_str()) {
                    2
                } else {
                    1
                };
                continue;
            }
            out.push(args[i].clone());
            i += 1;
        }
        out
    };
    match name {
        "env" => {
            if args.iter().any(|w| {
                let t = w.text.as_str();
                t.starts_with("-S")
                    || t.starts_with("--split-string")
                    || t.starts_with("-C")
                    || t.starts_with("--chdir")
                    || w.unknown
            }) {
                return Some(Err(
                    "it runs a command Healer cannot read ahead (env with -S or -C)".to_string(),
                ));
            }
            // env A=b CMD: the assignments are the command's environment.
            let mut inner = rest(&["-u", "--unset"]);
            if let Some(at) = inner.iter().position(|w| !w.text.contains('=')) {
                let assigns: Vec<&Word> = inner[..at].iter().collect();
                if let Some(bad) = assigns.iter().find(|w| {
                    let name = w.text.split('=').next().unwrap_or_default();
                    !is(super::known::SAFE_ENV, name) && !name.starts_with("LC_")
                }) {
                    return Some(Err(format!(
                        "it changes how the command it runs behaves ({})",
                        bad.text
                    )));
                }
                inner.drain(..at);
                return Some(Ok(inner));
            }
            // `env` alone (or only assignments): prints the environment.
            Some(Ok(Vec::new()))
        }
        "command" | "type" | "which" | "hash"
            if args.iter().any(|w| w.text == "-v" || w.text == "-V") =>
        {
            Some(Ok(Vec::new()))
        }
        "timeout" => {
            // timeout [options] DURATION COMMAND…
            let mut inner = rest(&["-s", "--signal", "-k", "--kill-after"]);
            if !inner.is_empty() {
                inner.remove(0);
            }
            Some(Ok(inner))
        }
        "nice" => Some(Ok(rest(&["-n", "--adjustment"]))),
        "ionice" => Some(Ok(rest(&["-c", "-n", "-p", "--class", "--classdata"]))),
        "stdbuf" => Some(Ok(rest(&["-i", "-o", "-e"]))),
        "xargs" => {
            let mut inner = rest(&[
                "-I",
                "-i",
                "-n",
                "-P",
                "-L",
                "-l",
                "-d",
                "-E",
                "-e",
                "-s",
                "-a",
                "--arg-file",
                "--delimiter",
                "--max-args",
                "--max-procs",
                "--replace",
            ]);
            if inner.is_empty() {
                inner.push(Word::plain("echo"));
            }
            // What it is fed becomes more words: paths nobody can tell ahead.
            inner.push(Word::unknown("(its input)"));
            Some(Ok(inner))
        }
        _ if is(WRAPPERS, name) => Some(Ok(rest(&[]))),
        _ => None,
    }
}

/// Programs that write the files they are given: where each lands.
pub(super) fn writer(name: &str, args: &[Word], place: &Place, cwd: Option<&Path>) -> Vec<Looked> {
    let files: Vec<&Word> = operands(args).collect();
    let targets: Vec<&Word> = match name {
        // The last operand is where copies go (or -t DIR).
        "cp" | "mv" | "ln" | "install" => {
            let named = args
                .windows(2)
                .find(|p| p[0].text == "-t" || p[0].text == "--target-directory")
                .map(|p| &p[1]);
            match named {
                Some(dir) => vec![dir],
                None => files.last().copied().into_iter().collect(),
            }
        }
        // The first operand is the mode, the owner or the size.
        "chmod" | "chown" | "chgrp" => files.iter().skip(1).copied().collect(),
        "dd" => args.iter().filter(|w| w.text.starts_with("of=")).collect(),
        _ => files.clone(),
    };
    let mut found = Vec::new();
    for target in targets {
        let target = match target.text.strip_prefix("of=") {
            Some(path) => Word {
                text: path.to_string(),
                ..target.clone()
            },
            None => target.clone(),
        };
        found.extend(written(place, cwd, &target).map(Looked::Risky));
    }
    if files.len() > 1 {
        let sources = &files[..files.len() - 1];
        for source in sources {
            match name {
                // `mv` takes its sources away: a source outside is deleted there.
                "mv" => found.extend(deleted(place, cwd, source).map(Looked::Risky)),
                // A link to the person's files makes them reachable as if inside.
                "ln" if !matches!(place.locate(cwd, source), Where::Inside | Where::Scratch) => {
                    found.push(Looked::Risky(Risk {
                        why: format!(
                            "it links to files outside the project's working copy ({})",
                            source.text
                        ),
                        key: format!("link {}", source.text),
                    }))
                }
                "cp" | "install" => {
                    found.extend(read_from(place, cwd, source, true).map(Looked::Risky))
                }
                _ => {}
            }
        }
    }
    found
}

/// `find`: what it starts from, deletes, writes and runs.
pub(super) fn find(words: &[Word], place: &Place, cwd: Option<&Path>, depth: u32) -> Vec<Looked> {
    let args = &words[1..];
    let starts: Vec<&Word> = args
        .iter()
        .take_while(|w| !w.text.starts_with('-') && w.text != "(" && w.text != "!")
        .collect();
    let mut found: Vec<Looked> = starts
        .iter()
        .filter_map(|s| read_from(place, cwd, s, true))
        .map(Looked::Risky)
        .collect();
    let here = Word::plain(".");
    let mut i = 0;
    while i < args.len() {
        match args[i].text.as_str() {
            "-delete" => {
                let from: Vec<&Word> = if starts.is_empty() {
                    vec![&here]
                } else {
                    starts.clone()
                };
                found.extend(
                    from.iter()
                        .filter_map(|s| deleted(place, cwd, s))
                        .map(Looked::Risky),
                );
            }
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let inner: Vec<Word> = args[i + 1..]
                    .iter()
                    .take_while(|w| w.text != ";" && w.text != "+")
                    .map(|w| {
                        if w.text == "{}" {
                            Word::unknown("(each file found)")
                        } else {
                            w.clone()
                        }
                    })
                    .collect();
                i += inner.len();
                found.extend(
                    look_words(&inner, false, place, cwd, depth + 1)
                        .into_iter()
                        .filter(|l| *l != Looked::Free),
                );
            }
            "-fprint" | "-fprint0" | "-fprintf" | "-fls" => {
                if let Some(file) = args.get(i + 1) {
                    found.extend(written(place, cwd, file).map(Looked::Risky));
                }
            }
            _ => {}
        }
        i += 1;
    }
    found
}

/// Harmless-looking programs with options that run commands or write files; `None` for a
/// program that is not one of them.
pub(super) fn special(
    name: &str,
    args: &[Word],
    place: &Place,
    cwd: Option<&Path>,
    words: &[Word],
) -> Option<Vec<Looked>> {
    let unlisted = || {
        vec![Looked::Unlisted {
            key: super::commands::key(words),
        }]
    };
    Some(match name {
        "sed" => {
            let mut scripts: Vec<&Word> = Vec::new();
            let mut files: Vec<&Word> = Vec::new();
            let mut in_place = false;
            let mut i = 0;
            while i < args.len() {
                let a = args[i].text.as_str();
                match a {
                    "-e" | "--expression" => {
                        scripts.extend(args.get(i + 1));
                        i += 1;
                    }
                    "-f" | "--file" => return Some(unlisted()),
                    _ if a.starts_with("-i") || a.starts_with("--in-place") => in_place = true,
                    _ if a.starts_with('-') && a != "-" => {}
                    _ => files.push(&args[i]),
                }
                i += 1;
            }
            if scripts.is_empty() && !files.is_empty() {
                scripts.push(files.remove(0));
            }
            if !scripts.iter().all(|s| !s.expands() && plain_sed(&s.text)) {
                return Some(unlisted());
            }
            let mut found: Vec<Looked> = files
                .iter()
                .filter_map(|f| read_from(place, cwd, f, false))
                .map(Looked::Risky)
                .collect();
            if in_place {
                found.extend(
                    files
                        .iter()
                        .filter_map(|f| written(place, cwd, f))
                        .map(Looked::Risky),
                );
            }
            found
        }
        "awk" | "gawk" | "mawk" | "nawk" => {
            let mut program: Option<&Word> = None;
            let mut files = Vec::new();
            let mut i = 0;
            while i < args.len() {
                let a = args[i].text.as_str();
                match a {
                    "-f" | "--file" | "-E" => return Some(unlisted()),
                    "-v" | "-F" | "--assign" | "--field-separator" => i += 1,
                    _ if a.starts_with("-v") || a.starts_with("-F") => {}
                    _ if a.starts_with('-') && a != "-" => {}
                    _ if program.is_none() => program = Some(&args[i]),
                    _ => files.push(&args[i]),
                }
                i += 1;
            }
            let plain = program.is_some_and(|p| {
                !p.expands()
                    && !["system", "|", ">", "getline", "close(", "fflush"]
                        .iter()
                        .any(|bad| p.text.contains(bad))
            });
            if !plain {
                return Some(unlisted());
            }
            files
                .iter()
                .filter_map(|f| read_from(place, cwd, f, false))
                .map(Looked::Risky)
                .collect()
        }
        "sort" | "uniq" => {
            let mut found = Vec::new();
            for (i, w) in args.iter().enumerate() {
                let t = w.text.as_str();
                let target = if t == "-o" || t == "--output" {
                    args.get(i + 1).cloned()
                } else {
                    t.strip_prefix("--output=")
                        .or(t.strip_prefix("-o"))
                        .filter(|p| !p.is_empty())
                        .map(|path| Word {
                            text: path.to_string(),
                            ..w.clone()
                        })
                };
                if let Some(target) = target {
                    found.extend(written(place, cwd, &target).map(Looked::Risky));
                }
            }
            found.extend(
                operands(args)
                    .filter_map(|f| read_from(place, cwd, f, false))
                    .map(Looked::Risky),
            );
            found
        }
        // Options that run another program on what they find.
        "rg" if args.iter().any(|w| w.text.starts_with("--pre")) => unlisted(),
        "fd" | "fdfind"
            if args
                .iter()
                .any(|w| matches!(w.text.as_str(), "-x" | "-X" | "--exec" | "--exec-batch")) =>
        {
            unlisted()
        }
        "less" | "more" | "man" => unlisted(),
        _ => return None,
    })
}

/// A sed script of only substitutions, prints, deletes and quits (with addresses): no `e` (run
/// a command), `w`/`W` (write a file), `r`/`R` (read one).
fn plain_sed(script: &str) -> bool {
    script
        .split(['\n', ';'])
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .all(plain_sed_command)
}

fn plain_sed_command(command: &str) -> bool {
    // The address: numbers, $, ranges, /regex/.
    let body = command
        .trim_start_matches(|c: char| c.is_ascii_digit() || matches!(c, '$' | ',' | ' ' | '!'));
    let body = if let Some(rest) = body.strip_prefix('/') {
        match rest.find('/') {
            Some(at) => rest[at + 1..]
                .trim_start_matches(|c: char| c.is_ascii_digit() || matches!(c, '$' | ',' | ' ')),
            None => return false,
        }
    } else {
        body
    };
    let mut chars = body.chars();
    match chars.next() {
        Some('p' | 'd' | 'q' | '=' | 'n' | 'N' | 'P' | 'D') => chars.as_str().trim().is_empty(),
        Some('s') => {
            let Some(delim) = chars.next() else {
                return false;
            };
            let rest: String = chars.collect();
            // Two more delimiters (not escaped), then only the harmless flags.
            let mut seen = 0;
            let mut escaped = false;
            let mut flags = String::new();
            for c in rest.chars() {
                if seen == 2 {
                    flags.push(c);
                    continue;
                }
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == delim {
                    seen += 1;
                }
            }
            seen == 2
                && flags
                    .trim()
                    .chars()
                    .all(|c| matches!(c, 'g' | 'i' | 'I' | 'p' | '0'..='9'))
        }
        _ => false,
    }
}
