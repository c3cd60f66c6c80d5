use super::*;

fn failed(code: i32) -> ExitInfo {
    ExitInfo {
        code: Some(code),
        ..ExitInfo::default()
    }
}

fn typed(error_type: &str, message: &str) -> Evidence {
    Evidence {
        error_type: Some(error_type.to_string()),
        message: message.to_string(),
        stack: None,
    }
}

fn untyped(message: &str) -> Evidence {
    Evidence {
        error_type: None,
        message: message.to_string(),
        stack: None,
    }
}

fn class_of(error_type: &str, message: &str) -> FailureClass {
    let e = typed(error_type, message);
    classify(&failed(1), Some(&e), &format!("{error_type}: {message}"))
}

use FailureClass::*;

#[test]
fn our_own_timeout_is_timeout_whatever_the_output_says() {
    let exit = ExitInfo {
        signal: Some(9),
        timed_out: true,
        ..ExitInfo::default()
    };
    let e = typed("ConnectionRefusedError", "[Errno 111] Connection refused");
    assert_eq!(classify(&exit, Some(&e), ""), Timeout);
}

#[test]
fn a_program_that_could_not_start_is_environment() {
    let exit = ExitInfo {
        spawn_failed: true,
        ..ExitInfo::default()
    };
    assert_eq!(classify(&exit, None, ""), Environment);
}

#[test]
fn death_by_a_signal_or_its_shell_exit_code_is_resource() {
    let killed = ExitInfo {
        signal: Some(9),
        ..ExitInfo::default()
    };
    assert_eq!(classify(&killed, None, ""), Resource);
    for code in [137, 139, 134] {
        assert_eq!(classify(&failed(code), None, ""), Resource, "{code}");
    }
    assert_eq!(classify(&failed(130), None, ""), Unknown);
}

#[test]
fn running_out_of_memory_is_resource() {
    assert_eq!(class_of("MemoryError", ""), Resource);
    let node = "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory";
    assert_eq!(classify(&failed(1), Some(&untyped(node)), node), Resource);
}

#[test]
fn a_shell_reporting_a_killed_job_is_resource_but_a_log_saying_killed_is_not() {
    let report = "main.sh: line 2: 14417 Killed                  python3 big.py";
    assert_eq!(
        classify(&failed(1), Some(&untyped(report)), report),
        Resource
    );
    assert_eq!(classify(&failed(1), None, "Killed\n"), Resource);
    // A script's own log line that names no failure leaves the cause unclear.
    let log = "Killed 3 stale workers";
    assert_eq!(classify(&failed(1), Some(&untyped(log)), log), Unknown);
}

#[test]
fn missing_modules_and_commands_are_environment() {
    assert_eq!(
        class_of("ModuleNotFoundError", "No module named 'requests'"),
        Environment
    );
    assert_eq!(
        class_of("ImportError", "No module named 'yaml'"),
        Environment
    );
    assert_eq!(
        class_of("Error", "Cannot find module 'left-pad'"),
        Environment
    );
    assert_eq!(
        class_of("CommandNotFound", "jq: command not found"),
        Environment
    );
    assert_eq!(classify(&failed(127), None, ""), Environment);
}

#[test]
fn an_import_of_a_name_that_is_not_there_is_logic() {
    assert_eq!(
        class_of("ImportError", "cannot import name 'nosuch' from 'os'"),
        Logic
    );
}

#[test]
fn permissions_are_environment_and_a_full_disk_is_resource() {
    assert_eq!(
        class_of("PermissionError", "[Errno 13] Permission denied: '/etc/x'"),
        Environment
    );
    assert_eq!(
        class_of("Error", "EACCES: permission denied, open '/x'"),
        Environment
    );
    // More disk fixes a full one (docs/classes.md).
    assert_eq!(
        class_of("OSError", "[Errno 28] No space left on device"),
        Resource
    );
    assert_eq!(
        class_of("Error", "ENOSPC: no space left on device, write"),
        Resource
    );
}

#[test]
fn a_missing_input_file_is_environment() {
    // The machine must get the file; no change to the code brings it (docs/classes.md).
    assert_eq!(
        class_of(
            "FileNotFoundError",
            "[Errno 2] No such file or directory: 'data.csv'"
        ),
        Environment
    );
    assert_eq!(
        class_of("NoSuchFile", "cat: data.csv: No such file or directory"),
        Environment
    );
}

#[test]
fn network_failures_are_transient() {
    for (t, m) in [
        ("ConnectionRefusedError", "[Errno 111] Connection refused"),
        (
            "ConnectionResetError",
            "[Errno 104] Connection reset by peer",
        ),
        (
            "requests.exceptions.ConnectionError",
            "HTTPConnectionPool(host='x', port=80)",
        ),
        (
            "urllib.error.URLError",
            "<urlopen error [Errno -3] Temporary failure in name resolution>",
        ),
        ("socket.gaierror", "[Errno -2] Name or service not known"),
        ("socket.timeout", "timed out"),
        ("TimeoutError", "The read operation timed out"),
        (
            "requests.exceptions.ReadTimeout",
            "HTTPSConnectionPool: Read timed out.",
        ),
        ("requests.exceptions.ConnectTimeout", "connect timeout"),
        ("Error", "getaddrinfo ENOTFOUND api.example.com"),
        ("Error", "getaddrinfo EAI_AGAIN api.example.com"),
        ("Error", "connect ECONNREFUSED 127.0.0.1:5432"),
        ("Error", "read ECONNRESET"),
        ("Error", "write EPIPE"),
        ("Error", "connect ETIMEDOUT 10.0.0.1:443"),
    ] {
        assert_eq!(class_of(t, m), Transient, "{t}: {m}");
    }
}

#[test]
fn http_429_and_5xx_are_transient_401_and_403_environment_other_4xx_logic() {
    for (t, m) in [
        (
            "urllib.error.HTTPError",
            "HTTP Error 503: Service Unavailable",
        ),
        (
            "urllib.error.HTTPError",
            "HTTP Error 429: Too Many Requests",
        ),
        (
            "requests.exceptions.HTTPError",
            "502 Server Error: Bad Gateway for url: https://x/",
        ),
        ("AxiosError", "Request failed with status code 500"),
        ("Error", "upstream answered status 502"),
        ("HTTPError", "500"),
    ] {
        assert_eq!(class_of(t, m), Transient, "{t}: {m}");
    }
    let curl = "curl: (22) The requested URL returned error: 503";
    assert_eq!(classify(&failed(22), Some(&untyped(curl)), curl), Transient);
    for (t, m) in [
        (
            "requests.exceptions.HTTPError",
            "401 Client Error: Unauthorized for url: https://x/",
        ),
        ("urllib.error.HTTPError", "HTTP Error 403: Forbidden"),
        ("AxiosError", "Request failed with status code 401"),
    ] {
        assert_eq!(class_of(t, m), Environment, "{t}: {m}");
    }
    for (t, m) in [
        ("urllib.error.HTTPError", "HTTP Error 404: Not Found"),
        ("AxiosError", "Request failed with status code 400"),
        ("Error", "status 5000 rows imported"),
    ] {
        assert_eq!(class_of(t, m), Logic, "{t}: {m}");
    }
}

#[test]
fn an_exception_in_the_scripts_own_code_is_logic() {
    for t in [
        "KeyError",
        "TypeError",
        "ValueError",
        "json.decoder.JSONDecodeError",
        "AssertionError",
        "ValidationError",
    ] {
        assert_eq!(class_of(t, "x"), Logic, "{t}");
    }
}

#[test]
fn a_wrapped_network_cause_in_the_raw_output_makes_it_transient() {
    let output = "TypeError: fetch failed\n    at node:internal/deps/undici/undici:14976:13 {\n  \
            [cause]: Error: connect ECONNREFUSED 127.0.0.1:36945\n      at TCPConnectWrap.afterConnect \
            (node:net:1611:16) {\n    code: 'ECONNREFUSED'\n  }\n}\n";
    let e = typed("TypeError", "fetch failed");
    assert_eq!(classify(&failed(1), Some(&e), output), Transient);
}

#[test]
fn the_evidence_is_believed_before_earlier_noise_in_the_output() {
    let output = "warning: HTTP Error 503, retrying\nTraceback (most recent call last):\n  \
            File \"main.py\", line 1, in <module>\nModuleNotFoundError: No module named 'yaml'\n";
    let e = typed("ModuleNotFoundError", "No module named 'yaml'");
    assert_eq!(classify(&failed(1), Some(&e), output), Environment);
}

#[test]
fn a_traceback_cut_before_its_last_line_is_read_from_the_raw_output() {
    let output =
        "Traceback (most recent call last):\n  File \"main.py\", line 3\n… 9000 bytes cut …\n\
            socket.gaierror: [Errno -3] Temporary failure in name resolution\n";
    assert_eq!(classify(&failed(1), None, output), Transient);
}

#[test]
fn a_failed_exit_with_only_a_message_is_logic_and_with_nothing_is_unknown() {
    let e = untyped("fatal: config has no 'targets'");
    assert_eq!(
        classify(&failed(2), Some(&e), "fatal: config has no 'targets'"),
        Logic
    );
    assert_eq!(classify(&failed(1), None, ""), Unknown);
    assert_eq!(classify(&failed(1), None, "  \n"), Unknown);
    assert_eq!(classify(&failed(0), Some(&e), ""), Unknown);
}

#[test]
fn a_log_field_named_timeout_is_not_an_exception() {
    let output = "Timeout: 30s\nerror: the result had no rows\n";
    assert_eq!(
        classify(
            &failed(1),
            Some(&untyped("error: the result had no rows")),
            output
        ),
        Logic
    );
}

#[test]
fn codes_count_only_as_whole_words() {
    assert!(TextShows::read("connect ECONNREFUSED 1.2.3.4").transient);
    assert!(TextShows::read("EPIPE").transient);
    assert!(!TextShows::read("MY_EPERM_FLAG set").environment);
    assert!(!TextShows::read("recipepipe").transient);
}

#[test]
fn odd_text_does_not_panic() {
    for text in [
        "status ",
        "http",
        "\u{fffd}\u{0}Killed",
        ": line 12",
        "é: line 3: 4é Killed",
        "status 5é",
    ] {
        let _ = classify(&failed(1), Some(&untyped(text)), text);
    }
}
