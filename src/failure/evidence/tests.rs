use super::*;

fn parse(stderr: &str) -> Evidence {
    parse_evidence(stderr, "", "main.py").expect("evidence")
}

const KEY_ERROR: &str = "\
Traceback (most recent call last):
  File \"/tmp/w/main.py\", line 5, in <module>
    f({})
  File \"/tmp/w/main.py\", line 3, in f
    return d[\"total\"]
           ~^^^^^^^^^
KeyError: 'total'
";

#[test]
fn a_python_traceback_gives_type_message_and_frames_without_carets() {
    let e = parse(KEY_ERROR);
    assert_eq!(e.error_type.as_deref(), Some("KeyError"));
    assert_eq!(e.message, "'total'");
    assert_eq!(
        e.stack.as_deref(),
        Some(
            "  File \"/tmp/w/main.py\", line 5, in <module>\n    f({})\n  \
                 File \"/tmp/w/main.py\", line 3, in f\n    return d[\"total\"]"
        )
    );
}

#[test]
fn a_dotted_exception_type_is_kept_as_printed() {
    let e = parse(
        "Traceback (most recent call last):\n  File \"main.py\", line 2, in <module>\n    \
             json.loads('{bad')\njson.decoder.JSONDecodeError: Expecting property name: \
             line 1 column 2 (char 1)\n",
    );
    assert_eq!(
        e.error_type.as_deref(),
        Some("json.decoder.JSONDecodeError")
    );
    assert_eq!(
        e.message,
        "Expecting property name: line 1 column 2 (char 1)"
    );
}

#[test]
fn a_bare_exception_has_an_empty_message() {
    let e = parse(
        "Traceback (most recent call last):\n  File \"main.py\", line 1, in <module>\n\
             KeyboardInterrupt\n",
    );
    assert_eq!(e.error_type.as_deref(), Some("KeyboardInterrupt"));
    assert_eq!(e.message, "");
}

#[test]
fn of_chained_python_exceptions_the_last_one_is_reported_with_the_chain_in_its_stack() {
    let text = format!(
        "{KEY_ERROR}\nDuring handling of the above exception, another exception \
             occurred:\n\nTraceback (most recent call last):\n  File \"main.py\", line 7, in \
             <module>\n    raise ValueError('no total')\nValueError: no total\n"
    );
    let e = parse(&text);
    assert_eq!(e.error_type.as_deref(), Some("ValueError"));
    assert_eq!(e.message, "no total");
    let stack = e.stack.clone().expect("stack");
    assert_eq!(
        stack,
        "  File \"/tmp/w/main.py\", line 5, in <module>\n    f({})\n  File \"/tmp/w/main.py\", \
         line 3, in f\n    return d[\"total\"]\nKeyError: 'total'\nDuring handling of the above \
         exception, another exception occurred:\n  File \"main.py\", line 7, in <module>\n    \
         raise ValueError('no total')"
    );
    let links = crate::failure::chain(&e);
    let described: Vec<String> = links.iter().map(|l| l.describe()).collect();
    assert_eq!(described, ["KeyError: 'total'", "ValueError: no total"]);
}

#[test]
fn a_node_errors_causes_are_its_chain_deepest_first() {
    let text = "/tmp/w/main.js:9\n    throw new Error(\"sync failed\", { cause: err });\n    ^\n\n\
        Error: sync failed\n    at sync (/tmp/w/main.js:9:11) {\n  [cause]: Error: transport \
        failed\n      at read (/tmp/w/main.js:3:9) {\n    [cause]: Error: connect ECONNREFUSED \
        127.0.0.1:4000\n        at TCPConnectWrap.afterConnect [as oncomplete] \
        (node:net:1607:16) {\n      errno: -111,\n      code: 'ECONNREFUSED'\n    }\n  }\n}\n\n\
        Node.js v20.20.2\n";
    let e = parse_evidence(text, "", "main.js").expect("evidence");
    assert_eq!(e.said(), "Error: sync failed");
    let links = crate::failure::chain(&e);
    let described: Vec<String> = links.iter().map(|l| l.describe()).collect();
    assert_eq!(
        described,
        [
            "Error: connect ECONNREFUSED 127.0.0.1:4000",
            "Error: transport failed",
            "Error: sync failed"
        ]
    );
    assert!(
        links[0].said.contains("code: 'ECONNREFUSED'"),
        "{:?}",
        links[0]
    );
    assert!(!links[2].said.contains("ECONNREFUSED"), "{:?}", links[2]);
}

#[test]
fn a_python_syntax_error_without_a_traceback_header_is_read() {
    let e = parse(
            "  File \"/tmp/w/main.py\", line 3\n    def f(:\n          ^\nSyntaxError: invalid syntax\n",
        );
    assert_eq!(e.error_type.as_deref(), Some("SyntaxError"));
    assert_eq!(e.message, "invalid syntax");
    assert_eq!(
        e.stack.as_deref(),
        Some("  File \"/tmp/w/main.py\", line 3\n    def f(:")
    );
}

#[test]
fn a_traceback_cut_by_the_output_cap_still_gives_its_last_line() {
    let e = parse(
            "Traceback (most recent call last):\n  File \"main.py\", line 9, in <module>\n  Fi\n\
             … 81234 bytes cut …\nne 3, in load\n    return rows[i]\nIndexError: list index out of range\n",
        );
    assert_eq!(e.error_type.as_deref(), Some("IndexError"));
    assert_eq!(e.message, "list index out of range");
}

#[test]
fn lines_after_the_traceback_do_not_hide_it() {
    let e = parse(&format!("{KEY_ERROR}cleanup: closing connections\n"));
    assert_eq!(e.error_type.as_deref(), Some("KeyError"));
}

const NODE_TYPE_ERROR: &str = "\
/tmp/w/main.js:2
  return o.x.y;
             ^

TypeError: Cannot read properties of undefined (reading 'y')
    at f (/tmp/w/main.js:2:14)
    at Object.<anonymous> (/tmp/w/main.js:4:1)
    at node:internal/main/run_main_module:28:49

Node.js v20.20.2
";

#[test]
fn a_node_error_gives_constructor_message_and_at_lines() {
    let e = parse_evidence(NODE_TYPE_ERROR, "", "main.js").expect("evidence");
    assert_eq!(e.error_type.as_deref(), Some("TypeError"));
    assert_eq!(
        e.message,
        "Cannot read properties of undefined (reading 'y')"
    );
    assert_eq!(
        e.stack.as_deref(),
        Some(
            "    at f (/tmp/w/main.js:2:14)\n    at Object.<anonymous> (/tmp/w/main.js:4:1)\n    \
                 at node:internal/main/run_main_module:28:49"
        )
    );
}

#[test]
fn a_multi_line_node_message_keeps_its_first_line_as_the_header() {
    let text = "node:internal/modules/cjs/loader:1210\n  throw err;\n  ^\n\n\
            Error: Cannot find module 'left-pad'\nRequire stack:\n- /tmp/w/main.js\n    \
            at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15)\n    \
            at Object.<anonymous> (/tmp/w/main.js:1:1) {\n  code: 'MODULE_NOT_FOUND',\n  \
            requireStack: [ '/tmp/w/main.js' ]\n}\n\nNode.js v20.20.2\n";
    let e = parse_evidence(text, "", "main.js").expect("evidence");
    assert_eq!(e.error_type.as_deref(), Some("Error"));
    assert_eq!(e.message, "Cannot find module 'left-pad'");
    assert_eq!(
        e.stack.as_deref(),
        Some(
            "    at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15)\n    \
                 at Object.<anonymous> (/tmp/w/main.js:1:1)\n  code: 'MODULE_NOT_FOUND',\n  \
                 requireStack: [ '/tmp/w/main.js' ]"
        )
    );
}

#[test]
fn a_node_error_with_a_code_in_brackets_is_named_by_its_constructor() {
    let text = "\nError [ERR_MODULE_NOT_FOUND]: Cannot find package 'x' imported from /w/main.mjs\n    \
            at packageResolve (node:internal/modules/esm/resolve:873:9) {\n  code: 'ERR_MODULE_NOT_FOUND'\n}\n";
    let e = parse_evidence(text, "", "main.mjs").expect("evidence");
    assert_eq!(e.error_type.as_deref(), Some("Error"));
    assert_eq!(
        e.message,
        "Cannot find package 'x' imported from /w/main.mjs"
    );
}

#[test]
fn a_thrown_string_in_node_gives_the_string_not_the_trailer() {
    let text = "\n/tmp/w/main.js:1\nthrow \"str\"\n^\nstr\n(Use `node --trace-uncaught ...` \
            to show where the exception was thrown)\n\nNode.js v20.20.2\n";
    let e = parse_evidence(text, "", "main.js").expect("evidence");
    assert_eq!(e.error_type, None);
    assert_eq!(e.message, "str");
}

#[test]
fn a_bash_command_not_found_loses_its_line_prefix() {
    let e = parse_evidence("main.sh: line 3: foo: command not found\n", "", "main.sh")
        .expect("evidence");
    assert_eq!(e.error_type.as_deref(), Some("CommandNotFound"));
    assert_eq!(e.message, "foo: command not found");
}

#[test]
fn shell_system_errors_get_a_type() {
    let cases = [
        (
            "main.sh: line 2: ./ro.sh: Permission denied",
            "PermissionDenied",
        ),
        ("cat: data.csv: No such file or directory", "NoSuchFile"),
        (
            "main.sh: line 1: echo: write error: No space left on device",
            "NoSpace",
        ),
        ("main.sh: 2: foo: not found", "CommandNotFound"),
    ];
    for (line, expected) in cases {
        let e = parse_evidence(line, "", "main.sh").expect("evidence");
        assert_eq!(e.error_type.as_deref(), Some(expected), "{line}");
    }
}

#[test]
fn a_python_file_not_found_stays_a_python_exception() {
    let e = parse(
        "Traceback (most recent call last):\n  File \"main.py\", line 1, in <module>\n\
             FileNotFoundError: [Errno 2] No such file or directory: 'data.csv'\n",
    );
    assert_eq!(e.error_type.as_deref(), Some("FileNotFoundError"));
}

#[test]
fn a_shell_error_after_a_handled_traceback_wins() {
    let text = format!("{KEY_ERROR}main.sh: line 9: jq: command not found\n");
    let e = parse_evidence(&text, "", "main.sh").expect("evidence");
    assert_eq!(e.error_type.as_deref(), Some("CommandNotFound"));
}

#[test]
fn without_a_known_shape_the_last_stderr_line_is_the_message() {
    let e = parse_evidence(
        "fetching\ncurl: (7) Failed to connect to 127.0.0.1 port 9\n\n",
        "progress",
        "main.sh",
    )
    .expect("evidence");
    assert_eq!(e.error_type, None);
    assert_eq!(e.message, "curl: (7) Failed to connect to 127.0.0.1 port 9");
}

#[test]
fn stdout_is_read_only_when_stderr_is_silent() {
    let e = parse_evidence("  \n", "step 1\nstep 2 failed\n", "main.sh").expect("evidence");
    assert_eq!(e.message, "step 2 failed");
}

#[test]
fn no_output_is_no_evidence() {
    assert_eq!(parse_evidence("", "", "main.py"), None);
    assert_eq!(parse_evidence("\n \n", "\n", "main.py"), None);
}

#[test]
fn a_long_message_is_clipped_on_a_character_boundary() {
    let e = parse(&"é".repeat(MESSAGE_LIMIT + 10));
    assert_eq!(e.message.chars().count(), MESSAGE_LIMIT + 1);
    assert!(e.message.ends_with('…'));
}

#[test]
fn odd_lines_do_not_panic() {
    for text in [
        ":",
        " [",
        "Error [",
        "a: line 1",
        "a: line : x",
        "x: 12",
        "\u{fffd}\u{0}\u{fffd}: line 9",
        "    at ",
        "    at :",
        "  File \"",
        "^",
        "…",
        "é: line 3: é",
    ] {
        let _ = parse_evidence(text, text, "main.py");
        let _ = parse_evidence(text, text, "main.js");
    }
}
