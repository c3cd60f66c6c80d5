//! Where the cluster is and how to reach it: the settings the person gave (`healer cluster
//! connect`, Settings → "Run on more computers"), the cluster key that seals every payload,
//! a connected client, and what the cluster says of its workers.

use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use temporalio_client::{tonic, Client, ClientOptions, Connection, ConnectionOptions};
use temporalio_common::protos::temporal::api::enums::v1::TaskQueueType;
use temporalio_common::protos::temporal::api::taskqueue::v1::TaskQueue;
use temporalio_common::protos::temporal::api::workflowservice::v1::DescribeTaskQueueRequest;

use super::codec::ClusterKey;
use crate::error::{Error, Result};
use crate::secrets::Keep;

/// Settings key: the connection (absent: this Healer runs everything itself).
pub const CLUSTER_SETTINGS: &str = "cluster.connection";
/// The default task queue.
pub const DEFAULT_QUEUE: &str = "healer";
/// The default namespace.
pub const DEFAULT_NAMESPACE: &str = "default";
/// How long connecting may take before the cluster counts as unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How to reach the cluster. No secret in it: an API key is read from the variable named.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct ClusterSettings {
    /// host:port of the Temporal frontend ("127.0.0.1:7233", "ns.acct.tmprl.cloud:7233").
    pub address: String,
    pub namespace: String,
    /// The task queue Healer's runs go to unless a workflow names another.
    pub queue: String,
    pub tls: bool,
    /// The environment variable holding a Temporal Cloud API key, if one is needed.
    pub api_key_env: Option<String>,
}

impl ClusterSettings {
    /// Why these settings cannot be used, in words for the person.
    pub fn problem(&self) -> Option<String> {
        let address = self.address.trim();
        if address.is_empty() {
            return Some("give the cluster's address, like 127.0.0.1:7233".to_string());
        }
        if address.contains("://")
            || !address
                .rsplit_once(':')
                .is_some_and(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok())
        {
            return Some(format!("“{address}” is not an address Healer can use: write it as host:port, like 127.0.0.1:7233"));
        }
        if self.namespace.trim().is_empty() {
            return Some("give the namespace (Temporal's own is “default”)".to_string());
        }
        if self.queue.trim().is_empty() || self.queue.contains(char::is_whitespace) {
            return Some("give a task queue name without spaces, like “healer”".to_string());
        }
        if let Some(var) = &self.api_key_env {
            if var.is_empty() || !var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Some(format!("“{var}” is not an environment variable name"));
            }
        }
        None
    }

    fn url(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}", self.address.trim())
    }
}

/// Where the cluster key is kept in the control room (the keyring, or Healer's secrets file).
fn key_name(instance: &str) -> String {
    format!("cluster-key-{instance}")
}

/// The control room's cluster key, made the first time it is asked for.
/// The control room's cluster key when one is kept already (none is made).
pub fn kept_control_key(keep: &Keep, instance: &str) -> Option<ClusterKey> {
    keep.get(&key_name(instance))
        .and_then(|(text, _)| ClusterKey::from_text(&text))
}

pub fn control_key(keep: &Keep, instance: &str) -> Result<ClusterKey> {
    let name = key_name(instance);
    if let Some((text, _)) = keep.get(&name) {
        return ClusterKey::from_text(&text).ok_or_else(|| {
            Error::Internal("the kept cluster key is not one Healer made".to_string())
        });
    }
    let key = ClusterKey::generate();
    keep.set(&name, &key.to_text()).map_err(|e| match e {
        crate::secrets::KeepError::NoPlace => Error::NoSecretPlace,
        other => Error::Internal(format!("the cluster key could not be kept: {other}")),
    })?;
    Ok(key)
}

/// The key a worker was handed: the variable `HEALER_CLUSTER_KEY`, or a key file.
pub fn worker_key(file: Option<&std::path::Path>) -> Result<ClusterKey> {
    let text = match file {
        Some(path) => String::from_utf8_lossy(&crate::capped::read_file(
            path,
            crate::capped::KEY_FILE_BYTES,
            "the cluster key file",
        )?)
        .into_owned(),
        None => crate::secrets::env_var(KEY_ENV).ok_or_else(|| {
            Error::InvalidInput(format!(
                "a worker needs the cluster key: pass --key-file, or set {KEY_ENV} (the control room writes it with `healer cluster key`)"
            ))
        })?,
    };
    ClusterKey::from_text(&text)
        .ok_or_else(|| Error::InvalidInput("that is not a cluster key Healer made".to_string()))
}

/// The variable a worker reads its cluster key from.
pub const KEY_ENV: &str = "HEALER_CLUSTER_KEY";

/// Connect to the cluster with `key` sealing every payload.
pub async fn connect(
    settings: &ClusterSettings,
    key: &ClusterKey,
    identity: &str,
) -> Result<Client> {
    if let Some(problem) = settings.problem() {
        return Err(Error::InvalidInput(problem));
    }
    let api_key = match &settings.api_key_env {
        Some(var) => Some(crate::secrets::env_var(var).ok_or_else(|| {
            Error::Cluster(format!(
                "the API key for the cluster is read from {var}, which is not set here"
            ))
        })?),
        None => None,
    };
    let url = settings.url().parse::<url::Url>().map_err(|e| {
        Error::InvalidInput(format!("“{}” is not an address: {e}", settings.address))
    })?;
    let options = ConnectionOptions::new(url)
        .identity(identity.to_string())
        .maybe_api_key(api_key)
        .connect_timeout(CONNECT_TIMEOUT)
        .build();
    let connection = tokio::time::timeout(CONNECT_TIMEOUT * 2, Connection::connect(options))
        .await
        .map_err(|_| unreachable(settings, "it did not answer"))?
        .map_err(|e| unreachable(settings, &e.to_string()))?;
    let options = ClientOptions::new(settings.namespace.clone())
        .data_converter(key.data_converter())
        .build();
    Client::new(connection, options).map_err(|e| Error::Cluster(e.to_string()))
}

fn unreachable(settings: &ClusterSettings, why: &str) -> Error {
    Error::Cluster(format!(
        "the cluster at {} could not be reached: {}",
        settings.address,
        crate::error::without_os_error_numbers(why)
    ))
}

/// A worker polling a queue, as the cluster reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ClusterWorker {
    /// Its name (`healer worker --name`, else host and process).
    pub name: String,
    /// When it last asked for work (RFC 3339).
    pub last_seen: Option<String>,
}

/// A task queue and the workers polling it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct QueueWorkers {
    pub queue: String,
    pub workers: Vec<ClusterWorker>,
}

/// The workers polling `queue` for attempts (Temporal's DescribeTaskQueue).
pub async fn queue_workers(client: &Client, namespace: &str, queue: &str) -> Result<QueueWorkers> {
    let request = DescribeTaskQueueRequest {
        namespace: namespace.to_string(),
        task_queue: Some(TaskQueue {
            name: queue.to_string(),
            ..TaskQueue::default()
        }),
        task_queue_type: TaskQueueType::Activity as i32,
        ..DescribeTaskQueueRequest::default()
    };
    let response = client
        .connection()
        .workflow_service()
        .describe_task_queue(tonic::Request::new(request))
        .await
        .map_err(|e| {
            Error::Cluster(format!(
                "the cluster did not describe the queue {queue}: {}",
                e.message()
            ))
        })?
        .into_inner();
    let mut workers: Vec<ClusterWorker> = response
        .pollers
        .into_iter()
        .map(|p| ClusterWorker {
            name: p.identity,
            last_seen: p.last_access_time.and_then(|t| {
                let at = SystemTime::UNIX_EPOCH
                    + Duration::new(u64::try_from(t.seconds).ok()?, u32::try_from(t.nanos).ok()?);
                Some(chrono::DateTime::<chrono::Utc>::from(at).to_rfc3339())
            }),
        })
        .collect();
    workers.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(QueueWorkers {
        queue: queue.to_string(),
        workers,
    })
}

/// Write the cluster key to `path` for a worker, readable and writable by its owner only.
pub fn write_key_file(path: &std::path::Path, key: &ClusterKey) -> Result<()> {
    crate::secrets::write_private(path, key.to_text().as_bytes())
        .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))
}

/// This machine's name (for the control room's identity and a worker's default name).
pub fn host_name() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
}
