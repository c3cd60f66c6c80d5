//! What one simple command does, as far as asking first needs: whether it reaches the network,
//! installs, runs as another user, runs what it is fed, deletes or writes outside the working
//! copy, or reads the person's files; and whether it is one of the commands that only look or
//! change files in place. The lists are what agents run; a program not named here is not on
//! the list, so under the default preset it asks.

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
    /// Asks unless the person allowed it before.
    Risky(Risk),
}

fn is(list: &[&str], name: &str) -> bool {
    list.contains(&name)
}

/// The program's name as it is looked for (`/usr/bin/curl` → `curl`).
pub fn program(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

fn options_end(words: &[Word]) -> impl Iterator<Item = &Word> {
    let mut ended = false;
    words.iter().filter(move |w| {
        if ended {
            return true;
        }
        if w.text == "--" {
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

/// The rule "Always allow" adds for a command: its program, and what it is told to do for
/// programs with verbs (`npm install`, `npm run build`), the script for an interpreter
/// (`python3 tools/gen.py`), the module for `-m` (`python3 -m pip install`).
pub fn key(words: &[Word]) -> String {
    let Some(first) = words.first() else {
        return String::new();
    };
    let name = program(&first.text);
    let rest: Vec<&str> = words[1..].iter().map(|w| w.text.as_str()).collect();
    let mut key = vec![name.to_string()];
    if is(SUDO, name) || is(WRAPPERS, name) {
        // `sudo rm` allows rm as root, never everything as root.
        let inner: Vec<Word> = words[1..]
            .iter()
            .skip_while(|w| w.text.starts_with('-'))
            .cloned()
            .collect();
        return format!("{name} {}", self::key(&inner)).trim().to_string();
    }
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

/// Look at one simple command run in `cwd` (`None`: a folder Healer cannot tell).
pub fn look(simple: &Simple, place: &Place, cwd: Option<&std::path::Path>) -> Vec<Looked> {
    let mut found = Vec::new();
    for target in &simple.writes {
        if let Some(risk) = written(place, cwd, target) {
            found.push(Looked::Risky(risk));
        }
    }
    found.extend(look_words(&simple.words, simple.piped_in, place, cwd, 0));
    if found.is_empty() {
        found.push(Looked::Free);
    }
    found
}

fn written(place: &Place, cwd: Option<&std::path::Path>, target: &Word) -> Option<Risk> {
    match place.locate(cwd, target) {
        Where::Inside | Where::Scratch => None,
        Where::Protected => Some(Risk {
            why: format!("it changes git's or Healer's own files ({})", target.text),
            key: format!("write {}", target.text),
        }),
        Where::System | Where::Outside | Where::Unknown => Some(Risk {
            why: format!(
                "it writes outside the project's working copy ({})",
                target.text
            ),
            key: format!("write {}", target.text),
        }),
    }
}

fn deleted(place: &Place, cwd: Option<&std::path::Path>, target: &Word) -> Option<Risk> {
    match place.locate(cwd, target) {
        Where::Inside | Where::Scratch => None,
        Where::Protected => Some(Risk {
            why: format!("it deletes git's or Healer's own files ({})", target.text),
            key: format!("delete {}", target.text),
        }),
        Where::System | Where::Outside | Where::Unknown => Some(Risk {
            why: format!(
                "it deletes files outside the project's working copy ({})",
                target.text
            ),
            key: format!("delete {}", target.text),
        }),
    }
}

fn read_outside(place: &Place, cwd: Option<&std::path::Path>, target: &Word) -> Option<Risk> {
    let path_like = target.text.contains('/')
        || target.text.starts_with('~')
        || target.text == ".."
        || target.text.starts_with('$');
    if !path_like {
        return None;
    }
    match place.locate(cwd, target) {
        Where::Outside => Some(Risk {
            why: format!(
                "it reads your files outside the project's working copy ({})",
                target.text
            ),
            key: format!("read {}", target.text),
        }),
        _ => None,
    }
}

fn look_words(
    words: &[Word],
    piped_in: bool,
    place: &Place,
    cwd: Option<&std::path::Path>,
    depth: u32,
) -> Vec<Looked> {
    let words = command_words(words);
    let Some(first) = words.first() else {
        return vec![];
    };
    if depth > 8 {
        return vec![Looked::Unlisted { key: key(words) }];
    }
    if first.expands {
        return vec![Looked::Risky(Risk {
            why: format!(
                "the program it runs is only known when it runs ({})",
                first.text
            ),
            key: key(words),
        })];
    }
    let name = program(&first.text);
    let args = &words[1..];
    let risky = |why: String| {
        vec![Looked::Risky(Risk {
            why,
            key: key(words),
        })]
    };
    if is(SUDO, name) {
        return risky(format!("it runs as another user ({name})"));
    }
    if is(WRAPPERS, name)
        || name == "env"
            && args
                .iter()
                .any(|w| !w.text.starts_with('-') && !w.text.contains('='))
    {
        let inner: Vec<Word> = args
            .iter()
            .skip_while(|w| w.text.starts_with('-') || (name == "env" && w.text.contains('=')))
            .cloned()
            .collect();
        return look_words(&inner, piped_in, place, cwd, depth + 1);
    }
    if name == "timeout" {
        // timeout [options] DURATION COMMAND…
        let inner: Vec<Word> = args
            .iter()
            .skip_while(|w| w.text.starts_with('-'))
            .skip(1)
            .cloned()
            .collect();
        return look_words(&inner, piped_in, place, cwd, depth + 1);
    }
    if name == "xargs" {
        let mut inner: Vec<Word> = args
            .iter()
            .skip_while(|w| w.text.starts_with('-'))
            .cloned()
            .collect();
        if inner.is_empty() {
            inner.push(Word {
                text: "echo".to_string(),
                expands: false,
            });
        }
        // What it is fed becomes more words: paths nobody can tell ahead.
        inner.push(Word {
            text: "$input".to_string(),
            expands: true,
        });
        return look_words(&inner, false, place, cwd, depth + 1);
    }
    if is(NETWORK, name) {
        return risky(format!("it reaches the network ({name})"));
    }
    if is(FETCH_AND_RUN, name) {
        return risky(format!(
            "it downloads a package and runs it ({})",
            key(words)
        ));
    }
    if is(SYSTEM_PACKAGES, name) {
        return risky(format!(
            "it installs or changes this computer's software ({name})"
        ));
    }
    let verb = args.first().map(|w| w.text.as_str()).unwrap_or_default();
    if let Some((_, verbs)) = SENDS.iter().find(|(p, _)| *p == name) {
        if verbs.contains(&verb) {
            return risky(format!("it reaches the network ({})", key(words)));
        }
    }
    if let Some((_, verbs)) = INSTALLS.iter().find(|(p, _)| *p == name) {
        if verbs.contains(&verb) {
            return risky(format!("it installs packages ({})", key(words)));
        }
    }
    if name == "git" {
        return git(words, place, cwd);
    }
    if is(SHELLS, name) {
        if let Some(at) = args.iter().position(|w| w.text == "-c" || w.text == "-lc") {
            return match args.get(at + 1) {
                Some(script) if !script.expands => {
                    super::look_line(&script.text, place, cwd, depth + 1)
                }
                _ => risky(format!(
                    "it runs commands Healer cannot read ahead ({name} -c)"
                )),
            };
        }
        if options_end(args).next().is_none() {
            return if piped_in {
                risky(format!(
                    "it runs whatever it is given on its input ({name})"
                ))
            } else {
                vec![Looked::Unlisted { key: key(words) }]
            };
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
            return risky(format!("it installs packages ({})", key(words)));
        }
        if options_end(args).next().is_none() && piped_in {
            return risky(format!(
                "it runs whatever it is given on its input ({name})"
            ));
        }
        return vec![Looked::Unlisted { key: key(words) }];
    }
    if is(DELETERS, name) {
        let found: Vec<Looked> = options_end(args)
            .filter_map(|w| deleted(place, cwd, w))
            .map(Looked::Risky)
            .collect();
        return if found.is_empty() {
            vec![Looked::Free]
        } else {
            found
        };
    }
    if is(WRITERS, name) {
        return writer(name, args, place, cwd);
    }
    if name == "find" {
        return find(words, place, cwd, depth);
    }
    if matches!(name, "awk" | "gawk" | "mawk") {
        let program = options_end(args).next();
        if program.is_some_and(|p| {
            p.text.contains("system") || p.text.contains('|') || p.text.contains('>')
        }) {
            return vec![Looked::Unlisted { key: key(words) }];
        }
    }
    if name == "sed"
        && args
            .iter()
            .any(|w| w.text.starts_with("-i") || w.text == "--in-place")
    {
        let mut files = options_end(args);
        if !args.iter().any(|w| w.text == "-e" || w.text == "-f") {
            files.next(); // the script
        }
        let found: Vec<Looked> = files
            .filter_map(|w| written(place, cwd, w))
            .map(Looked::Risky)
            .collect();
        return if found.is_empty() {
            vec![Looked::Free]
        } else {
            found
        };
    }
    if is(LOOKERS, name) {
        let mut targets = options_end(args);
        if matches!(name, "grep" | "egrep" | "fgrep" | "rg" | "ag")
            && !args.iter().any(|w| w.text == "-e" || w.text == "-f")
        {
            targets.next(); // the pattern
        }
        let found: Vec<Looked> = targets
            .filter_map(|w| read_outside(place, cwd, w))
            .map(Looked::Risky)
            .collect();
        return if found.is_empty() {
            vec![Looked::Free]
        } else {
            found
        };
    }
    vec![Looked::Unlisted { key: key(words) }]
}

fn git(words: &[Word], place: &Place, cwd: Option<&std::path::Path>) -> Vec<Looked> {
    // git -C DIR / -c name=value come before the verb.
    let mut rest = &words[1..];
    while let Some(first) = rest.first() {
        match first.text.as_str() {
            "-C" | "-c" | "--git-dir" | "--work-tree" => rest = rest.get(2..).unwrap_or(&[]),
            t if t.starts_with('-') => rest = &rest[1..],
            _ => break,
        }
    }
    let verb = rest.first().map(|w| w.text.as_str()).unwrap_or("");
    let args = rest.get(1..).unwrap_or(&[]);
    if is(GIT_NETWORK, verb)
        || (verb == "remote" && args.first().is_some_and(|a| a.text == "update"))
    {
        return vec![Looked::Risky(Risk {
            why: format!("it reaches another repository over the network (git {verb})"),
            key: format!("git {verb}"),
        })];
    }
    if verb == "config"
        && args
            .iter()
            .any(|a| a.text == "--global" || a.text == "--system")
    {
        return vec![Looked::Risky(Risk {
            why: "it changes your git settings for every repository (git config --global)"
                .to_string(),
            key: "git config --global".to_string(),
        })];
    }
    if verb == "clean" {
        return vec![Looked::Free];
    }
    if is(GIT_LOCAL, verb) {
        let _ = (place, cwd);
        return vec![Looked::Free];
    }
    vec![Looked::Unlisted {
        key: format!("git {verb}").trim().to_string(),
    }]
}

fn writer(name: &str, args: &[Word], place: &Place, cwd: Option<&std::path::Path>) -> Vec<Looked> {
    let operands: Vec<&Word> = options_end(args).collect();
    let targets: Vec<&Word> = match name {
        // The last operand is where copies go (or -t DIR).
        "cp" | "mv" | "ln" | "install" => {
            let named = args
                .windows(2)
                .find(|p| p[0].text == "-t" || p[0].text == "--target-directory")
                .map(|p| &p[1]);
            match named {
                Some(dir) => vec![dir],
                None => operands.last().copied().into_iter().collect(),
            }
        }
        // The first operand is the mode, the owner or the size.
        "chmod" | "chown" | "chgrp" => operands.iter().skip(1).copied().collect(),
        "dd" => args.iter().filter(|w| w.text.starts_with("of=")).collect(),
        _ => operands.clone(),
    };
    let mut found = Vec::new();
    for target in targets {
        let target = match target.text.strip_prefix("of=") {
            Some(path) => Word {
                text: path.to_string(),
                expands: target.expands,
            },
            None => target.clone(),
        };
        if let Some(risk) = written(place, cwd, &target) {
            found.push(Looked::Risky(risk));
        }
    }
    // `mv` takes its sources away: a source outside is deleted there.
    if name == "mv" && operands.len() > 1 {
        for source in &operands[..operands.len() - 1] {
            if let Some(risk) = deleted(place, cwd, source) {
                found.push(Looked::Risky(risk));
            }
        }
    }
    if found.is_empty() {
        found.push(Looked::Free);
    }
    found
}

fn find(words: &[Word], place: &Place, cwd: Option<&std::path::Path>, depth: u32) -> Vec<Looked> {
    let args = &words[1..];
    let starts: Vec<&Word> = args
        .iter()
        .take_while(|w| !w.text.starts_with('-') && w.text != "(" && w.text != "!")
        .collect();
    let mut found = Vec::new();
    for start in &starts {
        if let Some(risk) = read_outside(place, cwd, start) {
            found.push(Looked::Risky(risk));
        }
    }
    let mut i = 0;
    while i < args.len() {
        let a = args[i].text.as_str();
        match a {
            "-delete" => {
                for start in &starts {
                    if let Some(risk) = deleted(place, cwd, start) {
                        found.push(Looked::Risky(risk));
                    }
                }
                if starts.is_empty() {
                    // `find -delete` starts in the current folder.
                    let here = Word {
                        text: ".".to_string(),
                        expands: false,
                    };
                    if let Some(risk) = deleted(place, cwd, &here) {
                        found.push(Looked::Risky(risk));
                    }
                }
            }
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let inner: Vec<Word> = args[i + 1..]
                    .iter()
                    .take_while(|w| w.text != ";" && w.text != "+")
                    .map(|w| {
                        if w.text == "{}" {
                            Word {
                                text: "$found".to_string(),
                                expands: true,
                            }
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
                    if let Some(risk) = written(place, cwd, file) {
                        found.push(Looked::Risky(risk));
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    if found.is_empty() {
        found.push(Looked::Free);
    }
    found
}
