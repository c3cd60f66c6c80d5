//! `healer workflow …`: create, run, edit and remove workflows. Reading commands open the
//! store; acting ones ask the engine (see `reach.rs`).

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};
use healer::client::{self, Request, Response};
use healer::cluster::{self, RunsOn};
use healer::workflow::{Run, RunStatus, Schedule, ScriptVersion, WorkflowInput};
use healer::{Error, Paths, Result};
use serde::Serialize;

use crate::input::{confirm, parse_env, parse_runtime, read_script};
use crate::print::{print_json, print_run};
use crate::reach::{act, open, unexpected, ANSWER_WAIT};
use crate::versions;

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
        #[command(flatten)]
        packages: PackageArgs,
        #[arg(long)]
        json: bool,
    },
    /// Show the packages a Python or Node workflow declares, what is installed (the lock) and
    /// the last installation's log
    Deps {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// Install the packages of the active version again, into a fresh environment
    Reinstall {
        name: String,
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
    /// Try auto-fix again after a repair gave up: a new repair of the last failure
    RetryFix {
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
    /// Choose where it runs: this computer (local) or the connected cluster
    RunsOn {
        name: String,
        /// local or cluster
        place: String,
        /// The cluster's task queue (default: the connection's)
        #[arg(long)]
        queue: Option<String>,
    },
    /// Stop its run in progress on the cluster
    Stop { name: String },
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
    #[command(flatten)]
    packages: PackageArgs,
    /// Where it runs: local (this computer) or cluster (the connected Temporal cluster)
    #[arg(long, default_value = "local")]
    runs_on: String,
    #[arg(long)]
    json: bool,
}

/// The packages a Python or Node script's version declares.
#[derive(Args)]
pub struct PackageArgs {
    /// A package the version declares (pip: "PyYAML" or "PyYAML==6.0.2"; npm: "left-pad" or
    /// "left-pad@1.3.0"); repeatable
    #[arg(long = "package", value_name = "NAME")]
    named: Vec<String>,
    /// Also declare the packages Healer offers for the script's imports, without asking
    #[arg(long)]
    accept_packages: bool,
}

pub async fn run(command: WorkflowCommand, paths: &Paths) -> Result<bool> {
    match command {
        WorkflowCommand::List { json } => list(paths, json),
        WorkflowCommand::Show { name, json } => show(paths, &name, json),
        WorkflowCommand::Create(args) => create(paths, args).await,
        WorkflowCommand::Save {
            name,
            file,
            comment,
            packages,
            json,
        } => save(paths, name, &file, comment, packages, json).await,
        WorkflowCommand::Deps { name, json } => crate::packages::show(paths, &name, json),
        WorkflowCommand::Reinstall { name, json } => {
            crate::packages::reinstall(paths, name, json).await
        }
        WorkflowCommand::Run {
            name,
            until_healed: true,
            json,
        } => crate::heal::run_until_healed(paths, name, json).await,
        WorkflowCommand::Run { name, json, .. } => run_once(paths, name, json).await,
        WorkflowCommand::Pause { name, json } => set_paused(paths, name, true, json).await,
        WorkflowCommand::Resume { name, json } => set_paused(paths, name, false, json).await,
        WorkflowCommand::RetryFix { name, json } => retry_fix(paths, name, json).await,
        WorkflowCommand::Delete { name, yes, json } => delete(paths, &name, yes, json).await,
        WorkflowCommand::RunsOn { name, place, queue } => runs_on(paths, &name, &place, queue),
        WorkflowCommand::Stop { name } => stop(paths, &name).await,
        WorkflowCommand::History { name, json } => versions::history(paths, &name, json),
        WorkflowCommand::Diff {
            name,
            from,
            to,
            json,
        } => versions::diff(paths, &name, from, to, json),
    }
}

fn list(paths: &Paths, json: bool) -> Result<bool> {
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

fn show(paths: &Paths, name: &str, json: bool) -> Result<bool> {
    let store = open(paths)?;
    let workflow = store.workflow_by_name(name)?;
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
            run.number,
            run.status.as_str(),
            run.version,
            run.summary
        );
        if let Some(hint) = &run.hint {
            println!("            ran with Healer's hint: {hint}");
        }
    }
    Ok(true)
}

/// `local` or `cluster` as a person writes it.
pub(crate) fn parse_place(place: &str, queue: Option<String>) -> Result<RunsOn> {
    match place.trim().to_ascii_lowercase().as_str() {
        "local" | "this-computer" => Ok(RunsOn::Local),
        "cluster" => Ok(RunsOn::Cluster {
            queue: queue.unwrap_or_default(),
        }),
        other => Err(Error::InvalidInput(format!(
            "“{other}” is not a place a workflow runs: say local or cluster"
        ))),
    }
}

fn runs_on(paths: &Paths, name: &str, place: &str, queue: Option<String>) -> Result<bool> {
    let store = open(paths)?;
    let workflow = store.workflow_by_name(name)?;
    match cluster::set_runs_on(&store, workflow.id, parse_place(place, queue)?)? {
        RunsOn::Local => println!("\"{}\" runs on this computer.", workflow.title),
        RunsOn::Cluster { queue } => println!(
            "\"{}\" runs on the cluster (queue {queue}).",
            workflow.title
        ),
    }
    Ok(true)
}

async fn stop(paths: &Paths, name: &str) -> Result<bool> {
    let store = open(paths)?;
    let workflow = store.workflow_by_name(name)?;
    let run = store
        .open_cluster_runs()?
        .into_iter()
        .find(|(_, w, ..)| *w == workflow.id)
        .ok_or_else(|| {
            Error::InvalidInput(format!(
                "\"{}\" has no run in progress on the cluster",
                workflow.title
            ))
        })?;
    let keep = healer::secrets::Keep::new(paths.data_dir());
    cluster::stop_cluster_run(&store, &keep, &paths.instance_mark(), run.0).await?;
    println!("Stopping the run of \"{}\" on the cluster.", workflow.title);
    Ok(true)
}

async fn create(paths: &Paths, args: CreateArgs) -> Result<bool> {
    let place = parse_place(&args.runs_on, None)?;
    if place != RunsOn::Local {
        // Refused before anything is saved.
        cluster::refuse_without_connection(&open(paths)?, &args.title)?;
    }
    let code = read_script(&args.file)?;
    let runtime = parse_runtime(&args.runtime);
    let requirements = crate::packages::offered(
        paths,
        &runtime,
        &code,
        None,
        &args.packages.named,
        args.packages.accept_packages,
        args.file.as_os_str() != "-",
    )
    .await?;
    let input = WorkflowInput {
        title: args.title,
        runtime,
        entry: None,
        schedule: Schedule::from_words(&args.schedule).map_err(Error::InvalidInput)?,
        env: parse_env(&args.env)?,
        timeout_secs: args.timeout,
        retry: None,
        code,
        summary: args.summary,
    };
    let request = Request::CreateWorkflow {
        input: Box::new(input),
        requirements,
    };
    let workflow = match act(paths, request, QUICK_WAIT).await? {
        Response::Workflow { workflow } => workflow,
        _ => return unexpected(),
    };
    let placed = cluster::set_runs_on(&open(paths)?, workflow.id, place)?;
    if args.json {
        return print_json(&workflow);
    }
    let place = match placed {
        RunsOn::Local => String::new(),
        RunsOn::Cluster { queue } => format!(", running on the cluster (queue {queue})"),
    };
    println!(
        "Created \"{}\" as {} (version 1.0){place}.",
        workflow.title, workflow.name
    );
    Ok(true)
}

async fn save(
    paths: &Paths,
    name: String,
    file: &PathBuf,
    comment: String,
    packages: PackageArgs,
    json: bool,
) -> Result<bool> {
    let code = read_script(file)?;
    let store = open(paths)?;
    let workflow = store.workflow_by_name(&name)?;
    let added = crate::packages::offered(
        paths,
        &workflow.runtime,
        &code,
        Some(workflow.id),
        &packages.named,
        packages.accept_packages,
        file.as_os_str() != "-",
    )
    .await?;
    // The new version keeps the packages of the one that runs, plus the ones added now.
    let requirements = (!added.is_empty()).then(|| {
        let mut all = store
            .active_version(workflow.id)
            .map(|v| v.requirements)
            .unwrap_or_default();
        all.extend(added);
        all
    });
    let request = Request::SaveScript {
        workflow: name,
        code,
        comment,
        requirements,
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

async fn run_once(paths: &Paths, name: String, json: bool) -> Result<bool> {
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

async fn delete(paths: &Paths, name: &str, yes: bool, json: bool) -> Result<bool> {
    let store = open(paths)?;
    let workflow = store.workflow_by_name(name)?;
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

async fn retry_fix(paths: &Paths, name: String, json: bool) -> Result<bool> {
    let request = Request::RetryAutofix { workflow: name };
    match act(paths, request, QUICK_WAIT).await? {
        Response::Heal { heal } if json => print_json(&heal),
        Response::Heal { heal } => {
            println!("Trying auto-fix again: {}", heal.summary);
            Ok(true)
        }
        _ => unexpected(),
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

/// `healer examples`: the four example workflows.
pub async fn examples(paths: &Paths, json: bool) -> Result<bool> {
    let response =
        client::act(paths, "healer examples", Request::LoadExamples, ANSWER_WAIT).await?;
    let Response::Workflows { workflows } = response else {
        return unexpected();
    };
    if json {
        return print_json(&workflows);
    }
    for w in &workflows {
        println!("Loaded \"{}\" ({})", w.title, w.name);
    }
    Ok(true)
}
