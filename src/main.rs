//! `healer`: the command line over the same engine as the desktop app.
//! Exit codes: 0 ok, 1 failure, 2 usage error.

mod checkpoint_cli;
mod cli;
mod errors_cli;
mod heal_cli;
mod llm_cli;
mod patterns_cli;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use healer::client::{self, Request, Response};
use healer::{lease::Lease, logging, Engine, Error, Paths, Result};
use serde::Serialize;

/// How long an acting command waits for a running engine to answer.
const ANSWER_WAIT: Duration = Duration::from_secs(30);

#[derive(Parser)]
#[command(
    name = "healer",
    version,
    about = "Keeps your automations and coding agents healthy.",
    long_about = "Keeps your automations and coding agents healthy.\n\nThe same engine as the \
                  desktop app. Commands that only read use the data folder directly; commands \
                  that act ask the running engine (the desktop app or `healer daemon`), or run \
                  one for the length of the command when none runs."
)]
struct Cli {
    /// The data folder (default: the platform's data folder, e.g. ~/.local/share/healer)
    #[arg(long, global = true, env = "HEALER_DATA_DIR", value_name = "DIR")]
    data_dir: Option<PathBuf>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the engine without a window until Ctrl-C or SIGTERM
    Daemon,
    /// Show where Healer keeps its data and whether an engine is running
    Status {
        #[arg(long)]
        json: bool,
    },
    /// Print recorded events, newest first
    Events {
        #[arg(long)]
        json: bool,
        /// How many events to print
        #[arg(long, default_value_t = 50)]
        limit: u32,
    },
    /// Print notifications, newest first
    Notifications {
        #[arg(long)]
        json: bool,
    },
    /// Send a test alert through the failure pipeline, to check that healing and
    /// notifications work
    Check {
        #[arg(long)]
        json: bool,
    },
    /// Create, run, edit and inspect workflows
    Workflow {
        #[command(subcommand)]
        command: cli::WorkflowCommand,
    },
    /// Load the example workflows (one healthy, one transient, one logic error, one missing module)
    Examples {
        #[arg(long)]
        json: bool,
    },
    /// Model providers: add, list, test, remove (keys come from the keyring or an environment
    /// variable, never from an argument)
    Provider {
        #[command(subcommand)]
        command: llm_cli::ProviderCommand,
    },
    /// Map the cheap, standard and deep tiers to a provider and model
    Tier {
        #[command(subcommand)]
        command: llm_cli::TierCommand,
    },
    /// Today's model usage and cost, per tier, against the caps
    Usage {
        #[arg(long)]
        json: bool,
    },
    /// Decisions Healer is waiting for: list them, or decide one
    Checkpoint {
        #[command(subcommand)]
        command: checkpoint_cli::CheckpointCommand,
    },
    /// Ask the workflow's planner to change it (one turn of its chat; what Re-plan opens)
    Replan {
        /// The workflow's name
        name: String,
        /// Your message to the planner
        message: String,
        #[arg(long)]
        json: bool,
    },
    /// Tasks that talk to a model: list, show a thread, export it as ATIF
    Task {
        #[command(subcommand)]
        command: llm_cli::TaskCommand,
    },
    /// The healing memory: error signatures and the fixes tried for each
    Patterns {
        #[command(subcommand)]
        command: patterns_cli::PatternsCommand,
    },
    /// Read a failure's raw output and show what Healer makes of it: class, error type,
    /// signature and normalised text
    Errors {
        #[command(subcommand)]
        command: errors_cli::ErrorsCommand,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let paths = match &cli.data_dir {
        Some(dir) => Paths::new(dir),
        None => match Paths::from_env() {
            Ok(paths) => paths,
            Err(e) => return fail(&e),
        },
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return fail(&Error::io("cannot start the async runtime", e)),
    };
    match runtime.block_on(run(cli.command, paths)) {
        Ok(true) => ExitCode::SUCCESS,
        // The command worked and its answer is "no" (a run that failed).
        Ok(false) => ExitCode::from(1),
        Err(e) => fail(&e),
    }
}

fn fail(error: &Error) -> ExitCode {
    eprintln!("healer: {error}");
    ExitCode::from(1)
}

/// Ok(false): the command worked, and what it reports is a failure (exit 1).
async fn run(command: Command, paths: Paths) -> Result<bool> {
    match command {
        Command::Workflow { command } => cli::run(command, &paths).await,
        Command::Provider { command } => llm_cli::provider(command, &paths).await,
        Command::Tier { command } => llm_cli::tier(command, &paths),
        Command::Usage { json } => llm_cli::usage(&paths, json),
        Command::Task { command } => llm_cli::task(command, &paths),
        Command::Errors { command } => errors_cli::run(command),
        Command::Patterns { command } => patterns_cli::run(command, &paths),
        Command::Checkpoint { command } => checkpoint_cli::run(command, &paths).await,
        Command::Replan {
            name,
            message,
            json,
        } => heal_cli::replan(&paths, name, message, json).await,
        Command::Examples { json } => {
            let response = client::act(
                &paths,
                "healer examples",
                Request::LoadExamples,
                ANSWER_WAIT,
            )
            .await?;
            let Response::Workflows { workflows } = response else {
                return Err(Error::Internal(
                    "the engine answered another question".to_string(),
                ));
            };
            if json {
                cli::print_json(&workflows)?;
            } else {
                for w in &workflows {
                    println!("Loaded \"{}\" ({})", w.title, w.name);
                }
            }
            Ok(true)
        }
        Command::Daemon => daemon(paths).await.map(|()| true),
        Command::Status { json } => status(&paths, json).map(|()| true),
        Command::Events { json, limit } => {
            let store = cli::open(&paths)?;
            let events = store.list_events(None, limit)?;
            if json {
                cli::print_json(&events)
            } else {
                if events.is_empty() {
                    println!("No events yet.");
                }
                for record in &events {
                    println!(
                        "#{:<6} {}  {}",
                        record.id,
                        record.at,
                        record.event.describe()
                    );
                }
                Ok(true)
            }
        }
        Command::Notifications { json } => heal_cli::notifications(&paths, json),
        Command::Check { json } => {
            let response =
                client::act(&paths, "healer check", Request::SendTestAlert, ANSWER_WAIT).await?;
            let Response::TestAlert { heal } = response else {
                return Err(Error::Internal(
                    "the engine answered another question".to_string(),
                ));
            };
            if json {
                cli::print_json(&heal)
            } else {
                let outcome = heal.outcome.map(|o| o.as_str()).unwrap_or("running");
                println!("Test alert: heal {} {outcome}: {}", heal.id, heal.summary);
                Ok(true)
            }
        }
    }
}

async fn daemon(paths: Paths) -> Result<()> {
    paths.ensure()?;
    let _log = logging::init("info", Some(&paths.log_dir()));
    let engine = Engine::start(paths.clone(), "healer daemon").await?;
    eprintln!(
        "Healer engine running for {} (pid {}). Press Ctrl-C to stop.",
        paths.data_dir().display(),
        std::process::id()
    );
    wait_for_stop_signal().await?;
    eprintln!("Stopping…");
    engine.shutdown().await;
    Ok(())
}

#[cfg(unix)]
async fn wait_for_stop_signal() -> Result<()> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term =
        signal(SignalKind::terminate()).map_err(|e| Error::io("cannot listen for SIGTERM", e))?;
    tokio::select! {
        r = tokio::signal::ctrl_c() => r.map_err(|e| Error::io("cannot listen for Ctrl-C", e)),
        _ = term.recv() => Ok(()),
    }
}

#[cfg(not(unix))]
async fn wait_for_stop_signal() -> Result<()> {
    tokio::signal::ctrl_c()
        .await
        .map_err(|e| Error::io("cannot listen for Ctrl-C", e))
}

#[derive(Serialize)]
struct Status {
    data_dir: String,
    database: String,
    schema_version: i64,
    engine_running: bool,
    engine: Option<String>,
}

fn status(paths: &Paths, json: bool) -> Result<()> {
    let store = cli::open(paths)?;
    let running = Lease::is_held(paths)?;
    let status = Status {
        data_dir: paths.data_dir().display().to_string(),
        database: paths.db().display().to_string(),
        schema_version: store.schema_version()?,
        engine_running: running,
        engine: running.then(|| Lease::holder(paths)),
    };
    if json {
        return cli::print_json(&status).map(|_| ());
    }
    println!("Data folder:  {}", status.data_dir);
    println!(
        "Database:     {} (schema {})",
        status.database, status.schema_version
    );
    match &status.engine {
        Some(holder) => println!("Engine:       running ({holder})"),
        None => println!("Engine:       not running (start the desktop app or `healer daemon`)"),
    }
    Ok(())
}
