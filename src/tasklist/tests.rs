use super::*;

const NOW: &str = "2026-01-02T03:04:05.000Z";

fn ids(tasks: &[&Task]) -> Vec<String> {
    tasks.iter().map(|t| t.id.clone()).collect()
}

#[test]
fn every_line_is_kept_and_each_bad_one_is_reported_with_its_number() {
    let text = concat!(
        r#"{"id":"t1","title":"First","status":"open","mine":{"x":1}}"#,
        "\n",
        "{not json\n",
        "\n",
        r#"{"id":"t2","title":"Second","status":"doing"}"#,
        "\n",
        r#"{"id":"t1","title":"Again"}"#,
        "\n",
        r#"{"title":"no id"}"#,
        "\n",
    );
    let file = TaskFile::parse(text);
    let lines: Vec<(Option<u32>, ProblemKind)> =
        file.problems.iter().map(|p| (p.line, p.kind)).collect();
    assert_eq!(
        lines,
        vec![
            (Some(2), ProblemKind::InvalidJson),
            (Some(4), ProblemKind::UnknownStatus),
            (Some(5), ProblemKind::DuplicateId),
            (Some(6), ProblemKind::NotATask),
        ]
    );
    assert!(
        file.problems[1].message.contains("\"doing\""),
        "{:?}",
        file.problems[1]
    );
    assert_eq!(ids(&file.tasks()), vec!["t1"]);
    // Written back: the same lines, the unknown field of t1 included.
    let rendered = file.render();
    assert_eq!(rendered.lines().count(), 6);
    assert!(rendered.contains("{not json"));
    assert!(rendered.contains(r#""status":"doing""#));
    assert!(rendered.contains(r#""mine":{"x":1}"#));
    assert!(rendered.contains(r#""title":"Again""#));
}

#[test]
fn ready_tasks_come_by_priority_then_file_order_once_their_deps_are_closed() {
    let text = concat!(
        r#"{"id":"a","title":"A","status":"open","priority":2}"#,
        "\n",
        r#"{"id":"b","title":"B","status":"open","priority":1,"deps":["c"]}"#,
        "\n",
        r#"{"id":"c","title":"C","status":"closed"}"#,
        "\n",
        r#"{"id":"d","title":"D","status":"open","priority":1,"deps":[{"id":"e","type":"blocks"}]}"#,
        "\n",
        r#"{"id":"e","title":"E","status":"open","priority":3}"#,
        "\n",
        r#"{"id":"f","title":"F","status":"open","priority":2,"deps":[{"id":"e","type":"discovered-from"}]}"#,
        "\n",
    );
    let file = TaskFile::parse(text);
    assert!(file.problems.is_empty(), "{:?}", file.problems);
    assert_eq!(ids(&ready(&file)), vec!["b", "a", "f", "e"]);
    let d = file.task("d").expect("d");
    assert_eq!(
        ready::not_ready_reason(&file, d).as_deref(),
        Some("it waits for \u{201c}E\u{201d}")
    );
}

#[test]
fn a_cycle_is_reported_and_none_of_its_tasks_is_ready() {
    let text = concat!(
        r#"{"id":"x","title":"X","status":"open","deps":["z"]}"#,
        "\n",
        r#"{"id":"y","title":"Y","status":"open","deps":["x"]}"#,
        "\n",
        r#"{"id":"z","title":"Z","status":"open","deps":["y"]}"#,
        "\n",
        r#"{"id":"w","title":"W","status":"open","deps":["nowhere"]}"#,
        "\n",
        r#"{"id":"v","title":"V","status":"open"}"#,
        "\n",
    );
    let file = TaskFile::parse(text);
    let kinds: Vec<ProblemKind> = file.problems.iter().map(|p| p.kind).collect();
    assert_eq!(kinds, vec![ProblemKind::UnknownDep, ProblemKind::Cycle]);
    assert!(
        file.problems[1].message.contains("x → z → y → x"),
        "{}",
        file.problems[1].message
    );
    assert_eq!(ids(&ready(&file)), vec!["v"]);
}

#[test]
fn adding_editing_and_moving_keep_the_lines_healer_cannot_read() {
    let mut file = TaskFile::parse("{broken\n{\"id\":\"t7\",\"title\":\"Seven\",\"priority\":1}\n");
    let added = file
        .add(
            &TaskEdit {
                title: "  Eight ".to_string(),
                acceptance: vec!["it works".to_string(), " ".to_string()],
                deps: vec!["t7".to_string()],
                ..TaskEdit::default()
            },
            NOW,
        )
        .expect("added");
    assert_eq!(added.id, "t8");
    assert_eq!(added.title, "Eight");
    assert_eq!(added.acceptance, vec!["it works"]);
    assert_eq!(added.priority, DEFAULT_PRIORITY);
    let refused = file.add(
        &TaskEdit {
            title: "x".to_string(),
            deps: vec!["t99".to_string()],
            ..TaskEdit::default()
        },
        NOW,
    );
    assert!(refused.is_err());

    let moved = file.move_task("t8", Some("t7"), NOW).expect("moved");
    assert_eq!(moved.priority, 1);
    let order: Vec<String> = ids(&file.tasks());
    assert_eq!(order, vec!["t8", "t7"]);
    file.move_task("t8", None, NOW).expect("moved to the end");
    assert_eq!(ids(&file.tasks()), vec!["t7", "t8"]);

    let text = file.render();
    assert!(text.starts_with("{broken\n"), "{text}");
    assert_eq!(TaskFile::parse(&text).tasks().len(), 2);
}

#[test]
fn ids_must_be_able_to_name_a_branch() {
    for good in ["t1", "fix-login", "a.b_c"] {
        assert_eq!(id_problem(good), None, "{good}");
    }
    for bad in ["", "a b", "../x", ".hidden", "-x", "x.lock", "a..b", "ünï"] {
        assert!(id_problem(bad).is_some(), "{bad}");
    }
}

#[test]
fn a_line_that_is_not_utf8_is_reported_with_its_number_kept_byte_for_byte_and_the_rest_works() {
    let mut bytes = b"{\"id\":\"t1\",\"title\":\"One\"}\n".to_vec();
    // A title saved in Latin-1 by an old editor.
    bytes.extend_from_slice(b"{\"id\":\"t2\",\"title\":\"Caf\xe9\"}\r\n");
    bytes.extend_from_slice(b"{\"id\":\"t3\",\"title\":\"Three\",\"deps\":[\"t1\"]}\n");
    let mut file = TaskFile::parse_bytes(&bytes);
    assert_eq!(ids(&file.tasks()), vec!["t1", "t3"]);
    assert_eq!(file.problems.len(), 1, "{:?}", file.problems);
    assert_eq!(file.problems[0].line, Some(2));
    assert!(file.problems[0].message.contains("not UTF-8"));
    assert_eq!(ids(&ready(&file)), vec!["t1"]);
    file.update("t1", NOW, |t| t.status = TaskStatus::Closed)
        .expect("the rest of the list can change");
    let written = file.render_bytes();
    assert!(
        written
            .windows(b"Caf\xe9\"}\r\n".len())
            .any(|w| w == b"Caf\xe9\"}\r\n"),
        "the line is written back byte for byte"
    );
    assert_eq!(ids(&ready(&TaskFile::parse_bytes(&written))), vec!["t3"]);
}

#[test]
fn a_task_title_and_description_have_caps_that_say_so() {
    let mut file = TaskFile::default();
    let edit = |title: String, description: String| TaskEdit {
        title,
        description,
        ..TaskEdit::default()
    };
    let long = file.add(&edit("x".repeat(121), String::new()), NOW);
    let said = long.expect_err("too long").to_string();
    assert!(
        said.contains("120 characters or fewer (it has 121)"),
        "{said}"
    );
    assert!(file.add(&edit("x".repeat(120), String::new()), NOW).is_ok());
    let said = file
        .add(&edit("Title".to_string(), "d".repeat(20_001)), NOW)
        .expect_err("too long")
        .to_string();
    assert!(said.contains("20000 characters or fewer"), "{said}");
    assert!(file
        .add(&edit("Two\nlines".to_string(), String::new()), NOW)
        .is_err());
}

#[test]
fn a_priority_outside_zero_to_nine_in_the_file_is_reported_with_its_line() {
    let file = TaskFile::parse(
        "{\"id\":\"t1\",\"title\":\"One\",\"priority\":-3}\n{\"id\":\"t2\",\"title\":\"Two\",\"priority\":4}\n{\"id\":\"t3\",\"title\":\"Three\",\"priority\":1.5}\n",
    );
    assert_eq!(ids(&file.tasks()), vec!["t2"]);
    let lines: Vec<Option<u32>> = file.problems.iter().map(|p| p.line).collect();
    assert_eq!(lines, vec![Some(1), Some(3)]);
    assert!(
        file.problems[0].message.contains("priority -3"),
        "{:?}",
        file.problems
    );
    assert!(file
        .render()
        .starts_with("{\"id\":\"t1\",\"title\":\"One\",\"priority\":-3}\n"));
}
