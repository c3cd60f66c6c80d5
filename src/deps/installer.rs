//! Running an installer (pip, npm, `python3 -m venv`): in the workflow's folder, in its own
//! process group ended at the time limit, with an environment built from an allow-list — a
//! package's install script runs too, and it gets no provider keys or secret-looking variables.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::io::AsyncReadExt;

use crate::sandbox::looks_secret;

/// The most of an installer's output kept (its end: where the errors are).
const LOG_CAP: usize = 48 * 1024;

/// Variables an installer may need from the engine's environment: where things are, the
/// language, proxies and certificates, and the installers' own settings.
const PASSED: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_ALL",
    "TZ",
    "TMPDIR",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
];
const PASSED_PREFIXES: &[&str] = &["PIP_", "npm_config_", "NPM_CONFIG_", "PYENV"];

/// What a finished command left.
#[derive(Debug, Clone)]
pub(super) struct Ran {
    pub ok: bool,
    /// stdout then stderr, capped at the end.
    pub output: String,
    /// The command could not start at all (not installed).
    pub missing: bool,
}

/// The installers' environment: the allow-list above, minus anything that looks like a secret,
/// plus the switches that keep them quiet and non-interactive.
pub(super) fn installer_env() -> Vec<(String, String)> {
    let mut vars: Vec<(String, String)> = std::env::vars()
        .filter(|(name, _)| {
            (PASSED.contains(&name.as_str()) || PASSED_PREFIXES.iter().any(|p| name.starts_with(p)))
                && !looks_secret(name)
        })
        .collect();
    for (name, value) in [
        ("PIP_DISABLE_PIP_VERSION_CHECK", "1"),
        ("PIP_NO_INPUT", "1"),
        ("PIP_PROGRESS_BAR", "off"),
        ("PYTHONDONTWRITEBYTECODE", "1"),
        // Nothing from the user's own site folder runs inside an installer.
        ("PYTHONNOUSERSITE", "1"),
        ("npm_config_update_notifier", "false"),
        ("npm_config_fund", "false"),
        ("npm_config_audit", "false"),
        ("npm_config_progress", "false"),
    ] {
        vars.retain(|(n, _)| n != name);
        vars.push((name.to_string(), value.to_string()));
    }
    if !vars.iter().any(|(n, _)| n == "PATH") {
        vars.push((
            "PATH".to_string(),
            "/usr/local/bin:/usr/bin:/bin".to_string(),
        ));
    }
    vars
}

tokio::task_local! {
    /// The namespaces installers run in while a worker builds an environment: the same as its
    /// scripts' (the key file hidden). A script could have changed what an installer loads from
    /// the user's home (a `usercustomize.py`, a `pip.conf`); run outside, that code could read
    /// the key.
    static CONTAINED: crate::contain::namespaces::Prepared;
}

/// Run `work` (an environment's build) with every installer it starts inside `namespaces`.
pub async fn contained<F: std::future::Future>(
    namespaces: crate::contain::namespaces::Prepared,
    work: F,
) -> F::Output {
    CONTAINED.scope(namespaces, work).await
}

/// Run `program args` in `cwd` until it ends or `timeout` passes.
pub(super) async fn run(program: &str, args: &[String], cwd: &Path, timeout: Duration) -> Ran {
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args)
        .current_dir(cwd)
        .env_clear()
        .envs(installer_env())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    if let Ok(namespaces) = CONTAINED.try_with(Clone::clone) {
        // SAFETY: async-signal-safe system calls only, on memory prepared before the fork.
        unsafe {
            cmd.pre_exec(move || {
                crate::contain::namespaces::enter_in_child(&namespaces)?;
                crate::contain::caps::drop_in_child(crate::contain::caps::Dropped::PtraceAndMounts)
            });
        }
    }
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            let said = if e.kind() == std::io::ErrorKind::NotFound {
                format!("{program} is not installed on this machine (it is not on the PATH)")
            } else {
                format!("{program} could not be started: {e}")
            };
            return Ran {
                ok: false,
                output: said,
                missing: e.kind() == std::io::ErrorKind::NotFound,
            };
        }
    };
    let pgid = child.id().and_then(|id| i32::try_from(id).ok());
    let out = child.stdout.take().map(|s| tokio::spawn(read_all(s)));
    let err = child.stderr.take().map(|s| tokio::spawn(read_all(s)));
    let (status, timed_out) = match tokio::time::timeout(timeout, child.wait()).await {
        Ok(status) => (status.ok(), false),
        Err(_) => {
            kill(pgid);
            (child.wait().await.ok(), true)
        }
    };
    // Whatever the installer started (a build, a post-install script) ends with it.
    kill(pgid);
    let stdout = join(out).await;
    let mut stderr = join(err).await;
    if timed_out {
        stderr.push_str(&format!(
            "\nHealer stopped it after {} s, the installation time limit.",
            timeout.as_secs()
        ));
    }
    let output = cap(&format!("{stdout}{}{stderr}", separator(&stdout, &stderr)));
    Ran {
        ok: !timed_out && status.is_some_and(|s| s.success()),
        output,
        missing: false,
    }
}

fn separator(a: &str, b: &str) -> &'static str {
    if a.is_empty() || b.is_empty() || a.ends_with('\n') {
        ""
    } else {
        "\n"
    }
}

async fn read_all(mut stream: impl tokio::io::AsyncRead + Unpin) -> String {
    let mut bytes = Vec::new();
    // Reading stops at the cap's worth twice over: a runaway build log is cut, not kept.
    let mut buf = vec![0_u8; 16 * 1024];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                bytes.extend_from_slice(buf.get(..n).unwrap_or_default());
                if bytes.len() > 4 * LOG_CAP {
                    let keep = bytes.len() - 2 * LOG_CAP;
                    bytes.drain(..keep);
                }
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

async fn join(handle: Option<tokio::task::JoinHandle<String>>) -> String {
    match handle {
        Some(h) => h.await.unwrap_or_default(),
        None => String::new(),
    }
}

fn kill(pgid: Option<i32>) {
    if let Some(pgid) = pgid {
        // ESRCH (the group is already gone) is the good case.
        let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
    }
}

/// The end of a long log, cut at a line, with a note of what was left out.
pub(super) fn cap(text: &str) -> String {
    if text.len() <= LOG_CAP {
        return text.to_string();
    }
    let mut start = text.len() - LOG_CAP;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    let tail = text.get(start..).unwrap_or_default();
    let tail = tail.split_once('\n').map_or(tail, |(_, rest)| rest);
    format!(
        "… {} bytes of the installer's output left out …\n{tail}",
        text.len() - tail.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn installers_get_no_secret_looking_variables() {
        let vars = installer_env();
        assert!(vars.iter().all(|(n, _)| !looks_secret(n)));
        assert!(vars.iter().any(|(n, v)| n == "PIP_NO_INPUT" && v == "1"));
        assert!(vars.iter().any(|(n, _)| n == "PATH"));
    }

    #[test]
    fn a_long_log_keeps_its_end() {
        let long = format!("{}\nERROR: the real error\n", "noise line\n".repeat(10_000));
        let capped = cap(&long);
        assert!(capped.len() <= LOG_CAP + 100);
        assert!(capped.ends_with("ERROR: the real error\n"));
        assert!(capped.starts_with("… "));
    }

    #[tokio::test]
    async fn an_installer_past_its_time_limit_is_stopped_with_all_it_started() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pidfile = dir.path().join("child.pid");
        // The "installer" starts a build step of its own, then hangs.
        let script = format!("sleep 30 & echo $! > {}; sleep 30", pidfile.display());
        let started = std::time::Instant::now();
        let ran = run(
            "sh",
            &["-c".to_string(), script],
            dir.path(),
            Duration::from_millis(500),
        )
        .await;
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "it was stopped, not waited out"
        );
        assert!(!ran.ok);
        assert!(!ran.missing);
        assert!(
            ran.output.contains("the installation time limit"),
            "{}",
            ran.output
        );
        let child: i32 = std::fs::read_to_string(&pidfile)
            .expect("pid")
            .trim()
            .parse()
            .expect("a pid");
        // Its own child ended with it (a zombie has no cmdline left).
        let alive =
            std::fs::read_to_string(format!("/proc/{child}/cmdline")).is_ok_and(|c| !c.is_empty());
        assert!(!alive, "the installer's child {child} outlived it");
    }

    /// At the shipped limit (five minutes), on tokio's paused clock: the time passes without
    /// being waited, the process is real.
    #[tokio::test(start_paused = true)]
    async fn an_installer_that_never_ends_is_stopped_at_the_shipped_limit_of_five_minutes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let limit = Duration::from_secs(crate::deps::DEFAULT_INSTALL_TIMEOUT_SECS);
        assert_eq!(limit, Duration::from_secs(5 * 60));
        let started = tokio::time::Instant::now();
        let ran = run("sleep", &["100000".to_string()], dir.path(), limit).await;
        let waited = started.elapsed();
        assert!(
            waited >= limit && waited < limit + Duration::from_secs(5),
            "stopped after {waited:?}"
        );
        assert!(!ran.ok);
        assert!(
            ran.output
                .contains("Healer stopped it after 300 s, the installation time limit."),
            "{}",
            ran.output
        );
    }

    #[tokio::test]
    async fn an_installer_that_is_not_on_the_path_says_so() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ran = run(
            "healer-no-such-installer",
            &[],
            dir.path(),
            Duration::from_secs(5),
        )
        .await;
        assert!(ran.missing && !ran.ok);
        assert!(
            ran.output.contains("is not installed on this machine"),
            "{}",
            ran.output
        );
    }
}
