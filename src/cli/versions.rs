//! `healer workflow history` and `healer workflow diff`: a workflow's versions, and what
//! changed between two of them.

use healer::workflow::{Author, ScriptVersion, Version};
use healer::{Error, Paths, Result};

use crate::print::print_json;
use crate::reach::open;

pub fn history(paths: &Paths, name: &str, json: bool) -> Result<bool> {
    let store = open(paths)?;
    let workflow = store.workflow_by_name(name)?;
    let versions = store.versions(workflow.id)?;
    if json {
        return print_json(&versions);
    }
    for v in &versions {
        let mark = if v.active { "*" } else { " " };
        println!(
            "{mark} {:<6} {}  {:<12} {}",
            v.version.to_string(),
            v.created_at,
            author(&v.author),
            v.change_comment
        );
    }
    Ok(true)
}

/// `from` and `to` default to the version before the active one, and the active one.
pub fn diff(
    paths: &Paths,
    name: &str,
    from: Option<String>,
    to: Option<String>,
    json: bool,
) -> Result<bool> {
    let store = open(paths)?;
    let workflow = store.workflow_by_name(name)?;
    let versions = store.versions(workflow.id)?;
    let pick = |label: Option<String>, fallback: Option<&ScriptVersion>| -> Result<ScriptVersion> {
        match label {
            Some(label) => {
                let v = Version::parse(&label).ok_or_else(|| {
                    Error::InvalidInput(format!("{label:?} is not a version like 1.2"))
                })?;
                store.version(workflow.id, v)
            }
            None => fallback.cloned().ok_or_else(|| {
                Error::InvalidInput("there is only one version: nothing to compare".to_string())
            }),
        }
    };
    let active_at = versions.iter().position(|v| v.active).unwrap_or(0);
    let to = pick(to, versions.get(active_at))?;
    let before = versions.iter().rev().find(|v| v.version < to.version);
    let from = pick(from, before)?;
    let diff = unified_diff(&from, &to, &workflow.entry);
    if json {
        return print_json(&serde_json::json!({
            "from": from.version.to_string(),
            "to": to.version.to_string(),
            "diff": diff,
        }));
    }
    print!("{diff}");
    Ok(true)
}

fn unified_diff(from: &ScriptVersion, to: &ScriptVersion, entry: &str) -> String {
    similar::TextDiff::from_lines(&from.code, &to.code)
        .unified_diff()
        .context_radius(3)
        .header(
            &format!("{entry} {}", from.version),
            &format!("{entry} {}", to.version),
        )
        .to_string()
}

fn author(author: &Author) -> String {
    match author {
        Author::Person => "you".to_string(),
        Author::Planner => "planner".to_string(),
        Author::Healer => "Healer".to_string(),
        Author::Task { task_id } => format!("task {task_id}"),
    }
}
