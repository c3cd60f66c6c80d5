//! Claude Code's hooks, through which steering reaches a live Claude Code session: Healer
//! gives each session a `PostToolUse` and a `Stop` hook in its own settings layer (Claude
//! Code's `--settings`, on the command line: nothing is written into the worktree, where a
//! repository could have put a link to somewhere else). Both call `healer hook claude-code
//! --session <id>`, which marks the session alive and, when a steering message waits, answers
//! `{"decision": "block", "reason": MESSAGE}`: Claude Code gives the reason to the model
//! before its next step.

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

/// The shell command a hook runs for session `session_id` of the data folder `data_dir`.
pub fn hook_command(program: &Path, data_dir: &Path, session_id: i64) -> String {
    format!(
        "HEALER_DATA_DIR={} {} hook claude-code --session {session_id}",
        quote(&data_dir.display().to_string()),
        quote(&program.display().to_string())
    )
}

/// A word for `sh`: single quotes, with any single quote closed, escaped and reopened.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// Healer's settings layer for a Claude Code session: the two hooks, both running `command`.
pub fn settings(command: &str) -> Value {
    let hook = json!([{"type": "command", "command": command}]);
    json!({
        "hooks": {
            "PostToolUse": [{"matcher": "*", "hooks": hook}],
            "Stop": [{"hooks": hook}],
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quoted_path_survives_spaces_and_quotes() {
        assert_eq!(quote("/a b/it's"), r"'/a b/it'\''s'");
        let command = hook_command(Path::new("/opt/h ealer"), Path::new("/data"), 7);
        assert_eq!(
            command,
            "HEALER_DATA_DIR='/data' '/opt/h ealer' hook claude-code --session 7"
        );
    }
}
