//! The folder Gemini CLI keeps its files in (`GEMINI_CLI_HOME`, under the folder Healer keeps
//! for the project's agent): before each session everything a session could have written to be
//! loaded later (user settings, `GEMINI.md` memory, commands, extensions, policies, skills,
//! agents) goes; only the chats a resume needs stay, and Healer writes its own settings.

use std::path::{Path, PathBuf};

use serde_json::json;

/// The sub-folder of Healer's folder for the agent used as `GEMINI_CLI_HOME` (the one name
/// `project::agent_setup` keeps between sessions for Gemini CLI).
pub const KEPT: &str = "gemini";

/// Gemini CLI's own folder inside its home.
const DOT_GEMINI: &str = ".gemini";

/// What Healer's user settings say, each session: the API key's auth (`-p` exits 41 without
/// it), no folder trust prompts (Healer runs it restricted, see the adapter), nothing sent to
/// Google but the model's calls, no updates, no retries Healer does not see, no IDE.
pub fn settings() -> serde_json::Value {
    json!({
        "security": {
            "auth": {"selectedType": "gemini-api-key"},
            "folderTrust": {"enabled": false}
        },
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false},
        "general": {
            "enableAutoUpdate": false,
            "enableAutoUpdateNotification": false,
            "maxAttempts": 1,
            "retryFetchErrors": false
        },
        "ide": {"enabled": false}
    })
}

/// Make `home` (Gemini CLI's home) ready for a session: only `.gemini/tmp/<project>/chats` and
/// `.gemini/projects.json` kept (real folders and files, never links), Healer's settings
/// written. Returns the home.
pub fn prepare(agent_home: &Path) -> std::io::Result<PathBuf> {
    let home = agent_home.join(KEPT);
    real_folder(&home)?;
    // Only `.gemini` in the home.
    keep_only(&home, |name, meta| name == DOT_GEMINI && meta.is_dir())?;
    let dot = home.join(DOT_GEMINI);
    real_folder(&dot)?;
    keep_only(&dot, |name, meta| {
        (name == "tmp" && meta.is_dir()) || (name == "projects.json" && meta.is_file())
    })?;
    let tmp = dot.join("tmp");
    if tmp.is_dir() {
        for project in std::fs::read_dir(&tmp)? {
            let project = project?.path();
            let meta = std::fs::symlink_metadata(&project)?;
            if !meta.is_dir() {
                std::fs::remove_file(&project)?;
                continue;
            }
            keep_only(&project, |name, meta| {
                (name == "chats" && meta.is_dir()) || (name == ".project_root" && meta.is_file())
            })?;
        }
    }
    let text = serde_json::to_string_pretty(&settings()).unwrap_or_default();
    std::fs::write(dot.join("settings.json"), text)?;
    Ok(home)
}

/// `path` as a real folder (a link or file in its place removed).
fn real_folder(path: &Path) -> std::io::Result<()> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| !m.is_dir()) {
        std::fs::remove_file(path)?;
    }
    std::fs::create_dir_all(path)
}

/// Remove every entry of `dir` but those `keep` accepts (links never followed).
fn keep_only(dir: &Path, keep: impl Fn(&str, &std::fs::Metadata) -> bool) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let meta = std::fs::symlink_metadata(&path)?;
        let name = entry.file_name();
        if name.to_str().is_some_and(|n| keep(n, &meta)) {
            continue;
        }
        if meta.is_dir() {
            std::fs::remove_dir_all(&path)?;
        } else {
            std::fs::remove_file(&path)?;
        }
    }
    Ok(())
}

/// The chat file of session `id`, if Gemini CLI wrote one
/// (`.gemini/tmp/<project>/chats/session-<time>-<first 8 of id>.jsonl`).
pub fn chat(home: &Path, id: &str) -> Option<PathBuf> {
    let short = id.get(..8)?;
    let tmp = home.join(DOT_GEMINI).join("tmp");
    for project in std::fs::read_dir(tmp).ok()?.flatten() {
        let Ok(chats) = std::fs::read_dir(project.path().join("chats")) else {
            continue;
        };
        for file in chats.flatten() {
            let name = file.file_name();
            let name = name.to_string_lossy();
            if name.starts_with("session-") && name.ends_with(&format!("-{short}.jsonl")) {
                return Some(file.path());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_chats_survive_and_healers_settings_are_written() {
        let dir = tempfile::tempdir().expect("dir");
        let home = dir.path().join(KEPT).join(DOT_GEMINI);
        let chats = home.join("tmp/repo/chats");
        std::fs::create_dir_all(&chats).expect("chats");
        std::fs::write(chats.join("session-1-abcdefgh.jsonl"), "{}").expect("chat");
        std::fs::write(home.join("tmp/repo/.project_root"), "/x").expect("root");
        std::fs::create_dir_all(home.join("tmp/repo/logs")).expect("logs");
        std::fs::write(home.join("GEMINI.md"), "obey the repo").expect("memory");
        std::fs::write(home.join("settings.json"), r#"{"hooks":{}}"#).expect("settings");
        std::fs::create_dir_all(home.join("extensions/x")).expect("ext");
        std::fs::write(dir.path().join(KEPT).join(".env"), "A=1").expect("env");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&outside).expect("outside");
        std::os::unix::fs::symlink(&outside, home.join("commands")).expect("link");

        let gemini_home = prepare(dir.path()).expect("prepared");
        assert!(chats.join("session-1-abcdefgh.jsonl").is_file());
        assert!(home.join("tmp/repo/.project_root").is_file());
        assert!(!home.join("tmp/repo/logs").exists());
        assert!(!home.join("GEMINI.md").exists());
        assert!(!home.join("extensions").exists());
        assert!(std::fs::symlink_metadata(home.join("commands")).is_err());
        assert!(outside.is_dir(), "a link is removed, never followed");
        assert!(!gemini_home.join(".env").exists());
        let written: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(home.join("settings.json")).expect("settings"),
        )
        .expect("json");
        assert_eq!(written, settings());
        assert_eq!(
            chat(&gemini_home, "abcdefgh-1234"),
            Some(chats.join("session-1-abcdefgh.jsonl"))
        );
    }
}
