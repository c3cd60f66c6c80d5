//! Hostile code in the sandbox, at the sandbox's default limits: what it starts in another
//! session with an emptied environment ends with it; it cannot change the person's files,
//! hold more than its memory, start processes without end, fill the disk, or reach the
//! network. Where this machine does not allow the mechanism, the test says why it skipped.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use healer::sandbox::{self, SandboxLimits, SandboxRun, SandboxSpec, GROUPS_FOLDER};
use healer::workflow::Runtime;

use super::Figures;

struct Bench {
    scratch: tempfile::TempDir,
    source: tempfile::TempDir,
}

impl Bench {
    fn new() -> Bench {
        Bench {
            scratch: tempfile::tempdir().expect("scratch"),
            source: tempfile::tempdir().expect("source"),
        }
    }

    async fn run(&self, runtime: Runtime, code: &str) -> SandboxRun {
        let spec = SandboxSpec {
            scratch_root: self.scratch.path(),
            source_dir: self.source.path(),
            runtime: &runtime,
            entry: "main.py",
            code,
            stdin: None,
            env: &[],
            deny_env: &[],
            limits: SandboxLimits::default(),
        };
        sandbox::run(&spec).await.expect("the sandbox runs")
    }

    /// Nothing is left in the scratch root but the (empty) folder of group records.
    fn assert_clean(&self) {
        for entry in std::fs::read_dir(self.scratch.path())
            .expect("root")
            .flatten()
        {
            let path = entry.path();
            if path.ends_with(GROUPS_FOLDER) {
                let records = std::fs::read_dir(&path).map_or(0, |d| d.count());
                assert_eq!(records, 0, "a group was not ended");
            } else {
                panic!("left behind: {}", path.display());
            }
        }
    }
}

/// Processes whose command line holds `marker`, other than this test's own.
pub fn processes_with(marker: &str) -> Vec<i32> {
    let me = std::process::id() as i32;
    std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| *pid != me)
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
            !zombie && String::from_utf8_lossy(&cmdline).contains(marker)
        })
        .collect()
}

/// Whether this machine lets root (or this user) make PID and network namespaces, asked of
/// util-linux's `unshare`, not of the code under test.
fn namespaces_allowed() -> Result<(), String> {
    let mut cmd = Command::new("unshare");
    if !super::is_root() {
        cmd.arg("--user").arg("--map-current-user");
    }
    let out = cmd
        .args(["--pid", "--fork", "--mount-proc", "--net", "true"])
        .output()
        .map_err(|e| format!("unshare (util-linux) cannot run: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "this machine refuses private namespaces: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

fn skipped(what: &str, why: &str) {
    println!("skipped: {what}: {why}");
}

#[tokio::test]
async fn what_hostile_code_starts_in_another_session_ends_with_it() {
    let bench = Bench::new();
    let marker = format!("{}.{}", 7919, std::process::id());
    let code = format!(
        "import subprocess\nsubprocess.Popen(['setsid', 'env', '-i', 'sleep', '{marker}'], start_new_session=True)\nsubprocess.Popen(['sh', '-c', 'sleep {marker} & exit 0'])\nimport time\ntime.sleep(0.3)\nprint('started')\n"
    );
    let run = bench.run(Runtime::Python3, &code).await;
    assert!(run.stdout.contains("started"), "{}", run.describe());
    let left = processes_with(&marker);
    assert!(
        left.is_empty(),
        "left running: {left:?}\n{}",
        run.describe()
    );
    bench.assert_clean();
    Figures {
        faults: 2,
        processes_left: left.len() as u32,
        ..Figures::default()
    }
    .print("sandbox: setsid and env -i");
}

#[tokio::test]
async fn hostile_code_cannot_change_files_outside_its_scratch_copy() {
    let bench = Bench::new();
    let outside = tempfile::tempdir().expect("outside");
    let file = outside.path().join("precious.txt");
    std::fs::write(&file, "keep").expect("file");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("mode");
    let code = format!(
        "import os\nfor what, act in [('chmod', lambda: os.chmod({p:?}, 0o777)), ('write', lambda: open({p:?}, 'a').write('x')), ('remove', lambda: os.remove({p:?}))]:\n    try:\n        act(); print(what, 'done')\n    except OSError as e:\n        print(what, 'refused', e.errno)\n",
        p = file.display().to_string()
    );
    let run = bench.run(Runtime::Python3, &code).await;
    let mode = std::fs::metadata(&file)
        .expect("still there")
        .permissions()
        .mode()
        & 0o777;
    let content = std::fs::read_to_string(&file).expect("readable");
    let chmod_contained = run.stdout.contains("chmod refused");
    if !chmod_contained && namespaces_allowed().is_err() {
        skipped(
            "chmod outside the scratch copy",
            "Landlock does not cover chmod, and this machine has no private mount namespace to make the system read-only",
        );
    } else {
        assert_eq!(mode, 0o644, "{}", run.describe());
    }
    assert_eq!(content, "keep", "{}", run.describe());
    assert!(run.stdout.contains("write refused"), "{}", run.describe());
    assert!(run.stdout.contains("remove refused"), "{}", run.describe());
    bench.assert_clean();
    Figures {
        faults: 3,
        ..Figures::default()
    }
    .print("sandbox: chmod, write, remove outside");
}

#[tokio::test]
async fn hostile_code_cannot_start_processes_without_end() {
    let bench = Bench::new();
    let marker = format!("{}.{}", 6007, std::process::id());
    let code = format!(
        "import subprocess\nstarted = 0\ntry:\n    for _ in range(600):\n        subprocess.Popen(['sleep', '{marker}'])\n        started += 1\nexcept OSError as e:\n    pass\nprint('started', started)\n"
    );
    let run = bench.run(Runtime::Python3, &code).await;
    let started: u32 = run
        .stdout
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    if run.held.iter().any(|h| h.contains("processes")) {
        assert!(started < 600, "{started} started\n{}", run.describe());
    } else {
        skipped("the process limit", &run.not_held.join("; "));
    }
    let left = processes_with(&marker);
    assert!(left.is_empty(), "{} left\n{}", left.len(), run.describe());
    bench.assert_clean();
    Figures {
        faults: 1,
        processes_left: left.len() as u32,
        ..Figures::default()
    }
    .print("sandbox: fork");
}

#[tokio::test]
async fn hostile_code_cannot_hold_more_memory_than_allowed_in_all() {
    let bench = Bench::new();
    // Five children of 300 MiB each: each under the per-process limit, 1.5 GiB together.
    let code = "import subprocess, sys\nchild = \"x = b'a' * (300 << 20)\\nimport time\\ntime.sleep(3)\"\nps = [subprocess.Popen([sys.executable, '-c', child]) for _ in range(5)]\nprint('exits', [p.wait() for p in ps])\n";
    let run = bench.run(Runtime::Python3, code).await;
    if run.held.iter().any(|h| h.contains("MiB of memory in all")) {
        assert!(run.memory_exceeded, "{}", run.describe());
        assert!(run.describe().contains("more memory than allowed"));
    } else {
        skipped("the total memory bound", &run.not_held.join("; "));
    }
    bench.assert_clean();
    Figures {
        faults: 1,
        ..Figures::default()
    }
    .print("sandbox: memory in all");
}

#[tokio::test]
async fn hostile_code_cannot_fill_the_disk() {
    let bench = Bench::new();
    // 64 MiB files (each under the per-file limit) until 2 GiB, as fast as it can.
    let code = "chunk = b'x' * (1 << 20)\nfor n in range(32):\n    with open(f'fill{n}', 'wb') as f:\n        for _ in range(64):\n            f.write(chunk)\nprint('wrote it all')\n";
    let run = bench.run(Runtime::Python3, code).await;
    assert!(run.disk_exceeded, "{}", run.describe());
    assert!(!run.stdout.contains("wrote it all"), "{}", run.describe());
    assert!(run.describe().contains("wrote more to its scratch folder"));
    bench.assert_clean();
    Figures {
        faults: 1,
        ..Figures::default()
    }
    .print("sandbox: disk");
}

#[tokio::test]
async fn hostile_code_reaches_no_network_not_even_localhost() {
    let bench = Bench::new();
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").expect("tcp");
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").expect("udp");
    udp.set_read_timeout(Some(Duration::from_millis(300)))
        .expect("timeout");
    let code = format!(
        "import socket\ntry:\n    socket.create_connection(('127.0.0.1', {tcp}), timeout=2); print('tcp connected')\nexcept OSError as e:\n    print('tcp refused', e.errno)\ntry:\n    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'leak', ('127.0.0.1', {udp})); print('udp sent')\nexcept OSError as e:\n    print('udp refused', e.errno)\n",
        tcp = tcp.local_addr().expect("addr").port(),
        udp = udp.local_addr().expect("addr").port(),
    );
    let run = bench.run(Runtime::Python3, &code).await;
    assert!(run.stdout.contains("tcp refused"), "{}", run.describe());
    let mut buf = [0_u8; 16];
    let got_udp = udp.recv(&mut buf).is_ok();
    match namespaces_allowed() {
        Ok(()) => assert!(!got_udp, "UDP reached the test\n{}", run.describe()),
        Err(why) => skipped("UDP", &format!("{why}; Landlock covers only TCP")),
    }
    bench.assert_clean();
    Figures {
        faults: 2,
        ..Figures::default()
    }
    .print("sandbox: network");
}

#[tokio::test]
async fn hostile_code_sees_only_its_own_processes() {
    let bench = Bench::new();
    let code = "import os\npids = [p for p in os.listdir('/proc') if p.isdigit()]\nprint('pid', os.getpid(), 'sees', len(pids))\n";
    let run = bench.run(Runtime::Python3, code).await;
    match namespaces_allowed() {
        Ok(()) => {
            assert!(run.stdout.starts_with("pid 1 sees "), "{}", run.describe());
            let seen: usize = run
                .stdout
                .split_whitespace()
                .nth(3)
                .and_then(|n| n.parse().ok())
                .unwrap_or(usize::MAX);
            assert!(seen <= 2, "{}", run.describe());
        }
        Err(why) => skipped("a private PID namespace", &why),
    }
    bench.assert_clean();
    let _ = Path::new("/");
}
