//! What the project tests share: real git repositories made in temp dirs (git2, as a person's
//! `git init && git commit` would leave them), an engine pointed at the scripted model server,
//! and a project added through the engine's own API.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use git2::{IndexAddOption, Repository, Signature};
use healer::events::Event;
use healer::project::{Project, ProjectInput, SessionRecord};
use healer::session::SessionStatus;
use healer::store::{MergePolicy, ProjectSettings, VerifyCommand};
use healer::Engine;
use serde_json::Value;

use crate::maintainer::{bed, Bed};
use crate::model_server::{openai, Reply, TOKENS};

/// A repository at `dir` with `files` committed on branch main.
pub fn git_repo(dir: &Path, files: &[(&str, &str)]) -> Repository {
    std::fs::create_dir_all(dir).expect("repo dir");
    let repo = Repository::init(dir).expect("git init");
    repo.set_head("refs/heads/main").expect("HEAD on main");
    write_files(dir, files);
    commit_all(&repo, "first commit");
    repo
}

pub fn write_files(dir: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let path = dir.join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("folder");
        }
        std::fs::write(path, text).expect("file");
    }
}

pub fn commit_all(repo: &Repository, message: &str) -> git2::Oid {
    let mut index = repo.index().expect("index");
    index
        .add_all(["*"], IndexAddOption::DEFAULT, None)
        .expect("add");
    index.write().expect("write index");
    let tree = repo
        .find_tree(index.write_tree().expect("tree"))
        .expect("find tree");
    let who = Signature::now("A Person", "person@example.com").expect("signature");
    let parents: Vec<git2::Commit> = repo
        .head()
        .ok()
        .and_then(|h| h.peel_to_commit().ok())
        .into_iter()
        .collect();
    let parents: Vec<&git2::Commit> = parents.iter().collect();
    repo.commit(Some("HEAD"), &who, &who, message, &tree, &parents)
        .expect("commit")
}

/// A small Python project whose test checks `greet()`; the function is still wrong.
pub const GREETER: &[(&str, &str)] = &[
    ("greet.py", "def greet(name):\n    return 'Hi ' + name\n"),
    (
        "test_greet.py",
        "from greet import greet\n\ndef test_greet():\n    assert greet('Ada') == 'Hello, Ada!'\n",
    ),
    (
        "pyproject.toml",
        "[project]\nname = \"greeter\"\nversion = \"0.1.0\"\n",
    ),
];

/// A verification that needs no pytest: plain python3.
/// The greeter's approvals as a person who works in Python sets them: its agents run `python3`
/// freely (what it does that is risky still asks).
pub fn python_listed() -> healer::approval::ApprovalSettings {
    healer::approval::ApprovalSettings {
        allowed: vec!["python3".to_string()],
        ..Default::default()
    }
}

pub fn python_check() -> VerifyCommand {
    VerifyCommand {
        name: "test".to_string(),
        command: "python3 -c 'from greet import greet; assert greet(\"Ada\") == \"Hello, Ada!\", greet(\"Ada\")'"
            .to_string(),
    }
}

pub struct ProjectBed {
    pub bed: Bed,
    pub repo_dir: PathBuf,
    pub project: Project,
}

impl ProjectBed {
    pub fn engine(&self) -> &Engine {
        &self.bed.engine
    }
}

/// An engine with the scripted model, and the greeter repository added as a project with
/// `settings` adjusted by `change`.
pub async fn project_bed(scheduler: bool, change: impl FnOnce(&mut ProjectSettings)) -> ProjectBed {
    project_bed_on(bed(scheduler, true).await, change)
}

/// [`project_bed`] on a bed made otherwise (its keys kept in a file …).
pub fn project_bed_on(bed: Bed, change: impl FnOnce(&mut ProjectSettings)) -> ProjectBed {
    let repo_dir = bed.paths.data_dir().parent().expect("tmp").join("greeter");
    git_repo(&repo_dir, GREETER);
    let mut settings = ProjectSettings {
        verify: vec![python_check()],
        merge: MergePolicy::FastForward,
        approvals: python_listed(),
        ..ProjectSettings::default()
    };
    change(&mut settings);
    let project = bed
        .engine
        .add_project(ProjectInput {
            path: repo_dir.display().to_string(),
            name: "greeter".to_string(),
            settings,
        })
        .expect("project added");
    // These beds are the runner's: the healer service (which would act on their failures
    // while the test looks) is off; tests/engine/healer_service.rs turns it on.
    bed.engine
        .set_healer_config(
            project.id,
            healer::store::HealerConfig {
                enabled: false,
                ..healer::store::HealerConfig::default()
            },
        )
        .expect("healer service off");
    ProjectBed {
        bed,
        repo_dir,
        project,
    }
}

/// A streamed reply calling one tool.
pub fn call(id: &str, name: &str, args: Value) -> Reply {
    openai::tool_calls(&[(id, name, &args.to_string())], TOKENS)
}

/// Wait (bounded) until `check` holds.
pub async fn eventually<T>(
    what: &str,
    timeout: Duration,
    mut check: impl FnMut() -> Option<T>,
) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Wait for the session's end event and read the session back.
pub async fn finished(engine: &Engine, session_id: i64) -> SessionRecord {
    eventually("the session to end", Duration::from_secs(60), || {
        let s = engine.store().session(session_id).expect("session");
        (s.status != SessionStatus::Running).then_some(s)
    })
    .await;
    let events = engine.events(None, 200).expect("events");
    assert!(
        events.iter().any(|e| matches!(&e.event,
            Event::SessionFinished { session_id: id, .. } if *id == session_id)),
        "a session_finished event"
    );
    engine.store().session(session_id).expect("session")
}

/// Pids of live processes whose environment carries every entry of `marks`.
pub fn marked_processes(marks: &[String]) -> Vec<i32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("proc").flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        let zombie = std::fs::read_to_string(entry.path().join("stat"))
            .map(|s| s.contains(") Z "))
            .unwrap_or(false);
        let vars: Vec<&[u8]> = environ.split(|b| *b == 0).collect();
        if !zombie && marks.iter().all(|m| vars.contains(&m.as_bytes())) {
            pids.push(pid);
        }
    }
    pids
}

/// The marks of session `id` of the engine whose data folder is `data_dir` (the instance is a
/// hash of the data folder): `HEALER_INSTANCE=…`, `HEALER_AGENT_SESSION=<id>`.
pub fn marks_in(data_dir: &Path, session_id: i64) -> Vec<String> {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(data_dir.to_string_lossy().as_bytes());
    let instance: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    vec![
        format!("HEALER_INSTANCE={instance}"),
        format!("HEALER_AGENT_SESSION={session_id}"),
    ]
}

/// The marks of session `id` of `engine`.
pub fn marker_of(engine: &Engine, session_id: i64) -> Vec<String> {
    marks_in(engine.paths().data_dir(), session_id)
}

/// The lines of `file` in `repo` at the tip of `branch`.
pub fn file_at(repo: &Path, branch: &str, file: &str) -> String {
    let repo = Repository::open(repo).expect("repo");
    let commit = repo
        .find_branch(branch, git2::BranchType::Local)
        .expect("branch")
        .get()
        .peel_to_commit()
        .expect("commit");
    let entry = commit
        .tree()
        .expect("tree")
        .get_path(Path::new(file))
        .expect("file in tree");
    let blob = repo.find_blob(entry.id()).expect("blob");
    String::from_utf8_lossy(blob.content()).into_owned()
}
