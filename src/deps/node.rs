//! A Node workflow's packages: `<folder>/node_modules`, installed by npm from the registry as
//! the `dependencies` of `<folder>/package.json` (a package.json the person keeps there keeps
//! its other fields), locked in `<folder>/package-lock.json`.

use std::path::Path;
use std::time::Duration;

use serde_json::{Map, Value};

use super::installer::{self, Ran};
use super::python::last_lines;
use super::{Built, Requirement, NODE_MODULES_DIR};

pub(super) async fn build(
    folder: &Path,
    requirements: &[Requirement],
    fresh: bool,
    timeout: Duration,
) -> Built {
    if fresh || requirements.is_empty() {
        let _ = std::fs::remove_dir_all(folder.join(NODE_MODULES_DIR));
        let _ = std::fs::remove_file(folder.join("package-lock.json"));
    }
    if let Err(e) = write_manifest(folder, requirements) {
        return Built::failed(
            String::new(),
            format!(
                "Healer could not write package.json in {}: {e}",
                folder.display()
            ),
            interpreter().await,
        );
    }
    let mut log = String::new();
    if !requirements.is_empty() {
        let args = ["install", "--no-audit", "--no-fund", "--no-update-notifier"].map(String::from);
        let ran = installer::run("npm", &args, folder, timeout).await;
        log.push_str(&format!("$ npm install\n{}", ran.output));
        if !ran.ok {
            return Built::failed(log, npm_error(&ran), interpreter().await);
        }
    }
    Built {
        ok: true,
        log,
        lock: lock(folder),
        error: None,
        interpreter: interpreter().await,
    }
}

/// package.json with `dependencies` set to the requirements; whatever else a person's own file
/// holds ("type": "module") stays.
fn write_manifest(folder: &Path, requirements: &[Requirement]) -> std::io::Result<()> {
    let path = folder.join("package.json");
    let mut manifest = std::fs::read_to_string(&path)
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .and_then(|v| match v {
            Value::Object(map) => Some(map),
            _ => None,
        })
        .unwrap_or_default();
    manifest
        .entry("name")
        .or_insert_with(|| Value::String("healer-workflow".to_string()));
    manifest.entry("private").or_insert(Value::Bool(true));
    let dependencies: Map<String, Value> = requirements
        .iter()
        .map(|r| {
            let spec = if r.spec.is_empty() { "*" } else { &r.spec };
            (r.name.clone(), Value::String(spec.to_string()))
        })
        .collect();
    manifest.insert("dependencies".to_string(), Value::Object(dependencies));
    let text =
        serde_json::to_string_pretty(&Value::Object(manifest)).map_err(std::io::Error::other)?;
    std::fs::create_dir_all(folder)?;
    std::fs::write(path, text + "\n")
}

/// Every installed package, pinned (`name@version`), from package-lock.json.
pub(super) fn lock(folder: &Path) -> Vec<String> {
    let Some(lock) = std::fs::read_to_string(folder.join("package-lock.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
    else {
        return Vec::new();
    };
    let mut lines: Vec<String> = lock
        .get("packages")
        .and_then(Value::as_object)
        .map(|packages| {
            packages
                .iter()
                .filter_map(|(key, entry)| {
                    let (_, name) = key.rsplit_once("node_modules/")?;
                    let version = entry.get("version")?.as_str()?;
                    Some(format!("{name}@{version}"))
                })
                .collect()
        })
        .unwrap_or_default();
    lines.sort();
    lines.dedup();
    lines
}

pub(super) async fn interpreter() -> String {
    let ran = installer::run(
        "node",
        &["--version".to_string()],
        &std::env::temp_dir(),
        Duration::from_secs(10),
    )
    .await;
    if ran.ok {
        format!("Node {}", ran.output.trim())
    } else {
        "node is not installed on this machine".to_string()
    }
}

/// npm's own error lines, without the pointer to its debug log.
fn npm_error(ran: &Ran) -> String {
    if ran.missing {
        return "npm is not installed on this machine (it is not on the PATH)".to_string();
    }
    let errors: Vec<&str> = ran
        .output
        .lines()
        .filter(|l| l.starts_with("npm error") || l.starts_with("npm ERR!"))
        .filter(|l| !l.contains("A complete log of this run") && !l.contains("/_logs/"))
        .take(6)
        .collect();
    if errors.is_empty() {
        last_lines(&ran.output, 4)
    } else {
        errors.join("\n")
    }
}
