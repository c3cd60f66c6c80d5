//! Evidence and class from what real scripts print when they fail: each snippet is written to a
//! temp dir and run there with python3, node or bash, and the real output goes through
//! `parse_evidence` and `classify`.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

use healer::failure::{classify, parse_evidence, Evidence, ExitInfo, FailureClass};

/// What one run of a snippet left behind.
struct Ran {
    stderr: String,
    stdout: String,
    exit: ExitInfo,
    evidence: Option<Evidence>,
}

impl Ran {
    fn class(&self) -> FailureClass {
        let output = format!("{}{}", self.stderr, self.stdout);
        classify(&self.exit, self.evidence.as_ref(), &output)
    }

    fn evidence(&self) -> &Evidence {
        match &self.evidence {
            Some(e) => e,
            None => panic!("no evidence from:\n{}", self.stderr),
        }
    }

    fn error_type(&self) -> Option<&str> {
        self.evidence().error_type.as_deref()
    }

    fn message(&self) -> &str {
        &self.evidence().message
    }

    fn stack(&self) -> &str {
        self.evidence().stack.as_deref().unwrap_or("")
    }

    #[track_caller]
    fn assert_class(&self, expected: FailureClass) {
        assert_eq!(
            self.class(),
            expected,
            "evidence {:?}\nexit {:?}\nstderr:\n{}\nstdout:\n{}",
            self.evidence,
            self.exit,
            self.stderr,
            self.stdout
        );
    }
}

fn interpreter(entry: &str) -> &'static str {
    match Path::new(entry).extension().and_then(|e| e.to_str()) {
        Some("py") => "python3",
        Some("js" | "mjs" | "cjs") => "node",
        Some("sh") => "bash",
        other => panic!("no interpreter for {other:?}"),
    }
}

fn exit_info(status: ExitStatus) -> ExitInfo {
    #[cfg(unix)]
    let signal = std::os::unix::process::ExitStatusExt::signal(&status);
    #[cfg(not(unix))]
    let signal = None;
    ExitInfo {
        code: status.code(),
        signal,
        ..ExitInfo::default()
    }
}

/// Run `code` as `entry` (main.py, main.js, main.sh) from a fresh dir, as the runner would.
fn run(entry: &str, code: &str) -> Ran {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join(entry), code).expect("snippet written");
    let out = Command::new(interpreter(entry))
        .arg(entry)
        .current_dir(dir.path())
        .env_remove("NODE_OPTIONS")
        .stdin(Stdio::null())
        .output()
        .expect("interpreter runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let evidence = parse_evidence(&stderr, &stdout, entry);
    Ran {
        exit: exit_info(out.status),
        stderr,
        stdout,
        evidence,
    }
}

/// A port on 127.0.0.1 that was just bound and closed, so nothing listens on it.
fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

// --- Python ----------------------------------------------------------------------------------

#[test]
fn a_key_error_in_the_scripts_own_code_is_logic() {
    let ran = run(
        "main.py",
        "def total(row):\n    return row['total']\n\nprint('loading')\ntotal({'sum': 3})\n",
    );
    assert_eq!(ran.error_type(), Some("KeyError"));
    assert_eq!(ran.message(), "'total'");
    assert!(ran.stack().contains("in total"), "{}", ran.stack());
    assert!(
        ran.stack().contains("return row['total']"),
        "{}",
        ran.stack()
    );
    assert!(
        !ran.stack().contains('^'),
        "carets are noise: {}",
        ran.stack()
    );
    ran.assert_class(FailureClass::Logic);
}

#[test]
fn a_chained_python_exception_reports_the_last_one_and_keeps_its_root_in_the_stack() {
    let ran = run(
        "main.py",
        "import json\ntry:\n    {}['total']\nexcept KeyError:\n    json.loads('{bad')\n",
    );
    assert_eq!(ran.error_type(), Some("json.decoder.JSONDecodeError"));
    assert!(
        ran.message().starts_with("Expecting property name"),
        "{}",
        ran.message()
    );
    assert!(
        ran.stack().contains("json.loads('{bad')"),
        "{}",
        ran.stack()
    );
    // The root cause leads the stack: it is part of the signature.
    assert!(
        ran.stack().starts_with("  File") && ran.stack().contains("\nKeyError: 'total'\n"),
        "{}",
        ran.stack()
    );
    ran.assert_class(FailureClass::Logic);
}

#[test]
fn a_python_syntax_error_is_logic_and_says_where() {
    let ran = run("main.py", "x = 1\ndef f(:\n    pass\n");
    assert_eq!(ran.error_type(), Some("SyntaxError"));
    assert_eq!(ran.message(), "invalid syntax");
    assert!(ran.stack().contains("line 2"), "{}", ran.stack());
    ran.assert_class(FailureClass::Logic);
}

#[test]
fn a_missing_python_module_is_environment() {
    let ran = run("main.py", "import healer_no_such_module_xyz\n");
    assert_eq!(ran.error_type(), Some("ModuleNotFoundError"));
    assert_eq!(ran.message(), "No module named 'healer_no_such_module_xyz'");
    ran.assert_class(FailureClass::Environment);
}

#[test]
fn a_missing_data_file_is_environment() {
    let ran = run("main.py", "rows = open('data.csv').read()\n");
    assert_eq!(ran.error_type(), Some("FileNotFoundError"));
    ran.assert_class(FailureClass::Environment);
}

#[test]
fn a_full_disk_is_resource() {
    let ran = run(
        "main.py",
        "with open('/dev/full', 'w') as f:\n    f.write('x')\n",
    );
    assert_eq!(ran.error_type(), Some("OSError"));
    assert!(ran.message().contains("[Errno 28]"), "{}", ran.message());
    ran.assert_class(FailureClass::Resource);
}

#[test]
fn a_refused_connection_is_transient() {
    let port = closed_port();
    let ran = run(
        "main.py",
        &format!("import urllib.request\nurllib.request.urlopen('http://127.0.0.1:{port}/', timeout=2)\n"),
    );
    // urllib wraps the ConnectionRefusedError: the wrapper ended the run.
    assert_eq!(ran.error_type(), Some("urllib.error.URLError"));
    assert!(
        ran.message().contains("Connection refused"),
        "{}",
        ran.message()
    );
    ran.assert_class(FailureClass::Transient);
}

#[test]
fn a_failed_name_lookup_is_transient() {
    let ran = run(
        "main.py",
        "import socket\nraise socket.gaierror(-3, 'Temporary failure in name resolution')\n",
    );
    assert_eq!(ran.error_type(), Some("socket.gaierror"));
    ran.assert_class(FailureClass::Transient);
}

#[test]
fn http_503_is_transient_but_404_is_logic() {
    let http_error = |status: u16, reason: &str| {
        run(
            "main.py",
            &format!(
                "import urllib.error\nraise urllib.error.HTTPError('https://api.example.com/x', \
                 {status}, '{reason}', {{}}, None)\n"
            ),
        )
    };
    let unavailable = http_error(503, "Service Unavailable");
    assert_eq!(unavailable.error_type(), Some("urllib.error.HTTPError"));
    assert_eq!(unavailable.message(), "HTTP Error 503: Service Unavailable");
    unavailable.assert_class(FailureClass::Transient);

    let too_many = http_error(429, "Too Many Requests");
    too_many.assert_class(FailureClass::Transient);

    let not_found = http_error(404, "Not Found");
    assert_eq!(not_found.message(), "HTTP Error 404: Not Found");
    not_found.assert_class(FailureClass::Logic);
}

#[test]
fn a_python_memory_error_is_resource() {
    let ran = run("main.py", "rows = [0] * (10 ** 12)\n");
    assert_eq!(ran.error_type(), Some("MemoryError"));
    assert_eq!(ran.message(), "");
    ran.assert_class(FailureClass::Resource);
}

#[test]
fn a_script_killed_by_sigkill_is_resource() {
    let ran = run(
        "main.py",
        "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n",
    );
    assert_eq!(ran.exit.signal, Some(9));
    ran.assert_class(FailureClass::Resource);
}

// --- Node ------------------------------------------------------------------------------------

#[test]
fn a_node_type_error_names_its_type_and_stack() {
    let ran = run(
        "main.js",
        "function total(row) {\n  return row.totals.sum;\n}\ntotal({});\n",
    );
    assert_eq!(ran.error_type(), Some("TypeError"));
    assert_eq!(
        ran.message(),
        "Cannot read properties of undefined (reading 'sum')"
    );
    let first = ran.stack().lines().next().unwrap_or("");
    assert!(
        first.starts_with("    at total (") && first.contains("main.js:2:"),
        "{}",
        ran.stack()
    );
    assert!(!ran.stack().contains("Node.js v"), "{}", ran.stack());
    ran.assert_class(FailureClass::Logic);
}

#[test]
fn a_thrown_node_error_is_logic() {
    let ran = run(
        "main.js",
        "console.log('start');\nthrow new Error(\"boom\");\n",
    );
    assert_eq!(ran.error_type(), Some("Error"));
    assert_eq!(ran.message(), "boom");
    assert!(ran.stack().contains("main.js:2:"), "{}", ran.stack());
    ran.assert_class(FailureClass::Logic);
}

#[test]
fn an_unhandled_rejection_with_a_custom_error_is_logic() {
    let ran = run(
        "main.mjs",
        "class ValidationError extends Error {\n  constructor(m) { super(m); this.name = 'ValidationError'; }\n}\n\
         async function load() { throw new ValidationError(\"row 3 has no 'total'\"); }\nload();\n",
    );
    assert_eq!(ran.error_type(), Some("ValidationError"));
    assert_eq!(ran.message(), "row 3 has no 'total'");
    assert!(ran.stack().contains("at load ("), "{}", ran.stack());
    ran.assert_class(FailureClass::Logic);
}

#[test]
fn a_missing_node_module_is_environment() {
    let ran = run(
        "main.js",
        "const pad = require('healer-no-such-module-xyz');\n",
    );
    assert_eq!(ran.error_type(), Some("Error"));
    assert_eq!(
        ran.message(),
        "Cannot find module 'healer-no-such-module-xyz'"
    );
    ran.assert_class(FailureClass::Environment);

    let esm = run("main.mjs", "import pad from 'healer-no-such-module-xyz';\n");
    assert_eq!(esm.error_type(), Some("Error"));
    assert!(
        esm.message().starts_with("Cannot find package"),
        "{}",
        esm.message()
    );
    esm.assert_class(FailureClass::Environment);
}

#[test]
fn a_refused_connection_in_node_is_transient() {
    let port = closed_port();
    // fetch hides the cause inside `[cause]`: the raw output still names it.
    let fetched = run("main.js", &format!("fetch('http://127.0.0.1:{port}/');\n"));
    assert_eq!(fetched.error_type(), Some("TypeError"));
    assert_eq!(fetched.message(), "fetch failed");
    fetched.assert_class(FailureClass::Transient);

    let socket = run(
        "main.js",
        &format!("require('net').connect({port}, '127.0.0.1');\n"),
    );
    assert_eq!(socket.error_type(), Some("Error"));
    assert!(
        socket.message().contains("ECONNREFUSED"),
        "{}",
        socket.message()
    );
    socket.assert_class(FailureClass::Transient);
}

// --- Shell -----------------------------------------------------------------------------------

#[test]
fn a_shell_command_not_found_is_environment() {
    let ran = run(
        "main.sh",
        "set -e\necho fetching\nhealer_no_such_tool --all\n",
    );
    assert_eq!(ran.exit.code, Some(127));
    assert_eq!(ran.error_type(), Some("CommandNotFound"));
    assert_eq!(ran.message(), "healer_no_such_tool: command not found");
    ran.assert_class(FailureClass::Environment);
}

#[test]
fn a_file_that_may_not_be_run_is_environment() {
    let ran = run(
        "main.sh",
        "set -e\nprintf 'echo hi' > tool\nchmod 600 tool\n./tool\n",
    );
    assert_eq!(ran.error_type(), Some("PermissionDenied"));
    assert_eq!(ran.message(), "./tool: Permission denied");
    ran.assert_class(FailureClass::Environment);
}

#[test]
fn a_shell_writing_to_a_full_disk_is_resource() {
    let ran = run("main.sh", "set -e\necho report > /dev/full\n");
    assert_eq!(ran.error_type(), Some("NoSpace"));
    ran.assert_class(FailureClass::Resource);
}

#[test]
fn a_shell_reading_a_missing_data_file_is_environment() {
    let ran = run("main.sh", "set -e\ncat data.csv\necho never\n");
    assert_eq!(ran.error_type(), Some("NoSuchFile"));
    assert_eq!(ran.message(), "cat: data.csv: No such file or directory");
    ran.assert_class(FailureClass::Environment);
}

#[test]
fn a_set_e_failure_reports_the_commands_last_stderr_line() {
    let ran = run(
        "main.sh",
        "set -e\necho 'step 1' >&2\ndate -d 'not a date at all'\necho never\n",
    );
    assert_eq!(ran.error_type(), None);
    // The quotes around the date follow the locale.
    assert!(
        ran.message().starts_with("date: invalid date")
            && ran.message().contains("not a date at all"),
        "{}",
        ran.message()
    );
    ran.assert_class(FailureClass::Logic);
}

#[test]
fn a_shell_whose_child_was_killed_is_resource() {
    let ran = run(
        "main.sh",
        "set -e\npython3 -c 'import os, signal; os.kill(os.getpid(), signal.SIGKILL)'\n",
    );
    assert_eq!(ran.exit.code, Some(137));
    assert!(ran.message().contains("Killed"), "{}", ran.message());
    ran.assert_class(FailureClass::Resource);
}

#[test]
fn a_python_traceback_from_a_shell_script_is_read_as_python() {
    let ran = run(
        "main.sh",
        "set -e\npython3 -c 'import healer_no_such_module_xyz'\n",
    );
    assert_eq!(ran.error_type(), Some("ModuleNotFoundError"));
    ran.assert_class(FailureClass::Environment);
}

#[test]
fn a_silent_failure_is_unknown() {
    let ran = run("main.sh", "exit 3\n");
    assert!(ran.evidence.is_none());
    ran.assert_class(FailureClass::Unknown);
}

#[test]
fn binary_garbage_on_stderr_does_not_panic() {
    let ran = run(
        "main.py",
        "import sys\nsys.stderr.buffer.write(bytes(range(256)) * 4096)\nsys.stderr.buffer.write(b'\\xff\\xfe\\x00 end\\n')\nsys.exit(1)\n",
    );
    assert!(ran.stderr.len() > 1_000_000);
    assert!(ran.message().ends_with("end"), "{:?}", ran.message());
    // Bytes that name no failure leave the cause unclear.
    ran.assert_class(FailureClass::Unknown);
}

// --- How the process ended -------------------------------------------------------------------

#[test]
fn our_own_timeout_is_timeout() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("main.sh"), "echo waiting\nexec sleep 30\n").expect("snippet");
    let mut child = Command::new("bash")
        .arg("main.sh")
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .spawn()
        .expect("bash starts");
    std::thread::sleep(Duration::from_millis(100));
    child.kill().expect("killed at our time limit");
    let status = child.wait().expect("reaped");
    let exit = ExitInfo {
        timed_out: true,
        ..exit_info(status)
    };
    assert_eq!(exit.signal, Some(9));
    assert_eq!(classify(&exit, None, ""), FailureClass::Timeout);
}

#[test]
fn an_interpreter_that_cannot_start_is_environment() {
    let spawned = Command::new("python3-healer-not-installed")
        .arg("main.py")
        .spawn();
    assert!(spawned.is_err());
    let exit = ExitInfo {
        spawn_failed: true,
        ..ExitInfo::default()
    };
    assert_eq!(classify(&exit, None, ""), FailureClass::Environment);
}
