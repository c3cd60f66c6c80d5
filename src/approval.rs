//! What an agent may do without asking, and what it must ask the person first: the project's
//! preset, the commands it lists, and the rules the person made by answering ("always allow
//! `npm install` in this project"). Pure: the hooks, the built-in agent and the engine all
//! judge a request here, the same way.
//!
//! Under the default preset (*Ask before anything risky*) edits inside the task's working copy
//! and the project's own check commands run freely, as do commands that only look or change
//! files in place; a command that reaches the network, installs packages, runs as another
//! user, runs what it is fed, deletes or writes outside the working copy, reads the person's
//! files elsewhere, or is not on the project's list asks first. A command Healer cannot read
//! ahead for sure asks too.

mod commands;
mod git;
mod known;
mod paths;
mod shell;
mod tools;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use commands::program;
pub use paths::{Place, Where};

/// How long a question may wait for the person before it is denied: 30 minutes.
pub const DEFAULT_APPROVAL_LIMIT_SECS: u32 = 30 * 60;

/// What an agent may do without asking, as a person chooses it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Preset {
    /// Edits in the working copy and the project's checks run freely; anything risky asks.
    #[default]
    AskRisky,
    /// Every command asks (edits in the working copy still do not).
    AskEvery,
    /// Nothing asks: the person accepts the risk.
    NeverAsk,
}

/// A project's approvals: the preset, the commands it lets run without asking, and how long a
/// question waits before it is denied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct ApprovalSettings {
    #[serde(default)]
    pub preset: Preset,
    /// Commands (their first words, as `npm test` or `make`) that run without asking.
    #[serde(default)]
    pub allowed: Vec<String>,
    /// A question nobody answers is denied after this.
    #[serde(default = "default_limit")]
    pub time_limit_secs: u32,
}

fn default_limit() -> u32 {
    DEFAULT_APPROVAL_LIMIT_SECS
}

/// How long a question was given: from when it was asked to its deadline.
pub fn time_given(ask: &AgentAsk) -> u32 {
    let at = |s: &str| chrono::DateTime::parse_from_rfc3339(s).ok();
    at(&ask.deadline_at)
        .zip(at(&ask.created_at))
        .map_or(DEFAULT_APPROVAL_LIMIT_SECS, |(d, c)| {
            u32::try_from((d - c).num_seconds().max(0)).unwrap_or(u32::MAX)
        })
}

/// Why a question nobody answered was denied.
pub fn unanswered_reason(ask: &AgentAsk) -> String {
    format!(
        "nobody answered within {}, so Healer denied it",
        limit_words(time_given(ask))
    )
}

/// "30 minutes", "2 hours", "45 seconds".
pub fn limit_words(secs: u32) -> String {
    let (n, one, many) = if secs >= 3600 && secs.is_multiple_of(3600) {
        (secs / 3600, "hour", "hours")
    } else if secs >= 60 && secs.is_multiple_of(60) {
        (secs / 60, "minute", "minutes")
    } else {
        (secs, "second", "seconds")
    };
    format!("{n} {}", if n == 1 { one } else { many })
}

impl Default for ApprovalSettings {
    fn default() -> Self {
        ApprovalSettings {
            preset: Preset::AskRisky,
            allowed: Vec::new(),
            time_limit_secs: DEFAULT_APPROVAL_LIMIT_SECS,
        }
    }
}

/// What an agent wants to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AgentRequest {
    /// Run a shell command, as it will run (in `cwd` when the agent says where it is; else the
    /// working copy).
    Command {
        command: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<String>,
    },
    /// Write a file (a new one, or an edit): its path and a preview of the change.
    Edit { path: String, preview: String },
    /// Read a file or search a folder.
    Read { path: String },
    /// Use a tool of the agent's that is none of those (fetch a web page, an add-on's tool).
    Tool { name: String, detail: String },
}

impl AgentRequest {
    /// What it wants, in a line (for logs and the session's steps).
    pub fn subject(&self) -> String {
        match self {
            AgentRequest::Command { command, .. } => command.clone(),
            AgentRequest::Edit { path, .. } => format!("write {path}"),
            AgentRequest::Read { path } => format!("read {path}"),
            AgentRequest::Tool { name, detail } if detail.is_empty() => name.clone(),
            AgentRequest::Tool { name, detail } => format!("{name}: {detail}"),
        }
    }
}

/// Why a request asks first, and the rule "Always allow this in this project" would add.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct Asking {
    /// The reason, as the end of "It asks because …".
    pub why: String,
    /// What "Always allow" allows from then on: a command's first words (`npm install`), a
    /// whole command line, or `write PATH` / `read PATH` / a tool's name.
    pub rule: String,
}

/// Where a question stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalStatus {
    Waiting,
    Allowed,
    Denied,
    /// Nobody answered within the project's time limit: denied, never allowed.
    Expired,
}

impl ApprovalStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalStatus::Waiting => "waiting",
            ApprovalStatus::Allowed => "allowed",
            ApprovalStatus::Denied => "denied",
            ApprovalStatus::Expired => "expired",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            ApprovalStatus::Waiting,
            ApprovalStatus::Allowed,
            ApprovalStatus::Denied,
            ApprovalStatus::Expired,
        ]
        .into_iter()
        .find(|v| v.as_str() == s)
    }
}

/// How far an allow reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalScope {
    /// This request only.
    Once,
    /// The same kind of request, for the rest of this task.
    Task,
    /// The same kind of request, in this project from now on.
    Project,
}

impl ApprovalScope {
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalScope::Once => "once",
            ApprovalScope::Task => "task",
            ApprovalScope::Project => "project",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            ApprovalScope::Once,
            ApprovalScope::Task,
            ApprovalScope::Project,
        ]
        .into_iter()
        .find(|v| v.as_str() == s)
    }
}

/// A question an agent asked, as the dialog and the session page show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct AgentAsk {
    pub id: i64,
    pub session_id: i64,
    /// Which agent asked (`claude-code`, `codex`, `builtin`).
    pub agent: String,
    pub request: AgentRequest,
    pub why: String,
    pub rule: String,
    pub status: ApprovalStatus,
    pub scope: Option<ApprovalScope>,
    /// The person's words to the agent with a deny (or why Healer denied it).
    pub reason: Option<String>,
    pub created_at: String,
    /// Denied if nobody has answered by then.
    pub deadline_at: String,
    pub answered_at: Option<String>,
}

/// What the agent is told of an answer: the person's reason with a deny, or that the time ran
/// out. `None`: it may go ahead.
pub fn told_agent(ask: &AgentAsk) -> Option<String> {
    match ask.status {
        ApprovalStatus::Allowed | ApprovalStatus::Waiting => None,
        ApprovalStatus::Denied => Some(match ask.reason.as_deref() {
            Some(why) => format!(
                "The person supervising you (through Healer) denied this: {why}. It did not run. \
                 Go on without it, another way that does not need it, or finish and say what you could not do."
            ),
            None => "The person supervising you (through Healer) denied this. It did not run. \
                     Go on without it, another way that does not need it, or finish and say what you could not do."
                .to_string(),
        }),
        ApprovalStatus::Expired => Some(format!(
            "Healer asked the person supervising you, and {}. It did not run. Go on without it, \
             or finish and say what you could not do.",
            ask.reason.as_deref().unwrap_or("nobody answered in time, so it was denied")
        )),
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    Ask(Asking),
}

/// Judge `request` under `settings` and the person's `rules` (what they allowed by answering,
/// for the project and for this task), for a session working in `place`.
pub fn judge(
    settings: &ApprovalSettings,
    rules: &[String],
    place: &Place,
    request: &AgentRequest,
) -> Verdict {
    if settings.preset == Preset::NeverAsk {
        return Verdict::Allow;
    }
    let allowed: Vec<&str> = settings
        .allowed
        .iter()
        .chain(rules.iter())
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .collect();
    match request {
        AgentRequest::Command { command, cwd } => {
            judge_command(settings.preset, &allowed, place, command, cwd.as_deref())
        }
        AgentRequest::Edit { path, .. } => {
            let word = literal(path);
            match place.locate(Some(&place.worktree), &word) {
                Where::Inside | Where::Scratch => Verdict::Allow,
                _ if listed_exactly(&allowed, &format!("write {path}")) => Verdict::Allow,
                Where::Protected => ask(
                    format!("it changes git's or Healer's own files ({path})"),
                    format!("write {path}"),
                ),
                _ => ask(
                    format!("it writes outside the project's working copy ({path})"),
                    format!("write {path}"),
                ),
            }
        }
        AgentRequest::Read { path } => {
            let word = literal(path);
            match place.locate(Some(&place.worktree), &word) {
                Where::Outside | Where::Unknown
                    if !listed_exactly(&allowed, &format!("read {path}")) =>
                {
                    ask(
                        format!("it reads your files outside the project's working copy ({path})"),
                        format!("read {path}"),
                    )
                }
                _ => Verdict::Allow,
            }
        }
        AgentRequest::Tool { name, detail } => {
            if listed_exactly(&allowed, name) {
                return Verdict::Allow;
            }
            let why = if matches!(
                name.as_str(),
                "WebFetch" | "WebSearch" | "web_search" | "web_fetch" | "webfetch" | "websearch"
            ) {
                format!(
                    "it reaches the network ({})",
                    if detail.is_empty() { name } else { detail }
                )
            } else {
                format!("Healer does not know what this tool of the agent's does ({name})")
            };
            ask(why, name.clone())
        }
    }
}

fn ask(why: String, rule: String) -> Verdict {
    Verdict::Ask(Asking { why, rule })
}

/// A path an agent's tool names: taken as written, but for a leading `~` (its home).
fn literal(path: &str) -> shell::Word {
    shell::Word {
        tilde: path.starts_with('~'),
        ..shell::Word::plain(path)
    }
}

fn listed_exactly(allowed: &[&str], rule: &str) -> bool {
    allowed.contains(&rule)
}

/// Whitespace as one space: the form a whole command line is kept in a rule.
pub fn normalise(command: &str) -> String {
    command.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `rule`'s words begin `words` (the program compared by name, `/usr/bin/npm` as `npm`).
fn begins(rule: &str, words: &[shell::Word]) -> bool {
    let rule: Vec<&str> = rule.split_whitespace().collect();
    if rule.is_empty() || rule.len() > words.len() {
        return false;
    }
    rule.iter().zip(words).enumerate().all(|(i, (r, w))| {
        if i == 0 {
            commands::program(r) == commands::program(&w.text)
        } else {
            *r == w.text
        }
    })
}

fn judge_command(
    preset: Preset,
    allowed: &[&str],
    place: &Place,
    command: &str,
    cwd: Option<&str>,
) -> Verdict {
    let whole = normalise(command);
    if whole.is_empty() {
        return ask(
            "Healer could not read the command it wants to run".to_string(),
            whole,
        );
    }
    if allowed.contains(&whole.as_str()) {
        return Verdict::Allow;
    }
    // The project's own checks run freely, whatever they do: exactly as the project has them.
    if preset == Preset::AskRisky
        && cwd.is_none()
        && place.checks.iter().any(|c| normalise(c) == whole)
    {
        return Verdict::Allow;
    }
    let line = shell::read(command);
    let checks: Vec<Vec<shell::Word>> = place
        .checks
        .iter()
        .flat_map(|c| shell::read(c).commands)
        .map(|c| c.words)
        .collect();
    let mut reasons: Vec<commands::Risk> = Vec::new();
    let mut here = match cwd {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            Some(std::fs::canonicalize(&dir).unwrap_or(dir))
        }
        None => Some(place.worktree.clone()),
    };
    for simple in &line.commands {
        let words = commands::command_words(&simple.words);
        // What its redirections and assignments do is judged whatever the command is.
        reasons.extend(
            commands::look_around(simple, place, here.as_deref())
                .into_iter()
                .filter(|r| !allowed.contains(&r.key.as_str())),
        );
        let looked =
            commands::look_words(&simple.words, simple.piped_in, place, here.as_deref(), 0);
        let listed = allowed.iter().any(|rule| begins(rule, words));
        let is_check = here.as_deref() == Some(place.worktree.as_path())
            && checks.iter().any(|check| is_check_run(check, words, place));
        if let Some(next) = changes_folder(words, place, here.as_deref()) {
            here = next;
        }
        if preset == Preset::AskEvery {
            if !words.is_empty() && !listed {
                reasons.push(commands::Risk {
                    why: "this project asks before every command".to_string(),
                    key: commands::key(words),
                });
            }
            continue;
        }
        for found in looked {
            match found {
                commands::Looked::Free => {}
                commands::Looked::Unlisted { .. } if listed || is_check => {}
                commands::Looked::Unlisted { key } => reasons.push(commands::Risk {
                    why: format!("it is not on this project's list of commands that run without asking ({key})"),
                    key,
                }),
                commands::Looked::Risky(_) if is_check => {}
                // A risk the person accepted before: exactly that command, path or kind.
                commands::Looked::Risky(risk) if allowed.contains(&risk.key.as_str()) => {}
                commands::Looked::Risky(risk) => reasons.push(risk),
            }
        }
    }
    if line.unsure && preset != Preset::AskEvery {
        reasons.push(commands::Risk {
            why: "Healer cannot read all of it ahead for sure".to_string(),
            key: whole.clone(),
        });
    }
    let mut whys: Vec<String> = Vec::new();
    for r in &reasons {
        if !whys.contains(&r.why) {
            whys.push(r.why.clone());
        }
    }
    match reasons.len() {
        0 => Verdict::Allow,
        // One part asked for one reason: allowing it for good allows that.
        _ if line.commands.len() == 1 && reasons.iter().all(|r| r.key == reasons[0].key) => {
            ask(whys.join("; "), reasons[0].key.clone())
        }
        // Several parts: allowing it for good allows this whole line.
        _ => ask(whys.join("; "), whole),
    }
}

/// A command is the project's check when its words are the check's, and anything after them
/// names files of the working copy (`pytest -q tests/test_greet.py`), never an option.
fn is_check_run(check: &[shell::Word], words: &[shell::Word], place: &Place) -> bool {
    !check.is_empty()
        && check.len() <= words.len()
        && check
            .iter()
            .zip(words)
            .all(|(a, b)| a.text == b.text && !b.expands())
        && words[check.len()..].iter().all(|extra| {
            !extra.text.starts_with('-')
                && matches!(place.locate(Some(&place.worktree), extra), Where::Inside)
        })
}

/// The folder the next command runs in after `words` (`None` inside: one Healer cannot tell).
fn changes_folder(
    words: &[shell::Word],
    place: &Place,
    cwd: Option<&Path>,
) -> Option<Option<PathBuf>> {
    let mut words = words;
    while matches!(
        words.first().map(|w| w.text.as_str()),
        Some("builtin" | "command")
    ) {
        words = &words[1..];
    }
    let first = words.first()?;
    match first.text.as_str() {
        "cd" | "pushd" => {}
        "popd" => return Some(None),
        _ => return None,
    }
    let target = operands_of(&words[1..]).next();
    let next = match target {
        None => place.home.clone(),
        Some(w) if w.text == "-" => None,
        Some(w) => match place.locate(cwd, w) {
            Where::Unknown => None,
            _ if w.tilde => {
                let rest = w.text.strip_prefix("~/").or((w.text == "~").then_some(""));
                match (rest, &place.home) {
                    (Some(rest), Some(home)) => Some(home.join(rest)),
                    _ => None,
                }
            }
            _ if Path::new(&w.text).is_absolute() => Some(PathBuf::from(&w.text)),
            _ => cwd.map(|c| c.join(&w.text)),
        }
        .map(|p| std::fs::canonicalize(&p).unwrap_or(p)),
    };
    Some(next)
}

fn operands_of(words: &[shell::Word]) -> impl Iterator<Item = &shell::Word> {
    words
        .iter()
        .filter(|w| !w.text.starts_with('-') || w.text == "-")
}

/// A command line given to a shell inside a command (`bash -c '…'`), looked at as a whole.
fn look_line(text: &str, place: &Place, cwd: Option<&Path>, depth: u32) -> Vec<commands::Looked> {
    let line = shell::read(text);
    let mut found = Vec::new();
    let mut here = cwd.map(Path::to_path_buf);
    if line.unsure {
        found.push(commands::Looked::Risky(commands::Risk {
            why: "Healer cannot read all of it ahead for sure".to_string(),
            key: normalise(text),
        }));
    }
    for simple in &line.commands {
        found.extend(
            commands::look_around(simple, place, here.as_deref())
                .into_iter()
                .map(commands::Looked::Risky),
        );
        found.extend(commands::look_words(
            &simple.words,
            simple.piped_in,
            place,
            here.as_deref(),
            depth,
        ));
        let words = commands::command_words(&simple.words);
        if let Some(next) = changes_folder(words, place, here.as_deref()) {
            here = next;
        }
    }
    found.retain(|l| *l != commands::Looked::Free);
    found
}

#[cfg(test)]
mod tests;
