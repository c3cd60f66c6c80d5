//! Is an agent's CLI installed, and which version: for the project form's detection, and to
//! find the native program behind an npm install. Both CLIs ship as an npm package whose
//! command is a Node wrapper around a native binary in a per-platform package; the wrapper does
//! not pass signals on (a Stop would orphan the agent), so Healer starts the binary itself.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

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
