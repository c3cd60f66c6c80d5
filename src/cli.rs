//! `healer workflow …`: the workflow commands of the CLI.

use std::io::{BufRead, IsTerminal, Read, Write};
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};
use healer::client::{self, Request, Response};
use healer::store::Store;
use healer::workflow::{
    EnvVar, Run, RunDetail, RunStatus, Runtime, Schedule, ScriptVersion, Version, WorkflowInput,
};
use healer::{Error, Paths, Result};
use serde::Serialize;

/// How long an acting command waits for a running engine that only has to write something.
const QUICK_WAIT: Duration = Duration::from_secs(30);

#[derive(Subcommand)]
pub enum WorkflowCommand {
    /// List workflows with their status, version, schedule and last run
    List {
        #[arg(long)]
        json: bool,
    },
    /// Show one workflow, its active version and recent runs
    Show {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// Create a workflow from a script file (version 1.0)
    Create(CreateArgs),
    /// Save a new version of the script (the next major: 1.3 → 2.0)
    Save {
        name: String,
        /// The script file, or - for standard input
        #[arg(long)]
        file: PathBuf,
        /// What changed
        #[arg(long, default_value = "")]
        comment: String,
        #[arg(long)]
        json: bool,
    },
    /// Run now, wait for the outcome, and exit 0 when it succeeded
    Run {
        name: String,
        /// Also wait for the heal a failure starts (the auto-fix task and the re-run of its
        /// fix), and exit 0 when the workflow ends green
        #[arg(long)]
        until_healed: bool,
        #[arg(long)]
        json: bool,
    },
    /// Stop running on schedule
    Pause {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// Run on schedule again (missed times are not caught up)
    Resume {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// Delete a workflow with its versions, runs and folder
    Delete {
        name: String,
        /// Do not ask for confirmation
        #[arg(long)]
        yes: bool,
        #[arg(long)]
        json: bool,
    },
    /// List every version, oldest first
    History {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// Show what changed between two versions (default: the one before the active one, and
    /// the active one)
    Diff {
        name: String,
        from: Option<String>,
        to: Option<String>,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args)]
pub struct CreateArgs {
    #[arg(long)]
    title: String,
    /// python3, node, bash, or a command line containing {file} (e.g. "deno run {file}")
    #[arg(long)]
    runtime: String,
    /// The script file, or - for standard input
    #[arg(long)]
    file: PathBuf,
    /// "manual", "every 15m" (s, m, h, d), or a cron expression like "0 7 * * *"
    #[arg(long, default_value = "manual")]
    schedule: String,
    /// Time limit of one attempt, in seconds
    #[arg(long, default_value_t = 300)]
    timeout: u32,
    /// An environment variable for the script, NAME=VALUE (not for secrets); repeatable
    #[arg(long = "env", value_name = "NAME=VALUE")]
    env: Vec<String>,
    /// One line on what the script does
    #[arg(long, default_value = "")]
    summary: String,
    #[arg(long)]
    json: bool,
}

pub async fn run(command: WorkflowCommand, paths: &Paths) -> Result<bool> {
    match command {
        WorkflowCommand::List { json } => {
            let list = open(paths)?.list_workflow_summaries()?;
            if json {
                return print_json(&list);
            }
            if list.is_empty() {
                println!("No workflows yet. Create one with `healer workflow create`.");
            }
            for w in &list {
                let last = w
                    .last_run
                    .as_ref()
                    .map(|r| {
                        format!(
                            "{} {}",
                            r.status.as_str(),
                            r.finished_at.as_deref().unwrap_or("")
                        )
                    })
                    .unwrap_or_else(|| "never run".to_string());
                println!(
                    "{:<24} {:<16} v{:<6} {:<28} last: {}",
                    w.name,
                    w.status.as_str(),
                    w.version.to_string(),
                    w.schedule_text,
                    last
                );
            }
            Ok(true)
        }
        WorkflowCommand::Show { name, json } => {
            let store = open(paths)?;
            let workflow = store.workflow_by_name(&name)?;
            let active = store.active_version(workflow.id)?;
            let runs = store.list_runs(workflow.id, None, 10)?;
            if json {
                #[derive(Serialize)]
                struct Shown<'a> {
                    workflow: &'a healer::workflow::Workflow,
                    active: &'a ScriptVersion,
                    runs: &'a [Run],
                    folder: String,
                }
                return print_json(&Shown {
                    workflow: &workflow,
                    active: &active,
                    runs: &runs,
                    folder: paths.workflow_dir(workflow.id).display().to_string(),
                });
            }
            println!("{} ({})", workflow.title, workflow.name);
            println!("  status:   {}", workflow.status.as_str());
            println!("  runtime:  {}", workflow.runtime.label());
            println!("  schedule: {}", workflow.schedule.describe());
            println!("  version:  {} — {}", active.version, active.change_comment);
            println!("  folder:   {}", paths.workflow_dir(workflow.id).display());
            println!("  recent runs:");
            if runs.is_empty() {
                println!("    none yet");
            }
            for run in &runs {
                println!(
                    "    #{:<6} {:<11} v{}  {}",
                    run.id,
                    run.status.as_str(),
                    run.version,
                    run.summary
                );
            }
            Ok(true)
        }
        WorkflowCommand::Create(args) => {
            let input = WorkflowInput {
                title: args.title,
                runtime: parse_runtime(&args.runtime),
                entry: None,
                schedule: Schedule::from_words(&args.schedule).map_err(Error::InvalidInput)?,
                env: parse_env(&args.env)?,
                timeout_secs: args.timeout,
                retry: None,
                code: read_script(&args.file)?,
                summary: args.summary,
            };
            let request = Request::CreateWorkflow {
                input: Box::new(input),
            };
            match act(paths, request, QUICK_WAIT).await? {
                Response::Workflow { workflow } if args.json => print_json(&workflow),
                Response::Workflow { workflow } => {
                    println!(
                        "Created \"{}\" as {} (version 1.0).",
                        workflow.title, workflow.name
                    );
                    Ok(true)
                }
                _ => unexpected(),
            }
        }
        WorkflowCommand::Save {
            name,
            file,
            comment,
            json,
        } => {
            let request = Request::SaveScript {
                workflow: name,
                code: read_script(&file)?,
                comment,
            };
            match act(paths, request, QUICK_WAIT).await? {
                Response::Version { version } if json => print_json(&version),
                Response::Version { version } => {
                    println!("Saved version {}; it runs from now on.", version.version);
                    Ok(true)
                }
                _ => unexpected(),
            }
        }
        WorkflowCommand::Run {
            name,
            until_healed: true,
            json,
        } => crate::heal_cli::run_until_healed(paths, name, json).await,
        WorkflowCommand::Run { name, json, .. } => {
            let workflow = open(paths)?.workflow_by_name(&name)?;
            // Every attempt may take the whole time limit, plus the pauses between them.
            let retry = &workflow.retry;
            let attempts = u64::from(retry.max_attempts.max(1));
            let wait = Duration::from_secs(u64::from(workflow.timeout_secs) * attempts)
                + Duration::from_millis(u64::from(retry.max_interval_ms) * attempts)
                + Duration::from_secs(60);
            let request = Request::RunWorkflow {
                workflow: name,
                until_healed: false,
            };
            match act(paths, request, wait).await? {
                Response::Run { detail } => {
                    let ok = detail.run.status == RunStatus::Succeeded;
                    if json {
                        print_json(&detail)?;
                    } else {
                        print_run(&workflow.title, &detail);
                    }
                    Ok(ok)
                }
                _ => unexpected(),
            }
        }
        WorkflowCommand::Pause { name, json } => set_paused(paths, name, true, json).await,
        WorkflowCommand::Resume { name, json } => set_paused(paths, name, false, json).await,
        WorkflowCommand::Delete { name, yes, json } => {
            let store = open(paths)?;
            let workflow = store.workflow_by_name(&name)?;
            if !yes {
                confirm(&format!(
                    "Delete \"{}\" with all its versions, runs and its folder? [y/N] ",
                    workflow.title
                ))?;
            }
            act(
                paths,
                Request::DeleteWorkflow {
                    workflow: workflow.id.to_string(),
                },
                QUICK_WAIT,
            )
            .await?;
            if json {
                return print_json(&serde_json::json!({ "deleted": workflow.name }));
            }
            println!("Deleted \"{}\".", workflow.title);
            Ok(true)
        }
        WorkflowCommand::History { name, json } => {
            let store = open(paths)?;
            let workflow = store.workflow_by_name(&name)?;
            let versions = store.versions(workflow.id)?;
            if json {
                return print_json(&versions);
            }
            for v in &versions {
                let mark = if v.active { "*" } else { " " };
                println!(
                    "{mark} {:<6} {}  {:<12} {}",
                    v.version.to_string(),
                    v.created_at,
                    author(&v.author),
                    v.change_comment
                );
            }
            Ok(true)
        }
        WorkflowCommand::Diff {
            name,
            from,
            to,
            json,
        } => {
            let store = open(paths)?;
            let workflow = store.workflow_by_name(&name)?;
            let versions = store.versions(workflow.id)?;
            let pick = |label: Option<String>,
                        fallback: Option<&ScriptVersion>|
             -> Result<ScriptVersion> {
                match label {
                    Some(label) => {
                        let v = Version::parse(&label).ok_or_else(|| {
                            Error::InvalidInput(format!("{label:?} is not a version like 1.2"))
                        })?;
                        store.version(workflow.id, v)
                    }
                    None => fallback.cloned().ok_or_else(|| {
                        Error::InvalidInput(
                            "there is only one version: nothing to compare".to_string(),
                        )
                    }),
                }
            };
            let active_at = versions.iter().position(|v| v.active).unwrap_or(0);
            let to = pick(to, versions.get(active_at))?;
            let before = versions.iter().rev().find(|v| v.version < to.version);
            let from = pick(from, before)?;
            let diff = unified_diff(&from, &to, &workflow.entry);
            if json {
                return print_json(&serde_json::json!({
                    "from": from.version.to_string(),
                    "to": to.version.to_string(),
                    "diff": diff,
                }));
            }
            print!("{diff}");
            Ok(true)
        }
    }
}

async fn set_paused(paths: &Paths, name: String, paused: bool, json: bool) -> Result<bool> {
    let request = Request::SetPaused {
        workflow: name,
        paused,
    };
    match act(paths, request, QUICK_WAIT).await? {
        Response::Workflow { workflow } if json => print_json(&workflow),
        Response::Workflow { workflow } => {
            let state = if paused {
                "paused: it will not run on its schedule until resumed"
            } else {
                "resumed: it runs on its schedule again"
            };
            println!("\"{}\" {state}.", workflow.title);
            Ok(true)
        }
        _ => unexpected(),
    }
}

fn unified_diff(from: &ScriptVersion, to: &ScriptVersion, entry: &str) -> String {
    similar::TextDiff::from_lines(&from.code, &to.code)
        .unified_diff()
        .context_radius(3)
        .header(
            &format!("{entry} {}", from.version),
            &format!("{entry} {}", to.version),
        )
        .to_string()
}

pub(crate) fn print_run(title: &str, detail: &RunDetail) {
    let run = &detail.run;
    println!(
        "Run {} of \"{title}\" (version {}): {}",
        run.id, run.version, run.summary
    );
    for attempt in &detail.attempts {
        let how = match (attempt.exit_code, attempt.signal, attempt.timed_out) {
            (_, _, true) => "timed out".to_string(),
            (_, Some(signal), _) => format!("killed by signal {signal}"),
            (Some(code), _, _) => format!("exit {code}"),
            _ => "did not start".to_string(),
        };
        let class = attempt
            .class
            .map(|c| format!(" [{}]", c.as_str()))
            .unwrap_or_default();
        println!("  attempt {}: {how}{class}", attempt.number);
        if let Some(e) = &attempt.evidence {
            match &e.error_type {
                Some(t) => println!("    {t}: {}", e.message),
                None => println!("    {}", e.message),
            }
        }
        if let Some(note) = &attempt.note {
            println!("    {note}");
        }
    }
    if run.status != RunStatus::Succeeded {
        if let Some(last) = detail.attempts.last() {
            let tail: Vec<&str> = last.stderr.lines().rev().take(15).collect();
            if !tail.is_empty() {
                println!("  last lines of stderr:");
                for line in tail.iter().rev() {
                    println!("    {line}");
                }
            }
        }
    }
}

fn author(author: &healer::workflow::Author) -> String {
    match author {
        healer::workflow::Author::Person => "you".to_string(),
        healer::workflow::Author::Planner => "planner".to_string(),
        healer::workflow::Author::Healer => "Healer (rollback)".to_string(),
        healer::workflow::Author::Task { task_id } => format!("task {task_id}"),
    }
}

fn parse_runtime(text: &str) -> Runtime {
    match text.trim() {
        "python3" | "python" => Runtime::Python3,
        "node" | "nodejs" => Runtime::Node,
        "bash" | "sh" => Runtime::Bash,
        other => Runtime::Custom {
            command: other.to_string(),
        },
    }
}

fn parse_env(pairs: &[String]) -> Result<Vec<EnvVar>> {
    pairs
        .iter()
        .map(|pair| {
            let (name, value) = pair.split_once('=').ok_or_else(|| {
                Error::InvalidInput(format!("--env {pair:?}: write it as NAME=VALUE"))
            })?;
            Ok(EnvVar {
                name: name.to_string(),
                value: value.to_string(),
            })
        })
        .collect()
}

fn read_script(path: &PathBuf) -> Result<String> {
    if path.as_os_str() == "-" {
        let mut code = String::new();
        std::io::stdin()
            .read_to_string(&mut code)
            .map_err(|e| Error::io("cannot read the script from standard input", e))?;
        return Ok(code);
    }
    std::fs::read_to_string(path)
        .map_err(|e| Error::io(format!("cannot read the script {}", path.display()), e))
}

/// Ask a yes/no question on the terminal; without a terminal, refuse (use --yes).
fn confirm(question: &str) -> Result<()> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return Err(Error::InvalidInput(
            "not deleting without confirmation: add --yes to delete from a script".to_string(),
        ));
    }
    print!("{question}");
    let _ = std::io::stdout().flush();
    let mut answer = String::new();
    stdin
        .lock()
        .read_line(&mut answer)
        .map_err(|e| Error::io("cannot read the answer", e))?;
    if matches!(answer.trim(), "y" | "Y" | "yes") {
        Ok(())
    } else {
        Err(Error::InvalidInput("not deleted".to_string()))
    }
}

pub(crate) async fn act(paths: &Paths, request: Request, wait: Duration) -> Result<Response> {
    client::act(paths, "healer CLI", request, wait).await
}

/// The store, for commands that only read (or only change settings).
pub(crate) fn open(paths: &Paths) -> Result<Store> {
    paths.ensure()?;
    Store::open(&paths.db())
}

/// Print as pretty JSON; `Ok(true)` so a command can end with it.
pub(crate) fn print_json<T: Serialize>(value: &T) -> Result<bool> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| Error::Internal(format!("cannot print JSON: {e}")))?;
    println!("{text}");
    Ok(true)
}

pub(crate) fn unexpected() -> Result<bool> {
    Err(Error::Internal(
        "the engine answered another question".to_string(),
    ))
}
