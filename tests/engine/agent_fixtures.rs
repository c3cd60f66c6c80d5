//! What the agent adapter tests share: the real CLIs from the pinned npm packages in
//! tests/agents (installed by `scripts/setup.sh test`; `HEALER_TEST_CLAUDE` / `HEALER_TEST_CODEX`
//! point elsewhere), temp git repositories, a session spec, the updates of a run, and a look
//! in /proc for processes a session left behind.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use healer::agent::{Agent, AgentUpdate, SessionEnd, SessionSpec};
use healer::session::{SessionStep, StepKind, StepUsage};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::model_server::Tokens;

/// What the adapters should report for model calls, from what the server measured and said:
/// one call's usage, or several summed (a turn's running total).
pub fn step_usage(calls: &[Tokens]) -> StepUsage {
    StepUsage {
        prompt_tokens: calls.iter().map(|t| t.prompt).sum(),
        completion_tokens: calls.iter().map(|t| t.completion).sum(),
        cached_tokens: calls.iter().map(|t| t.cached).sum(),
    }
}

fn pinned(var: &str, relative: &str) -> PathBuf {
    if let Ok(path) = std::env::var(var) {
        return PathBuf::from(path);
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/agents/node_modules")
        .join(relative);
    assert!(
        path.is_file(),
        "{} is missing: run `bash scripts/setup.sh test` (it installs the pinned agent CLIs \
         from tests/agents/package-lock.json), or set {var}",
        path.display()
    );
    path
}

/// The real Claude Code binary (2.1.328, native, not the node wrapper).
pub fn claude() -> PathBuf {
    pinned(
        "HEALER_TEST_CLAUDE",
        "@anthropic-ai/claude-code-linux-x64/claude",
    )
}

/// The real Codex binary (0.169.0, native).
pub fn codex() -> PathBuf {
    pinned(
        "HEALER_TEST_CODEX",
        "@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex",
    )
}

/// The real opencode binary (1.18.33, native, not the node wrapper).
pub fn opencode() -> PathBuf {
    pinned("HEALER_TEST_OPENCODE", "opencode-linux-x64/bin/opencode")
}

/// The real Gemini CLI (0.61.0): a Node program (`bundle/gemini.js`), run by the node on PATH.
pub fn gemini() -> PathBuf {
    // `gemini --version` (read as a session starts, with the test's environment) relaunches
    // itself as a second Node process without this: twice the start-up, past the version
    // read's limit on a loaded machine.
    std::env::set_var("GEMINI_CLI_NO_RELAUNCH", "true");
    pinned("HEALER_TEST_GEMINI", "@google/gemini-cli/bundle/gemini.js")
}

/// A temp folder with a git repository (`repo/`, one commit holding hello.txt) and an empty
/// home for the agent (`home/`).
pub struct Workspace {
    pub dir: tempfile::TempDir,
    pub repo: PathBuf,
    pub home: PathBuf,
    /// A value only this test's processes carry (`HEALER_TEST_RUN`), to look for leftovers.
    pub marker: String,
}

pub fn workspace() -> Workspace {
    // Not under /tmp: Codex refuses to put its sandbox helper in a Codex home there, and then
    // every command and patch fails.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
    let repo = dir.path().join("repo");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&repo).expect("repo dir");
    std::fs::create_dir_all(&home).expect("home dir");
    std::fs::write(repo.join("hello.txt"), "line one\nline two\nline three\n").expect("file");
    for args in [
        &["init", "-q", "-b", "main"][..],
        &["add", "."],
        &[
            "-c",
            "user.name=Test",
            "-c",
            "user.email=test@example.com",
            "commit",
            "-q",
            "-m",
            "start",
        ],
    ] {
        let status = Command::new("git")
            .args(args)
            .current_dir(&repo)
            .status()
            .expect("git runs");
        assert!(status.success(), "git {args:?} failed");
    }
    let marker = uuid::Uuid::new_v4().simple().to_string();
    Workspace {
        dir,
        repo,
        home,
        marker,
    }
}

impl Workspace {
    /// A spec for a session in the repo, with the test's marker and `env` on top.
    pub fn spec(&self, program: PathBuf, prompt: &str, env: &[(&str, String)]) -> SessionSpec {
        let mut vars = vec![
            ("HOME".to_string(), self.home.to_string_lossy().into_owned()),
            ("HEALER_TEST_RUN".to_string(), self.marker.clone()),
        ];
        vars.extend(env.iter().map(|(n, v)| (n.to_string(), v.clone())));
        SessionSpec {
            session_id: 1,
            cwd: self.repo.clone(),
            prompt: prompt.to_string(),
            resume: None,
            allowed_tools: vec![],
            env: vars,
            program: Some(program),
            model: None,
            endpoint: None,
            agent_settings: None,
            time_limit: Duration::from_secs(60),
            groups: Some(self.dir.path().join("groups")),
            channel: None,
        }
    }

    /// Live processes carrying this test's marker.
    pub fn leftovers(&self) -> Vec<(i32, String)> {
        processes_with(&format!("HEALER_TEST_RUN={}", self.marker))
    }

    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.repo.join(name)).unwrap_or_default()
    }
}

/// Live (not zombie) processes whose environment holds `entry`, with their command line.
pub fn processes_with(entry: &str) -> Vec<(i32, String)> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(environ) = std::fs::read(e.path().join("environ")) else {
            continue;
        };
        if !environ.split(|b| *b == 0).any(|v| v == entry.as_bytes()) {
            continue;
        }
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let state = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next().map(str::to_string));
        if state.as_deref() == Some("Z") || state.is_none() {
            continue;
        }
        let cmdline = std::fs::read(e.path().join("cmdline"))
            .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
            .unwrap_or_default();
        found.push((pid, cmdline));
    }
    found
}

/// A session as it went: every update in order, and its end.
pub struct Ran {
    pub updates: Vec<AgentUpdate>,
    pub end: SessionEnd,
    pub took: Duration,
}

impl Ran {
    pub fn steps(&self) -> Vec<SessionStep> {
        self.updates
            .iter()
            .filter_map(|u| match u {
                AgentUpdate::Step(step) => Some(step.clone()),
                _ => None,
            })
            .collect()
    }

    pub fn started(&self) -> Option<(String, Option<PathBuf>)> {
        self.updates.iter().find_map(|u| match u {
            AgentUpdate::Started {
                agent_session_id,
                transcript,
            } => Some((agent_session_id.clone(), transcript.clone())),
            _ => None,
        })
    }

    /// The steps as (kind, tool, text) for comparing in one assertion.
    pub fn outline(&self) -> Vec<(StepKind, Option<String>, String)> {
        outline(&self.steps())
    }
}

pub fn outline(steps: &[SessionStep]) -> Vec<(StepKind, Option<String>, String)> {
    steps
        .iter()
        .map(|s| (s.kind, s.tool.clone(), s.text.trim().to_string()))
        .collect()
}

/// Run a session to its end.
pub async fn run(agent: &dyn Agent, spec: SessionSpec) -> Ran {
    run_with(agent, spec, CancellationToken::new(), |_, _| {}).await
}

/// Run a session, calling `watch` on each update as it comes (it may cancel).
pub async fn run_with(
    agent: &dyn Agent,
    spec: SessionSpec,
    cancel: CancellationToken,
    mut watch: impl FnMut(&AgentUpdate, &CancellationToken) + Send,
) -> Ran {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let started = std::time::Instant::now();
    let session = agent.run(spec, tx, cancel.clone());
    tokio::pin!(session);
    let mut updates = Vec::new();
    let end = loop {
        tokio::select! {
            end = &mut session => break end.expect("the adapter ran"),
            Some(update) = rx.recv() => {
                watch(&update, &cancel);
                updates.push(update);
            }
        }
    };
    while let Ok(update) = rx.try_recv() {
        updates.push(update);
    }
    Ran {
        updates,
        end,
        took: started.elapsed(),
    }
}

/// A program that is not an agent: a shell script with `body`.
pub fn script(ws: &Workspace, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = ws.dir.path().join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}
