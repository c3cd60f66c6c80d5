//! The classifier against real failures: every program in `tests/corpus/classes/<class>/` —
//! Python, Node and Bash scripts that fail the way scheduled jobs do (auth failures, missing
//! files, locks, rate limits, DNS, full disks, permissions, memory, signals…) — is run here, as
//! an ordinary user, and its real output goes through `parse_evidence` and `classify` as the
//! runner's does. The folder is its label, by the rule in docs/classes.md. The test prints every
//! miss and fails below 95 % right.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use healer::failure::{classify, parse_evidence, ExitInfo, FailureClass};
use tokio::process::Command;
use tokio::sync::Semaphore;

/// Programs run at once: most of them wait on a socket, a lock or a child.
const AT_ONCE: usize = 6;
/// No program takes long; one that hangs is a broken case.
const LIMIT: Duration = Duration::from_secs(15);
/// The corpus folders: each is its programs' label. `unknown` holds programs that fail and say
/// nothing Healer can read a cause from.
const CLASSES: [&str; 5] = ["logic", "environment", "transient", "resource", "unknown"];
/// Below this share of right answers the test fails.
const FLOOR: f64 = 0.95;

struct Case {
    path: PathBuf,
    expected: FailureClass,
}

struct Outcome {
    case: Case,
    got: FailureClass,
    exit: ExitInfo,
    output: String,
    took: Duration,
}

fn corpus() -> Vec<Case> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/classes");
    let mut cases = Vec::new();
    for class in CLASSES {
        let expected = FailureClass::parse(class).expect("a class");
        let mut paths: Vec<PathBuf> = std::fs::read_dir(root.join(class))
            .expect("the corpus folder")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        paths.sort();
        cases.extend(paths.into_iter().map(|path| Case { path, expected }));
    }
    cases
}

/// The interpreter as found on the programs' PATH.
fn resolve(program: &str) -> String {
    std::env::split_paths(&path_for_programs())
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
        .map_or_else(|| program.to_string(), |p| p.display().to_string())
}

fn interpreter(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()) {
        Some("py") => "python3",
        Some("js" | "mjs") => "node",
        Some("sh") => "bash",
        other => panic!("no interpreter for {other:?}"),
    }
}

const NOBODY: u32 = 65534;

/// Whether this process runs as root (`/proc/self` belongs to the effective user).
fn root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// The PATH the programs get: as another user, only the folders that user can reach (a
/// developer's ~/.pyenv shims are not).
fn path_for_programs() -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var("PATH").unwrap_or_default();
    if !root() {
        return path;
    }
    let reachable = |dir: &Path| {
        dir.ancestors().all(|a| {
            a.as_os_str().is_empty()
                || std::fs::metadata(a).is_ok_and(|m| m.permissions().mode() & 0o001 != 0)
        })
    };
    std::env::split_paths(&path)
        .filter(|dir| reachable(dir))
        .map(|dir| dir.display().to_string())
        .collect::<Vec<_>>()
        .join(":")
}

/// When the tests run as root, the programs run as `nobody` (through util-linux's `setpriv`):
/// a scheduled script runs as a person, and root would never see "permission denied".
fn as_user(program: &str) -> (String, Vec<String>) {
    if root() {
        let mut args: Vec<String> = ["--reuid=65534", "--regid=65534", "--clear-groups"]
            .iter()
            .map(|a| a.to_string())
            .collect();
        args.push(program.to_string());
        ("setpriv".to_string(), args)
    } else {
        (program.to_string(), Vec::new())
    }
}

async fn run(case: Case) -> Outcome {
    let began = Instant::now();
    let dir = tempfile::tempdir().expect("temp dir");
    let name = case
        .path
        .file_name()
        .and_then(|n| n.to_str())
        .expect("a file name")
        .to_string();
    std::fs::copy(&case.path, dir.path().join(&name)).expect("copied");
    if root() {
        std::os::unix::fs::chown(dir.path(), Some(NOBODY), None).expect("chown");
    }
    let (program, mut args) = as_user(&resolve(interpreter(&case.path)));
    args.push(name.clone());
    let child = Command::new(program)
        .args(&args)
        .current_dir(dir.path())
        .env_clear()
        .env("PATH", path_for_programs())
        .env("HOME", dir.path())
        .env("LANG", "C.UTF-8")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(LIMIT, child)
        .await
        .unwrap_or_else(|_| panic!("{} did not end within {LIMIT:?}", case.path.display()))
        .expect("the interpreter runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let exit = ExitInfo {
        code: out.status.code(),
        signal: std::os::unix::process::ExitStatusExt::signal(&out.status),
        ..ExitInfo::default()
    };
    let evidence = parse_evidence(&stderr, &stdout, &name);
    let output = format!("{stderr}\n{stdout}");
    let got = classify(&exit, evidence.as_ref(), &output);
    Outcome {
        case,
        got,
        exit,
        output,
        took: began.elapsed(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_classifier_is_right_on_real_failures_by_the_rule_of_what_fixes_them() {
    let started = Instant::now();
    let cases = corpus();
    let slots = Arc::new(Semaphore::new(AT_ONCE));
    let mut runs = tokio::task::JoinSet::new();
    for case in cases {
        let slots = slots.clone();
        runs.spawn(async move {
            let _slot = slots.acquire_owned().await.expect("a slot");
            run(case).await
        });
    }
    let mut outcomes = Vec::new();
    while let Some(outcome) = runs.join_next().await {
        outcomes.push(outcome.expect("a run"));
    }
    outcomes.sort_by(|a, b| a.case.path.cmp(&b.case.path));
    let total = outcomes.len();
    let succeeded: Vec<String> = outcomes
        .iter()
        .filter(|o| o.exit.code == Some(0))
        .map(|o| o.case.path.display().to_string())
        .collect();
    assert!(
        succeeded.is_empty(),
        "these corpus programs did not fail, so they say nothing: {succeeded:?}"
    );
    let misses: Vec<&Outcome> = outcomes
        .iter()
        .filter(|o| o.got != o.case.expected)
        .collect();
    for (i, miss) in misses.iter().enumerate() {
        let tail: Vec<&str> = miss.output.trim().lines().rev().take(6).collect();
        println!(
            "miss {}: {} — expected {}, got {} (exit {:?}, signal {:?})\n    {}",
            i + 1,
            miss.case.path.display(),
            miss.case.expected.as_str(),
            miss.got.as_str(),
            miss.exit.code,
            miss.exit.signal,
            tail.into_iter().rev().collect::<Vec<_>>().join("\n    ")
        );
    }
    for class in CLASSES {
        let of: Vec<&Outcome> = outcomes
            .iter()
            .filter(|o| o.case.expected.as_str() == class)
            .collect();
        let right = of.iter().filter(|o| o.got == o.case.expected).count();
        println!("{class}: {right} of {} right", of.len());
    }
    let mut by_time: Vec<&Outcome> = outcomes.iter().collect();
    by_time.sort_by_key(|o| std::cmp::Reverse(o.took));
    for o in by_time.iter().take(5) {
        println!(
            "slowest: {} in {:.2} s",
            o.case.path.display(),
            o.took.as_secs_f64()
        );
    }
    let right = total - misses.len();
    let share = right as f64 / total as f64;
    println!(
        "{right} of {total} right ({:.1} %), in {:.1} s",
        share * 100.0,
        started.elapsed().as_secs_f64()
    );
    assert!(
        total >= 150,
        "the corpus has {total} programs, fewer than 150"
    );
    assert!(
        share >= FLOOR,
        "{right} of {total} right ({:.1} %) is below 95 %; the misses are printed above",
        share * 100.0
    );
}
