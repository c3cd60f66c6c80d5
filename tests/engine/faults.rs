//! The reliability suite: faults injected into a real engine (the `healer` binary, a real
//! SQLite file, real scripts) and what must hold afterwards — no run lost, no process left, no
//! secret leaked. Each test prints a `faults:` line with its figures; `make test` shows them
//! with `--nocapture`, and the closing note of issue #19 adds them up.

mod concurrent;
mod crash;
mod hostile;
mod input;
mod locks;
mod secrets;
mod tasklist_races;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use healer::Paths;

/// One test's figures, printed as one line.
#[derive(Debug, Default)]
pub struct Figures {
    pub faults: u32,
    pub runs_lost: u32,
    pub processes_left: u32,
    pub secrets_leaked: u32,
}

impl Figures {
    pub fn print(&self, test: &str) {
        println!(
            "faults: {test}: {} injected, {} runs lost, {} processes left, {} secrets leaked",
            self.faults, self.runs_lost, self.processes_left, self.secrets_leaked
        );
    }
}

/// The `healer` binary, as a person runs it, on `paths`, with nothing of this process's
/// environment that could change its behaviour.
pub fn healer(paths: &Paths) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_healer"));
    cmd.env("HEALER_DATA_DIR", paths.data_dir())
        .env("HEALER_KEYRING", "off")
        .env_remove("HEALER_LOG")
        .env_remove("HEALER_FAILPOINT")
        .stdin(Stdio::null());
    cmd
}

/// A `healer daemon` whose stderr goes to a file; killed when dropped.
pub struct Daemon {
    pub child: Child,
    pub stderr: PathBuf,
}

impl Daemon {
    /// Start `cmd` (a daemon command line) and wait until it says it is ready.
    pub fn start(mut cmd: Command, stderr: PathBuf) -> Daemon {
        let file = std::fs::File::create(&stderr).expect("stderr file");
        let child = cmd.stderr(file).spawn().expect("daemon starts");
        let mut daemon = Daemon { child, stderr };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let said = std::fs::read_to_string(&daemon.stderr).unwrap_or_default();
            if said.contains("Press Ctrl-C to stop") {
                return daemon;
            }
            if let Ok(Some(status)) = daemon.child.try_wait() {
                panic!("the daemon exited ({status}) before it was ready: {said}");
            }
            assert!(
                Instant::now() < deadline,
                "daemon never became ready: {said}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGTERM, and wait for it to stop.
    pub fn stop(&mut self) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            nix::sys::signal::Signal::SIGTERM,
        );
        let deadline = Instant::now() + Duration::from_secs(15);
        while self.child.try_wait().ok().flatten().is_none() {
            assert!(Instant::now() < deadline, "daemon did not stop on SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every file under `dir`.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() && !path.is_symlink() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

pub fn holds(bytes: &[u8], needle: &str) -> bool {
    !needle.is_empty() && bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// Whether this process runs as root (tests and CI do; a person's desktop does not).
pub fn is_root() -> bool {
    // SAFETY: geteuid cannot fail and touches no memory of ours.
    unsafe { nix::libc::geteuid() == 0 }
}
