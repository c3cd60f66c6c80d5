//! Adding a project: real folders and git repositories in temp dirs, what Healer detects in
//! them, and what it says about the ones it cannot use.

use healer::project::{FolderState, ProjectInput};
use healer::session::AgentKind;
use healer::store::{ProjectSettings, VerifyCommand};

use crate::maintainer::bed;
use crate::project_fixtures::*;

fn commands(check: &healer::project::FolderCheck) -> Vec<(String, String)> {
    check
        .proposal
        .as_ref()
        .expect("a proposal")
        .settings
        .verify
        .iter()
        .map(|v| (v.name.clone(), v.command.clone()))
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[tokio::test]
async fn detection_proposes_the_commands_of_a_node_a_python_and_a_rust_repository() {
    let b = bed(false, false).await;
    let root = b.paths.data_dir().parent().expect("tmp").to_path_buf();

    let node = root.join("web");
    git_repo(
        &node,
        &[
            (
                "package.json",
                r#"{"name":"web","scripts":{"build":"vite build","typecheck":"tsc --noEmit","test":"vitest run","lint":"eslint ."}}"#,
            ),
            ("pnpm-lock.yaml", "lockfileVersion: 9\n"),
            ("scripts/init.sh", "pnpm install\n"),
        ],
    );
    let check = b
        .engine
        .check_project_folder(&node.display().to_string())
        .await
        .expect("check");
    assert_eq!(check.repo.state, FolderState::Ready);
    assert_eq!(
        commands(&check),
        pairs(&[
            ("typecheck", "pnpm run typecheck"),
            ("lint", "pnpm run lint"),
            ("test", "pnpm run test")
        ])
    );
    let proposal = check.proposal.as_ref().expect("proposal");
    assert_eq!(proposal.name, "web");
    assert_eq!(proposal.settings.main_branch, "main");
    assert_eq!(
        proposal.settings.init_script.as_deref(),
        Some("bash scripts/init.sh")
    );

    let python = root.join("tool");
    git_repo(
        &python,
        &[
            ("pyproject.toml", "[project]\nname='tool'\n"),
            ("tests/test_x.py", "def test_x():\n    pass\n"),
        ],
    );
    let check = b
        .engine
        .check_project_folder(&python.display().to_string())
        .await
        .expect("check");
    assert_eq!(commands(&check), pairs(&[("test", "python3 -m pytest -q")]));
    assert_eq!(
        check
            .proposal
            .as_ref()
            .expect("proposal")
            .settings
            .init_script,
        None
    );

    let rust = root.join("crate");
    git_repo(
        &rust,
        &[
            ("Cargo.toml", "[package]\nname='c'\nversion='0.1.0'\n"),
            ("src/lib.rs", "\n"),
            ("Makefile", "test:\n\tcargo test\n"),
        ],
    );
    let check = b
        .engine
        .check_project_folder(&rust.display().to_string())
        .await
        .expect("check");
    assert_eq!(
        commands(&check),
        pairs(&[("check", "cargo check"), ("test", "cargo test")])
    );
    let detection = check.detection.as_ref().expect("detection");
    assert!(detection.found.iter().any(|f| f.contains("Rust")));

    // The agents: the built-in one is usable; a CLI agent this build runs is either installed
    // (with its version) or not installed, with how to get it.
    let builtin = detection
        .agents
        .iter()
        .find(|a| a.kind == AgentKind::Builtin)
        .expect("builtin");
    assert!(builtin.usable);
    for kind in [AgentKind::ClaudeCode, AgentKind::Codex] {
        let agent = detection
            .agents
            .iter()
            .find(|a| a.kind == kind)
            .expect("listed");
        assert!(b.engine.agent_in_build(kind), "{kind:?} is in this build");
        if agent.usable {
            let version = agent.version.as_deref().expect("a version");
            assert!(
                agent.message == format!("Installed, version {version}."),
                "{}",
                agent.message
            );
        } else {
            assert!(
                agent.message.contains("is not installed on this computer")
                    && agent.message.contains("npm package"),
                "{}",
                agent.message
            );
        }
    }
}

#[tokio::test]
async fn a_folder_that_is_not_a_repository_is_said_so_and_can_be_made_one() {
    let b = bed(false, false).await;
    let dir = b.paths.data_dir().parent().expect("tmp").join("notes");
    write_files(
        &dir,
        &[
            ("notes.md", "# notes\n"),
            (".gitignore", "secret.txt\n"),
            ("secret.txt", "x\n"),
        ],
    );
    let check = b
        .engine
        .check_project_folder(&dir.display().to_string())
        .await
        .expect("check");
    assert_eq!(check.repo.state, FolderState::NotARepository);
    assert!(
        check.repo.message.contains("is not a git repository"),
        "{}",
        check.repo.message
    );
    assert!(check.proposal.is_none());

    let made = b
        .engine
        .init_project_folder(&dir.display().to_string())
        .await
        .expect("git init");
    assert_eq!(made.repo.state, FolderState::Ready, "{}", made.repo.message);
    let repo = git2::Repository::open(&dir).expect("a repository now");
    let tree = repo.head().expect("head").peel_to_tree().expect("tree");
    assert!(tree.get_name("notes.md").is_some());
    assert!(
        tree.get_name("secret.txt").is_none(),
        ".gitignore is respected"
    );

    // A file, a missing folder, a folder inside a repository.
    let file = dir.join("notes.md").display().to_string();
    let check = b.engine.check_project_folder(&file).await.expect("check");
    assert_eq!(check.repo.state, FolderState::NotAFolder);
    let missing = dir.join("nowhere").display().to_string();
    assert_eq!(
        b.engine
            .check_project_folder(&missing)
            .await
            .expect("check")
            .repo
            .state,
        FolderState::Missing
    );
    std::fs::create_dir_all(dir.join("sub")).expect("sub");
    let inside = b
        .engine
        .check_project_folder(&dir.join("sub").display().to_string())
        .await
        .expect("check");
    assert!(
        matches!(inside.repo.state, FolderState::InsideRepository { .. }),
        "{:?}",
        inside.repo.state
    );
}

#[tokio::test]
async fn a_bare_repo_a_detached_head_and_uncommitted_changes_are_each_said() {
    let b = bed(false, false).await;
    let root = b.paths.data_dir().parent().expect("tmp").to_path_buf();

    let bare = root.join("bare.git");
    git2::Repository::init_bare(&bare).expect("bare");
    let check = b
        .engine
        .check_project_folder(&bare.display().to_string())
        .await
        .expect("check");
    assert_eq!(check.repo.state, FolderState::Bare);
    assert!(
        check.repo.message.contains("bare repository"),
        "{}",
        check.repo.message
    );

    let empty = root.join("empty");
    git2::Repository::init(&empty).expect("init");
    let check = b
        .engine
        .check_project_folder(&empty.display().to_string())
        .await
        .expect("check");
    assert_eq!(check.repo.state, FolderState::NoCommits);

    let detached = root.join("detached");
    let repo = git_repo(&detached, &[("a.txt", "a\n")]);
    let head = repo.head().expect("head").target().expect("oid");
    repo.set_head_detached(head).expect("detach");
    let check = b
        .engine
        .check_project_folder(&detached.display().to_string())
        .await
        .expect("check");
    assert_eq!(check.repo.state, FolderState::Ready);
    assert_eq!(check.repo.main_branch.as_deref(), Some("main"));
    assert!(
        check
            .repo
            .notes
            .iter()
            .any(|n| n.contains("HEAD is detached")),
        "{:?}",
        check.repo.notes
    );

    let dirty = root.join("dirty");
    git_repo(&dirty, &[("a.txt", "a\n")]);
    write_files(&dirty, &[("a.txt", "changed\n"), ("new.txt", "new\n")]);
    let check = b
        .engine
        .check_project_folder(&dirty.display().to_string())
        .await
        .expect("check");
    assert_eq!(check.repo.state, FolderState::Ready);
    let note = check.repo.notes.join(" ");
    assert!(
        note.contains("2 files have changes") && note.contains("Runs still work"),
        "{note}"
    );
}

#[tokio::test]
async fn the_form_is_checked_field_by_field() {
    let b = bed(false, false).await;
    let dir = b.paths.data_dir().parent().expect("tmp").join("app");
    git_repo(&dir, GREETER);
    let input = |change: &dyn Fn(&mut ProjectInput)| {
        let mut input = ProjectInput {
            path: dir.display().to_string(),
            name: "app".to_string(),
            settings: ProjectSettings {
                verify: vec![python_check()],
                ..ProjectSettings::default()
            },
        };
        change(&mut input);
        b.engine.validate_project(&input, None).expect("validate")
    };
    assert!(input(&|_| {}).is_empty(), "{:?}", input(&|_| {}));
    let fields = |problems: Vec<healer::workflow::FieldProblem>| -> Vec<(String, String)> {
        problems.into_iter().map(|p| (p.field, p.message)).collect()
    };
    // No check is never skipped silently: the person adds one, or says so.
    let unchecked = fields(input(&|i| i.settings.verify.clear()));
    assert_eq!(unchecked.len(), 1, "{unchecked:?}");
    assert_eq!(unchecked[0].0, "verify");
    assert!(
        unchecked[0].1.contains("without checks"),
        "{}",
        unchecked[0].1
    );
    assert!(input(&|i| {
        i.settings.verify.clear();
        i.settings.commit_without_checks = true;
    })
    .is_empty());
    let p = fields(input(&|i| i.settings.agent = AgentKind::ClaudeCode));
    if let Some((field, message)) = p.first() {
        assert_eq!(field, "agent");
        assert!(
            message.starts_with("Claude Code is not installed on this computer"),
            "{message}"
        );
    }
    let p = fields(input(&|i| {
        i.name = " ".to_string();
        i.settings.main_branch = "trunk".to_string();
        i.settings.verify = vec![
            VerifyCommand {
                name: "test".to_string(),
                command: String::new(),
            },
            VerifyCommand {
                name: "test".to_string(),
                command: "x".to_string(),
            },
        ];
        i.settings.max_parallel = 0;
        i.settings.token_budget = 10_000_000;
    }));
    let named: Vec<&str> = p.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(
        named,
        [
            "name",
            "main_branch",
            "verify.0",
            "verify.1",
            "max_parallel",
            "token_budget"
        ],
        "{p:?}"
    );
    assert!(p[5].1.contains("raise that cap first"), "{}", p[5].1);

    let added = b
        .engine
        .add_project(ProjectInput {
            path: dir.display().to_string(),
            name: "app".to_string(),
            settings: ProjectSettings {
                verify: vec![python_check()],
                ..ProjectSettings::default()
            },
        })
        .expect("added");
    let again = input(&|i| i.name = "other".to_string());
    assert!(
        again
            .iter()
            .any(|p| p.field == "path" && p.message.contains("already the project")),
        "{again:?}"
    );
    let clash = input(&|i| i.name = "APP".to_string());
    assert!(clash.iter().any(|p| p.field == "name"));
    assert_eq!(
        b.engine.list_projects().expect("list")[0].project.id,
        added.id
    );
    b.engine.remove_project(added.id).expect("removed");
    assert!(b.engine.list_projects().expect("list").is_empty());
    assert!(
        dir.join(".git").exists(),
        "the repository itself is untouched"
    );
}
