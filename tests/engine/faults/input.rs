//! Bad input capped and cleaned: a huge line of output, huge or multi-line titles, terminal
//! escape sequences in a script's output, counts past 4 GiB, and scripts of 2 GB or without end.

use std::process::Stdio;

use healer::events::Event;
use healer::workflow::Runtime;

use super::{healer, Figures};
use crate::cli::text;
use crate::workflows::input;

fn script(tmp: &tempfile::TempDir, body: &str) -> String {
    let path = tmp.path().join("main.sh");
    std::fs::write(&path, body).expect("script");
    path.display().to_string()
}

fn create(paths: &healer::Paths, title: &str, file: &str) -> std::process::Output {
    healer(paths)
        .args(["workflow", "create", "--title", title, "--runtime", "bash"])
        .args(["--file", file])
        .stdout(Stdio::piped())
        .output()
        .expect("create")
}

#[test]
fn a_64_kb_line_becomes_a_short_summary_and_escapes_are_not_played_on_the_terminal() {
    let (tmp, paths) = crate::data_dir();
    let file = script(
        &tmp,
        "printf '\\033]0;pwned\\007\\033[31mred alert\\033[0m\\n' >&2\nhead -c 65536 /dev/zero | tr '\\0' x >&2\nexit 3\n",
    );
    assert_eq!(create(&paths, "Loud", &file).status.code(), Some(0));
    let out = healer(&paths)
        .args(["workflow", "run", "loud"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let said = out.stdout.clone();
    assert!(!said.contains(&0x1b), "an escape reached the terminal");
    assert!(!said.contains(&0x07), "a bell reached the terminal");
    assert!(text(&said).contains("red alert"), "{}", text(&said));
    let store = healer::store::Store::open(&paths.db()).expect("store");
    let w = store.workflow_by_name("loud").expect("workflow");
    let run = &store.list_runs(w.id, None, 1).expect("runs")[0];
    let summary_chars = run.summary.chars().count();
    // At most 300 characters of what the script said, and the cause in a few words.
    assert!(
        summary_chars <= 360,
        "summary of {summary_chars} characters"
    );
    for line in text(&said).lines() {
        assert!(
            line.chars().count() <= 2_100,
            "a line of {}",
            line.chars().count()
        );
    }
    // The store keeps the raw bytes.
    let detail = store.run_detail(run.id).expect("detail");
    assert!(detail.attempts[0].stderr.contains("\u{1b}[31mred alert"));
    Figures {
        faults: 2,
        ..Figures::default()
    }
    .print("bad output");
}

#[test]
fn titles_are_capped_single_lines_and_events_stay_one_per_line() {
    let (tmp, paths) = crate::data_dir();
    let file = script(&tmp, "echo ok\n");
    for (title, says) in [
        ("x".repeat(10_000), "120 characters or fewer"),
        (
            "Report\n#999   2026-01-01T00:00:00.000Z  Engine started".to_string(),
            "one line of plain text",
        ),
    ] {
        let out = create(&paths, &title, &file);
        assert_eq!(out.status.code(), Some(1), "{title:?}");
        assert!(text(&out.stderr).contains(says), "{}", text(&out.stderr));
        assert_eq!(
            text(&out.stderr).matches("healer:").count(),
            1,
            "one plain refusal: {}",
            text(&out.stderr)
        );
    }
    // An event whose text holds a line break (old data, a model's words) is still one line.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let engine = healer::Engine::start(paths.clone(), "test")
            .await
            .expect("engine");
        let w = engine
            .create_workflow(input("Plain", Runtime::Bash, "echo ok\n"))
            .expect("create");
        engine
            .emit(Event::WorkflowChanged {
                workflow_id: w.id,
                title: "Forged\n#1     2020-01-01T00:00:00.000Z  Engine stopped".to_string(),
                what: "renamed".to_string(),
            })
            .expect("emit");
        engine.shutdown().await;
    });
    let out = healer(&paths)
        .args(["events", "--limit", "1000"])
        .output()
        .expect("events");
    let listed = text(&out.stdout);
    let store = healer::store::Store::open(&paths.db()).expect("store");
    let count = store.list_events(None, 1000).expect("events").len();
    assert_eq!(listed.lines().count(), count, "{listed}");
    assert!(listed.contains("Forged⏎#1"), "{listed}");
    Figures {
        faults: 3,
        ..Figures::default()
    }
    .print("bad titles");
}

#[test]
fn output_counts_past_4_gib_are_kept_whole() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let (_tmp, paths) = crate::data_dir();
    rt.block_on(async {
        let engine = healer::Engine::start(paths.clone(), "test")
            .await
            .expect("engine");
        let w = engine
            .create_workflow(input("Counted", Runtime::Bash, "echo ok\n"))
            .expect("create");
        let detail = engine.run_and_wait(w.id).await.expect("run");
        let attempt = &detail.attempts[0];
        let end = healer::store::AttemptEnd {
            succeeded: true,
            stdout_cut: 5_000_000_000,
            stderr_cut: u64::from(u32::MAX) + 1,
            ..healer::store::AttemptEnd::default()
        };
        engine
            .store()
            .finish_attempt(attempt.id, &end)
            .expect("store");
        let back = engine.run_detail(detail.run.id).expect("read back");
        assert_eq!(back.attempts[0].stdout_cut, 5_000_000_000);
        assert_eq!(back.attempts[0].stderr_cut, 4_294_967_296);
        engine.shutdown().await;
    });
}

/// A script larger than a workflow's script may be — a 2 GB file, or the endless /dev/zero —
/// is refused at the cap with a sentence naming it, read no further than the cap: the
/// command runs under a 2 GB address-space limit, which reading either whole would break.
#[test]
fn a_script_over_the_size_cap_is_refused_at_the_cap_with_bounded_memory() {
    let (tmp, paths) = crate::data_dir();
    let huge = tmp.path().join("huge.py");
    let file = std::fs::File::create(&huge).expect("file");
    file.set_len(2 << 30).expect("a sparse 2 GB file");
    let just_over = tmp.path().join("over.py");
    std::fs::write(
        &just_over,
        "#".repeat(healer::workflow::MAX_SCRIPT_BYTES + 1),
    )
    .expect("file");
    let at_cap = tmp.path().join("at_cap.py");
    let mut code = "print('fits')\n".to_string();
    code.push_str(&"#".repeat(healer::workflow::MAX_SCRIPT_BYTES - code.len()));
    std::fs::write(&at_cap, code).expect("file");

    for script in [huge.to_str(), Some("/dev/zero"), just_over.to_str()] {
        let script = script.unwrap_or_default();
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!(
                "ulimit -v 2097152; exec \"$0\" workflow create --title Big --runtime python3 --file '{script}'"
            ))
            .arg(env!("CARGO_BIN_EXE_healer"))
            .env("HEALER_DATA_DIR", paths.data_dir())
            .env("HEALER_KEYRING", "off")
            .stdin(Stdio::null())
            .output()
            .expect("healer runs");
        let said = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{script}: {said}");
        assert!(
            said.contains("is larger than 1.0 MB, the most a workflow's script may be"),
            "{script}: {said}"
        );
    }
    let out = healer(&paths)
        .args([
            "workflow",
            "create",
            "--title",
            "At the cap",
            "--runtime",
            "python3",
            "--file",
        ])
        .arg(&at_cap)
        .output()
        .expect("healer runs");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    Figures {
        faults: 3,
        ..Figures::default()
    }
    .print("scripts over the size cap");
}

/// A task list with a line in another encoding (not UTF-8), as an old editor saves it: the
/// board shows every other task and the line's problem with its number, a task can be added,
/// and the line is written back byte for byte (before, the whole board failed to load).
#[tokio::test]
async fn a_task_list_line_that_is_not_utf8_leaves_the_board_working() {
    use healer::project::{ProjectInput, TaskEdit};
    use healer::tasklist::TASKS_FILE;

    let bed = crate::maintainer::bed(false, false).await;
    let repo = bed.paths.data_dir().parent().expect("tmp").join("latin1");
    crate::project_fixtures::git_repo(&repo, crate::project_fixtures::GREETER);
    let mut bytes = b"{\"id\":\"t1\",\"title\":\"Greet\"}\n".to_vec();
    bytes.extend_from_slice(b"{\"id\":\"t2\",\"title\":\"Caf\xe9 menu\"}\n");
    bytes.extend_from_slice(b"{\"id\":\"t3\",\"title\":\"Three\"}\n");
    std::fs::create_dir_all(repo.join(".healer")).expect(".healer");
    std::fs::write(repo.join(TASKS_FILE), &bytes).expect("tasks");
    let project = bed
        .engine
        .add_project(ProjectInput {
            path: repo.display().to_string(),
            name: "latin1".to_string(),
            settings: healer::store::ProjectSettings {
                commit_without_checks: true,
                ..healer::store::ProjectSettings::default()
            },
        })
        .expect("project");
    let board = bed
        .engine
        .project_detail(project.id)
        .expect("the board loads");
    let ids: Vec<&str> = board.tasks.iter().map(|t| t.task.id.as_str()).collect();
    assert_eq!(ids, vec!["t1", "t3"]);
    assert_eq!(board.problems.len(), 1, "{:?}", board.problems);
    assert_eq!(board.problems[0].line, Some(2));
    bed.engine
        .add_task(
            project.id,
            TaskEdit {
                title: "Four".to_string(),
                ..TaskEdit::default()
            },
        )
        .expect("a task is added");
    let written = std::fs::read(repo.join(TASKS_FILE)).expect("tasks");
    let latin1: &[u8] = b"\n{\"id\":\"t2\",\"title\":\"Caf\xe9 menu\"}\n";
    assert!(
        written.windows(latin1.len()).any(|w| w == latin1),
        "the line is kept byte for byte, in its place"
    );
    Figures {
        faults: 1,
        ..Figures::default()
    }
    .print("a task list line that is not UTF-8");
}
