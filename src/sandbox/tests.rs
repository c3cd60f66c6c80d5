//! The sandbox with real processes.

use std::path::Path;
use std::time::Duration;

use super::*;

struct Dirs {
    scratch: tempfile::TempDir,
    source: tempfile::TempDir,
}

fn dirs() -> Dirs {
    Dirs {
        scratch: tempfile::tempdir().expect("scratch root"),
        source: tempfile::tempdir().expect("source dir"),
    }
}

fn spec<'a>(d: &'a Dirs, runtime: &'a Runtime, entry: &'a str, code: &'a str) -> SandboxSpec<'a> {
    SandboxSpec {
        scratch_root: d.scratch.path(),
        source_dir: d.source.path(),
        runtime,
        entry,
        code,
        stdin: None,
        env: &[],
        deny_env: &[],
        limits: SandboxLimits::default(),
    }
}

fn var(name: &str, value: &str) -> EnvVar {
    EnvVar {
        name: name.to_string(),
        value: value.to_string(),
    }
}

fn assert_scratch_removed(root: &Path) {
    let left: Vec<_> = std::fs::read_dir(root)
        .expect("scratch root")
        .flatten()
        .map(|e| e.path())
        // Where groups are recorded while they run: empty once they ended.
        .filter(|p| {
            !p.ends_with(GROUPS_FOLDER) || std::fs::read_dir(p).map_or(0, |d| d.count()) > 0
        })
        .collect();
    assert!(left.is_empty(), "scratch folders left behind: {left:?}");
}

/// What this machine's kernel offers, found independently of the code under test's result.
fn kernel_has_landlock() -> bool {
    #[cfg(target_os = "linux")]
    {
        confine::landlock::abi_version().is_ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// Dead: gone, or a zombie waiting for init to reap it.
fn process_is_dead(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z') || rest.starts_with('X')),
    }
}

#[tokio::test]
async fn provider_keys_and_secret_looking_variables_never_reach_the_child() {
    // In the test process's own environment too: the child must not inherit them.
    std::env::set_var("HEALER_SANDBOX_TEST_API_KEY", "sk-process");
    std::env::set_var("HEALER_SANDBOX_TEST_PROVIDER_CRED", "cred-process");
    let d = dirs();
    let env = [
        var("HEALER_SANDBOX_TEST_API_KEY", "sk-workflow"),
        var("HEALER_SANDBOX_TEST_PROVIDER_CRED", "cred-workflow"),
        var("WEATHER_TOKEN", "t"),
        var("db_password", "p"),
        var("CITY", "Lyon"),
    ];
    let deny = [
        "HEALER_SANDBOX_TEST_API_KEY".to_string(),
        "HEALER_SANDBOX_TEST_PROVIDER_CRED".to_string(),
    ];
    let code = "import os, json\nprint(json.dumps(dict(os.environ)))\n";
    let mut s = spec(&d, &Runtime::Python3, "main.py", code);
    s.env = &env;
    s.deny_env = &deny;
    let run = run(&s).await.expect("run");
    assert!(run.succeeded(), "{}", run.describe());
    let seen: std::collections::HashMap<String, String> =
        serde_json::from_str(run.stdout.trim()).expect("environment as JSON");
    for gone in [
        "HEALER_SANDBOX_TEST_API_KEY",
        "HEALER_SANDBOX_TEST_PROVIDER_CRED",
        "WEATHER_TOKEN",
        "db_password",
    ] {
        assert!(!seen.contains_key(gone), "{gone} reached the child");
    }
    assert!(!run.stdout.contains("sk-") && !run.stdout.contains("cred-"));
    assert_eq!(seen.get("CITY").map(String::as_str), Some("Lyon"));
    let home = seen.get("HOME").expect("HOME");
    assert!(
        home.starts_with(&d.scratch.path().to_string_lossy().into_owned()),
        "{home}"
    );
    assert!(seen.contains_key("PATH"));
    assert_scratch_removed(d.scratch.path());
}

#[tokio::test]
async fn writes_outside_the_scratch_copy_are_denied_when_landlock_is_enforced() {
    let d = dirs();
    let outside = tempfile::tempdir().expect("outside dir");
    let target = outside.path().join("escaped.txt");
    let code = format!(
        "open({:?}, 'w').write('escaped')\nprint('wrote outside')\n",
        target.to_string_lossy()
    );
    let run = run(&spec(&d, &Runtime::Python3, "main.py", &code))
        .await
        .expect("run");
    if kernel_has_landlock() {
        assert_eq!(run.confinement, Confinement::Landlock);
        assert!(!run.succeeded(), "{}", run.describe());
        assert!(run.stderr.contains("PermissionError"), "{}", run.stderr);
        assert!(
            !target.exists(),
            "the confined child wrote {}",
            target.display()
        );
        assert!(run.describe().contains("(Landlock)"));
    } else {
        match &run.confinement {
            Confinement::Unavailable { reason } => {
                assert!(!reason.is_empty());
                assert!(run.describe().contains("Landlock unavailable: "));
            }
            Confinement::Landlock => panic!("Landlock reported on a kernel without it"),
        }
    }
    assert_scratch_removed(d.scratch.path());
}

#[tokio::test]
async fn writes_inside_the_scratch_copy_work() {
    let d = dirs();
    let code = r#"
set -e
echo here > out.txt
mkdir -p sub && mv out.txt sub/moved.txt && cat sub/moved.txt
echo home > "$HOME/h.txt" && cat "$HOME/h.txt"
t=$(mktemp) && echo tmp > "$t" && cat "$t"
echo quiet > /dev/null
"#;
    let run = run(&spec(&d, &Runtime::Bash, "main.sh", code))
        .await
        .expect("run");
    assert!(run.succeeded(), "{}", run.describe());
    assert_eq!(run.stdout, "here\nhome\ntmp\n");
    assert_scratch_removed(d.scratch.path());
}

#[tokio::test]
async fn the_workflow_folder_is_copied_and_left_untouched() {
    let d = dirs();
    let src = d.source.path();
    std::fs::write(src.join("data.txt"), "original").expect("data");
    std::fs::create_dir(src.join("sub")).expect("sub");
    std::fs::write(src.join("sub").join("more.txt"), "more").expect("more");
    std::fs::write(src.join("main.py"), "print('old code')\n").expect("old entry");
    let code = r#"
import os
print(open('data.txt').read(), open('sub/more.txt').read())
open('data.txt', 'w').write('changed')
os.remove('sub/more.txt')
"#;
    let run = run(&spec(&d, &Runtime::Python3, "main.py", code))
        .await
        .expect("run");
    assert!(run.succeeded(), "{}", run.describe());
    assert_eq!(run.stdout, "original more\n");
    assert_eq!(
        std::fs::read_to_string(src.join("data.txt")).expect("data"),
        "original"
    );
    assert!(src.join("sub").join("more.txt").exists());
    assert_eq!(
        std::fs::read_to_string(src.join("main.py")).expect("entry"),
        "print('old code')\n"
    );
    assert_scratch_removed(d.scratch.path());
}

#[tokio::test]
async fn a_missing_workflow_folder_gives_an_empty_scratch_copy() {
    let d = dirs();
    let missing = d.source.path().join("not-there");
    let mut s = spec(&d, &Runtime::Bash, "main.sh", "ls -A | tr '\\n' ' '");
    s.source_dir = &missing;
    let run = run(&s).await.expect("run");
    assert!(run.succeeded(), "{}", run.describe());
    assert_eq!(run.stdout.trim(), ".healer main.sh");
}

#[tokio::test]
async fn links_out_of_the_folder_are_not_copied() {
    let d = dirs();
    let outside = tempfile::tempdir().expect("outside");
    std::fs::write(outside.path().join("secret.txt"), "outside").expect("secret");
    std::fs::write(d.source.path().join("real.txt"), "inside\n").expect("real");
    let link = |target: &Path, name: &str| {
        std::os::unix::fs::symlink(target, d.source.path().join(name)).expect("symlink")
    };
    link(&outside.path().join("secret.txt"), "out-link.txt");
    link(Path::new("real.txt"), "in-link.txt");
    let code = "ls out-link.txt 2>/dev/null || echo no-out; cat in-link.txt; test -L in-link.txt || echo copied";
    let run = run(&spec(&d, &Runtime::Bash, "main.sh", code))
        .await
        .expect("run");
    assert_eq!(run.stdout, "no-out\ninside\ncopied\n", "{}", run.describe());
}

#[tokio::test]
async fn a_folder_over_the_copy_cap_is_refused_and_cleaned_up() {
    let d = dirs();
    let big = std::fs::File::create(d.source.path().join("big.bin")).expect("big");
    big.set_len(COPY_CAP_BYTES + 1).expect("sparse file");
    let err = run(&spec(&d, &Runtime::Bash, "main.sh", "true"))
        .await
        .expect_err("over the cap");
    assert!(err.to_string().contains("too big"), "{err}");
    assert_scratch_removed(d.scratch.path());
}

#[tokio::test]
async fn the_time_limit_kills_the_child_and_its_descendants() {
    let d = dirs();
    let code = "sleep 60 &\necho $!\nsetsid sleep 60 &\necho $!\nsleep 60\n";
    let mut s = spec(&d, &Runtime::Bash, "main.sh", code);
    s.limits.timeout = Duration::from_secs(1);
    let run = run(&s).await.expect("run");
    assert!(run.timed_out);
    assert!(!run.succeeded());
    assert!(run.duration < Duration::from_secs(10), "{:?}", run.duration);
    assert!(run.describe().contains("time limit"));
    let pids: Vec<i32> = run
        .stdout
        .lines()
        .map(|l| l.trim().parse().expect("pid"))
        .collect();
    assert_eq!(pids.len(), 2, "{}", run.stdout);
    for pid in pids {
        let mut dead = process_is_dead(pid);
        for _ in 0..50 {
            if dead {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
            dead = process_is_dead(pid);
        }
        assert!(dead, "process {pid} outlived the sandbox");
    }
    assert_scratch_removed(d.scratch.path());
}

#[tokio::test]
async fn output_is_capped_per_stream_and_the_cut_is_counted() {
    let d = dirs();
    let code = "import sys\nsys.stdout.write('x' * 100000)\nsys.stderr.write('short')\n";
    let mut s = spec(&d, &Runtime::Python3, "main.py", code);
    s.limits.output_bytes = 1000;
    let run = run(&s).await.expect("run");
    assert!(run.succeeded(), "{}", run.describe());
    assert_eq!(run.stdout, "x".repeat(1000));
    assert_eq!(run.stdout_cut, 99_000);
    assert_eq!((run.stderr.as_str(), run.stderr_cut), ("short", 0));
    let report = run.describe();
    assert!(
        report.contains("stdout (99000 bytes cut):\n```text\n"),
        "{report}"
    );
    assert!(report.contains("stderr:\n```text\nshort\n```"), "{report}");
}

#[tokio::test]
async fn the_memory_limit_stops_a_large_allocation() {
    let code = "b = bytearray(2 * 1024 ** 3)\nprint('allocated', len(b))\n";
    let d = dirs();
    let limited = run(&spec(&d, &Runtime::Python3, "main.py", code))
        .await
        .expect("run");
    assert!(limited.memory_limited);
    assert!(!limited.succeeded(), "{}", limited.describe());
    assert!(limited.stderr.contains("MemoryError"), "{}", limited.stderr);
    // The same allocation without the limit goes through: the limit made the difference.
    let mut s = spec(&d, &Runtime::Python3, "main.py", code);
    s.limits.memory_bytes = 0;
    let free = run(&s).await.expect("run");
    assert!(!free.memory_limited);
    assert!(free.succeeded(), "{}", free.describe());
}

#[tokio::test]
async fn node_runs_under_the_memory_limit() {
    let d = dirs();
    let code = "new WebAssembly.Memory({ initial: 1 });\nconsole.log('node ok');\n";
    let run = run(&spec(&d, &Runtime::Node, "main.js", code))
        .await
        .expect("run");
    assert!(run.succeeded(), "{}", run.describe());
    assert_eq!(run.stdout, "node ok\n");
}

#[tokio::test]
async fn stdin_and_custom_command_lines_are_used() {
    let d = dirs();
    let runtime = Runtime::Custom {
        command: "bash {file} extra".to_string(),
    };
    let mut s = spec(
        &d,
        &runtime,
        "main.sh",
        "read line; echo \"$1:$line\"; exit 3",
    );
    s.stdin = Some("from stdin\n");
    let run = run(&s).await.expect("run");
    assert_eq!(run.exit_code, Some(3));
    assert_eq!(run.stdout, "extra:from stdin\n");
    assert!(run.describe().starts_with("exit code 3 after "));
}

#[tokio::test]
async fn bad_entries_and_missing_programs_are_errors() {
    let d = dirs();
    for entry in ["../main.py", "/tmp/main.py", ""] {
        let err = run(&spec(&d, &Runtime::Python3, entry, "print(1)"))
            .await
            .expect_err(entry);
        assert_eq!(err.code(), crate::error::ErrorCode::InvalidInput, "{entry}");
    }
    let runtime = Runtime::Custom {
        command: "healer-no-such-interpreter {file}".to_string(),
    };
    let err = run(&spec(&d, &runtime, "main.x", ""))
        .await
        .expect_err("missing program");
    assert!(err.to_string().contains("not found on PATH"), "{err}");
    assert_scratch_removed(d.scratch.path());
}

#[tokio::test]
async fn syntax_checks_use_the_runtimes_own_checker() {
    let root = tempfile::tempdir().expect("scratch root");
    let check = |runtime: Runtime, entry: &'static str, code: &'static str| {
        let root = root.path().to_path_buf();
        async move {
            check_syntax(&root, &runtime, entry, code)
                .await
                .expect("check")
        }
    };
    assert_eq!(
        check(Runtime::Python3, "main.py", "print('hi')\n").await,
        SyntaxCheck::Passed
    );
    assert_eq!(
        check(Runtime::Node, "main.js", "console.log('hi');\n").await,
        SyntaxCheck::Passed
    );
    assert_eq!(
        check(Runtime::Bash, "main.sh", "echo hi\n").await,
        SyntaxCheck::Passed
    );
    for (runtime, entry, code) in [
        (Runtime::Python3, "main.py", "def broken(:\n    pass\n"),
        (Runtime::Node, "main.js", "console.log('hi';\n"),
        (Runtime::Bash, "main.sh", "if true; then\necho hi\n"),
    ] {
        match check(runtime.clone(), entry, code).await {
            SyntaxCheck::Refused { message } => {
                assert!(message.contains(entry), "{runtime:?}: {message}");
                let root_text = root.path().to_string_lossy().into_owned();
                assert!(!message.contains(&root_text), "{message}");
                assert!(!message.contains("sandbox-"), "{message}");
            }
            other => panic!("{runtime:?} accepted broken code: {other:?}"),
        }
    }
    let custom = Runtime::Custom {
        command: "deno run {file}".to_string(),
    };
    assert_eq!(
        check(custom, "main.ts", "whatever(").await,
        SyntaxCheck::NoChecker {
            runtime: "deno run {file}".to_string()
        }
    );
    assert_scratch_removed(root.path());
}

#[test]
fn describe_reports_kills_and_missing_confinement() {
    let run = SandboxRun {
        exit_code: None,
        signal: Some(9),
        timed_out: false,
        stdout: String::new(),
        stderr: "has ``` inside".to_string(),
        stdout_cut: 0,
        stderr_cut: 0,
        duration: Duration::from_millis(200),
        confinement: Confinement::Unavailable {
            reason: "no Landlock here".to_string(),
        },
        memory_limited: true,
        held: vec![],
        not_held: vec![],
        memory_exceeded: false,
        disk_exceeded: false,
    };
    let text = run.describe();
    assert!(text.starts_with("killed by signal 9 (SIGKILL) after 0.2 s · memory limited · Landlock unavailable: no Landlock here"), "{text}");
    assert!(text.contains("stdout: (empty)"), "{text}");
    assert!(
        text.contains("stderr:\n````text\nhas ``` inside\n````"),
        "{text}"
    );
    assert!(!run.succeeded());
}

#[tokio::test]
async fn what_a_command_in_place_leaves_running_ends_with_it_however_it_left() {
    let work = tempfile::tempdir().expect("work");
    let tmp = tempfile::tempdir().expect("tmp");
    let groups = tempfile::tempdir().expect("groups");
    if let Some(why) = crate::contain::testing::groups_cannot_end_all(groups.path()) {
        println!("skipped: what a command in place leaves running: {why}");
        return;
    }
    // Another session with an emptied environment: neither its process group nor its marker
    // reach it. The odd length of its sleep names it.
    let token = format!("7927.{}", std::process::id());
    // The pause lets it leave before the command ends.
    let command = format!("setsid env -i sleep {token} & echo started; sleep 0.3");
    let run = run_in_place(&InPlace {
        cwd: work.path(),
        tmp: tmp.path(),
        command: &command,
        env: &[],
        limits: SandboxLimits {
            timeout: Duration::from_secs(30),
            network: true,
            ..SandboxLimits::default()
        },
        groups: Some(groups.path()),
    })
    .await
    .expect("ran");

    assert!(run.stdout.contains("started"), "{}", run.describe());
    let left = crate::contain::testing::running_with(&token);
    assert!(left.is_empty(), "left running: {left:?}");
}
