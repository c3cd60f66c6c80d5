//! A Python workflow's virtual environment: `<folder>/.venv`, made with `python3 -m venv`,
//! filled by pip from PyPI. The requirements and the lock (every installed distribution,
//! pinned, in pip-freeze form) are written beside it in `<folder>/.healer/`.
//!
//! When the machine's pip can install into another interpreter (`pip --python`, pip 22.3+),
//! the venv is made without its own pip: a fraction of a second instead of the ten that
//! `ensurepip` takes. Otherwise the venv gets its own pip.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use super::installer::{self, Ran};
use super::{Built, Requirement, VENV_DIR};

/// Prints the venv's distributions as `Name==version` lines, the way `pip freeze` does (pip
/// and its helpers left out), without needing pip.
const LOCK_SCRIPT: &str = r#"
import importlib.metadata as m
skip = {"pip", "setuptools", "wheel", "distribute"}
found = {}
for d in m.distributions():
    name = d.metadata["Name"]
    if name and name.lower() not in skip:
        found[name] = d.version
print("\n".join(f"{n}=={v}" for n, v in sorted(found.items(), key=lambda kv: kv[0].lower())))
"#;

pub(crate) fn venv_python(folder: &Path) -> PathBuf {
    folder.join(VENV_DIR).join("bin").join("python")
}

pub(super) async fn build(
    folder: &Path,
    requirements: &[Requirement],
    fresh: bool,
    timeout: Duration,
) -> Built {
    let venv = folder.join(VENV_DIR);
    let mut log = String::new();
    if fresh || requirements.is_empty() {
        let _ = std::fs::remove_dir_all(&venv);
    }
    if requirements.is_empty() {
        // Nothing declared: the workflow runs with the machine's interpreter again.
        for file in ["requirements.txt", "requirements.lock"] {
            let _ = std::fs::remove_file(folder.join(".healer").join(file));
        }
        return Built {
            ok: true,
            log,
            lock: Vec::new(),
            error: None,
            interpreter: interpreter(folder).await,
        };
    }
    // A venv without its interpreter (an interrupted build) is made again.
    if !venv_python(folder).exists() {
        let _ = std::fs::remove_dir_all(&venv);
        let mut args = vec!["-m".to_string(), "venv".to_string()];
        if machine_pip_can_target().await {
            args.push("--without-pip".to_string());
        }
        args.push(VENV_DIR.to_string());
        let ran = installer::run("python3", &args, folder, timeout).await;
        log.push_str(&format!("$ python3 {}\n{}", args.join(" "), ran.output));
        if !ran.ok {
            let error = venv_error(&ran);
            let interpreter = interpreter(folder).await;
            return Built::failed(log, error, interpreter);
        }
    }
    let listed = super::requirements_text(super::Ecosystem::Python, requirements);
    let healer_dir = folder.join(".healer");
    let written = std::fs::create_dir_all(&healer_dir)
        .and_then(|()| std::fs::write(healer_dir.join("requirements.txt"), format!("{listed}\n")));
    if let Err(e) = written {
        let interpreter = interpreter(folder).await;
        return Built::failed(
            log,
            format!(
                "Healer could not write the requirements file in {}: {e}",
                healer_dir.display()
            ),
            interpreter,
        );
    }
    let (program, mut args) = pip_command(folder);
    args.extend(["install", "-r", ".healer/requirements.txt"].map(String::from));
    let ran = installer::run(&program, &args, folder, timeout).await;
    log.push_str(&format!(
        "$ pip install -r requirements.txt\n{}",
        ran.output
    ));
    if !ran.ok {
        let interpreter = interpreter(folder).await;
        return Built::failed(log, pip_error(&ran), interpreter);
    }
    let lock = lock(folder, timeout).await;
    let _ = std::fs::write(healer_dir.join("requirements.lock"), lock.join("\n") + "\n");
    Built {
        ok: true,
        log,
        lock,
        error: None,
        interpreter: interpreter(folder).await,
    }
}

/// Every distribution installed in the venv, pinned.
pub(super) async fn lock(folder: &Path, timeout: Duration) -> Vec<String> {
    let python = venv_python(folder).to_string_lossy().into_owned();
    let args = ["-I", "-c", LOCK_SCRIPT].map(String::from);
    let ran = installer::run(&python, &args, folder, timeout).await;
    if !ran.ok {
        return Vec::new();
    }
    ran.output
        .lines()
        .map(str::trim)
        .filter(|l| l.contains("=="))
        .map(str::to_string)
        .collect()
}

/// "Python 3.11.7 (this workflow's own environment)", or the machine's when it has none.
pub(super) async fn interpreter(folder: &Path) -> String {
    let own = venv_python(folder);
    let (program, whose) = if own.exists() {
        (
            own.to_string_lossy().into_owned(),
            "this workflow's own environment",
        )
    } else {
        ("python3".to_string(), "the machine's")
    };
    let ran = installer::run(
        &program,
        &["--version".to_string()],
        folder.parent().unwrap_or(folder),
        Duration::from_secs(10),
    )
    .await;
    if ran.ok {
        format!("{} ({whose})", ran.output.trim())
    } else {
        "python3 is not installed on this machine".to_string()
    }
}

/// pip for the venv: its own when it has one, else the machine's pointed at it.
fn pip_command(folder: &Path) -> (String, Vec<String>) {
    let python = venv_python(folder).to_string_lossy().into_owned();
    if folder.join(VENV_DIR).join("bin").join("pip").exists() {
        (python, vec!["-m".to_string(), "pip".to_string()])
    } else {
        // The interpreter the venv was made from, not `python3` on PATH: a version manager's
        // shim (pyenv) runs its own hook after pip and fails the install when its lock is stale.
        let base = std::fs::canonicalize(venv_python(folder))
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| "python3".to_string());
        (
            base,
            vec![
                "-m".to_string(),
                "pip".to_string(),
                "--python".to_string(),
                python,
            ],
        )
    }
}

/// Whether `python3 -m pip` exists and is new enough for `--python` (22.3). Asked once.
async fn machine_pip_can_target() -> bool {
    static ANSWER: OnceLock<bool> = OnceLock::new();
    if let Some(answer) = ANSWER.get() {
        return *answer;
    }
    let ran = installer::run(
        "python3",
        &["-m", "pip", "--version"].map(String::from),
        &std::env::temp_dir(),
        Duration::from_secs(30),
    )
    .await;
    let new_enough = ran.ok
        && ran
            .output
            .split_whitespace()
            .nth(1)
            .and_then(|v| {
                let mut parts = v.split('.').map(|p| p.parse::<u32>().ok());
                Some((parts.next()??, parts.next().flatten().unwrap_or(0)))
            })
            .is_some_and(|(major, minor)| (major, minor) >= (22, 3));
    *ANSWER.get_or_init(|| new_enough)
}

fn venv_error(ran: &Ran) -> String {
    if ran.missing {
        return "python3 is not installed on this machine (it is not on the PATH)".to_string();
    }
    let out = &ran.output;
    if out.contains("ensurepip is not available") || out.contains("No module named venv") {
        return "Python cannot make virtual environments on this machine: install the Debian package python3-venv (apt-get install python3-venv)".to_string();
    }
    last_lines(out, 4)
}

/// pip's own error lines ("ERROR: No matching distribution found for x"), else its last words.
fn pip_error(ran: &Ran) -> String {
    let errors: Vec<&str> = ran
        .output
        .lines()
        .filter(|l| l.starts_with("ERROR:"))
        .take(6)
        .collect();
    if errors.is_empty() {
        last_lines(&ran.output, 4)
    } else {
        errors.join("\n")
    }
}

pub(super) fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines
        .get(lines.len().saturating_sub(n)..)
        .unwrap_or_default()
        .join("\n")
}
