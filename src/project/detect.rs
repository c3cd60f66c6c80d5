//! What Healer can tell about a repository before the person confirms it: verification
//! commands (package.json scripts, `node --test`, a TypeScript check, Cargo, Go, pytest or
//! unittest, mypy or pyright, a Makefile `test` or `check` target), an init script, and the
//! coding agents installed on this machine with their versions.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::session::AgentKind;
use crate::store::VerifyCommand;

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
        for (name, command) in node_without_scripts(root, &scripts, runner) {
            add(&mut verify, name, command);
        }
    }
    if root.join("Cargo.toml").is_file() {
        found.push("a Rust project (Cargo.toml)".to_string());
        add(&mut verify, "check", "cargo check".to_string());
        add(&mut verify, "test", "cargo test".to_string());
    }
    if root.join("go.mod").is_file() {
        found.push("a Go module (go.mod)".to_string());
        add(&mut verify, "test", "go test ./...".to_string());
    }
    match python_tests(root) {
        Some(PythonTests::Pytest) => {
            found.push("a Python project with pytest".to_string());
            if !python_has("pytest") {
                found.push(
                    "pytest is not installed for python3 on this computer: the check cannot run \
                     until it is (pip install pytest), or choose another check"
                        .to_string(),
                );
            }
            add(&mut verify, "test", "python3 -m pytest -q".to_string());
        }
        Some(PythonTests::Unittest(command)) => {
            found.push("Python tests written with unittest".to_string());
            add(&mut verify, "test", command);
        }
        None => {}
    }
    if let Some((what, command)) = python_type_check(root) {
        found.push(format!("a Python type check ({what})"));
        add(&mut verify, "typecheck", command);
    }
    for target in ["test", "check"] {
        if make_target(root, target) && !verify.iter().any(|v| v.name == target) {
            found.push(format!("a Makefile with a {target} target"));
            add(&mut verify, target, format!("make {target}"));
        }
    }
    (found, verify)
}

/// Node tests and a TypeScript check that package.json does not name as scripts: `node --test`
/// when test files are there, `npx tsc --noEmit` when the project has a tsconfig.json and
/// TypeScript.
fn node_without_scripts(
    root: &Path,
    scripts: &[String],
    runner: &str,
) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if !scripts.iter().any(|s| s == "typecheck")
        && root.join("tsconfig.json").is_file()
        && read(root, "package.json").contains("\"typescript\"")
    {
        let exec = if runner == "npm" { "npx" } else { runner };
        out.push(("typecheck", format!("{exec} tsc --noEmit")));
    }
    if !scripts.iter().any(|s| s == "test") && node_test_files(root) {
        out.push(("test", "node --test".to_string()));
    }
    out
}

/// `*.test.js`-like files at the top, or a `test/` or `tests/` folder with JavaScript in it.
fn node_test_files(root: &Path) -> bool {
    let is_test = |name: &str| {
        [
            ".test.js",
            ".test.mjs",
            ".test.cjs",
            ".spec.js",
            ".spec.mjs",
        ]
        .iter()
        .any(|ext| name.ends_with(ext))
    };
    let names = |dir: &Path| -> Vec<String> {
        std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .flatten()
                    .filter_map(|e| e.file_name().to_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    names(root).iter().any(|n| is_test(n))
        || ["test", "tests"].iter().any(|d| {
            names(&root.join(d))
                .iter()
                .any(|n| n.ends_with(".js") || n.ends_with(".mjs") || n.ends_with(".cjs"))
        })
}

/// The package.json script names, when the file is there and readable. npm's placeholder test
/// script ("no test specified") does not count.
fn package_scripts(root: &Path) -> Option<Vec<String>> {
    let text = read(root, "package.json");
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

/// How a Python project's tests run.
#[derive(Debug, PartialEq, Eq)]
enum PythonTests {
    Pytest,
    /// `python3 -m unittest discover …`, with where and what to discover.
    Unittest(String),
}

/// A file of the repository as text, read without following a link and only when it is a
/// regular file (a repository is untrusted input: `requirements.txt -> /dev/zero` must not hang
/// detection, nor a link make it read outside); "" when it is absent or refused.
fn read(root: &Path, rel: impl AsRef<Path>) -> String {
    crate::beneath::read(root, rel.as_ref())
        .ok()
        .flatten()
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default()
}

/// pytest when the project says so (its configuration, a conftest.py, a pyproject.toml, pytest
/// in its requirements) or its test files are pytest's (plain `def test_…` functions); else
/// unittest, when test files are there: `test_*.py` or `*_test.py` at the top, or a `tests/` or
/// `test/` folder of them.
/// Whether `python3` here can import `module` (a check that needs it can run).
fn python_has(module: &str) -> bool {
    std::process::Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Why a check could not run at all on this computer, from what it printed: the program it
/// starts is not installed (`make: command not found`), or the Python module it runs with `-m`
/// (`python3: No module named pytest`). Not the agent's change: nothing of it was checked.
pub fn check_could_not_run(command: &str, output: &str) -> Option<String> {
    let words: Vec<&str> = command.split_whitespace().collect();
    let program = words.first()?;
    if let Some(module) = words
        .windows(2)
        .find(|w| w[0] == "-m")
        .map(|w| w[1])
        .filter(|_| program.starts_with("python"))
    {
        if output.contains(&format!("No module named {module}")) {
            return Some(format!(
                "{module} is not installed for {program} on this computer (pip install {module})"
            ));
        }
    }
    let missing = [
        format!("{program}: command not found"),
        format!("{program}: not found"),
    ];
    if missing.iter().any(|m| output.contains(m.as_str())) {
        return Some(format!(
            "{program} is not installed on this computer (not on PATH)"
        ));
    }
    None
}

fn python_tests(root: &Path) -> Option<PythonTests> {
    let mentions_pytest = |file: &str| read(root, file).contains("pytest");
    let configured = root.join("pyproject.toml").is_file()
        || root.join("pytest.ini").is_file()
        || root.join("conftest.py").is_file()
        || [
            "setup.cfg",
            "tox.ini",
            "requirements.txt",
            "requirements-dev.txt",
        ]
        .iter()
        .any(|f| mentions_pytest(f));
    if configured {
        return Some(PythonTests::Pytest);
    }
    let py_files = |dir: &Path| -> Vec<std::path::PathBuf> {
        std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|e| e == "py"))
                    .collect()
            })
            .unwrap_or_default()
    };
    let name_of = |p: &std::path::PathBuf| {
        p.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string()
    };
    let top: Vec<_> = py_files(root);
    let top_tests: Vec<_> = top
        .iter()
        .filter(|p| name_of(p).starts_with("test_"))
        .collect();
    let suffixed: Vec<_> = top
        .iter()
        .filter(|p| name_of(p).ends_with("_test.py"))
        .collect();
    let folder = ["tests", "test"].into_iter().find(|d| {
        py_files(&root.join(d))
            .iter()
            .any(|p| name_of(p).starts_with("test"))
    });
    let files: Vec<std::path::PathBuf> = match folder {
        Some(d) => py_files(&root.join(d)),
        None => top_tests
            .iter()
            .chain(&suffixed)
            .map(|p| (*p).clone())
            .collect(),
    };
    if files.is_empty() {
        return None;
    }
    let uses_unittest = files
        .iter()
        .filter_map(|f| f.strip_prefix(root).ok())
        .any(|rel| read(root, rel).contains("unittest"));
    if !uses_unittest {
        return Some(PythonTests::Pytest);
    }
    Some(PythonTests::Unittest(match folder {
        Some(d) => format!("python3 -m unittest discover -s {d}"),
        None if top_tests.is_empty() => "python3 -m unittest discover -p '*_test.py'".to_string(),
        None => "python3 -m unittest discover -p 'test_*.py'".to_string(),
    }))
}

/// A type checker the project configures: mypy or pyright.
fn python_type_check(root: &Path) -> Option<(&'static str, String)> {
    let pyproject = read(root, "pyproject.toml");
    if root.join("mypy.ini").is_file()
        || root.join(".mypy.ini").is_file()
        || pyproject.contains("[tool.mypy]")
        || read(root, "setup.cfg").contains("[mypy")
    {
        return Some(("mypy", "python3 -m mypy .".to_string()));
    }
    if root.join("pyrightconfig.json").is_file() || pyproject.contains("[tool.pyright]") {
        return Some(("pyright", "pyright".to_string()));
    }
    None
}

fn make_target(root: &Path, target: &str) -> bool {
    ["Makefile", "makefile", "GNUmakefile"].iter().any(|name| {
        read(root, name).lines().any(|l| {
            l.strip_prefix(target)
                .is_some_and(|rest| rest.trim_start().starts_with(':'))
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

/// The version number in what `--version` printed: `2.1.328 (Claude Code)` → `2.1.328`,
/// `codex-cli 0.169.0` → `0.169.0`; the whole line when it holds none.
pub fn version_number(said: &str) -> String {
    said.split(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == ',')
        .map(|w| w.trim_start_matches('v'))
        .find(|w| {
            w.contains('.')
                && w.chars()
                    .all(|c| c.is_ascii_digit() || c == '.' || c == '-' || c.is_ascii_alphabetic())
                && w.starts_with(|c: char| c.is_ascii_digit())
        })
        .unwrap_or(said)
        .to_string()
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_check_whose_runner_is_missing_is_told_apart_from_a_failing_one() {
        assert_eq!(
            check_could_not_run(
                "python3 -m pytest -q",
                "/usr/bin/python3: No module named pytest\n"
            )
            .as_deref(),
            Some("pytest is not installed for python3 on this computer (pip install pytest)")
        );
        assert!(check_could_not_run("make test", "sh: 1: make: not found").is_some());
        // The agent's code importing a module it did not add is the agent's failure.
        assert!(check_could_not_run(
            "python3 -m pytest -q",
            "E   ModuleNotFoundError: No module named 'requests'\n1 failed"
        )
        .is_none());
        assert!(check_could_not_run("cargo test", "test result: FAILED.").is_none());
    }

    use super::*;

    fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("temp dir");
        for (path, text) in files {
            let full = dir.path().join(path);
            std::fs::create_dir_all(full.parent().expect("a parent")).expect("folder");
            std::fs::write(full, text).expect("file");
        }
        dir
    }

    fn commands(files: &[(&str, &str)]) -> Vec<(String, String)> {
        let dir = repo(files);
        verification_commands(dir.path())
            .1
            .into_iter()
            .map(|v| (v.name, v.command))
            .collect()
    }

    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    const UNITTEST: &str =
        "import unittest\nclass T(unittest.TestCase):\n    def test_x(self):\n        pass\n";

    #[test]
    fn python_tests_are_found_with_unittest_or_pytest_as_written() {
        assert_eq!(
            commands(&[("calc.py", "x = 1\n"), ("test_calc.py", UNITTEST)]),
            pairs(&[("test", "python3 -m unittest discover -p 'test_*.py'")])
        );
        assert_eq!(
            commands(&[("calc_test.py", UNITTEST)]),
            pairs(&[("test", "python3 -m unittest discover -p '*_test.py'")])
        );
        assert_eq!(
            commands(&[("tests/test_calc.py", UNITTEST)]),
            pairs(&[("test", "python3 -m unittest discover -s tests")])
        );
        // Plain test functions are pytest's.
        assert_eq!(
            commands(&[("test_calc.py", "def test_x():\n    assert 1\n")]),
            pairs(&[("test", "python3 -m pytest -q")])
        );
        assert_eq!(
            commands(&[
                ("requirements.txt", "pytest==8\n"),
                ("tests/test_a.py", UNITTEST)
            ]),
            pairs(&[("test", "python3 -m pytest -q")])
        );
        // A script that is not a test says nothing.
        assert!(commands(&[("main.py", "print(1)\n")]).is_empty());
    }

    #[test]
    fn a_configured_type_checker_is_a_check() {
        assert_eq!(
            commands(&[("mypy.ini", "[mypy]\n"), ("test_a.py", UNITTEST)]),
            pairs(&[
                ("test", "python3 -m unittest discover -p 'test_*.py'"),
                ("typecheck", "python3 -m mypy .")
            ])
        );
        assert_eq!(
            commands(&[("pyrightconfig.json", "{}")]),
            pairs(&[("typecheck", "pyright")])
        );
    }

    #[test]
    fn a_link_in_the_repository_is_not_followed() {
        let dir = repo(&[("test_a.py", UNITTEST)]);
        for name in ["requirements.txt", "package.json", "Makefile", "setup.cfg"] {
            std::os::unix::fs::symlink("/dev/zero", dir.path().join(name)).expect("link");
        }
        std::os::unix::fs::symlink("/etc/hostname", dir.path().join("test_b.py")).expect("link");
        // Answers at once, from the repository's own files only.
        let (found, verify) = verification_commands(dir.path());
        assert_eq!(
            verify
                .into_iter()
                .map(|v| (v.name, v.command))
                .collect::<Vec<_>>(),
            pairs(&[("test", "python3 -m unittest discover -p 'test_*.py'")]),
            "{found:?}"
        );
    }

    #[test]
    fn node_go_and_make_checks_are_found() {
        assert_eq!(
            commands(&[
                (
                    "package.json",
                    r#"{"name":"x","devDependencies":{"typescript":"5"}}"#
                ),
                ("tsconfig.json", "{}"),
                ("test/calc.test.js", "")
            ]),
            pairs(&[("typecheck", "npx tsc --noEmit"), ("test", "node --test")])
        );
        // npm's placeholder test script is not a test; node --test files are.
        assert_eq!(
            commands(&[
                (
                    "package.json",
                    r#"{"scripts":{"test":"echo \"Error: no test specified\" && exit 1"}}"#
                ),
                ("calc.test.mjs", "")
            ]),
            pairs(&[("test", "node --test")])
        );
        assert_eq!(
            commands(&[("go.mod", "module x\n")]),
            pairs(&[("test", "go test ./...")])
        );
        assert_eq!(
            commands(&[("Makefile", "check:\n\t./lint\ntest :\n\t./t\n")]),
            pairs(&[("test", "make test"), ("check", "make check")])
        );
    }
}
