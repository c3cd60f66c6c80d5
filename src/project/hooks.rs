//! The agents' hooks. Through Claude Code's, steering reaches a live Claude Code session: Healer
//! gives each session a `PostToolUse` and a `Stop` hook in its own settings layer (Claude
//! Code's `--settings`, on the command line: nothing is written into the worktree, where a
//! repository could have put a link to somewhere else). Both call `healer hook claude-code
//! --session <id>`, which marks the session alive and, when a steering message waits, answers
//! `{"decision": "block", "reason": MESSAGE}`: Claude Code gives the reason to the model
//! before its next step. Through both agents' `PreToolUse` hook (Claude Code's settings layer,
//! Codex's config), each tool call is first judged by the project's approvals, and what the
//! person must decide waits for their answer (`healer hook … --session <id>`, see the CLI).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

/// The variable naming the `healer` program the hooks call (else it is looked for beside this
/// program, then on PATH).
pub const CLI_VAR: &str = "HEALER_CLI";

/// The `healer` program a hook can call, if there is one.
pub fn cli_program() -> Option<PathBuf> {
    if let Some(named) = std::env::var_os(CLI_VAR).filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(named)).filter(|p| p.is_file());
    }
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("healer")))
        .filter(|p| p.is_file());
    beside.or_else(|| which::which("healer").ok())
}

/// The shell command a hook of `agent` (`claude-code`, `codex`) runs for session
/// `session_id` of the data folder `data_dir`.
pub fn hook_command(
    program: &Path,
    data_dir: &Path,
    agent: &str,
    session_id: i64,
    limit: u32,
) -> String {
    format!(
        "HEALER_DATA_DIR={} {} hook {agent} --session {session_id} --limit {limit}",
        quote(&data_dir.display().to_string()),
        quote(&program.display().to_string())
    )
}

/// The shell command of a Claude Code hook on a worker (issue 42): it reads what the worker
/// put in `dir` (the project's approvals, the messages for the agent), no data folder.
pub fn worker_hook_command(program: &Path, dir: &Path) -> String {
    format!(
        "{} hook worker --box {}",
        quote(&program.display().to_string()),
        quote(&dir.display().to_string())
    )
}

/// How much longer than a question's time limit an agent lets the hook that asks take: the
/// hook denies at the limit itself, and an agent whose hook runs out lets the tool through
/// (Claude Code when the tool is allowed anyway, Codex always), so its own limit must never
/// come first.
pub const ASKING_GRACE_SECS: u32 = 300;

/// A word for `sh`: single quotes, with any single quote closed, escaped and reopened.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// Healer's settings layer for a Claude Code session: the steering hooks, both running
/// `command`; with `asking` (the question's time limit, in seconds) also the `PreToolUse`
/// hook through which every tool call is first judged by the project's approvals.
pub fn settings(command: &str, asking: Option<u32>) -> Value {
    let hook = json!([{"type": "command", "command": command}]);
    let mut hooks = json!({
        "PostToolUse": [{"matcher": "*", "hooks": hook}],
        "Stop": [{"hooks": hook}],
    });
    if let Some(limit) = asking {
        hooks["PreToolUse"] = pre_tool_use(command, limit);
    }
    json!({ "hooks": hooks })
}

/// Healer's hooks for a Codex session (written into its config): every command and patch
/// first judged by the project's approvals.
pub fn codex_settings(command: &str, limit: u32) -> Value {
    json!({ "hooks": { "PreToolUse": pre_tool_use(command, limit) } })
}

fn pre_tool_use(command: &str, limit: u32) -> Value {
    json!([{
        "matcher": "*",
        "hooks": [{
            "type": "command",
            "command": command,
            "timeout": limit.saturating_add(ASKING_GRACE_SECS),
        }],
    }])
}

impl super::run::Ctx<'_> {
    /// Give the agent Healer's hooks (in its settings layer, never in the worktree): Claude
    /// Code's steering hooks, and with `asking` the hook through which each tool call is
    /// judged by the project's approvals (Claude Code and Codex). Without Healer's
    /// command-line program to call there are none (`false`): steering then notes loops
    /// without telling the agent, and an agent that must ask is not started.
    pub(super) fn install_hooks(&self, asking: bool) -> bool {
        let Some(program) = cli_program() else {
            tracing::info!(
                session_id = self.session_id,
                "no `healer` program for the agent's hooks"
            );
            return false;
        };
        let agent = self.project.settings.agent;
        let command = hook_command(
            &program,
            self.projects.services.paths.data_dir(),
            agent.as_str(),
            self.session_id,
            self.project.settings.approvals.time_limit_secs,
        );
        let limit = self.project.settings.approvals.time_limit_secs;
        let settings = match agent {
            crate::session::AgentKind::Codex => codex_settings(&command, limit),
            _ => settings(&command, asking.then_some(limit)),
        };
        let _ = self.agent_settings.set(settings);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quoted_path_survives_spaces_and_quotes() {
        assert_eq!(quote("/a b/it's"), r"'/a b/it'\''s'");
        let command = hook_command(
            Path::new("/opt/h ealer"),
            Path::new("/data"),
            "claude-code",
            7,
            1800,
        );
        assert_eq!(
            command,
            "HEALER_DATA_DIR='/data' '/opt/h ealer' hook claude-code --session 7 --limit 1800"
        );
    }
}
