//! Signatures of real failures: each snippet is written to a fresh temp dir and run there by
//! its absolute path with python3, node or bash, and the real stderr goes through
//! `parse_evidence`, `normalize` and `sign`. The same root cause from another folder, with other
//! ids, times, PIDs and line numbers signs the same; another exception type, another missing
//! name or another HTTP status signs differently. `healer errors classify` is run as a person
//! runs it.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use healer::failure::{normalize, parse_evidence, sign, Evidence};

/// What one run of a snippet left behind.
struct Ran {
    /// The temp dir it ran in (already deleted).
    dir: String,
    stderr: String,
    evidence: Evidence,
    normalized: String,
    signature: String,
}

impl Ran {
    /// The signature of the whole stderr, not just the parsed evidence: a log's normalisation.
    fn whole_output_signature(&self) -> String {
        sign(&normalize(&Evidence {
            error_type: None,
            message: String::new(),
            stack: Some(self.stderr.clone()),
        }))
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

/// Run `code` as `entry` from a fresh temp dir, by its absolute path (so the dir shows in the
/// output), and sign what it printed.
fn run(entry: &str, code: &str) -> Ran {
    let dir = tempfile::tempdir().expect("temp dir");
    let script = dir.path().join(entry);
    std::fs::write(&script, code).expect("snippet written");
    let out = Command::new(interpreter(entry))
        .arg(&script)
        .current_dir(dir.path())
        .env_remove("NODE_OPTIONS")
        .stdin(Stdio::null())
        .output()
        .expect("interpreter runs");
    assert!(!out.status.success(), "the snippet should fail");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let evidence = match parse_evidence(&stderr, &stdout, entry) {
        Some(e) => e,
        None => panic!("no evidence from:\n{stderr}"),
    };
    let normalized = normalize(&evidence);
    let dir_name = dir
        .path()
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string();
    assert!(
        !normalized.contains(&dir_name),
        "the temp dir {dir_name} is left in:\n{normalized}"
    );
    Ran {
        dir: dir_name,
        signature: sign(&normalized),
        normalized,
        evidence,
        stderr,
    }
}

#[track_caller]
fn assert_same(a: &Ran, b: &Ran) {
    assert_ne!(a.dir, b.dir);
    assert_eq!(
        a.signature, b.signature,
        "expected the same signature\n--- a:\n{}\n--- b:\n{}\n--- a stderr:\n{}\n--- b stderr:\n{}",
        a.normalized, b.normalized, a.stderr, b.stderr
    );
}

#[track_caller]
fn assert_differ(a: &Ran, b: &Ran) {
    assert_ne!(
        a.signature, b.signature,
        "expected different signatures\n--- a:\n{}\n--- b:\n{}",
        a.normalized, b.normalized
    );
}

/// Blank lines before the code: every line number moves.
fn shifted(code: &str) -> String {
    format!("\n\n\n\n\n{code}")
}

// --- Chains: the root cause is part of the signature ------------------------------------------

/// A wrapper exception, always with the same words, around `cause` (Python statements that
/// raise), after `noise` log lines with times, pids and request ids.
fn wrapped(cause: &str, noise: u32) -> String {
    format!(
        r#"import logging, os, socket, sqlite3, sys
logging.basicConfig(stream=sys.stderr, format="%(asctime)s %(levelname)s %(message)s", level=logging.INFO)
for i in range({noise}):
    logging.warning("retrying request req-%06d from pid %d after 503", i * 7919, os.getpid())

class SyncError(Exception):
    pass

def closed_port():
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return port

def push():
    try:
        {cause}
    except Exception as e:
        raise SyncError("could not push the batch") from e

push()
"#
    )
}

const REFUSED: &str = "socket.create_connection((\"127.0.0.1\", closed_port()), timeout=3)";
const LOCKED: &str = "a = sqlite3.connect(\"q.db\", isolation_level=None); \
    a.execute(\"CREATE TABLE IF NOT EXISTS t (x)\"); a.execute(\"BEGIN EXCLUSIVE\"); \
    sqlite3.connect(\"q.db\", timeout=0.1).execute(\"INSERT INTO t VALUES (1)\")";
const SHAPE: &str = "{\"total_cents\": 1}[\"amount\"]";

#[test]
fn a_wrapper_signs_by_its_root_cause_and_the_same_root_signs_the_same() {
    let refused = run("main.py", &wrapped(REFUSED, 1));
    // Another folder, another port, more log lines with other ids and pids, every line moved.
    let refused_again = run("main.py", &shifted(&wrapped(REFUSED, 40)));
    assert_eq!(refused.evidence.error_type.as_deref(), Some("SyncError"));
    assert_same(&refused, &refused_again);
    // The same wrapper around other root causes: never the same signature.
    let locked = run("main.py", &wrapped(LOCKED, 1));
    let shape = run("main.py", &wrapped(SHAPE, 1));
    assert_differ(&refused, &locked);
    assert_differ(&refused, &shape);
    assert_differ(&locked, &shape);
    assert!(
        locked.normalized.contains("database is locked"),
        "{}",
        locked.normalized
    );
}

fn node_wrapped(cause: &str) -> String {
    format!(
        r#"const net = require("net");
function closedPort() {{
  return new Promise((resolve) => {{
    const probe = net.createServer().listen(0, "127.0.0.1", () => {{
      const {{ port }} = probe.address();
      probe.close(() => resolve(port));
    }});
  }});
}}
async function pull() {{
  try {{
    {cause}
  }} catch (err) {{
    throw new Error("the nightly pull did not complete", {{ cause: err }});
  }}
}}
pull();
"#
    )
}

#[test]
fn a_node_error_signs_by_its_cause() {
    let connect = "const port = await closedPort(); await new Promise((ok, fail) => \
        net.connect(port, \"127.0.0.1\", ok).on(\"error\", fail));";
    let refused = run("main.js", &node_wrapped(connect));
    let refused_again = run("main.js", &shifted(&node_wrapped(connect)));
    assert_same(&refused, &refused_again);
    assert!(
        refused
            .normalized
            .contains("[cause]: Error: connect ECONNREFUSED <ip>:<port>"),
        "{}",
        refused.normalized
    );
    let shape = run("main.js", &node_wrapped("JSON.parse(\"<html>\");"));
    assert_differ(&refused, &shape);
}

// --- Python ----------------------------------------------------------------------------------

fn key_error(key: &str, rows: u32) -> String {
    format!(
        "def total(row):\n    return row['{key}']\n\nrows = [{{'sum': i}} for i in range({rows})]\n\
         print('loaded', len(rows), 'rows')\ntotal(rows[-1])\n"
    )
}

#[test]
fn a_python_key_error_from_two_folders_with_other_data_and_lines_signs_the_same() {
    let a = run("main.py", &key_error("total", 3));
    let b = run("main.py", &shifted(&key_error("total", 977)));
    assert_eq!(a.evidence.error_type.as_deref(), Some("KeyError"));
    assert!(
        a.normalized.contains("File \"main.py\", in total"),
        "{}",
        a.normalized
    );
    assert!(a.normalized.contains("'total'"), "{}", a.normalized);
    assert_same(&a, &b);
    assert_eq!(a.whole_output_signature(), b.whole_output_signature());
}

#[test]
fn a_different_missing_key_signs_differently() {
    let a = run("main.py", &key_error("total", 3));
    let b = run("main.py", &key_error("totl", 3));
    assert_differ(&a, &b);
}

#[test]
fn a_different_exception_type_signs_differently() {
    let key = run("main.py", "def f(d):\n    return d['x']\n\nf({})\n");
    let index = run("main.py", "def f(d):\n    return d[0]\n\nf([])\n");
    let type_error = run("main.py", "def f(d):\n    return d + 1\n\nf('a')\n");
    assert_eq!(type_error.evidence.error_type.as_deref(), Some("TypeError"));
    assert_differ(&key, &index);
    assert_differ(&key, &type_error);
    assert_differ(&index, &type_error);
}

#[test]
fn a_python_type_error_from_two_folders_signs_the_same() {
    let code =
        |n: u32| format!("def add(total, row):\n    return total + row\n\nadd({n}, 'x{n}')\n");
    let a = run("main.py", &code(1));
    let b = run("main.py", &shifted(&code(20)));
    assert_eq!(a.evidence.error_type.as_deref(), Some("TypeError"));
    assert_ne!(
        a.evidence.stack, b.evidence.stack,
        "the source lines differ"
    );
    assert_same(&a, &b);
}

fn file_not_found(name: &str) -> String {
    format!(
        "import os, tempfile\n\ndef load():\n    folder = tempfile.mkdtemp()\n    \
         with open(os.path.join(folder, 'in', '{name}')) as f:\n        return f.read()\n\nload()\n"
    )
}

#[test]
fn a_file_not_found_under_other_temp_paths_signs_the_same() {
    let a = run("main.py", &file_not_found("data.csv"));
    let b = run("main.py", &shifted(&file_not_found("data.csv")));
    assert_eq!(a.evidence.error_type.as_deref(), Some("FileNotFoundError"));
    assert_ne!(a.evidence.message, b.evidence.message, "the paths differ");
    assert!(a.normalized.contains("[Errno 2]"), "{}", a.normalized);
    assert!(a.normalized.contains("'data.csv'"), "{}", a.normalized);
    assert_same(&a, &b);
    // Another missing file is another cause.
    let c = run("main.py", &file_not_found("other.csv"));
    assert_differ(&a, &c);
}

/// Prints a timestamp, a UUID, its PID and a duration, then fails with all of them in the
/// message too.
const NOISY: &str = "\
import datetime, os, sys, time, uuid
start = time.perf_counter()
job = uuid.uuid4()
print(datetime.datetime.now().isoformat(), 'job', job, 'pid', os.getpid(), file=sys.stderr)
time.sleep(0.01 * (os.getpid() % 3))
print(f'step 1 done in {time.perf_counter() - start:.4f}s, {os.getpid() * 7} bytes', file=sys.stderr)

def fetch():
    raise RuntimeError(f'job {job} (pid {os.getpid()}) gave up at {datetime.datetime.now()} after {time.perf_counter() - start:.3f}s, id {uuid.uuid4().hex}')

fetch()
";

#[test]
fn a_script_printing_times_ids_and_pids_signs_the_same_each_run() {
    let a = run("main.py", NOISY);
    let b = run("main.py", &shifted(NOISY));
    assert_ne!(
        a.evidence.message, b.evidence.message,
        "the messages differ"
    );
    assert_same(&a, &b);
    assert_eq!(
        a.whole_output_signature(),
        b.whole_output_signature(),
        "{}\n{}",
        a.stderr,
        b.stderr
    );
    for placeholder in ["<uuid>", "<n>", "<time>", "<duration>", "<hex>"] {
        assert!(
            a.normalized.contains(placeholder),
            "{placeholder} in {}",
            a.normalized
        );
    }
}

/// A local HTTP server answering `status`, and a fetch that fails on it.
fn http_error(status: u16, user: u32) -> String {
    format!(
        "import http.server, threading, urllib.request\n\n\
         class Answer(http.server.BaseHTTPRequestHandler):\n    \
         def do_GET(self):\n        self.send_response({status})\n        self.end_headers()\n    \
         def log_message(self, *args):\n        pass\n\n\
         server = http.server.HTTPServer(('127.0.0.1', 0), Answer)\n\
         threading.Thread(target=server.serve_forever, daemon=True).start()\n\n\
         def fetch(user):\n    \
         return urllib.request.urlopen(f'http://127.0.0.1:{{server.server_port}}/users/{{user}}')\n\n\
         fetch({user})\n"
    )
}

#[test]
fn http_404_and_500_sign_differently_and_each_signs_the_same_again() {
    let a = run("main.py", &http_error(404, 1));
    let b = run("main.py", &shifted(&http_error(404, 77)));
    let c = run("main.py", &http_error(500, 1));
    assert_eq!(
        a.evidence.error_type.as_deref(),
        Some("urllib.error.HTTPError")
    );
    assert!(a.normalized.contains("HTTP Error 404"), "{}", a.normalized);
    assert!(a.normalized.contains("<library>"), "{}", a.normalized);
    assert_same(&a, &b);
    assert_differ(&a, &c);
}

// --- Node ------------------------------------------------------------------------------------

fn node_read(prop: &str) -> String {
    format!("function load(o) {{\n  return o.a.{prop};\n}}\n\nconsole.log('start', Date.now());\nload({{}});\n")
}

#[test]
fn a_node_type_error_from_two_folders_signs_the_same_and_another_property_differs() {
    let a = run("main.js", &node_read("x"));
    let b = run("main.js", &shifted(&node_read("x")));
    let c = run("main.js", &node_read("z"));
    assert_eq!(a.evidence.error_type.as_deref(), Some("TypeError"));
    assert_eq!(
        a.evidence.message,
        "Cannot read properties of undefined (reading 'x')"
    );
    assert!(
        a.normalized.contains("at load (main.js)"),
        "{}",
        a.normalized
    );
    assert_same(&a, &b);
    assert_eq!(a.whole_output_signature(), b.whole_output_signature());
    assert_differ(&a, &c);
}

#[test]
fn a_node_missing_module_signs_by_the_module_name() {
    let a = run(
        "main.js",
        "const pad = require('left-pad-missing');\npad('x', 3);\n",
    );
    let b = run(
        "main.js",
        &shifted("const pad = require('left-pad-missing');\npad('x', 3);\n"),
    );
    let c = run(
        "main.js",
        "const pad = require('right-pad-missing');\npad('x', 3);\n",
    );
    assert!(
        a.evidence.message.contains("'left-pad-missing'"),
        "{}",
        a.evidence.message
    );
    assert_same(&a, &b);
    assert_differ(&a, &c);
}

fn node_status(status: u16) -> String {
    format!(
        "const {{ randomUUID }} = require('crypto');\n\
         function fetchUser() {{\n  throw new Error(`Request failed with status code {status} (request ${{randomUUID()}} at ${{new Date().toISOString()}})`);\n}}\n\
         fetchUser();\n"
    )
}

#[test]
fn a_node_http_status_in_the_message_is_kept() {
    let a = run("main.js", &node_status(404));
    let b = run("main.js", &shifted(&node_status(404)));
    let c = run("main.js", &node_status(500));
    assert!(
        a.normalized
            .contains("status code 404 (request <uuid> at <time>)"),
        "{}",
        a.normalized
    );
    assert_same(&a, &b);
    assert_differ(&a, &c);
}

// --- Shell -----------------------------------------------------------------------------------

#[test]
fn a_bash_command_not_found_signs_by_the_command() {
    let code = |cmd: &str| format!("echo \"start $$ $(date +%s%N)\"\nset -e\n{cmd} --version\n");
    let a = run("main.sh", &code("jqq_missing"));
    let b = run("main.sh", &shifted(&code("jqq_missing")));
    let c = run("main.sh", &code("yqq_missing"));
    assert_eq!(a.evidence.error_type.as_deref(), Some("CommandNotFound"));
    assert_same(&a, &b);
    assert_eq!(a.whole_output_signature(), b.whole_output_signature());
    assert!(
        a.whole_output_signature() != c.whole_output_signature(),
        "whole outputs of different commands"
    );
    assert_differ(&a, &c);
}

// --- healer errors classify ------------------------------------------------------------------

fn classify_cli(args: &[&str], stdin: Option<&str>) -> Output {
    let data = tempfile::tempdir().expect("data dir");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_healer"));
    cmd.env("HEALER_DATA_DIR", data.path())
        .env_remove("HEALER_LOG")
        .args(["errors", "classify"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
    let mut child = cmd.spawn().expect("healer runs");
    if let Some(text) = stdin {
        let mut pipe = child.stdin.take().expect("stdin");
        pipe.write_all(text.as_bytes()).expect("stdin written");
    }
    child.wait_with_output().expect("healer ends")
}

#[track_caller]
fn json_of(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "healer errors classify failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

#[test]
fn healer_errors_classify_prints_class_type_signature_and_text_for_a_file_and_stdin() {
    let ran = run("main.py", &key_error("total", 3));
    let file = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(file.path(), &ran.stderr).expect("output written");
    let path = file.path().to_str().expect("utf-8 path");

    let from_file = json_of(&classify_cli(&[path], None));
    assert_eq!(from_file["class"], "logic");
    assert_eq!(from_file["error_type"], "KeyError");
    assert_eq!(from_file["signature"], ran.signature.as_str());
    assert_eq!(from_file["normalized"], ran.normalized.as_str());

    let from_dash = json_of(&classify_cli(&["-"], Some(&ran.stderr)));
    let from_stdin = json_of(&classify_cli(&[], Some(&ran.stderr)));
    assert_eq!(from_dash, from_file);
    assert_eq!(from_stdin, from_file);
    // Pretty-printed.
    let text = String::from_utf8_lossy(&classify_cli(&[path], None).stdout).into_owned();
    assert!(text.contains("\n  \"signature\": "), "{text}");

    let node = run("main.js", "require('left-pad-missing');\n");
    let env = json_of(&classify_cli(&[], Some(&node.stderr)));
    assert_eq!(env["class"], "environment");
    assert_eq!(env["error_type"], "Error");
    assert_eq!(env["signature"], node.signature.as_str());

    let untyped = json_of(&classify_cli(
        &[],
        Some("fetching\nsomething odd happened 42 times\n"),
    ));
    assert_eq!(untyped["error_type"], serde_json::Value::Null);
    assert_eq!(untyped["normalized"], "something odd happened <n> times");
    // A line that names no failure leaves the cause unclear (docs/classes.md, principle 5).
    assert_eq!(untyped["class"], "unknown");
    assert_eq!(untyped["classed_by"], serde_json::Value::Null);
}

#[test]
fn healer_errors_classify_names_the_root_cause_of_a_chain() {
    let chained = run(
        "main.py",
        r#"import socket
class SyncError(Exception):
    pass
probe = socket.socket()
probe.bind(('127.0.0.1', 0))
port = probe.getsockname()[1]
probe.close()
try:
    socket.create_connection(('127.0.0.1', port), timeout=3)
except OSError as e:
    raise SyncError('could not push the batch') from e
"#,
    );
    let out = json_of(&classify_cli(&[], Some(&chained.stderr)));
    assert_eq!(out["class"], "transient", "{out}\n{}", chained.stderr);
    assert_eq!(out["error_type"], "SyncError");
    assert_eq!(
        out["root_cause"],
        "ConnectionRefusedError: [Errno 111] Connection refused"
    );
    assert_eq!(
        out["classed_by"],
        "ConnectionRefusedError: [Errno 111] Connection refused"
    );
    // A wrapper around a changed data shape is the code's to fix.
    let shape = run(
        "main.py",
        r#"class ImportFailed(Exception):
    pass
try:
    {'total_cents': 1}['amount']
except KeyError as e:
    raise ImportFailed('could not sum the orders') from e
"#,
    );
    let out = json_of(&classify_cli(&[], Some(&shape.stderr)));
    assert_eq!(out["class"], "logic");
    assert_eq!(out["root_cause"], "KeyError: 'amount'");
    // Not chained: no root cause of its own, classed by the exception itself.
    let plain = run(
        "main.py",
        "{}['total']
",
    );
    let out = json_of(&classify_cli(&[], Some(&plain.stderr)));
    assert_eq!(out["root_cause"], serde_json::Value::Null);
    assert_eq!(out["classed_by"], "KeyError: 'total'");
}

#[test]
fn healer_errors_classify_refuses_empty_input_and_a_missing_file() {
    let empty = classify_cli(&[], Some("\n  \n"));
    assert_eq!(empty.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&empty.stderr).contains("empty"),
        "{}",
        String::from_utf8_lossy(&empty.stderr)
    );
    let missing = classify_cli(&["/nonexistent/healer/output.log"], None);
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cannot read"));
}

/// `--exit CODE` and `--signal N`: the CLI judges a real program's output and ending as the
/// runner judges the same run. A shell's 137 with "Killed", a 124 from `timeout(1)` and a
/// SIGKILL are `resource`; told nothing of the ending, a progress line leaves the cause unclear.
#[test]
fn healer_errors_classify_judges_an_exit_code_or_a_signal_as_the_runner_does() {
    use std::os::unix::process::ExitStatusExt;
    use std::time::Duration;

    use healer::failure::ExitInfo;
    use healer::workflow::judge::judge;

    let ended = |script: &str| {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("main.sh");
        std::fs::write(&path, script).expect("script written");
        let out = Command::new("bash")
            .arg(&path)
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .output()
            .expect("bash runs");
        let exit = ExitInfo {
            code: out.status.code(),
            signal: out.status.signal(),
            ..ExitInfo::default()
        };
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (exit, stdout, stderr)
    };
    let cases = [
        (
            "echo 'loading the export'\npython3 -c 'import os; os.kill(os.getpid(), 9)'\n",
            vec!["--exit", "137"],
            "exit code 137",
        ),
        (
            "echo 'fetching page 1 of 40'\ntimeout 1 sleep 30\n",
            vec!["--exit", "124"],
            "exit code 124",
        ),
        (
            "echo 'fetching page 1 of 40'\nkill -9 $$\n",
            vec!["--signal", "9"],
            "signal 9",
        ),
    ];
    for (script, args, by) in cases {
        let (exit, stdout, stderr) = ended(script);
        let ran = judge(
            &exit,
            &stdout,
            &stderr,
            Duration::from_secs(1),
            "main.sh",
            Duration::from_secs(60),
        );
        let printed = format!("{stderr}{stdout}");
        let mut with_ending = args.clone();
        with_ending.extend(["--entry", "main.sh"]);
        let out = json_of(&classify_cli(&with_ending, Some(&printed)));
        assert_eq!(out["class"], "resource", "{script}: {out}\n{printed}");
        assert_eq!(
            Some(out["class"].as_str().unwrap_or_default()),
            ran.class.map(|c| c.as_str()),
            "{script}"
        );
        assert_eq!(out["classed_by"], by, "{script}: {out}");
    }
    // Told nothing of how it ended (exit code 1), a progress line names no cause.
    let (_, stdout, _) = ended("echo 'fetching page 1 of 40'\ntimeout 1 sleep 30\n");
    let out = json_of(&classify_cli(&[], Some(&stdout)));
    assert_eq!(out["class"], "unknown", "{out}");
    // An exit code of 0 is a success, and a code and a signal together no ending at all.
    for args in [
        vec!["--exit", "0"],
        vec!["--exit", "137", "--signal", "9"],
        vec!["--signal", "0"],
    ] {
        let out = classify_cli(&args, Some("Killed\n"));
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}
