//! What one simple command does, as far as asking first needs: whether it reaches the network,
//! installs, runs as another user, runs what it is fed, deletes or writes outside the working
//! copy, reads the person's files, or changes how the commands after it run; and whether it is
//! one of the commands that only look or change files in place. A program not named in
//! `known` is not on the list, so under the default preset it asks.

use std::path::Path;

use super::known::*;
use super::paths::{Place, Where};
use super::shell::{Simple, Word};

/// Why a command asks first, in words, and the rule "Always allow" would add for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Risk {
    pub why: String,
    pub key: String,
}

/// The result of looking at one simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Looked {
    /// Only looks, or changes files inside the working copy.
    Free,
    /// Not known to be harmless: asks unless the project lists it.
    Unlisted { key: String },
    /// Asks unless the person allowed exactly this before.
    Risky(Risk),
}

pub(super) fn is(list: &[&str], name: &str) -> bool {
    list.contains(&name)
}

/// The program's name as it is looked for (`/usr/bin/curl` → `curl`).
pub fn program(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// The arguments that are not options (after `--`, everything).
pub(super) fn operands(words: &[Word]) -> impl Iterator<Item = &Word> {
    let mut ended = false;
    words.iter().filter(move |w| {
        if ended {
            return true;
        }
        if w.text == "--" && !w.expands() {
            ended = true;
            return false;
        }
        !w.text.starts_with('-') || w.text == "-"
    })
}

/// The words of the command itself: a shell's own words around it (`if`, `while`, `do`, `!`
/// …) are not commands, and a loop's or a case's header names none.
pub fn command_words(words: &[Word]) -> &[Word] {
    let mut words = words;
    while let Some(first) = words.first() {
        match first.text.as_str() {
            "if" | "then" | "else" | "elif" | "while" | "until" | "do" | "!" | "{" | "time" => {
                words = &words[1..]
            }
            "fi" | "done" | "esac" | "}" | "for" | "select" | "case" | "function" => return &[],
            _ => break,
        }
    }
    words
}

/// A command as its words, one space apart: what an exact rule allows.
pub(super) fn exact(words: &[Word]) -> String {
    words
        .iter()
        .map(|w| w.text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The rule "Always allow" adds for a command that is not risky, only not on the list: its
/// program, and what it is told to do for programs with verbs (`npm run build`), the script
/// for an interpreter (`python3 tools/gen.py`), the module for `-m` (`python3 -m pip install`).
pub fn key(words: &[Word]) -> String {
    let Some(first) = words.first() else {
        return String::new();
    };
    let name = program(&first.text);
    let rest: Vec<&str> = words[1..].iter().map(|w| w.text.as_str()).collect();
    let mut key = vec![name.to_string()];
    if is(INTERPRETERS, name) || is(SHELLS, name) {
        if rest.first() == Some(&"-m") {
            key.extend(rest.iter().take(3).map(|s| s.to_string()));
            return key.join(" ");
        }
        if let Some(file) = rest.iter().find(|w| !w.starts_with('-')) {
            key.push(file.to_string());
        }
        return key.join(" ");
    }
    if is(VERBED, name) {
        if let Some(verb) = rest.first().filter(|w| !w.starts_with('-')) {
            key.push(verb.to_string());
            if *verb == "run" {
                if let Some(script) = rest.get(1).filter(|w| !w.starts_with('-')) {
                    key.push(script.to_string());
                }
            }
        }
    }
    key.join(" ")
}

/// What a command's redirections and assignments do, whatever the command: judged even for the
/// project's checks and what the person allowed (`npm test > ~/.bashrc`).
pub fn look_around(simple: &Simple, place: &Place, cwd: Option<&Path>) -> Vec<Risk> {
    let mut found = Vec::new();
    for (name, value) in &simple.assigns {
        if !is(SAFE_ENV, name) && !name.starts_with("LC_") {
            found.push(Risk {
                why: format!(
                    "it changes how the commands after it run ({name}={})",
                    value.text
                ),
                key: format!("{name}={}", value.text),
            });
        }
    }
    for target in simple.writes.iter().chain(&simple.reads) {
        if let Some(risk) = network_path(target) {
            found.push(risk);
        }
    }
    for target in &simple.writes {
        found.extend(written(place, cwd, target));
    }
    for source in &simple.reads {
        found.extend(read_from(place, cwd, source, true));
    }
    found
}

/// Bash's `/dev/tcp/HOST/PORT` is a connection, not a file.
fn network_path(word: &Word) -> Option<Risk> {
    (word.text.starts_with("/dev/tcp/") || word.text.starts_with("/dev/udp/")).then(|| Risk {
        why: format!("it reaches the network ({})", word.text),
        key: format!("connect {}", word.text),
    })
}

pub(super) fn written(place: &Place, cwd: Option<&Path>, target: &Word) -> Option<Risk> {
    match place.locate(cwd, target) {
        Where::Inside | Where::Scratch => None,
        Where::Protected => Some(Risk {
            why: format!("it changes git's or Healer's own files ({})", target.text),
            key: format!("write {}", target.text),
        }),
        Where::Unknown => Some(Risk {
            why: format!(
                "it writes to a place only known when it runs ({})",
                shown(target)
            ),
            key: format!("write {}", target.text),
        }),
        Where::System | Where::Outside => Some(Risk {
            why: format!(
                "it writes outside the project's working copy ({})",
                target.text
            ),
            key: format!("write {}", target.text),
        }),
    }
}

pub(super) fn deleted(place: &Place, cwd: Option<&Path>, target: &Word) -> Option<Risk> {
    match place.locate(cwd, target) {
        Where::Inside | Where::Scratch => None,
        Where::Protected => Some(Risk {
            why: format!("it deletes git's or Healer's own files ({})", target.text),
            key: format!("delete {}", target.text),
        }),
        Where::Unknown => Some(Risk {
            why: format!(
                "it deletes files only known when it runs ({})",
                shown(target)
            ),
            key: format!("delete {}", target.text),
        }),
        Where::System | Where::Outside => Some(Risk {
            why: format!(
                "it deletes files outside the project's working copy ({})",
                target.text
            ),
            key: format!("delete {}", target.text),
        }),
    }
}

/// A word as the person reads it: an expansion's text is not what runs.
fn shown(word: &Word) -> String {
    if word.text.is_empty() {
        "a variable".to_string()
    } else {
        word.text.clone()
    }
}

/// Reading `source`: the person's files elsewhere, or a place only known when it runs, ask.
/// `surely`: it is a path (a redirection); else only a word that looks like one counts.
pub(super) fn read_from(
    place: &Place,
    cwd: Option<&Path>,
    source: &Word,
    surely: bool,
) -> Option<Risk> {
    let path_like = surely
        || source.unknown
        || source.tilde
        || source.text.contains('/')
        || source.text == "..";
    if !path_like {
        return None;
    }
    match place.locate(cwd, source) {
        Where::Outside => Some(Risk {
            why: format!(
                "it reads your files outside the project's working copy ({})",
                source.text
            ),
            key: format!("read {}", source.text),
        }),
        Where::Unknown => Some(Risk {
            why: format!(
                "it reads from a place only known when it runs ({})",
                shown(source)
            ),
            key: format!("read {}", source.text),
        }),
        _ => None,
    }
}

/// Look at a command's words (the command itself, run in `cwd`).
pub fn look_words(
    words: &[Word],
    piped_in: bool,
    place: &Place,
    cwd: Option<&Path>,
    depth: u32,
) -> Vec<Looked> {
    let words = command_words(words);
    let Some(first) = words.first() else {
        return vec![];
    };
    let risky = |why: String, key: String| vec![Looked::Risky(Risk { why, key })];
    if depth > 8 {
        return risky(
            "Healer cannot read all of it ahead for sure".to_string(),
            exact(words),
        );
    }
    if first.expands() {
        return risky(
            format!(
                "the program it runs is only known when it runs ({})",
                shown(first)
            ),
            exact(words),
        );
    }
    let mut found: Vec<Looked> = words
        .iter()
        .filter_map(network_path)
        .map(Looked::Risky)
        .collect();
    if !found.is_empty() {
        return found;
    }
    let name = program(&first.text);
    let args = &words[1..];
    if is(SUDO, name) {
        return risky(format!("it runs as another user ({name})"), exact(words));
    }
    if let Some(inner) = super::tools::wrapped(name, args) {
        return match inner {
            Ok(inner) => look_words(&inner, piped_in, place, cwd, depth + 1),
            Err(why) => risky(why, exact(words)),
        };
    }
    if is(NETWORK, name) {
        return risky(format!("it reaches the network ({name})"), exact(words));
    }
    if is(FETCH_AND_RUN, name) {
        return risky(
            format!("it downloads a package and runs it ({})", key(words)),
            exact(words),
        );
    }
    if is(SYSTEM_PACKAGES, name) {
        return risky(
            format!("it installs or changes this computer's software ({name})"),
            exact(words),
        );
    }
    let verb = args.first().map(|w| w.text.as_str()).unwrap_or_default();
    if let Some((_, verbs)) = SENDS.iter().find(|(p, _)| *p == name) {
        if verbs.contains(&verb) {
            return risky(
                format!("it reaches the network ({})", key(words)),
                exact(words),
            );
        }
    }
    if let Some((_, verbs)) = INSTALLS.iter().find(|(p, _)| *p == name) {
        if verbs.contains(&verb) {
            // "Always allow `npm install`": installing with it, whatever the package.
            return risky(format!("it installs packages ({})", key(words)), key(words));
        }
    }
    if name == "git" {
        return super::git::look(words, place, cwd);
    }
    if is(SHELLS, name) {
        if let Some(at) = args.iter().position(|w| w.text == "-c" || w.text == "-lc") {
            return match args.get(at + 1) {
                Some(script) if !script.expands() => {
                    super::look_line(&script.text, place, cwd, depth + 1)
                }
                _ => risky(
                    format!("it runs commands Healer cannot read ahead ({name} -c)"),
                    exact(words),
                ),
            };
        }
        if operands(args).next().is_none() && piped_in {
            return risky(
                format!("it runs whatever it is given on its input ({name})"),
                exact(words),
            );
        }
        return vec![Looked::Unlisted { key: key(words) }];
    }
    if is(INTERPRETERS, name) {
        let module: Vec<&str> = args.iter().map(|w| w.text.as_str()).collect();
        if module.first() == Some(&"-m")
            && matches!(module.get(1), Some(&"pip") | Some(&"pip3"))
            && matches!(
                module.get(2),
                Some(&"install") | Some(&"download") | Some(&"uninstall")
            )
        {
            return risky(format!("it installs packages ({})", key(words)), key(words));
        }
        if operands(args).next().is_none() && piped_in {
            return risky(
                format!("it runs whatever it is given on its input ({name})"),
                exact(words),
            );
        }
        return vec![Looked::Unlisted { key: key(words) }];
    }
    if is(DELETERS, name) {
        found.extend(
            operands(args)
                .filter_map(|w| deleted(place, cwd, w))
                .map(Looked::Risky),
        );
    } else if is(WRITERS, name) {
        found.extend(super::tools::writer(name, args, place, cwd));
    } else if name == "find" {
        found.extend(super::tools::find(words, place, cwd, depth));
    } else if let Some(looked) = super::tools::special(name, args, place, cwd, words) {
        found.extend(looked);
    } else if is(LOOKERS, name) {
        let mut targets = operands(args);
        if matches!(name, "grep" | "egrep" | "fgrep" | "rg" | "ag")
            && !args.iter().any(|w| w.text == "-e" || w.text == "-f")
        {
            targets.next(); // the pattern
        }
        found.extend(
            targets
                .filter_map(|w| read_from(place, cwd, w, false))
                .map(Looked::Risky),
        );
    } else {
        return vec![Looked::Unlisted { key: key(words) }];
    }
    if found.is_empty() {
        found.push(Looked::Free);
    }
    found
}
