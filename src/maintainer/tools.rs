//! The maintainer's tools: `fix`, `eval`, and two read-only ones (`read_file`,
//! `list_versions`). Nothing else: it can not save a major version, ask the person, or change
//! a schedule, whatever the evidence it reads asks for.

use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{json, Value};

use super::FixResult;
use crate::error::{Error, Result};
use crate::events::Event;
use crate::llm::Tool;
use crate::sandbox::{self, SandboxLimits, SandboxSpec, SyntaxCheck};
use crate::services::Services;
use crate::workflow::{Author, Workflow};

/// The most characters `read_file` returns.
const MAX_FILE_CHARS: usize = 20_000;

/// What the task's `fix` calls came to.
pub(super) type FixState = Arc<Mutex<Option<FixResult>>>;

/// What every tool of one maintainer task shares.
#[derive(Clone)]
pub(super) struct Bench {
    pub services: Arc<Services>,
    pub task_id: i64,
    pub workflow: Workflow,
    /// The major the task started from: a fix for it is stale once the workflow moved on.
    pub major: u32,
    /// The failing version's code (a fix is remembered as a diff from it).
    pub failed_code: String,
    pub fixed: FixState,
}

impl Bench {
    pub fn tools(&self) -> Vec<Arc<dyn Tool>> {
        vec![
            Arc::new(Fix(self.clone())),
            Arc::new(Eval(self.clone())),
            Arc::new(ReadFile(self.clone())),
            Arc::new(ListVersions(self.clone())),
        ]
    }

    fn folder(&self) -> PathBuf {
        self.services.paths.workflow_dir(self.workflow.id)
    }

    fn scratch_root(&self) -> PathBuf {
        scratch_root(&self.services)
    }
}

/// Remember an applied fix in the healing memory, under the signature of the failure its task
/// repairs: the diff from the failing code, and the version it became (whose re-run settles it).
pub(crate) fn record_fix(
    services: &Services,
    task_id: i64,
    workflow_id: i64,
    version: crate::workflow::Version,
    failed_code: &str,
    code: &str,
    comment: &str,
) -> Result<()> {
    let Some(signature) = services.store.task_signature(task_id)? else {
        return Ok(());
    };
    let script = services.store.version(workflow_id, version)?;
    services.store.insert_pattern_fix(
        &signature,
        workflow_id,
        Some(task_id),
        script.id,
        comment,
        &crate::memory::diff(failed_code, code),
        &crate::memory::code_hash(failed_code),
    )?;
    crate::breakers::check_review(services, workflow_id)
}

/// Where sandboxes make their scratch copies.
pub(crate) fn scratch_root(services: &Services) -> PathBuf {
    services.paths.data_dir().join("sandbox")
}

/// Environment variable names that hold provider keys: never given to sandboxed code.
pub(crate) fn key_variables(services: &Services) -> Vec<String> {
    let mut names: Vec<String> = services
        .store
        .list_providers()
        .map(|ps| ps.iter().filter_map(|p| p.key_var()).collect())
        .unwrap_or_default();
    for known in ["OPENAI_API_KEY", "ANTHROPIC_API_KEY"] {
        if !names.iter().any(|n| n == known) {
            names.push(known.to_string());
        }
    }
    names
}

fn text_arg<'a>(args: &'a Value, name: &str) -> &'a str {
    args.get(name).and_then(Value::as_str).unwrap_or_default()
}

struct Fix(Bench);

#[async_trait]
impl Tool for Fix {
    fn name(&self) -> &str {
        "fix"
    }

    fn description(&self) -> &str {
        "Store the whole corrected script as the workflow's next minor version and re-run it. \
         Call it once, when eval showed the change works. `comment` is one line for the person \
         on what changed and why."
    }

    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "code": {"type": "string", "minLength": 1, "description": "the whole script"},
                "comment": {"type": "string", "minLength": 1, "maxLength": 300}
            },
            "required": ["code", "comment"],
            "additionalProperties": false
        })
    }

    async fn call(&self, args: Value) -> Result<String> {
        let bench = &self.0;
        let code = text_arg(&args, "code");
        let comment = text_arg(&args, "comment").trim();
        if let Some(done) = lock(&bench.fixed).clone() {
            return Err(Error::InvalidInput(match done {
                FixResult::Applied { version, .. } => format!(
                    "a fix is already stored as version {version}; finish with a short summary"
                ),
                FixResult::Stale { .. } => {
                    "the script changed meanwhile; no fix is needed — finish now".to_string()
                }
            }));
        }
        if code.trim().is_empty() || comment.is_empty() {
            return Err(Error::InvalidInput(
                "the fix was not applied: code and comment must not be empty".to_string(),
            ));
        }
        let store = &bench.services.store;
        if let Some(signature) = store.task_signature(bench.task_id)? {
            if let Some((version, title)) = store.failed_fix_like(&signature, code)? {
                return Err(Error::InvalidInput(format!(
                    "the fix was not applied: it is the same code (whitespace aside) as version \
                     {version} of \u{201c}{title}\u{201d}, which was tried for this error and \
                     failed. Try a different approach, or answer without calling fix if you see \
                     none."
                )));
            }
        }
        let check = sandbox::check_syntax_in(
            &bench.scratch_root(),
            &bench.workflow.runtime,
            &bench.workflow.entry,
            code,
            &bench.services.environment_vars(&bench.workflow),
        )
        .await?;
        let checked = match check {
            SyntaxCheck::Passed => "its syntax check passed",
            SyntaxCheck::NoChecker { .. } => "this runtime has no syntax checker",
            SyntaxCheck::Refused { message } => {
                return Err(Error::InvalidInput(format!(
                    "the fix was not applied: {} refused it as invalid:\n{message}",
                    bench.workflow.runtime.program()
                )))
            }
        };
        let result =
            store.apply_fix(bench.task_id, bench.workflow.id, bench.major, code, comment)?;
        crate::failpoint::hit("fix.applied");
        *lock(&bench.fixed) = Some(result.clone());
        match result {
            FixResult::Applied { version, rerun } => {
                record_fix(
                    &bench.services,
                    bench.task_id,
                    bench.workflow.id,
                    version,
                    &bench.failed_code,
                    code,
                    comment,
                )?;
                bench.services.bus.emit(Event::VersionSaved {
                    workflow_id: bench.workflow.id,
                    title: bench.workflow.title.clone(),
                    version,
                    author: Author::Task {
                        task_id: bench.task_id,
                    },
                    comment: comment.to_string(),
                })?;
                bench.services.wake.scheduler.notify_one();
                Ok(json!({
                    "applied": true,
                    "version": version.to_string(),
                    "rerun_id": rerun,
                    "note": format!("stored as version {version} and made active ({checked}); a re-run is queued. Finish with one or two sentences on what you changed."),
                })
                .to_string())
            }
            FixResult::Stale { active } => Ok(json!({
                "applied": false,
                "reason": format!("the workflow is on version {active} now: someone saved a new version while you worked, so this fix is not needed. Stop here."),
            })
            .to_string()),
        }
    }
}

struct Eval(Bench);

#[async_trait]
impl Tool for Eval {
    fn name(&self) -> &str {
        "eval"
    }

    fn description(&self) -> &str {
        "Run code in a sandbox: a scratch copy of the workflow's folder, with a time and memory \
         limit, no provider keys, and writes confined to the copy. `code` is run as the \
         workflow's entry file with its runtime; `input` is given on stdin. Returns the exit \
         code and output."
    }

    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "code": {"type": "string", "minLength": 1},
                "input": {"type": "string"}
            },
            "required": ["code"],
            "additionalProperties": false
        })
    }

    async fn call(&self, args: Value) -> Result<String> {
        let bench = &self.0;
        crate::failpoint::hit("repair.eval");
        let deny = key_variables(&bench.services);
        let scratch = bench.scratch_root();
        let folder = bench.folder();
        // The workflow's variables, then its own environment in front, as a run has them.
        let mut env = bench.workflow.env.clone();
        env.extend(bench.services.environment_vars(&bench.workflow));
        let spec = SandboxSpec {
            scratch_root: &scratch,
            source_dir: &folder,
            runtime: &bench.workflow.runtime,
            entry: &bench.workflow.entry,
            code: text_arg(&args, "code"),
            stdin: args.get("input").and_then(Value::as_str),
            env: &env,
            deny_env: &deny,
            limits: SandboxLimits::default(),
        };
        Ok(sandbox::run(&spec).await?.describe())
    }
}

struct ReadFile(Bench);

#[async_trait]
impl Tool for ReadFile {
    fn name(&self) -> &str {
        "read_file"
    }

    fn description(&self) -> &str {
        "Read a file of the workflow's folder (a path relative to it), or list a folder \
         (\".\" for the top). Read-only."
    }

    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"path": {"type": "string", "minLength": 1}},
            "required": ["path"],
            "additionalProperties": false
        })
    }

    async fn call(&self, args: Value) -> Result<String> {
        let folder = self.0.folder();
        let path = inside(&folder, text_arg(&args, "path"))?;
        if path.is_dir() {
            let mut names: Vec<String> = std::fs::read_dir(&path)
                .map_err(|e| Error::io(format!("cannot list {}", shown(&folder, &path)), e))?
                .filter_map(|e| e.ok())
                .map(|e| {
                    let name = e.file_name().to_string_lossy().to_string();
                    if e.path().is_dir() {
                        format!("{name}/")
                    } else {
                        name
                    }
                })
                .collect();
            names.sort();
            return Ok(names.join("\n"));
        }
        let bytes = std::fs::read(&path)
            .map_err(|e| Error::io(format!("cannot read {}", shown(&folder, &path)), e))?;
        let text = String::from_utf8_lossy(&bytes);
        Ok(match text.char_indices().nth(MAX_FILE_CHARS) {
            Some((cut, _)) => format!(
                "{}\n[cut: {} more characters]",
                &text[..cut],
                text[cut..].chars().count()
            ),
            None => text.to_string(),
        })
    }
}

/// `relative` inside `folder`, refusing absolute paths, `..`, and links that lead out.
fn inside(folder: &Path, relative: &str) -> Result<PathBuf> {
    let rel = Path::new(relative.trim());
    if rel
        .components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(Error::InvalidInput(format!(
            "{relative:?} is not a path inside the workflow's folder"
        )));
    }
    let path = folder.join(rel);
    let real = path.canonicalize().map_err(|e| {
        Error::io(
            format!("cannot open {relative:?} in the workflow's folder"),
            e,
        )
    })?;
    let root = folder
        .canonicalize()
        .map_err(|e| Error::io("cannot open the workflow's folder", e))?;
    if !real.starts_with(&root) {
        return Err(Error::InvalidInput(format!(
            "{relative:?} leads outside the workflow's folder"
        )));
    }
    Ok(real)
}

fn shown(folder: &Path, path: &Path) -> String {
    path.strip_prefix(folder)
        .unwrap_or(path)
        .display()
        .to_string()
}

struct ListVersions(Bench);

#[async_trait]
impl Tool for ListVersions {
    fn name(&self) -> &str {
        "list_versions"
    }

    fn description(&self) -> &str {
        "List the workflow's script versions, newest first, with their change comments."
    }

    fn schema(&self) -> Value {
        json!({"type": "object", "properties": {}, "additionalProperties": false})
    }

    async fn call(&self, _args: Value) -> Result<String> {
        let mut versions = self.0.services.store.versions(self.0.workflow.id)?;
        versions.sort_by_key(|v| std::cmp::Reverse(v.version));
        Ok(versions
            .iter()
            .map(|v| {
                format!(
                    "{}{} — {} ({}, {})",
                    v.version,
                    if v.active { " (active)" } else { "" },
                    v.change_comment,
                    v.author.to_db(),
                    v.created_at
                )
            })
            .collect::<Vec<_>>()
            .join("\n"))
    }
}

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_must_stay_inside_the_folder() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| Error::io("tempdir", e))?;
        std::fs::write(dir.path().join("data.csv"), "a,b").map_err(|e| Error::io("write", e))?;
        assert!(inside(dir.path(), "data.csv").is_ok());
        assert!(inside(dir.path(), "./data.csv").is_ok());
        assert!(inside(dir.path(), "../etc/passwd").is_err());
        assert!(inside(dir.path(), "/etc/passwd").is_err());
        std::os::unix::fs::symlink("/etc", dir.path().join("out"))
            .map_err(|e| Error::io("symlink", e))?;
        assert!(inside(dir.path(), "out/passwd").is_err());
        Ok(())
    }
}
