//! `healer cluster …` (connect this Healer to a Temporal cluster, see its workers, leave it,
//! hand the cluster key to workers) and `healer worker` (run attempts of cluster workflows on
//! this machine).

use std::path::PathBuf;

use clap::{Args, Subcommand};
use healer::cluster::{
    self, ClusterSettings, ClusterStatus, WorkerSetup, DEFAULT_DRAIN, DEFAULT_NAMESPACE,
    DEFAULT_QUEUE,
};
use healer::secrets::Keep;
use healer::{Paths, Result};

use crate::print::print_json;
use crate::reach::open;

#[derive(Subcommand)]
pub enum ClusterCommand {
    /// Connect to a Temporal cluster (saved only when it answers)
    Connect {
        /// host:port of its frontend, like 127.0.0.1:7233
        address: String,
        #[command(flatten)]
        place: Place,
    },
    /// Whether the cluster answers, and the workers polling each queue in use
    Status {
        #[arg(long)]
        json: bool,
    },
    /// Bring every workflow back to this computer and forget the cluster
    Disconnect,
    /// Let workers reach this computer's model gateway for agent sessions, on host:port
    /// (such as 0.0.0.0:7480); each worker also needs a token of its own (worker-token)
    Gateway {
        /// The address to listen on
        #[arg(long)]
        listen: String,
    },
    /// Make a token for a worker to reach the model gateway (printed once, or written to
    /// --out, readable by its owner only); it replaces that worker's earlier token
    WorkerToken {
        /// The worker's name
        name: String,
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Write the cluster key for workers to a file (readable by its owner only)
    Key {
        /// Where to write it
        #[arg(long)]
        out: PathBuf,
    },
}

#[derive(Args, Clone)]
pub struct Place {
    #[arg(long, default_value = DEFAULT_NAMESPACE)]
    namespace: String,
    /// The task queue runs go to
    #[arg(long, default_value = DEFAULT_QUEUE)]
    queue: String,
    /// Connect with TLS (Temporal Cloud)
    #[arg(long)]
    tls: bool,
    /// The environment variable holding an API key (Temporal Cloud); implies nothing else
    #[arg(long, value_name = "VAR")]
    api_key_env: Option<String>,
}

impl Place {
    fn settings(self, address: String) -> ClusterSettings {
        ClusterSettings {
            address,
            namespace: self.namespace,
            queue: self.queue,
            tls: self.tls,
            api_key_env: self.api_key_env,
        }
    }
}

/// `healer worker`'s options.
#[derive(Args)]
pub struct WorkerArgs {
    /// host:port of the cluster's frontend
    #[arg(long = "temporal", value_name = "ADDRESS")]
    address: String,
    #[command(flatten)]
    place: Place,
    /// The name shown in the control room and on every attempt it runs (default: host name)
    #[arg(long)]
    name: Option<String>,
    /// Attempts at once
    #[arg(long, default_value_t = 4)]
    concurrency: usize,
    /// The cluster key file (default: the HEALER_CLUSTER_KEY variable)
    #[arg(long)]
    key_file: Option<PathBuf>,
    /// Where environments and scratch folders go (default: the user's cache folder)
    #[arg(long)]
    cache: Option<PathBuf>,
    /// After SIGTERM, seconds running attempts may take before they are handed back
    #[arg(long, default_value_t = DEFAULT_DRAIN.as_secs())]
    drain: u64,
    /// The control room's model gateway for agent sessions (http://host:port); the worker's
    /// token is read from HEALER_GATEWAY_TOKEN
    #[arg(long, value_name = "URL")]
    gateway: Option<String>,
}

pub async fn run(command: ClusterCommand, paths: &Paths) -> Result<bool> {
    let keep = Keep::new(paths.data_dir());
    let instance = paths.instance_mark();
    match command {
        ClusterCommand::Connect { address, place } => {
            let store = open(paths)?;
            let status =
                cluster::connect_cluster(&store, &keep, &instance, place.settings(address)).await?;
            if let Some(settings) = &status.settings {
                println!(
                    "Connected to the cluster at {} (namespace {}, queue {}).",
                    settings.address, settings.namespace, settings.queue
                );
            }
            print_workers(&status);
            Ok(true)
        }
        ClusterCommand::Status { json } => {
            let store = open(paths)?;
            let status = cluster::cluster_status(&store, &keep, &instance).await?;
            if json {
                return print_json(&status);
            }
            match (&status.settings, &status.problem) {
                (None, _) => println!("Not connected: every workflow runs on this computer."),
                (Some(s), Some(problem)) => {
                    println!(
                        "Connected to {} but it does not answer: {problem}",
                        s.address
                    );
                }
                (Some(s), None) => println!(
                    "Connected to {} (namespace {}); {} workflow(s) run there.",
                    s.address, s.namespace, status.workflows_on_cluster
                ),
            }
            print_workers(&status);
            Ok(status.settings.is_none() || status.reachable)
        }
        ClusterCommand::Disconnect => {
            let store = open(paths)?;
            let back = cluster::disconnect_cluster(&store, &keep, &instance).await?;
            println!("Disconnected: every workflow runs on this computer.");
            for title in back {
                println!("  \"{title}\" is back on this computer");
            }
            Ok(true)
        }
        ClusterCommand::Gateway { listen } => {
            let store = open(paths)?;
            let gateway = cluster::gateway_access::open_to_workers(&store, &listen)?;
            println!(
                "Workers reach the model gateway on {} (from the next session on the cluster; \
                 restart a running Healer to move it). Give each worker a token: healer cluster worker-token NAME",
                gateway.listen.unwrap_or_default()
            );
            Ok(true)
        }
        ClusterCommand::WorkerToken { name, out } => {
            let store = open(paths)?;
            let token = cluster::gateway_access::make_worker_token(&store, &name)?;
            match out {
                Some(file) => {
                    healer::secrets::write_private(&file, token.as_bytes()).map_err(|e| {
                        healer::Error::io(format!("cannot write {}", file.display()), e)
                    })?;
                    println!(
                        "Wrote the token of the worker “{}” to {}. Start it with {}=<the token> and --gateway http://<this computer>:<port>.",
                        name.trim(),
                        file.display(),
                        cluster::gateway_access::GATEWAY_TOKEN_ENV
                    );
                }
                None => println!("{token}"),
            }
            Ok(true)
        }
        ClusterCommand::Key { out } => {
            let key = healer::cluster::connection::control_key(&keep, &instance)?;
            healer::cluster::connection::write_key_file(&out, &key)?;
            println!(
                "Wrote the cluster key to {}. Start each worker with --key-file pointing at a copy.",
                out.display()
            );
            Ok(true)
        }
    }
}

fn print_workers(status: &ClusterStatus) {
    for queue in &status.queues {
        if queue.workers.is_empty() {
            println!("  queue {}: no worker is polling it", queue.queue);
        }
        for worker in &queue.workers {
            println!(
                "  queue {}: {} (last seen {})",
                queue.queue,
                worker.name,
                worker.last_seen.as_deref().unwrap_or("—")
            );
        }
    }
}

/// `healer worker`: poll the queue until SIGTERM, then drain.
pub async fn worker(args: WorkerArgs) -> Result<bool> {
    let _log = healer::logging::init("info", None);
    let key = cluster::worker_key(args.key_file.as_deref())?;
    let name = args.name.unwrap_or_else(|| {
        let host = cluster::connection::host_name().unwrap_or_else(|| "worker".to_string());
        format!("{host}-{}", std::process::id())
    });
    let setup = WorkerSetup {
        settings: args.place.settings(args.address),
        name: name.clone(),
        concurrency: args.concurrency,
        cache: args.cache.unwrap_or_else(cluster::worker::default_cache),
        drain: std::time::Duration::from_secs(args.drain),
        key_file: args
            .key_file
            .as_deref()
            .map(|f| std::fs::canonicalize(f).unwrap_or_else(|_| f.to_path_buf())),
        gateway: args.gateway,
    };
    let queue = setup.settings.queue.clone();
    cluster::run_worker(setup, key, || {
        eprintln!("Worker {name} is polling queue {queue}. Press Ctrl-C to stop.");
    })
    .await?;
    eprintln!("Worker {name} stopped.");
    Ok(true)
}
