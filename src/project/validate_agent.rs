//! The agent's part of a project's settings, checked field by field: its program (installed,
//! or where the person says it is), where its model comes from, and the tools Claude Code may
//! use without asking.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::agent_setup::wire_mismatch;
use super::validate::problem;
use crate::agent::agent_name;
use crate::agent::installed::not_installed;
use crate::llm::Provider;
use crate::session::AgentKind;
use crate::store::ProjectSettings;
use crate::workflow::FieldProblem;

/// Claude Code's own tools (2.1): a name written in another case is almost surely one of these.
const CLAUDE_TOOLS: [&str; 17] = [
    "Bash",
    "BashOutput",
    "Edit",
    "ExitPlanMode",
    "Glob",
    "Grep",
    "KillShell",
    "LS",
    "MultiEdit",
    "NotebookEdit",
    "Read",
    "SlashCommand",
    "Task",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
    "Write",
];

/// The external agent's program: the one the settings name, else the one on PATH.
pub(super) fn program(s: &ProjectSettings) -> Vec<FieldProblem> {
    let named = s
        .agent_program
        .as_deref()
        .map(str::trim)
        .filter(|p| !p.is_empty());
    if s.agent == AgentKind::Builtin {
        return Vec::new();
    }
    if let Some(path) = named {
        let path = Path::new(path);
        let why = match std::fs::metadata(path) {
            _ if !path.is_absolute() => Some("Give the whole path, starting with /".to_string()),
            Err(_) => Some(format!("There is no program at {}", path.display())),
            Ok(m) if !m.is_file() => Some(format!("{} is a folder, not a program", path.display())),
            Ok(m) if m.permissions().mode() & 0o111 == 0 => Some(format!(
                "{} may not be run (it is not executable)",
                path.display()
            )),
            Ok(_) => None,
        };
        return why
            .map(|w| vec![problem("agent_program", w)])
            .unwrap_or_default();
    }
    let found = crate::agent::cli(s.agent, None).and_then(|agent| agent.program_for(None));
    if found.is_none() {
        return vec![problem("agent", not_installed(s.agent))];
    }
    Vec::new()
}

/// Where the external agent's model comes from, and the model's name.
pub(super) fn model(s: &ProjectSettings, providers: &[Provider]) -> Vec<FieldProblem> {
    let mut problems = Vec::new();
    if s.agent == AgentKind::Builtin {
        return problems;
    }
    if let Some(name) = s.agent_provider.as_deref() {
        match providers.iter().find(|p| p.name == name) {
            None => problems.push(problem(
                "agent_provider",
                format!(
                    "There is no model provider called \u{201c}{name}\u{201d}; add it in \
                     Settings → Models, or let {} use its own login",
                    agent_name(s.agent)
                ),
            )),
            Some(p) => {
                if let Some(why) = wire_mismatch(s.agent, p.kind) {
                    problems.push(problem("agent_provider", why));
                }
            }
        }
    }
    if let Some(model) = s.model.as_deref().filter(|m| !m.is_empty()) {
        if model.chars().any(char::is_whitespace) || model.chars().count() > 200 {
            problems.push(problem(
                "model",
                "A model's name has no spaces, such as claude-sonnet-4-5 or gpt-5-codex",
            ));
        }
    }
    // opencode and Gemini CLI are told the model by name; on a provider of Healer's they have
    // no default of their own to fall back on.
    let named = s.model.as_deref().is_some_and(|m| !m.trim().is_empty());
    if matches!(s.agent, AgentKind::OpenCode | AgentKind::GeminiCli)
        && s.agent_provider.is_some()
        && !named
    {
        problems.push(problem(
            "model",
            format!(
                "Name the model {} should use on this provider, such as gpt-5-mini or \
                 gemini-2.5-flash",
                agent_name(s.agent)
            ),
        ));
    }
    problems
}

/// Claude Code's allowed tools: `Name`, `Name(rule)` or an MCP tool `mcp__server__tool`.
pub(super) fn allowed_tools(s: &ProjectSettings) -> Vec<FieldProblem> {
    // While the agent asks, Healer's hook lets each tool through (the list is not used).
    if s.agent != AgentKind::ClaudeCode || s.approvals.preset != crate::approval::Preset::NeverAsk {
        return Vec::new();
    }
    let mut problems = Vec::new();
    let mut say = |m: String| problems.push(problem("allowed_tools", m));
    if s.allowed_tools.iter().all(|t| t.trim().is_empty()) {
        say(
            "Allow at least one tool: nobody is there to approve one while Claude Code works, \
             so it can use only the tools listed here"
                .to_string(),
        );
    }
    for (i, tool) in s.allowed_tools.iter().enumerate() {
        let tool = tool.trim();
        if tool.is_empty() {
            continue;
        }
        let name = tool.split('(').next().unwrap_or_default();
        let rule_ok = match tool.find('(') {
            None => true,
            Some(at) => tool.ends_with(')') && at + 1 < tool.len() - 1,
        };
        let name_ok = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !name_ok || !rule_ok {
            say(format!(
                "\u{201c}{tool}\u{201d} is not a tool's name: write it as Claude Code does, \
                 such as Bash, Edit or Bash(npm test:*)"
            ));
        } else if let Some(known) = CLAUDE_TOOLS
            .iter()
            .find(|k| k.eq_ignore_ascii_case(name) && **k != name)
        {
            say(format!(
                "Claude Code calls this tool {known}, not {name}: tool names are case-sensitive"
            ));
        } else if s.allowed_tools.iter().take(i).any(|t| t.trim() == tool) {
            say(format!("{tool} is listed twice"));
        }
    }
    problems
}

/// The longest a question may wait for the person: a day.
const MAX_ASK_SECS: u32 = 24 * 3600;

/// What the agent may do without asking: a question waits between a minute and a day, and
/// each listed command is a command.
pub(super) fn approvals(s: &ProjectSettings) -> Vec<FieldProblem> {
    let a = &s.approvals;
    let mut problems = Vec::new();
    if a.preset == crate::approval::Preset::NeverAsk {
        return problems;
    }
    if !(60..=MAX_ASK_SECS).contains(&a.time_limit_secs) {
        problems.push(problem(
            "approvals.time_limit_secs",
            "A question waits between 1 and 1440 minutes for your answer",
        ));
    }
    if let Some(bad) = a.allowed.iter().find(|c| c.chars().any(char::is_control)) {
        problems.push(problem(
            "approvals.allowed",
            format!("Put each command on a line of its own ({})", bad.trim()),
        ));
    }
    problems
}
