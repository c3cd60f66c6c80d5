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
    let modules = match &workflow.runtime {
        Runtime::Python3 => "python3 -m pip list --format=freeze 2>/dev/null | head -n 60 || echo '(pip is not available)'",
        Runtime::Node => "(ls node_modules 2>/dev/null || echo '(no node_modules in the folder)') | head -n 60; npm ls -g --depth=0 2>/dev/null | head -n 30",
        _ => "echo '(not applicable)'",
    };
    let script = format!(
        "echo '== Interpreter'\n\
         if command -v {program} >/dev/null 2>&1; then command -v {program}; {program} --version 2>&1 | head -n 3; else echo '{program} is not on PATH'; fi\n\
         echo\necho '== Installed modules'\n{modules}\n\
         echo\necho '== Free disk'\ndf -h . 2>&1 | tail -n 1\n"
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
                report.push_str("\n(errors: ");
                report.push_str(run.stderr.trim());
                report.push(')');
            }
        }
        Err(e) => report.push_str(&format!("The diagnostics could not run: {e}")),
    }
    let hosts = hosts_in(logs);
    if !hosts.is_empty() {
        report.push_str("\n\n== Hosts named in the logs\n");
        for (host, port) in hosts {
            let reached = tokio::time::timeout(
                CONNECT_WAIT,
                tokio::net::TcpStream::connect((host.as_str(), port)),
            )
            .await;
            let verdict = match reached {
                Ok(Ok(_)) => "reachable".to_string(),
                Ok(Err(e)) => format!("not reachable ({e})"),
                Err(_) => format!("no answer within {} s", CONNECT_WAIT.as_secs()),
            };
            report.push_str(&format!("{host}:{port}: {verdict}\n"));
        }
    }
    report.trim_end().to_string()
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
