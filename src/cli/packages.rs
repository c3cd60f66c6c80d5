//! Packages from the command line: `healer workflow deps NAME` (what a workflow declares and
//! has installed), `healer workflow reinstall NAME`, and the packages offered when a script is
//! created or saved (`--package NAME`, `--accept-packages`, or a question on the terminal).

use std::io::{IsTerminal, Write};
use std::time::Duration;

use healer::client::{Request, Response};
use healer::deps::{Dependencies, EnvironmentState, ProposedPackage};
use healer::engine::{dependencies_in, propose_packages_in};
use healer::workflow::Runtime;
use healer::{Error, Paths, Result};

use crate::print::print_json;
use crate::reach::{act, open, unexpected};

/// Long enough for the installation's default time limit.
const INSTALL_WAIT: Duration = Duration::from_secs(360);

/// How many lines of the last installation's log `deps` shows.
const LOG_LINES: usize = 12;

pub fn show(paths: &Paths, name: &str, json: bool) -> Result<bool> {
    let store = open(paths)?;
    let workflow = store.workflow_by_name(name)?;
    let deps = dependencies_in(&store, paths, workflow.id)?;
    if json {
        return print_json(&deps);
    }
    print_dependencies(&workflow.title, &deps);
    Ok(true)
}

pub async fn reinstall(paths: &Paths, name: String, json: bool) -> Result<bool> {
    let title = open(paths)?.workflow_by_name(&name)?.title;
    let request = Request::ReinstallDependencies { workflow: name };
    let Response::Dependencies { dependencies } = act(paths, request, INSTALL_WAIT).await? else {
        return unexpected();
    };
    if json {
        print_json(&dependencies)?;
    } else {
        print_dependencies(&title, &dependencies);
    }
    Ok(dependencies.state == EnvironmentState::Ready
        || dependencies.state == EnvironmentState::Machine)
}

fn print_dependencies(title: &str, deps: &Dependencies) {
    let state = match deps.state {
        EnvironmentState::Machine => {
            "uses the machine's own interpreter and programs (no packages of its own)"
        }
        EnvironmentState::NotInstalled => "not installed yet: the next run installs them",
        EnvironmentState::Ready => "installed",
        EnvironmentState::Outdated => {
            "the active version declares other packages: the next run installs them"
        }
        EnvironmentState::Failed => "the last installation failed",
    };
    println!("{title}: {state}");
    if !deps.location.is_empty() && deps.state != EnvironmentState::Machine {
        println!("  environment: {}", deps.location);
    }
    if !deps.interpreter.is_empty() {
        println!("  interpreter: {}", deps.interpreter);
    }
    if !deps.packages.is_empty() {
        println!("  packages:");
        for p in &deps.packages {
            let wanted = if p.wanted.is_empty() {
                "any version"
            } else {
                &p.wanted
            };
            let installed = p.installed.as_deref().unwrap_or("not installed");
            println!("    {:<28} {wanted:<14} installed: {installed}", p.name);
        }
    }
    if !deps.lock.is_empty() {
        println!("  lock: {}", deps.lock.join(", "));
    }
    if let Some(error) = &deps.error {
        println!("  error:\n    {}", error.replace('\n', "\n    "));
    }
    let log: Vec<&str> = deps.log.lines().collect();
    if !log.is_empty() {
        println!("  last installation (its end):");
        for line in log
            .get(log.len().saturating_sub(LOG_LINES)..)
            .unwrap_or_default()
        {
            println!("    {line}");
        }
    }
}

/// The packages to declare with a script: the ones named with `--package`, plus the ones
/// Healer offers (its imports the environment lacks) when the person accepts them —
/// `--accept-packages`, or yes on the terminal.
pub async fn offered(
    paths: &Paths,
    runtime: &Runtime,
    code: &str,
    workflow_id: Option<i64>,
    named: &[String],
    accept: bool,
    ask: bool,
) -> Result<Vec<String>> {
    let store = open(paths)?;
    let offers: Vec<ProposedPackage> =
        propose_packages_in(&store, paths, runtime, code, workflow_id)
            .await?
            .into_iter()
            .filter(|p| !named.iter().any(|n| n.eq_ignore_ascii_case(&p.package)))
            .collect();
    let mut packages = named.to_vec();
    if offers.is_empty() {
        return Ok(packages);
    }
    println!("This script imports what its environment does not have:");
    for p in &offers {
        println!("  line {}: {} → package {}", p.line, p.module, p.package);
    }
    let take = accept || (ask && yes("Declare these packages with it? [Y/n] ")?);
    if take {
        packages.extend(offers.into_iter().map(|p| p.package));
    } else {
        println!(
            "Not declared. Add them with --package NAME (or --accept-packages); otherwise Healer installs a missing one when a run needs it."
        );
    }
    Ok(packages)
}

/// Yes unless the person says no; no when there is no terminal to ask on.
fn yes(question: &str) -> Result<bool> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return Ok(false);
    }
    print!("{question}");
    std::io::stdout()
        .flush()
        .map_err(|e| Error::io("cannot write to standard output", e))?;
    let mut answer = String::new();
    healer::capped::read_line(&mut stdin.lock(), &mut answer)?;
    Ok(!matches!(answer.trim(), "n" | "N" | "no"))
}
