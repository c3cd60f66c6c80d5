//! Diagnostics for an environment problem: the interpreter and its version, the installed
//! modules, free disk, run in the sandbox (a scratch copy of the workflow folder, no keys); and
//! whether the hosts named in the logs can be reached.

use std::time::Duration;

use crate::maintainer::scratch_root;
use crate::sandbox::{self, SandboxLimits, SandboxSpec};
use crate::services::Services;
use crate::workflow::{Runtime, Workflow};

/// How long one host may take to accept a connection.
const CONNECT_WAIT: Duration = Duration::from_secs(3);
/// The most hosts checked.
const MAX_HOSTS: usize = 5;

/// The report, as text for the checkpoint's context.
pub(crate) async fn diagnose(services: &Services, workflow: &Workflow, logs: &str) -> String {
    let mut report = String::new();
    let program = workflow.runtime.program();
    // Each check prints one sentence: the report is read by a person in the checkpoint dialog.
    let modules = match &workflow.runtime {
        Runtime::Python3 => "mods=$(python3 -m pip list --format=freeze 2>/dev/null | head -n 60 | tr '\\n' ' ')\n\
             if [ -n \"$mods\" ]; then echo \"Installed Python modules: $mods\"; \
             else echo 'Healer could not list the installed Python modules (pip is not available).'; fi",
        Runtime::Node => "mods=$(ls node_modules 2>/dev/null | head -n 60 | tr '\\n' ' ')\n\
             if [ -n \"$mods\" ]; then echo \"Node modules in the workflow's folder: $mods\"; \
             else echo \"The workflow's folder has no Node modules installed (no node_modules folder).\"; fi\n\
             glob=$(npm ls -g --depth=0 --parseable 2>/dev/null | tail -n +2 | sed 's#.*/##' | head -n 30 | tr '\\n' ' ')\n\
             if [ -n \"$glob\" ]; then echo \"Node modules installed for everyone: $glob\"; fi",
        _ => "true",
    };
    let script = format!(
        "if command -v {program} >/dev/null 2>&1; then \
           echo \"{program} is installed ($({program} --version 2>&1 | head -n 1), at $(command -v {program})).\"; \
         else echo '{program} is not installed on this machine (it is not on the PATH).'; fi\n\
         {modules}\n\
         df -Pk . 2>/dev/null | awk 'NR==2 {{ printf \"The disk that holds the workflow has %.1f GB free (%s used).\\n\", $4/1048576, $5 }}'\n"
    );
    let scratch = scratch_root(services);
    let folder = services.paths.workflow_dir(workflow.id);
    let spec = SandboxSpec {
        scratch_root: &scratch,
        source_dir: &folder,
        runtime: &Runtime::Bash,
        entry: ".healer-diagnostics.sh",
        code: &script,
        stdin: None,
        env: &[],
        deny_env: &[],
        limits: SandboxLimits {
            timeout: Duration::from_secs(20),
            ..SandboxLimits::default()
        },
    };
    match sandbox::run(&spec).await {
        Ok(run) => {
            report.push_str(run.stdout.trim_end());
            if !run.stderr.trim().is_empty() {
                report.push_str("\nSome checks could not finish: ");
                report.push_str(run.stderr.trim());
            }
        }
        Err(e) => report.push_str(&format!("Healer could not look at this machine: {e}.")),
    }
    let hosts = hosts_in(logs);
    if !hosts.is_empty() {
        report.push('\n');
        for (host, port) in hosts {
            let reached = tokio::time::timeout(
                CONNECT_WAIT,
                tokio::net::TcpStream::connect((host.as_str(), port)),
            )
            .await;
            let verdict = match reached {
                Ok(Ok(_)) => "answers".to_string(),
                Ok(Err(e)) => format!("cannot be reached: {}", connect_error(&e)),
                Err(_) => format!("did not answer within {} s", CONNECT_WAIT.as_secs()),
            };
            report.push_str(&format!(
                "{host} (named in the run's output, port {port}) {verdict}.\n"
            ));
        }
    }
    report.trim_end().to_string()
}

/// A failed connection in words, without the OS's "(os error 111)".
fn connect_error(e: &std::io::Error) -> &'static str {
    use std::io::ErrorKind;
    match e.kind() {
        ErrorKind::ConnectionRefused => "nothing there accepts connections",
        ErrorKind::TimedOut => "it did not answer in time",
        ErrorKind::PermissionDenied => "this machine does not allow the connection",
        ErrorKind::AddrNotAvailable | ErrorKind::NotFound => "its name could not be found",
        _ if e.to_string().contains("lookup") || e.to_string().contains("resolve") => {
            "its name could not be found"
        }
        _ => "the network refused the connection",
    }
}

/// Hosts (and ports) named in URLs in the logs: `scheme://host[:port]`.
pub fn hosts_in(logs: &str) -> Vec<(String, u16)> {
    let mut found: Vec<(String, u16)> = Vec::new();
    for (at, _) in logs.match_indices("://") {
        let scheme: String = logs[..at]
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let rest = &logs[at + 3..];
        let authority: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':'))
            .collect();
        let (host, port) = match authority.split_once(':') {
            Some((h, p)) => (h.to_string(), p.parse().ok()),
            None => (authority.clone(), None),
        };
        let port = port.unwrap_or(match scheme.to_ascii_lowercase().as_str() {
            "http" | "ws" => 80,
            _ => 443,
        });
        if host.is_empty() || !host.contains(|c: char| c.is_ascii_alphabetic() || c == '.') {
            continue;
        }
        if !found.iter().any(|(h, p)| *h == host && *p == port) {
            found.push((host, port));
        }
        if found.len() == MAX_HOSTS {
            break;
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_connection_is_said_without_the_os_error_number() {
        let e = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert_eq!(connect_error(&e), "nothing there accepts connections");
    }

    #[test]
    fn hosts_are_read_from_urls_in_the_logs() {
        let logs = "GET https://api.example.com/v1/rates failed\n\
                    retrying http://127.0.0.1:8080/health and https://api.example.com/again";
        assert_eq!(
            hosts_in(logs),
            [
                ("api.example.com".to_string(), 443),
                ("127.0.0.1".to_string(), 8080)
            ]
        );
        assert!(hosts_in("no urls here").is_empty());
    }
}
