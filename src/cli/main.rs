//! `healer`: the command line over the same engine as the desktop app.
//! Exit codes: 0 ok, 1 failure, 2 usage error.

//!
//! This file only parses and dispatches: each command family has its file beside it.

// Every line the CLI prints passes through `print::line`: a script's output, a model's words or
// an old title may hold terminal escape sequences or control characters, which are shown
// harmlessly instead of acting on the terminal (the store keeps the raw bytes). Defined before
// the modules so that their `println!` and `eprintln!` are these.
macro_rules! println {
    () => {
        $crate::print::line("")
    };
    ($($arg:tt)*) => {
        $crate::print::line(&format!($($arg)*))
    };
}

macro_rules! eprintln {
    ($($arg:tt)*) => {
        $crate::print::error_line(&format!($($arg)*))
    };
}

mod checkpoint;
mod cluster;
mod daemon;
mod errors;
mod finishing;
mod heal;
mod hook;
mod input;
mod packages;
mod patterns;
mod print;
mod project;
mod provider;
mod reach;
mod secret;
mod session;
mod spells;
mod status;
mod thread;
mod tier;
mod versions;
mod workflow;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use healer::{Error, Paths, Result};

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
        command: workflow::WorkflowCommand,
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
        command: provider::ProviderCommand,
    },
    /// A workflow's secrets (kept in the OS keyring or Healer's secrets file, never the
    /// database), and where secrets are kept on this computer
    Secret {
        #[command(subcommand)]
        command: secret::SecretCommand,
    },
    /// Map the cheap, standard and deep tiers to a provider and model
    Tier {
        #[command(subcommand)]
        command: tier::TierCommand,
    },
    /// Today's model usage and cost, per tier, against the caps
    Usage {
        #[arg(long)]
        json: bool,
    },
    /// Decisions Healer is waiting for: list them, or decide one
    Checkpoint {
        #[command(subcommand)]
        command: checkpoint::CheckpointCommand,
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
    /// Model threads (auto-fix, the planner's chat, the built-in agent): list, show, export
    /// as ATIF
    Thread {
        #[command(subcommand)]
        command: thread::ThreadCommand,
    },
    /// The old name of `thread`, kept so scripts go on working
    #[command(hide = true)]
    Task {
        #[command(subcommand)]
        command: thread::ThreadCommand,
    },
    /// Projects: git repositories whose tasks coding agents work on
    Project {
        #[command(subcommand)]
        command: project::ProjectCommand,
    },
    /// An agent's session on a project's task: show it, export it as ATIF, stop it; check a transcript for loops
    Session {
        #[command(subcommand)]
        command: session::SessionCommand,
    },
    /// Look for project tasks that are stuck: in progress too long, or failing the same way
    /// across sessions
    Scan {
        #[arg(long)]
        json: bool,
    },
    /// What the healer service did on project failures: each invocation, its outcome and
    /// the repairs it tried
    Heals {
        /// Only this project's
        #[arg(long)]
        project: Option<String>,
        #[arg(long, default_value_t = 50)]
        limit: u32,
        #[arg(long)]
        json: bool,
    },
    /// Snapshots of task worktrees Healer pinned before rewinding them: list, restore
    Snapshot {
        #[command(subcommand)]
        command: spells::SnapshotCommand,
    },
    /// What the hooks Healer installs in an agent's session call (not for people to run)
    #[command(hide = true)]
    Hook {
        #[command(subcommand)]
        command: hook::HookCommand,
    },
    /// The healing memory: error signatures and the fixes tried for each
    Patterns {
        #[command(subcommand)]
        command: patterns::PatternsCommand,
    },
    /// Run on more computers: connect this Healer to a Temporal cluster, see its workers,
    /// disconnect, write the cluster key for workers
    Cluster {
        #[command(subcommand)]
        command: cluster::ClusterCommand,
    },
    /// Run attempts of cluster workflows on this machine (needs the cluster key, no data folder)
    Worker(cluster::WorkerArgs),
    /// Read a failure's raw output and show what Healer makes of it: class, error type,
    /// signature and normalised text
    Errors {
        #[command(subcommand)]
        command: errors::ErrorsCommand,
    },
}

fn main() -> ExitCode {
    // First, while this is the only thread: provider keys out of the environment, the initial
    // environment block wiped, the process undumpable (see `healer::secrets`).
    let _sealed = healer::secrets::seal_process();
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
    if error.code() == healer::ErrorCode::NoModelConfigured {
        eprintln!("healer: {NO_MODEL_HINT}");
    }
    ExitCode::from(1)
}

/// The engine's sentence about a missing model is the window's (Settings → Models); on a
/// terminal the same is done with these commands.
pub(crate) const NO_MODEL_HINT: &str = "on a terminal: healer provider add, then healer tier set";

/// Ok(false): the command worked, and what it reports is a failure (exit 1).
async fn run(command: Command, paths: Paths) -> Result<bool> {
    match command {
        Command::Daemon => daemon::run(paths).await.map(|()| true),
        Command::Status { json } => status::status(&paths, json).map(|()| true),
        Command::Events { json, limit } => status::events(&paths, json, limit),
        Command::Notifications { json } => heal::notifications(&paths, json),
        Command::Check { json } => heal::check(&paths, json).await,
        Command::Workflow { command } => workflow::run(command, &paths).await,
        Command::Examples { json } => workflow::examples(&paths, json).await,
        Command::Provider { command } => provider::run(command, &paths).await,
        Command::Secret { command } => secret::run(command, &paths).await,
        Command::Tier { command } => tier::run(command, &paths),
        Command::Usage { json } => tier::usage(&paths, json),
        Command::Checkpoint { command } => checkpoint::run(command, &paths).await,
        Command::Replan {
            name,
            message,
            json,
        } => heal::replan(&paths, name, message, json).await,
        Command::Thread { command } => thread::run(command, &paths),
        Command::Task { command } => {
            eprintln!("healer: `healer task` is now `healer thread` (a project's tasks are `healer project tasks`)");
            thread::run(command, &paths)
        }
        Command::Project { command } => project::run(command, &paths).await,
        Command::Session { command } => session::run(command, &paths).await,
        Command::Scan { json } => spells::scan(&paths, json),
        Command::Heals {
            project,
            limit,
            json,
        } => spells::heals(&paths, project, limit, json),
        Command::Snapshot { command } => spells::snapshot(command, &paths).await,
        Command::Hook { command } => hook::run(command, &paths).await,
        Command::Patterns { command } => patterns::run(command, &paths),
        Command::Errors { command } => errors::run(command),
        Command::Cluster { command } => cluster::run(command, &paths).await,
        Command::Worker(args) => cluster::worker(args).await,
    }
}
