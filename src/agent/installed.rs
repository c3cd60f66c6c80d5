//! Is an agent's CLI installed, and which version: for the project form's detection, and to
//! find the native program behind an npm install. Both CLIs ship as an npm package whose
//! command is a Node wrapper around a native binary in a per-platform package; the wrapper does
//! not pass signals on (a Stop would orphan the agent), so Healer starts the binary itself.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::session::AgentKind;

/// How long `--version` may take.
const VERSION_TIME_LIMIT: Duration = Duration::from_secs(10);

/// An agent CLI found on this machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct Installed {
    /// The program Healer starts (the native binary when the command is an npm wrapper).
    pub program: PathBuf,
    /// What `--version` printed, e.g. `2.1.328 (Claude Code)` or `codex-cli 0.169.0`.
    pub version: String,
}

/// The program for `command`: `explicit` when given, else the command on PATH; an npm
/// wrapper is replaced by the native binary beside it (`native` lists the candidates, relative
/// to the `node_modules` folder the wrapper's package sits in).
pub(crate) fn resolve(
    explicit: Option<&Path>,
    command: &str,
    package: &str,
    native: &[String],
) -> Option<PathBuf> {
    let found = match explicit {
        Some(path) => path.to_path_buf(),
        None => which::which(command).ok()?,
    };
    Some(native_beside(&found, package, native).unwrap_or(found))
}

/// When `program` lies inside the npm package `package` (`…/node_modules/<package>/…`), the
/// first native candidate that exists in that `node_modules`.
fn native_beside(program: &Path, package: &str, native: &[String]) -> Option<PathBuf> {
    let real = std::fs::canonicalize(program).unwrap_or_else(|_| program.to_path_buf());
    let text = real.to_string_lossy();
    let marker = format!("/node_modules/{package}/");
    let at = text.find(&marker)?;
    let modules = Path::new(text.get(..at + "/node_modules".len())?);
    native
        .iter()
        .map(|candidate| modules.join(candidate))
        .find(|path| path.is_file())
}

/// Run `program --version` and return its first line.
pub(crate) async fn version(program: &Path) -> Option<String> {
    let run = tokio::process::Command::new(program)
        .arg("--version")
        // Gemini CLI starts itself again in a second Node process first, which takes seconds.
        .env("GEMINI_CLI_NO_RELAUNCH", "true")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(VERSION_TIME_LIMIT, run)
        .await
        .ok()?
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let first = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    Some(first.to_string())
}

/// "Claude Code is not installed …": what is missing and how to get it, in a sentence.
pub fn not_installed(kind: AgentKind) -> String {
    match kind {
        AgentKind::Builtin => "Healer's built-in agent needs nothing installed.".to_string(),
        AgentKind::ClaudeCode => "Claude Code is not installed on this computer (no claude \
            program was found). Install Claude Code from Anthropic (the npm package \
            @anthropic-ai/claude-code), or give the path to its program in the project's \
            settings."
            .to_string(),
        AgentKind::Codex => "Codex is not installed on this computer (no codex program was \
            found). Install Codex from OpenAI (the npm package @openai/codex), or give the path \
            to its program in the project's settings."
            .to_string(),
        AgentKind::OpenCode => "opencode is not installed on this computer (no opencode \
            program was found). Install opencode (the npm package opencode-ai), or give the \
            path to its program in the project's settings."
            .to_string(),
        AgentKind::GeminiCli => "Gemini CLI is not installed on this computer (no gemini \
            program was found). Install Gemini CLI from Google (the npm package \
            @google/gemini-cli), or give the path to its program in the project's settings."
            .to_string(),
    }
}

/// The version of each agent CLI Healer's tests run (pinned in `tests/agents/package.json`; a
/// test keeps the two the same).
pub fn tested_version(kind: AgentKind) -> Option<&'static str> {
    match kind {
        AgentKind::Builtin => None,
        AgentKind::ClaudeCode => Some("2.1.328"),
        AgentKind::Codex => Some("0.169.0"),
        AgentKind::OpenCode => Some("1.18.33"),
        AgentKind::GeminiCli => Some("0.61.0"),
    }
}

/// The first `major.minor.patch` (or `major.minor`) in what `--version` printed, as numbers.
pub fn version_numbers(said: &str) -> Option<Vec<u64>> {
    said.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .map(|word| word.trim_matches('.'))
        .find(|word| word.contains('.'))
        .and_then(|word| word.split('.').map(|n| n.parse().ok()).collect())
}

/// What a session says when the agent's program is not the version Healer was tested with:
/// "opencode 1.19 is newer than the 1.18 Healer was tested with …". Releases of one minor
/// version are taken as the same (agents release patch versions daily); `None` when it is
/// one of them, or when either version cannot be read.
pub fn untested_note(kind: AgentKind, said: &str) -> Option<String> {
    let tested = version_numbers(tested_version(kind)?)?;
    let found = version_numbers(said)?;
    let minor = |v: &[u64]| (v.first().copied(), v.get(1).copied());
    let (found_minor, tested_minor) = (minor(&found), minor(&tested));
    if found_minor == tested_minor {
        return None;
    }
    let words = |v: (Option<u64>, Option<u64>)| {
        format!("{}.{}", v.0.unwrap_or_default(), v.1.unwrap_or_default())
    };
    let how = if found_minor > tested_minor {
        "newer"
    } else {
        "older"
    };
    Some(format!(
        "{} {} is {how} than the {} Healer was tested with. The session runs; what Healer \
         cannot read of its output is kept as it came, and if Healer cannot follow it at all \
         the session ends saying so.",
        kind.name(),
        words(found_minor),
        words(tested_minor)
    ))
}

/// "Claude Code 9.9.9": the agent, with the version its program said when it could be read.
pub fn named(kind: AgentKind, said: Option<&str>) -> String {
    match said.and_then(version_numbers) {
        Some(numbers) => format!(
            "{} {}",
            kind.name(),
            numbers
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(".")
        ),
        None => kind.name().to_string(),
    }
}

/// The platform part of the native packages' names (`linux-x64`, `darwin-arm64` …).
pub(crate) fn platform() -> String {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    };
    format!("{os}-{arch}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tested_versions_are_the_ones_the_tests_pin() {
        let pins: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/agents/package.json"))
                .expect("package.json");
        let deps = &pins["dependencies"];
        for (kind, package) in [
            (AgentKind::ClaudeCode, "@anthropic-ai/claude-code"),
            (AgentKind::Codex, "@openai/codex"),
            // opencode-ai's own binary for this platform: the registry the tests install from
            // lacks its other platforms' packages, which `npm ci` would want in the lock.
            (AgentKind::OpenCode, "opencode-linux-x64"),
            (AgentKind::GeminiCli, "@google/gemini-cli"),
        ] {
            assert_eq!(
                deps[package].as_str(),
                tested_version(kind),
                "{package} is pinned at another version than Healer says it was tested with"
            );
        }
    }

    #[test]
    fn a_version_of_another_minor_release_is_said_and_a_patch_release_is_not() {
        assert_eq!(
            version_numbers("2.1.328 (Claude Code)"),
            Some(vec![2, 1, 328])
        );
        assert_eq!(version_numbers("codex-cli 0.169.0"), Some(vec![0, 169, 0]));
        assert_eq!(version_numbers("no version"), None);
        assert_eq!(
            untested_note(AgentKind::ClaudeCode, "2.1.400 (Claude Code)"),
            None
        );
        let newer = untested_note(AgentKind::ClaudeCode, "9.9.9 (Claude Code)").expect("a note");
        assert!(
            newer.starts_with("Claude Code 9.9 is newer than the 2.1 Healer was tested with."),
            "{newer}"
        );
        let older = untested_note(AgentKind::Codex, "codex-cli 0.150.2").expect("a note");
        assert!(
            older.starts_with("Codex 0.150 is older than the 0.169"),
            "{older}"
        );
        assert_eq!(untested_note(AgentKind::Codex, "garbage"), None);
        assert_eq!(untested_note(AgentKind::Builtin, "1.0.0"), None);
    }

    #[test]
    fn an_npm_wrapper_is_replaced_by_the_native_binary_beside_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        let modules = dir.path().join("node_modules");
        let wrapper = modules.join("@scope/tool/bin/tool.js");
        let binary = modules.join("@scope/tool-linux-x64/tool");
        for file in [&wrapper, &binary] {
            std::fs::create_dir_all(file.parent().expect("parent")).expect("dirs");
            std::fs::write(file, "x").expect("file");
        }
        let native = vec![
            "@scope/tool-musl/tool".to_string(),
            "@scope/tool-linux-x64/tool".to_string(),
        ];
        let got = resolve(Some(&wrapper), "tool", "@scope/tool", &native).expect("found");
        assert_eq!(
            std::fs::canonicalize(got).expect("real"),
            std::fs::canonicalize(&binary).expect("real")
        );
        // A program outside any npm package is started as it is.
        let plain = dir.path().join("tool");
        std::fs::write(&plain, "x").expect("file");
        assert_eq!(
            resolve(Some(&plain), "tool", "@scope/tool", &native),
            Some(plain)
        );
    }
}
