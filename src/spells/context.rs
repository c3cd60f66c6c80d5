//! What the service looks at before it plans: the task, the failed session and its steps,
//! the task's other sessions, progress.md, the worktree's `git status` (git2), the failing
//! command's output, and three heuristics — how often the task failed, whether the failure's
//! signature came back across sessions, whether the failure looks flaky (the worktree holds
//! exactly a commit whose verification Healer recorded as passing).

use std::path::{Path, PathBuf};

use git2::StatusOptions;

use super::plan::Facts;
use crate::error::Result;
use crate::failure::{type_error_lines, Failure, FailureSource};
use crate::project::{read_progress, Project, SessionRecord, StoredStep, Task};
use crate::session::SessionStatus;
use crate::store::Store;
use crate::tasklist::{read_file, HEALER_DIR, TASKS_FILE};

/// Steps of the failed session kept in the context (the last ones).
const MAX_STEPS: usize = 200;
/// Other sessions of the task kept.
const MAX_RELATED: u32 = 20;
/// Lines of type-checker errors kept.
const MAX_TYPE_ERRORS: usize = 40;

#[derive(Debug, Clone, Default)]
pub struct InvocationContext {
    pub task_id: String,
    pub task: Option<Task>,
    pub session: Option<SessionRecord>,
    /// The failed session's last steps (ATIF-shaped).
    pub steps: Vec<StoredStep>,
    /// The task's other sessions, newest first.
    pub related: Vec<SessionRecord>,
    pub progress: String,
    pub worktree: Option<PathBuf>,
    /// `git status --short`-like lines (Healer's own `.healer/` aside); empty: clean.
    pub git_status: Vec<String>,
    /// The worktree's last commit.
    pub head: Option<String>,
    /// What the failing command printed (its last lines), or what the agent said.
    pub failing_output: String,
    pub type_errors: Vec<String>,
    /// Files the failing output names that exist in the worktree.
    pub files_named: Vec<String>,
    /// Failed sessions of the task, this one included.
    pub failures: u32,
    /// Earlier sessions of the task whose failure had the same signature.
    pub same_signature_sessions: u32,
    pub flaky: bool,
    /// The failing check could not run here (the runner classed it as the environment).
    pub could_not_run: bool,
}

impl InvocationContext {
    pub fn facts(&self) -> Facts {
        Facts {
            flaky: self.flaky,
            failures: self.failures,
            // With this one, the third session to fail the same way.
            repeated: self.same_signature_sessions >= 2,
            type_errors: !self.type_errors.is_empty(),
            could_not_run: self.could_not_run,
        }
    }
}

pub(crate) fn gather(
    store: &Store,
    project: &Project,
    failure: &Failure,
) -> Result<InvocationContext> {
    let FailureSource::ProjectTask {
        task_id,
        session_id,
        ..
    } = &failure.source
    else {
        return Ok(InvocationContext::default());
    };
    let repo = Path::new(&project.path);
    let task = read_file(&repo.join(TASKS_FILE))
        .ok()
        .and_then(|f| f.task(task_id).cloned());
    let session = store.session(*session_id).ok();
    let mut steps = store.session_steps(*session_id, 0).unwrap_or_default();
    if steps.len() > MAX_STEPS {
        steps.drain(..steps.len() - MAX_STEPS);
    }
    let related: Vec<SessionRecord> = store
        .list_sessions(project.id, Some(task_id), MAX_RELATED)?
        .into_iter()
        .filter(|s| s.id != *session_id)
        .collect();
    let failures = failed(related.iter().chain(session.iter()));
    let worktree = session
        .as_ref()
        .map(|s| PathBuf::from(&s.worktree))
        .filter(|p| p.join(".git").exists());
    let (git_status, head) = worktree.as_deref().map(status).unwrap_or_default();
    let failing_output = failure
        .evidence
        .stack
        .clone()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| failure.evidence.message.clone());
    let type_errors = type_error_lines(&failing_output, MAX_TYPE_ERRORS);
    let files_named = worktree
        .as_deref()
        .map(|w| files_named(&failing_output, w))
        .unwrap_or_default();
    let same_signature_sessions =
        store.sessions_with_signature(project.id, task_id, &failure.signature, *session_id)?;
    Ok(InvocationContext {
        task_id: task_id.clone(),
        task,
        session,
        steps,
        related,
        progress: read_progress(repo),
        worktree,
        git_status,
        head,
        failing_output,
        type_errors,
        files_named,
        failures,
        same_signature_sessions,
        // Known only once the failing check ran again (`service::verify_again`).
        flaky: false,
        could_not_run: failure.class == crate::failure::FailureClass::Environment
            && failure.scenario == crate::failure::ProjectScenario::VerificationFailed.as_str(),
    })
}

/// Sessions among `sessions` that failed.
fn failed<'a>(sessions: impl Iterator<Item = &'a SessionRecord>) -> u32 {
    let n = sessions
        .filter(|s| matches!(s.status, SessionStatus::Failed | SessionStatus::TimedOut))
        .count();
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The facts the policy needs before the service takes a failure over: whether it gives up
/// (the task's failed sessions, this one included, and earlier ones that failed the same way).
pub(crate) fn give_up_facts(store: &Store, project_id: i64, failure: &Failure) -> Result<Facts> {
    let FailureSource::ProjectTask {
        task_id,
        session_id,
        ..
    } = &failure.source
    else {
        return Ok(Facts::default());
    };
    let sessions = store.list_sessions(project_id, Some(task_id), MAX_RELATED)?;
    let mut failures = failed(sessions.iter());
    if !sessions.iter().any(|s| s.id == *session_id) {
        failures = failures.saturating_add(1);
    }
    let same =
        store.sessions_with_signature(project_id, task_id, &failure.signature, *session_id)?;
    Ok(InvocationContext {
        failures,
        same_signature_sessions: same,
        ..InvocationContext::default()
    }
    .facts())
}

/// The worktree's changes as short status lines, and its HEAD commit.
fn status(worktree: &Path) -> (Vec<String>, Option<String>) {
    let Ok(repo) = crate::project::open_folder(worktree) else {
        return (vec![], None);
    };
    let head = repo
        .head()
        .ok()
        .and_then(|h| h.target())
        .map(|o| o.to_string());
    let mut options = StatusOptions::new();
    options.include_untracked(true).recurse_untracked_dirs(true);
    let Ok(statuses) = repo.statuses(Some(&mut options)) else {
        return (vec![], head);
    };
    let healer = format!("{HEALER_DIR}/");
    let lines = statuses
        .iter()
        .filter_map(|e| {
            let path = e.path().ok()?.to_string();
            if path.starts_with(&healer) {
                return None;
            }
            let s = e.status();
            let code = if s.is_wt_new() {
                "??"
            } else if s.is_wt_deleted() || s.is_index_deleted() {
                " D"
            } else {
                " M"
            };
            Some(format!("{code} {path}"))
        })
        .collect();
    (lines, head)
}

/// Paths in `output` (relative, or under the worktree) that are files of the worktree.
fn files_named(output: &str, worktree: &Path) -> Vec<String> {
    static PATH: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    let Some(re) = PATH
        .get_or_init(|| regex::Regex::new(r"[A-Za-z0-9_./-]+\.[A-Za-z]{1,5}").ok())
        .as_ref()
    else {
        return vec![];
    };
    let root = worktree.display().to_string();
    let mut out: Vec<String> = Vec::new();
    for m in re.find_iter(output) {
        let raw = m.as_str();
        let rel = raw
            .strip_prefix(&format!("{root}/"))
            .unwrap_or(raw)
            .trim_start_matches("./");
        if rel.starts_with('/') || rel.contains("..") || out.iter().any(|o| o == rel) {
            continue;
        }
        if worktree.join(rel).is_file() {
            out.push(rel.to_string());
        }
        if out.len() >= 10 {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_named_in_output_are_those_of_the_worktree() {
        let dir = tempfile::tempdir().expect("test setup");
        std::fs::create_dir_all(dir.path().join("src")).expect("test setup");
        std::fs::write(dir.path().join("src/a.ts"), "").expect("test setup");
        std::fs::write(dir.path().join("greet.py"), "").expect("test setup");
        let out = format!(
            "src/a.ts(3,1): error TS2322: x\n  File \"{}/greet.py\", line 2\nnode_modules/x.js not here",
            dir.path().display()
        );
        assert_eq!(files_named(&out, dir.path()), vec!["src/a.ts", "greet.py"]);
    }

    #[test]
    fn a_clean_worktree_has_no_status_lines_and_a_change_has_one() {
        let dir = tempfile::tempdir().expect("test setup");
        std::fs::write(dir.path().join("a.txt"), "1").expect("test setup");
        crate::project::init_with_first_commit(dir.path()).expect("test setup");
        let (lines, head) = status(dir.path());
        assert!(lines.is_empty(), "{lines:?}");
        assert!(head.is_some());
        std::fs::write(dir.path().join("a.txt"), "2").expect("test setup");
        std::fs::write(dir.path().join("b.txt"), "new").expect("test setup");
        let (lines, _) = status(dir.path());
        assert_eq!(lines, vec![" M a.txt", "?? b.txt"]);
    }
}
