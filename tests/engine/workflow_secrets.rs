//! A workflow's secret as a person keeps it on a computer with no keyring service: refused
//! until they choose Healer's own secrets file, then handed to the script at run time, redacted
//! from its output, and nowhere in the data folder (the database and its WAL included).

use std::io::Write;
use std::process::{Command, Output, Stdio};

use healer::Paths;

use crate::cli::text;
use crate::data_dir;
use crate::faults::{files_under, holds};

const SECRET: &str = "tok-canary-5be1f07a93";

fn healer(paths: &Paths, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_healer"))
        .env("HEALER_DATA_DIR", paths.data_dir())
        .env("HEALER_KEYRING", "off")
        .env_remove("HEALER_LOG")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("healer runs");
    let mut input = child.stdin.take().expect("stdin");
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).expect("write stdin");
    }
    drop(input);
    child.wait_with_output().expect("healer ends")
}

#[test]
fn a_workflow_secret_reaches_its_script_and_never_the_data_folder() {
    let (tmp, paths) = data_dir();
    let script = tmp.path().join("token.py");
    // Prints the token whole (to be redacted) and reversed (to prove it arrived).
    std::fs::write(
        &script,
        "import os\nt = os.environ['API_TOKEN']\nprint('token', t)\nprint('reversed', t[::-1])\n",
    )
    .expect("write");
    let created = healer(
        &paths,
        &[
            "workflow",
            "create",
            "--title",
            "Uses a token",
            "--runtime",
            "python3",
            "--file",
            script.to_str().unwrap_or_default(),
        ],
        None,
    );
    assert!(created.status.success(), "{}", text(&created.stderr));

    // No keyring service and no file chosen: refused with the sentence, nothing recorded.
    let refused = healer(
        &paths,
        &["secret", "set", "uses-a-token", "API_TOKEN"],
        Some(SECRET),
    );
    assert!(!refused.status.success());
    assert!(
        text(&refused.stderr).contains("no keyring service"),
        "{}",
        text(&refused.stderr)
    );
    let none = healer(&paths, &["secret", "list", "uses-a-token", "--json"], None);
    assert_eq!(text(&none.stdout).trim(), "[]");

    // The file is used only once the person said yes to what it protects against.
    let asked = healer(&paths, &["secret", "use-file"], None);
    assert!(!asked.status.success());
    assert!(text(&asked.stdout).contains("reveals nothing"));
    let chosen = healer(&paths, &["secret", "use-file", "--yes"], None);
    assert!(chosen.status.success(), "{}", text(&chosen.stderr));
    // A name the runner sets itself is refused.
    let reserved = healer(
        &paths,
        &["secret", "set", "uses-a-token", "PATH"],
        Some(SECRET),
    );
    assert!(text(&reserved.stderr).contains("set by Healer"));

    let kept = healer(
        &paths,
        &["secret", "set", "uses-a-token", "API_TOKEN"],
        Some(&format!("{SECRET}\n")),
    );
    assert!(kept.status.success(), "{}", text(&kept.stderr));
    assert!(text(&kept.stdout).contains("Healer's secrets file"));

    let ran = healer(&paths, &["workflow", "run", "uses-a-token", "--json"], None);
    assert!(ran.status.success(), "{}", text(&ran.stderr));
    let run: serde_json::Value = serde_json::from_slice(&ran.stdout).expect("json");
    let output = run.to_string();
    let reversed: String = SECRET.chars().rev().collect();
    assert!(output.contains(&reversed), "the script got it: {output}");
    assert!(output.contains("token [redacted]"), "{output}");
    assert!(!output.contains(SECRET));

    let listed = healer(&paths, &["secret", "list", "uses-a-token"], None);
    assert!(text(&listed.stdout).contains("API_TOKEN"));
    assert!(!text(&listed.stdout).contains(SECRET));

    // Every byte Healer wrote: the database, its WAL, logs, the workflow's folder.
    let files = files_under(paths.data_dir());
    assert!(files
        .iter()
        .any(|f| f.ends_with("healer.db-wal") || f.ends_with("healer.db")));
    for file in files {
        let bytes = std::fs::read(&file).expect("read");
        assert!(
            !holds(&bytes, SECRET),
            "{} holds the secret",
            file.display()
        );
    }

    let removed = healer(
        &paths,
        &["secret", "remove", "uses-a-token", "API_TOKEN"],
        None,
    );
    assert!(removed.status.success(), "{}", text(&removed.stderr));
    let again = healer(&paths, &["workflow", "run", "uses-a-token"], None);
    assert!(
        !again.status.success(),
        "without its secret the script fails"
    );
}

/// A command reading a value from `source` (a file such as /dev/zero) on its standard input.
fn healer_fed(paths: &Paths, args: &[&str], source: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_healer"))
        .env("HEALER_DATA_DIR", paths.data_dir())
        .env("HEALER_KEYRING", "off")
        .env_remove("HEALER_LOG")
        .args(args)
        .stdin(std::fs::File::open(source).expect("source"))
        .output()
        .expect("healer runs")
}

#[test]
fn an_endless_secret_or_key_on_standard_input_is_refused_at_its_cap_with_a_sentence() {
    let (tmp, paths) = data_dir();
    let script = tmp.path().join("s.py");
    std::fs::write(&script, "print('hi')\n").expect("write");
    let file = script.to_str().unwrap_or_default();
    let made = healer(
        &paths,
        &[
            "workflow",
            "create",
            "--title",
            "Capped",
            "--runtime",
            "python3",
            "--file",
            file,
        ],
        None,
    );
    assert!(made.status.success(), "{}", text(&made.stderr));
    assert!(healer(&paths, &["secret", "use-file", "--yes"], None)
        .status
        .success());
    let added = healer(
        &paths,
        &[
            "provider",
            "add",
            "local",
            "--kind",
            "openai-compatible",
            "--base-url",
            "http://127.0.0.1:9/v1",
        ],
        None,
    );
    assert!(added.status.success(), "{}", text(&added.stderr));
    let zero = std::path::Path::new("/dev/zero");
    for args in [
        &["secret", "set", "capped", "API_TOKEN"][..],
        &["provider", "set-key", "local"][..],
    ] {
        let started = std::time::Instant::now();
        let out = healer_fed(&paths, args, zero);
        assert!(!out.status.success(), "{args:?}");
        let said = text(&out.stderr);
        assert!(said.contains("larger than 64 KB"), "{args:?}: {said}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "{args:?} read for {:?}",
            started.elapsed()
        );
    }
    let listed = healer(&paths, &["secret", "list", "capped"], None);
    assert!(!text(&listed.stdout).contains("API_TOKEN"), "nothing kept");
}
