//! `healer session check FILE` on real transcripts: the real Claude Code CLI (2.1.328) is run
//! offline against the scripted server, which makes it go in circles (or not); the transcript
//! it writes is then checked by the real `healer` binary. Looping: identical repeats, repeats
//! whose thoughts differ, outputs that differ only by time and pid, an alternation, an
//! edit/revert cycle, one check under other spellings with nothing changed. Progressing: read,
//! fix, re-run a test that then passes; a test re-run after each edit while its output
//! improves; a failure whose numbers move after real edits.

use std::path::{Path, PathBuf};
use std::process::Command;

use healer::agent::claude_code::{ClaudeCode, DEFAULT_ALLOWED_TOOLS};
use healer::session::SessionStatus;
use serde_json::{json, Value};

use crate::agent_fixtures::{claude, run, workspace, Workspace};
use crate::model_server::{anthropic, ModelServer, Reply, TOKENS};

const KEY: &str = "test-key-steering-check";

/// A model turn: a thought and one tool call.
pub(crate) struct Turn {
    said: &'static str,
    tool: &'static str,
    input: Value,
}

pub(crate) fn bash(said: &'static str, command: &str) -> Turn {
    Turn {
        said,
        tool: "Bash",
        input: json!({"command": command, "description": "Run it"}),
    }
}

fn edit(ws: &Workspace, file: &str, old: &str, new: &str) -> Turn {
    Turn {
        said: "Changing the file.",
        tool: "Edit",
        input: json!({"file_path": ws.repo.join(file), "old_string": old, "new_string": new}),
    }
}

/// Run the real Claude Code through `turns`, then a closing text; the transcript it wrote.
pub(crate) async fn transcript_of(ws: &Workspace, turns: Vec<Turn>) -> PathBuf {
    let server = ModelServer::start(Some(KEY));
    let mut replies: Vec<Reply> = turns
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let id = format!("toolu_{i}");
            let input = t.input.to_string();
            anthropic::tool_calls(t.said, &[(id.as_str(), t.tool, input.as_str())], TOKENS)
        })
        .collect();
    replies.push(anthropic::text("That is all I can do.", TOKENS));
    server.script(replies);
    let mut spec = ws.spec(
        claude(),
        "Make the check pass.",
        &[
            ("ANTHROPIC_BASE_URL", server.url.clone()),
            ("ANTHROPIC_API_KEY", KEY.to_string()),
            ("CLAUDE_CODE_MAX_RETRIES", "0".to_string()),
        ],
    );
    spec.allowed_tools = DEFAULT_ALLOWED_TOOLS.map(str::to_string).to_vec();
    let ran = run(&ClaudeCode::new(None), spec).await;
    assert_eq!(ran.end.status, SessionStatus::Finished, "{:?}", ran.end);
    assert_eq!(server.unused_replies(), 0, "every scripted turn was taken");
    ran.started()
        .and_then(|(_, path)| path)
        .expect("Claude Code wrote a transcript")
}

/// `healer session check FILE --json`, which exits 0 whatever the verdict.
fn check(file: &Path) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_healer"))
        .args(["session", "check", "--json"])
        .arg(file)
        .env("HEALER_DATA_DIR", file.with_extension("data"))
        .output()
        .expect("healer runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON verdict")
}

fn assert_looping(verdict: &Value, rules: &[&str]) {
    assert_eq!(verdict["verdict"], "looping", "{verdict:#}");
    let rule = verdict["rule"].as_str().unwrap_or_default();
    assert!(
        rules.contains(&rule),
        "rule {rule} not in {rules:?}: {verdict:#}"
    );
    assert!(verdict["steps"].as_u64().unwrap_or(0) > 0);
    assert!(!verdict["evidence"].as_array().expect("evidence").is_empty());
}

fn assert_progressing(verdict: &Value) {
    assert_eq!(verdict["verdict"], "progressing", "{verdict:#}");
    assert_eq!(verdict["rule"], Value::Null);
    assert!(verdict["steps"].as_u64().unwrap_or(0) > 0);
}

#[tokio::test]
async fn identical_repeats_are_looping_and_the_plain_output_says_what_to_do() {
    let ws = workspace();
    let turns = (0..4)
        .map(|_| bash("Let me run the check.", "cat config.ini"))
        .collect();
    let file = transcript_of(&ws, turns).await;
    assert_looping(&check(&file), &["repeat", "repeated-error"]);

    let out = Command::new(env!("CARGO_BIN_EXE_healer"))
        .args(["session", "check"])
        .arg(&file)
        .env("HEALER_DATA_DIR", ws.dir.path().join("data"))
        .output()
        .expect("healer runs");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("Looping: "), "{text}");
    assert!(text.contains("cat config.ini"), "{text}");
    assert!(text.contains("What Healer would tell the agent:"), "{text}");
}

#[tokio::test]
async fn repeats_whose_thoughts_differ_are_looping() {
    let ws = workspace();
    let thoughts = [
        "First, list the files.",
        "Hmm, let me look once more.",
        "Maybe something changed; listing again.",
        "One more look at the folder.",
    ];
    let turns = thoughts.iter().map(|t| bash(t, "ls")).collect();
    let file = transcript_of(&ws, turns).await;
    assert_looping(&check(&file), &["repeat"]);
}

#[tokio::test]
async fn outputs_that_differ_only_by_time_and_pid_are_looping() {
    let ws = workspace();
    let command = "echo \"$(date -u +%H:%M:%S.%N) [pid $$] error: config.ini missing\"; exit 1";
    let turns = (0..4).map(|_| bash("Trying the check.", command)).collect();
    let file = transcript_of(&ws, turns).await;
    assert_looping(&check(&file), &["repeat", "repeated-error"]);
}

#[tokio::test]
async fn an_alternation_is_looping() {
    let ws = workspace();
    let turns = (0..3)
        .flat_map(|_| {
            [
                bash("Reading it.", "cat hello.txt"),
                bash("Checking the status.", "git status --short"),
            ]
        })
        .collect();
    let file = transcript_of(&ws, turns).await;
    assert_looping(&check(&file), &["alternation"]);
}

#[tokio::test]
async fn an_edit_test_revert_test_cycle_is_looping() {
    let ws = workspace();
    let test = "grep -c TWO hello.txt || true";
    let mut turns = Vec::new();
    for _ in 0..2 {
        turns.push(edit(&ws, "hello.txt", "line two", "line TWO"));
        turns.push(bash("Testing.", test));
        turns.push(edit(&ws, "hello.txt", "line TWO", "line two"));
        turns.push(bash("Testing.", test));
    }
    let file = transcript_of(&ws, turns).await;
    assert_looping(&check(&file), &["cycle", "alternation"]);
}

#[tokio::test]
async fn reading_fixing_and_rerunning_a_test_that_then_passes_is_progressing() {
    let ws = workspace();
    let test = "grep -q 'line TWO' hello.txt && echo passed || { echo '1 failed'; exit 1; }";
    let turns = vec![
        bash("Running the test.", test),
        bash("Reading the file.", "cat hello.txt"),
        edit(&ws, "hello.txt", "line two", "line TWO"),
        bash("Running the test again.", test),
    ];
    let file = transcript_of(&ws, turns).await;
    assert_eq!(ws.read("hello.txt"), "line one\nline TWO\nline three\n");
    assert_progressing(&check(&file));
}

#[tokio::test]
async fn a_test_rerun_after_each_edit_while_its_output_improves_is_progressing() {
    let ws = workspace();
    std::fs::write(ws.repo.join("hello.txt"), "bad one\nbad two\nbad three\n").expect("file");
    let test = "n=$(grep -c bad hello.txt); if [ \"$n\" -gt 0 ]; then echo \"$n failed\"; exit 1; else echo 'all passed'; fi";
    let turns = vec![
        bash("Running the tests.", test),
        edit(&ws, "hello.txt", "bad one", "good one"),
        bash("Again.", test),
        edit(&ws, "hello.txt", "bad two", "good two"),
        bash("Again.", test),
        edit(&ws, "hello.txt", "bad three", "good three"),
        bash("Again.", test),
    ];
    let file = transcript_of(&ws, turns).await;
    assert_progressing(&check(&file));
}

/// Judged by effect: the same failing check under four spellings (`./check.sh`, through
/// `cd . &&`, with a harmless flag, through `bash`), nothing changed in between, is one action
/// repeated; the message quotes the output as it was.
#[tokio::test]
async fn one_check_under_other_spellings_with_nothing_changed_is_looping() {
    use std::os::unix::fs::PermissionsExt;
    let ws = workspace();
    let script = ws.repo.join("check.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\ngrep -q 'line TWO' hello.txt && echo passed || { echo 'FAIL: hello.txt has no line TWO'; exit 1; }\n",
    )
    .expect("check.sh");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let turns = vec![
        bash("Running the check.", "./check.sh"),
        bash("From the folder itself.", "cd . && ./check.sh"),
        bash("With more detail.", "./check.sh -v"),
        bash("Through bash.", "bash check.sh"),
    ];
    let file = transcript_of(&ws, turns).await;
    let verdict = check(&file);
    assert_looping(&verdict, &["repeat", "repeated-error"]);
    let message = verdict["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("`FAIL: hello.txt has no line TWO`"),
        "{message}"
    );
}

/// A failure repeated after real edits, whose numbers moved with them, is progress — though
/// it fails every time (the signature's normalisation would call the outputs the same).
#[tokio::test]
async fn a_failure_whose_numbers_move_after_real_edits_is_progressing() {
    let ws = workspace();
    let test = "n=$(wc -l < hello.txt); if [ \"$n\" -lt 7 ]; then echo \"AssertionError: expected 7 lines, got $n\"; exit 1; fi; echo ok";
    let turns = vec![
        bash("Running the test.", test),
        edit(&ws, "hello.txt", "line three", "line three\nline four"),
        bash("Again.", test),
        edit(&ws, "hello.txt", "line four", "line four\nline five"),
        bash("Again.", test),
        edit(&ws, "hello.txt", "line five", "line five\nline six"),
        bash("Again.", test),
    ];
    let file = transcript_of(&ws, turns).await;
    assert_eq!(ws.read("hello.txt").lines().count(), 6);
    assert_progressing(&check(&file));
}

#[test]
fn a_file_that_is_not_a_transcript_is_refused_with_a_reason() {
    let dir = tempfile::tempdir().expect("tmp");
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "{\"hello\": \"world\"}\n").expect("file");
    let out = Command::new(env!("CARGO_BIN_EXE_healer"))
        .args(["session", "check"])
        .arg(&file)
        .env("HEALER_DATA_DIR", dir.path().join("data"))
        .output()
        .expect("healer runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a Claude Code transcript"), "{err}");
}

/// The same check failing three times with nothing changed in between, its error worded anew
/// each time (a service still starting): one failure repeated, though no two outputs match.
#[tokio::test]
async fn the_same_check_failing_with_a_new_error_each_time_and_nothing_changed_is_looping() {
    use std::os::unix::fs::PermissionsExt;
    let ws = workspace();
    let script = ws.repo.join("sync.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\n\
         n=$(( $(cat .sync-attempts 2>/dev/null || echo 0) + 1 ))\n\
         echo $n > .sync-attempts\n\
         case $n in\n\
           1) echo 'error: connect ECONNREFUSED 127.0.0.1:5432';;\n\
           2) echo 'error: timeout after 5000ms waiting for the database';;\n\
           *) echo 'FATAL: the database system is starting up';;\n\
         esac\n\
         exit 1\n",
    )
    .expect("sync.sh");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let turns = vec![
        bash("Running the sync.", "./sync.sh"),
        bash("Once more.", "./sync.sh"),
        bash("And again.", "./sync.sh"),
    ];
    let file = transcript_of(&ws, turns).await;
    let verdict = check(&file);
    assert_looping(&verdict, &["repeated-error"]);
    let message = verdict["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("ran `./sync.sh` 3 times with nothing changed in between"),
        "{message}"
    );
    let evidence = verdict["evidence"].as_array().expect("evidence");
    assert_eq!(evidence.len(), 3, "{verdict:#}");
}

/// Run the real Claude Code in `ws` once with `prompt` (resuming `session` when given) against
/// `server`; its session id and transcript.
async fn claude_turn(
    ws: &Workspace,
    server: &ModelServer,
    prompt: &str,
    session: Option<&str>,
) -> (String, PathBuf) {
    let mut spec = ws.spec(
        claude(),
        prompt,
        &[
            ("ANTHROPIC_BASE_URL", server.url.clone()),
            ("ANTHROPIC_API_KEY", KEY.to_string()),
            ("CLAUDE_CODE_MAX_RETRIES", "0".to_string()),
        ],
    );
    spec.allowed_tools = DEFAULT_ALLOWED_TOOLS.map(str::to_string).to_vec();
    spec.resume = session.map(str::to_string);
    let ran = run(&ClaudeCode::new(None), spec).await;
    assert_eq!(ran.end.status, SessionStatus::Finished, "{:?}", ran.end);
    let (id, path) = ran.started().expect("Claude Code started");
    (id, path.expect("Claude Code wrote a transcript"))
}

/// A summary as Claude Code asks the model for one when it compacts the conversation.
fn summary(n: u32) -> Reply {
    anthropic::text(
        &format!("<summary>\n1. Primary request: make the check pass.\n2. Progress: none yet (summary {n}).\n</summary>"),
        TOKENS,
    )
}

/// The real Claude Code compacts its conversation (`/compact`, which writes the same
/// `compact_boundary` as an automatic compaction) three times, the agent only reading the same
/// file again in between: stuck. With a real change after each compaction, it is progress.
#[tokio::test]
async fn a_session_compacted_again_and_again_with_no_progress_in_between_is_stuck() {
    let ws = workspace();
    let server = ModelServer::start(Some(KEY));
    let read_again = |n: u32| {
        let id = format!("toolu_read_{n}");
        let input = json!({"command": "cat hello.txt", "description": "Read the file"}).to_string();
        [
            anthropic::tool_calls(
                "Reading the file first.",
                &[(id.as_str(), "Bash", input.as_str())],
                TOKENS,
            ),
            anthropic::text("I need to think about what the check wants.", TOKENS),
        ]
    };
    let mut replies: Vec<Reply> = read_again(0).into();
    for n in 1..=3 {
        replies.push(summary(n));
        if n < 3 {
            replies.extend(read_again(n));
        }
    }
    server.script(replies);
    let (id, file) = claude_turn(&ws, &server, "Make the check pass.", None).await;
    for n in 1..=3 {
        // Claude Code compacts only a conversation that has grown since its last compaction.
        claude_turn(&ws, &server, "/compact", Some(&id)).await;
        if n < 3 {
            claude_turn(&ws, &server, "Go on.", Some(&id)).await;
        }
    }
    assert_eq!(
        server.unused_replies(),
        0,
        "each compaction asked the model"
    );
    let transcript = std::fs::read_to_string(&file).expect("transcript");
    assert_eq!(
        transcript
            .matches("\"subtype\":\"compact_boundary\"")
            .count(),
        3,
        "Claude Code wrote a compact boundary each time"
    );
    let verdict = check(&file);
    assert_looping(&verdict, &["compaction"]);
    let message = verdict["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("Your context was compacted 3 times with no progress in between"),
        "{message}"
    );

    // The same, with an edit to the worktree after each compaction: progress.
    let ws = workspace();
    let server = ModelServer::start(Some(KEY));
    let mut replies = vec![anthropic::text("I will look into the check.", TOKENS)];
    for n in 1..=3 {
        let input = json!({
            "file_path": ws.repo.join("hello.txt"),
            "old_string": format!("line {}", ["one", "two", "three"][n - 1]),
            "new_string": format!("line {n} done"),
        })
        .to_string();
        replies.push(summary(n as u32));
        replies.push(anthropic::tool_calls(
            "Changing the next line.",
            &[(format!("toolu_{n}").as_str(), "Edit", input.as_str())],
            TOKENS,
        ));
        replies.push(anthropic::text("One more line done.", TOKENS));
    }
    server.script(replies);
    let (id, file) = claude_turn(&ws, &server, "Make the check pass.", None).await;
    for _ in 0..3 {
        claude_turn(&ws, &server, "/compact", Some(&id)).await;
        claude_turn(&ws, &server, "Go on with the next line.", Some(&id)).await;
    }
    assert_eq!(server.unused_replies(), 0);
    assert_eq!(
        ws.read("hello.txt"),
        "line 1 done\nline 2 done\nline 3 done\n"
    );
    assert_progressing(&check(&file));
}
