//! The rules on small step sequences. The real-session cases (transcripts the real Claude Code
//! CLI wrote) are in tests/engine/steering_transcripts.rs.

use super::*;
use crate::session::StepUsage;

struct Session {
    steps: Vec<SessionStep>,
    n: u32,
}

fn step(source: StepSource, kind: StepKind, text: &str) -> SessionStep {
    SessionStep {
        at: "2025-01-01T00:00:00.000Z".to_string(),
        source,
        kind,
        text: text.to_string(),
        tool: None,
        arguments: None,
        call_id: None,
        is_error: false,
        model: None,
        usage: None::<StepUsage>,
    }
}

impl Session {
    fn new() -> Session {
        Session {
            steps: vec![step(StepSource::User, StepKind::Text, "Fix the build")],
            n: 0,
        }
    }

    fn say(&mut self, text: &str) -> &mut Self {
        self.steps
            .push(step(StepSource::Agent, StepKind::Text, text));
        self
    }

    fn run(&mut self, tool: &str, args: serde_json::Value, result: &str, error: bool) -> &mut Self {
        self.n += 1;
        let id = format!("call_{}", self.n);
        let mut call = step(StepSource::Agent, StepKind::ToolCall, "");
        call.tool = Some(tool.to_string());
        call.arguments = Some(args.to_string());
        call.call_id = Some(id.clone());
        let mut out = step(StepSource::Agent, StepKind::ToolResult, result);
        out.call_id = Some(id);
        out.is_error = error;
        self.steps.push(call);
        self.steps.push(out);
        self
    }

    fn bash(&mut self, command: &str, result: &str, error: bool) -> &mut Self {
        self.run(
            "Bash",
            serde_json::json!({"command": command, "description": format!("try {}", self.n)}),
            result,
            error,
        )
    }

    fn verdict(&self) -> Verdict {
        check(&self.steps)
    }
}

#[test]
fn the_same_error_three_times_is_a_loop_whatever_the_thoughts_and_pids() {
    let mut s = Session::new();
    for (i, pid) in [4242, 5151, 6060].iter().enumerate() {
        s.say(&format!("Attempt {i}: let me run the check again."));
        s.bash(
            "bash check.sh",
            &format!("12:0{i}:33.{pid} [pid {pid}] error: config.ini missing (took {i}.{pid}s)"),
            true,
        );
    }
    let v = s.verdict();
    assert_eq!(v.verdict, "looping");
    assert_eq!(v.rule, Some(LoopRule::RepeatedError));
    assert_eq!(v.evidence.len(), 3);
    let message = v.message.unwrap_or_default();
    assert!(
        message.starts_with("You ran `bash check.sh` 3 times and it failed each time with `"),
        "{message}"
    );
    assert!(message.contains("config.ini missing"), "{message}");
}

#[test]
fn four_identical_results_in_a_row_are_a_loop_three_are_not() {
    let mut s = Session::new();
    for _ in 0..3 {
        s.bash("cat status.txt", "pending", false);
    }
    assert_eq!(s.verdict().verdict, "progressing");
    s.bash("cat status.txt", "pending", false);
    let v = s.verdict();
    assert_eq!(v.rule, Some(LoopRule::Repeat));
    assert!(v
        .message
        .unwrap_or_default()
        .contains("You ran `cat status.txt` 4 times in a row"));
}

#[test]
fn test_counts_that_improve_are_progress() {
    let mut s = Session::new();
    for failed in [3, 2, 1] {
        s.bash(
            "python3 -m pytest -q",
            &format!("{failed} failed, {} passed in 0.0{failed}s", 4 - failed),
            true,
        );
        s.run(
            "Edit",
            serde_json::json!({"file_path": "/w/app.py", "old_string": format!("v{failed}"), "new_string": "x"}),
            "updated",
            false,
        );
    }
    s.bash("python3 -m pytest -q", "4 passed in 0.01s", false);
    let v = s.verdict();
    assert_eq!(v.verdict, "progressing", "{v:?}");
}

#[test]
fn alternation_and_cycles_are_loops() {
    let mut s = Session::new();
    for _ in 0..3 {
        s.bash("cat a.txt", "A", false);
        s.bash("cat b.txt", "B", false);
    }
    assert_eq!(s.verdict().rule, Some(LoopRule::Alternation));

    let mut s = Session::new();
    let edit = |from: &str, to: &str| serde_json::json!({"file_path": "/w/greet.py", "old_string": from, "new_string": to});
    for _ in 0..2 {
        s.run(
            "Edit",
            edit("Hi", "Hello"),
            "The file greet.py has been updated.",
            false,
        );
        s.bash("python3 test.py", "FAILED: comma missing", true);
        s.run(
            "Edit",
            edit("Hello", "Hi"),
            "The file greet.py has been updated.",
            false,
        );
        s.bash("python3 test.py", "FAILED: wrong greeting", true);
    }
    let v = s.verdict();
    assert_eq!(v.rule, Some(LoopRule::Cycle), "{v:?}");
    assert_eq!(v.evidence.len(), 8);
    assert!(v
        .message
        .unwrap_or_default()
        .contains("edited w/greet.py, then ran `python3 test.py`"));
}

#[test]
fn three_messages_without_a_tool_are_a_monologue() {
    let mut s = Session::new();
    s.say("I think the problem is the config.");
    s.say("On reflection, the config could be it.");
    assert_eq!(s.verdict().verdict, "progressing");
    s.say("Yes, the config is probably the issue.");
    assert_eq!(s.verdict().rule, Some(LoopRule::Monologue));
}

#[test]
fn a_loop_is_told_once_and_again_only_when_it_goes_on() {
    let mut d = Detector::new();
    let mut s = Session::new();
    for _ in 0..7 {
        s.bash("cat status.txt", "pending", false);
    }
    let found: Vec<Detection> = s.steps.iter().filter_map(|st| d.push(st)).collect();
    assert_eq!(found.len(), 1, "{found:?}");
    s.bash("cat status.txt", "pending", false);
    let again: Vec<Detection> = s.steps[s.steps.len() - 2..]
        .iter()
        .filter_map(|st| d.push(st))
        .collect();
    assert_eq!(again.len(), 1, "the eighth run completes a second loop");
}

#[test]
fn healers_own_checks_and_calls_without_results_do_not_count() {
    let mut s = Session::new();
    for _ in 0..5 {
        let mut check = step(StepSource::System, StepKind::ToolResult, "test: failed");
        check.is_error = true;
        s.steps.push(check);
    }
    let mut call = step(StepSource::Agent, StepKind::ToolCall, "");
    call.tool = Some("Bash".to_string());
    for _ in 0..100 {
        s.steps.push(call.clone());
    }
    assert_eq!(s.verdict().verdict, "progressing");
}

#[test]
fn one_check_under_other_spellings_with_nothing_changed_is_a_loop() {
    let mut s = Session::new();
    for command in ["./check.sh", "cd . && ./check.sh", "bash check.sh -v"] {
        s.bash(command, "FAIL: greet('Ada') returned 'Hey Ada'", true);
    }
    let v = s.verdict();
    assert_eq!(v.rule, Some(LoopRule::RepeatedError), "{v:?}");
    assert_eq!(v.evidence.len(), 3);
}

#[test]
fn a_failure_whose_numbers_move_after_real_edits_is_progress() {
    let mut s = Session::new();
    for got in [7, 8, 9] {
        s.bash(
            "python3 check.py",
            &format!("AssertionError: expected 10 lines, got {got}"),
            true,
        );
        s.run(
            "Edit",
            serde_json::json!({"file_path": "a.txt", "old_string": format!("{got}"), "new_string": format!("{}", got + 1)}),
            "The file a.txt has been updated.",
            false,
        );
    }
    assert_eq!(s.verdict().verdict, "progressing", "{:?}", s.verdict());
    // With nothing changed in between, the same numbers moving (a clock, a count of
    // retries) are still one result: a loop.
    let mut idle = Session::new();
    for got in [7, 8, 9] {
        idle.bash(
            "python3 check.py",
            &format!("AssertionError: expected 10 lines, got {got}"),
            true,
        );
    }
    assert_eq!(idle.verdict().rule, Some(LoopRule::RepeatedError));
    // The same output after edits that changed nothing it prints: a loop.
    let mut futile = Session::new();
    for n in 0..3 {
        futile.bash(
            "python3 check.py",
            "AssertionError: expected 10 lines, got 7",
            true,
        );
        futile.run(
            "Edit",
            serde_json::json!({"file_path": "b.txt", "old_string": format!("v{n}"), "new_string": format!("v{}", n + 1)}),
            "The file b.txt has been updated.",
            false,
        );
    }
    assert_eq!(futile.verdict().rule, Some(LoopRule::RepeatedError));
}

#[test]
fn the_message_quotes_each_output_as_it_was() {
    let mut idle = Session::new();
    for got in [7, 8, 9] {
        idle.bash(
            "python3 check.py",
            &format!("AssertionError: expected 10 lines, got {got}"),
            true,
        );
    }
    let message = idle.verdict().message.unwrap_or_default();
    assert!(
        message.contains("`AssertionError: expected 10 lines, got 7`, then `AssertionError: expected 10 lines, got 8`, then `AssertionError: expected 10 lines, got 9`"),
        "{message}"
    );
    let mut same = Session::new();
    for _ in 0..3 {
        same.bash("./check.sh", "error: config.ini missing", true);
    }
    let message = same.verdict().message.unwrap_or_default();
    assert!(
        message.contains("failed each time with `error: config.ini missing`."),
        "{message}"
    );
}

#[test]
fn the_same_action_failing_with_a_new_error_each_time_and_nothing_changed_is_a_loop() {
    let mut s = Session::new();
    for error in [
        "npm error code ETIMEDOUT\nnpm error network request to https://registry.npmjs.org/left-pad failed",
        "npm error code ECONNRESET\nnpm error network aborted",
        "npm error code EAI_AGAIN\nnpm error request to https://registry.npmjs.org/left-pad failed, reason: getaddrinfo EAI_AGAIN registry.npmjs.org",
    ] {
        s.say("Trying the install once more.");
        s.bash("npm install left-pad", error, true);
    }
    let v = s.verdict();
    assert_eq!(v.rule, Some(LoopRule::RepeatedError), "{v:?}");
    assert_eq!(v.evidence.len(), 3);
    let message = v.message.unwrap_or_default();
    assert!(
        message.starts_with("You ran `npm install left-pad` 3 times with nothing changed in between, and it failed each time (`npm error code ETIMEDOUT`, then `npm error code ECONNRESET`, then `npm error code EAI_AGAIN`)"),
        "{message}"
    );

    // Reads in between change nothing: still the same failure again.
    let mut s = Session::new();
    for (i, error) in [
        "Command not found",
        "Command still not found or another error",
        "Different error",
    ]
    .iter()
    .enumerate()
    {
        s.bash("invalid_command", error, true);
        s.bash(&format!("cat notes{i}.txt"), "nothing useful", false);
    }
    assert_eq!(s.verdict().rule, Some(LoopRule::RepeatedError));
}

#[test]
fn a_failing_action_retried_after_a_change_or_that_succeeded_meanwhile_is_not_a_loop() {
    // A change between the failures: each run tests something new.
    let mut s = Session::new();
    for (n, error) in [
        "SyntaxError: invalid syntax",
        "NameError: name 'x' is not defined",
        "TypeError: 'int' object is not iterable",
    ]
    .iter()
    .enumerate()
    {
        s.bash("python3 app.py", error, true);
        s.run(
            "Edit",
            serde_json::json!({"file_path": "/w/app.py", "old_string": format!("v{n}"), "new_string": format!("v{}", n + 1)}),
            "The file app.py has been updated.",
            false,
        );
    }
    assert_eq!(s.verdict().verdict, "progressing", "{:?}", s.verdict());
    // It passed once in between: a flaky check, not one failure repeated.
    let mut s = Session::new();
    s.bash("./check.sh", "FAIL: timeout talking to db", true);
    s.bash("./check.sh", "FAIL: connection reset", true);
    s.bash("./check.sh", "all checks passed", false);
    s.bash("./check.sh", "FAIL: lock held by pid 12", true);
    assert_eq!(s.verdict().verdict, "progressing", "{:?}", s.verdict());
    // Two failures are not yet "again and again".
    let mut s = Session::new();
    s.bash("invalid_command", "Command not found", true);
    s.bash("invalid_command", "Another error", true);
    assert_eq!(s.verdict().verdict, "progressing");
}

/// A compaction as Claude Code's adapter writes it.
fn compacted(s: &mut Session) {
    s.steps.push(crate::session::compaction_step(
        "2025-01-01T00:00:00.000Z".to_string(),
        Some("automatically, at 155000 tokens"),
    ));
}

#[test]
fn a_context_compacted_again_and_again_with_no_progress_in_between_is_stuck() {
    // Nothing at all in between (a context that no longer fits, trimmed again and again).
    let mut s = Session::new();
    for _ in 0..COMPACTIONS {
        compacted(&mut s);
    }
    let v = s.verdict();
    assert_eq!(v.rule, Some(LoopRule::Compaction), "{v:?}");
    assert_eq!(v.evidence.len(), COMPACTIONS);
    assert!(v
        .message
        .unwrap_or_default()
        .starts_with("Your context was compacted 3 times with no progress in between"),);

    // After each compaction, the same files read again in another order, words and the
    // person's nudges in between: no progress (and no exact cycle for the other rules).
    let mut s = Session::new();
    let read = |s: &mut Session, file: &str| {
        s.run(
            "Read",
            serde_json::json!({"file_path": format!("/w/{file}")}),
            &format!("contents of {file}"),
            false,
        );
    };
    for file in ["app.py", "db.py", "test_app.py"] {
        read(&mut s, file);
    }
    for (i, order) in [
        ["app.py", "test_app.py", "db.py"],
        ["db.py", "app.py", "test_app.py"],
        ["test_app.py", "db.py", "app.py"],
    ]
    .iter()
    .enumerate()
    {
        compacted(&mut s);
        s.steps.push(step(
            StepSource::User,
            StepKind::Text,
            &format!("Please continue {i}"),
        ));
        s.say("Let me look at the code again.");
        for file in order {
            read(&mut s, file);
        }
    }
    let v = s.verdict();
    assert_eq!(v.rule, Some(LoopRule::Compaction), "{v:?}");
}

#[test]
fn compactions_with_work_in_between_are_progress() {
    // A change after each compaction.
    let mut s = Session::new();
    for n in 0..5 {
        compacted(&mut s);
        s.bash("cat src/app.py", "def main(): ...", false);
        s.run(
            "Edit",
            serde_json::json!({"file_path": "/w/app.py", "old_string": format!("v{n}"), "new_string": format!("v{}", n + 1)}),
            "The file app.py has been updated.",
            false,
        );
    }
    assert_eq!(s.verdict().verdict, "progressing", "{:?}", s.verdict());
    // Something new tried after each (other folders listed, other files read).
    let mut s = Session::new();
    for i in 0..10 {
        s.steps.push(step(
            StepSource::System,
            StepKind::Text,
            "Trimming prompt to meet context window limitations",
        ));
        if i < 9 {
            s.bash(&format!("ls dir{i}"), "file1.txt\nfile2.txt", false);
        }
    }
    assert_eq!(s.verdict().verdict, "progressing", "{:?}", s.verdict());
    // Two compactions are not yet "again and again".
    let mut s = Session::new();
    compacted(&mut s);
    compacted(&mut s);
    assert_eq!(s.verdict().verdict, "progressing");
}

#[test]
fn a_compaction_is_told_by_its_step_not_by_words_anyone_writes() {
    use crate::session::is_compaction;
    assert!(is_compaction(&crate::session::compaction_step(
        "t".to_string(),
        None
    )));
    for notice in [
        "Conversation compacted",
        "Trimming prompt to meet context window limitations",
        "Context condensed: 42 events summarised",
    ] {
        assert!(
            is_compaction(&step(StepSource::System, StepKind::Text, notice)),
            "{notice}"
        );
    }
    // The agent's or the person's words, and a long system prompt, are not compactions.
    assert!(!is_compaction(&step(
        StepSource::Agent,
        StepKind::Text,
        "The conversation was compacted, so I re-read the file."
    )));
    assert!(!is_compaction(&step(
        StepSource::User,
        StepKind::Text,
        "Conversation compacted"
    )));
    let prompt = format!(
        "You are a coding agent. {} Keep answers condensed.",
        "Work carefully. ".repeat(20)
    );
    assert!(!is_compaction(&step(
        StepSource::System,
        StepKind::Text,
        &prompt
    )));
}
