//! Claude Code's hooks, through which steering reaches a live Claude Code session: before each
//! session Healer writes a `PostToolUse` and a `Stop` hook into the worktree's
//! `.claude/settings.local.json` (kept out of git through the repository's `info/exclude`).
//! Both call `healer hook claude-code --session <id>`, which marks the session alive and, when
//! a steering message waits, answers `{"decision": "block", "reason": MESSAGE}`: Claude Code
//! gives the reason to the model before its next step.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::error::{Error, Result};

/// Where Claude Code reads a worktree's own settings (never committed).
pub const SETTINGS_FILE: &str = ".claude/settings.local.json";

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

/// Write the two hooks into `worktree`'s local Claude Code settings (other settings there are
/// kept; Healer's hooks replace its own earlier ones) and keep the file out of git.
pub fn install(worktree: &Path, command: &str) -> Result<()> {
    let path = worktree.join(SETTINGS_FILE);
    let mut settings: Map<String, Value> = std::fs::read_to_string(&path)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default();
    let hook = json!([{"matcher": "*", "hooks": [{"type": "command", "command": command}]}]);
    let stop = json!([{"hooks": [{"type": "command", "command": command}]}]);
    let hooks = settings
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    if !hooks.is_object() {
        *hooks = Value::Object(Map::new());
    }
    if let Some(hooks) = hooks.as_object_mut() {
        hooks.insert("PostToolUse".to_string(), hook);
        hooks.insert("Stop".to_string(), stop);
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
    }
    let text = serde_json::to_string_pretty(&Value::Object(settings))
        .map_err(|e| Error::Internal(format!("the hook settings: {e}")))?;
    std::fs::write(&path, text)
        .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))?;
    exclude(worktree, SETTINGS_FILE)
}

/// Add `pattern` to the repository's `info/exclude` (shared by its worktrees) once.
fn exclude(worktree: &Path, pattern: &str) -> Result<()> {
    let repo = git2::Repository::open(worktree)
        .map_err(|e| Error::Internal(format!("cannot open the worktree: {e}")))?;
    let info = repo.commondir().join("info");
    std::fs::create_dir_all(&info)
        .map_err(|e| Error::io(format!("cannot create {}", info.display()), e))?;
    let file = info.join("exclude");
    let existing = std::fs::read_to_string(&file).unwrap_or_default();
    let line = format!("/{pattern}");
    if existing.lines().any(|l| l.trim() == line) {
        return Ok(());
    }
    let mut text = existing;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&format!(
        "# Healer's hooks for Claude Code, local to this machine\n{line}\n"
    ));
    std::fs::write(&file, text)
        .map_err(|e| Error::io(format!("cannot write {}", file.display()), e))
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
