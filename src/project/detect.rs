//! What Healer can tell about a repository before the person confirms it: verification
//! commands (package.json scripts, Cargo, pytest, a Makefile `test` target), an init script,
//! and the coding agents installed on this machine with their versions.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::session::AgentKind;
use crate::store::VerifyCommand;

/// How long `claude --version` may take before it counts as not answering.
const VERSION_TIMEOUT: Duration = Duration::from_secs(5);

/// Init scripts looked for, in order.
const INIT_SCRIPTS: [&str; 4] = [".healer/init.sh", "init.sh", "scripts/init.sh", "bin/setup"];

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct Detection {
    /// What was recognised, in words ("a Node project (package.json)").
    pub found: Vec<String>,
    pub verify: Vec<VerifyCommand>,
    pub init_script: Option<String>,
    pub agents: Vec<InstalledAgent>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct InstalledAgent {
    pub kind: AgentKind,
    /// The agent's name for a person ("Claude Code").
    pub name: String,
    /// Where its program was found on PATH.
    pub program: Option<String>,
    pub version: Option<String>,
    /// This build of Healer can run it, and (for a CLI agent) it is installed.
    pub usable: bool,
    /// One sentence on its state.
    pub message: String,
}

/// The commands a repository's own files name.
pub fn verification_commands(root: &Path) -> (Vec<String>, Vec<VerifyCommand>) {
    let mut found = Vec::new();
    let mut verify: Vec<VerifyCommand> = Vec::new();
    let add = |verify: &mut Vec<VerifyCommand>, name: &str, command: String| {
        let mut unique = name.to_string();
        let mut n = 2;
        while verify.iter().any(|v| v.name == unique) {
            unique = format!("{name}-{n}");
            n += 1;
        }
        verify.push(VerifyCommand {
            name: unique,
            command,
        });
    };
    if let Some(scripts) = package_scripts(root) {
        found.push("a Node project (package.json)".to_string());
        let runner = node_runner(root);
        for name in ["typecheck", "lint", "test"] {
            if scripts.contains(&name.to_string()) {
                add(&mut verify, name, format!("{runner} run {name}"));
            }
        }
    }
    if root.join("Cargo.toml").is_file() {
        found.push("a Rust project (Cargo.toml)".to_string());
        add(&mut verify, "check", "cargo check".to_string());
        add(&mut verify, "test", "cargo test".to_string());
    }
    if python_tests(root) {
        found.push("a Python project with pytest".to_string());
        add(&mut verify, "test", "python3 -m pytest -q".to_string());
    }
    if make_test_target(root) {
        found.push("a Makefile with a test target".to_string());
        if !verify.iter().any(|v| v.command.contains("test")) {
            add(&mut verify, "test", "make test".to_string());
        }
    }
    (found, verify)
}

/// The package.json script names, when the file is there and readable. npm's placeholder test
/// script ("no test specified") does not count.
fn package_scripts(root: &Path) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(root.join("package.json")).ok()?;
    let json: Value = serde_json::from_str(&text).ok()?;
    let scripts = json.get("scripts").and_then(Value::as_object);
    Some(
        scripts
            .map(|s| {
                s.iter()
                    .filter(|(_, cmd)| {
                        !cmd.as_str()
                            .is_some_and(|c| c.contains("no test specified"))
                    })
                    .map(|(name, _)| name.clone())
                    .collect()
            })
            .unwrap_or_default(),
    )
}

fn node_runner(root: &Path) -> &'static str {
    if root.join("pnpm-lock.yaml").is_file() {
        "pnpm"
    } else if root.join("yarn.lock").is_file() {
        "yarn"
    } else if root.join("bun.lockb").is_file() || root.join("bun.lock").is_file() {
        "bun"
    } else {
        "npm"
    }
}

fn python_tests(root: &Path) -> bool {
    let mentions_pytest =
        |file: &str| std::fs::read_to_string(root.join(file)).is_ok_and(|t| t.contains("pytest"));
    root.join("pyproject.toml").is_file()
        || root.join("pytest.ini").is_file()
        || root.join("conftest.py").is_file()
        || mentions_pytest("setup.cfg")
        || mentions_pytest("tox.ini")
}

fn make_test_target(root: &Path) -> bool {
    ["Makefile", "makefile", "GNUmakefile"].iter().any(|name| {
        std::fs::read_to_string(root.join(name)).is_ok_and(|text| {
            text.lines()
                .any(|l| l.starts_with("test:") || l.starts_with("test :"))
        })
    })
}

/// An init script in the repository, as the command that runs it.
pub fn init_script(root: &Path) -> Option<String> {
    INIT_SCRIPTS
        .iter()
        .find(|p| root.join(p).is_file())
        .map(|p| format!("bash {p}"))
}

/// Where `program` is on PATH and what `program --version` says (first line).
pub async fn program_version(program: &str) -> (Option<String>, Option<String>) {
    let Ok(path) = which::which(program) else {
        return (None, None);
    };
    let mut cmd = tokio::process::Command::new(&path);
    cmd.arg("--version")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let version = match tokio::time::timeout(VERSION_TIMEOUT, cmd.output()).await {
        Ok(Ok(out)) if out.status.success() => String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty()),
        _ => None,
    };
    (Some(path.display().to_string()), version)
}
