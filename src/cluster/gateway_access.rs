//! How workers reach the control room's model gateway (issue 42): the address the gateway
//! listens on for them, and one token per worker. The control room keeps only each token's
//! hash; the token itself is shown once, for the person to give that worker
//! (`HEALER_GATEWAY_TOKEN`). Nothing of this crosses Temporal.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::store::Store;

/// The setting that holds it.
pub const WORKER_GATEWAY: &str = "cluster_worker_gateway";
/// The variable a worker reads its gateway token from.
pub const GATEWAY_TOKEN_ENV: &str = "HEALER_GATEWAY_TOKEN";

/// Where workers reach the model gateway, and the workers that may.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct WorkerGateway {
    /// host:port the gateway listens on for workers (none: workers cannot reach it, and a
    /// project's sessions cannot run on the cluster).
    pub listen: Option<String>,
    pub workers: Vec<GatewayWorker>,
}

/// A worker that may use the gateway: its name and its token's hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct GatewayWorker {
    pub name: String,
    pub token_sha256: String,
    pub made_at: String,
}

/// What is set.
pub fn worker_gateway(store: &Store) -> Result<WorkerGateway> {
    Ok(store
        .setting::<WorkerGateway>(WORKER_GATEWAY)?
        .unwrap_or_default())
}

/// Let the gateway listen for workers on `listen` (host:port; an engine that runs picks it up
/// at its next session on the cluster).
pub fn open_to_workers(store: &Store, listen: &str) -> Result<WorkerGateway> {
    let listen = listen.trim();
    if listen.parse::<std::net::SocketAddr>().is_err() {
        return Err(Error::InvalidInput(format!(
            "“{listen}” is not an address to listen on: give an IP address and a port, such as \
             0.0.0.0:7480 (every network) or 10.0.0.5:7480"
        )));
    }
    let mut gateway = worker_gateway(store)?;
    gateway.listen = Some(listen.to_string());
    store.set_setting(WORKER_GATEWAY, &gateway)?;
    Ok(gateway)
}

/// A new token for the worker `name` (replacing its earlier one). Returned once; only its
/// hash is kept.
pub fn make_worker_token(store: &Store, name: &str) -> Result<String> {
    let name = name.trim();
    if name.is_empty() || name.len() > 100 {
        return Err(Error::InvalidInput(
            "a worker's name is needed (up to 100 characters)".to_string(),
        ));
    }
    let bytes: [u8; 32] = rand::random();
    let token = format!(
        "healer-worker-{}",
        bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
    );
    let mut gateway = worker_gateway(store)?;
    gateway.workers.retain(|w| w.name != name);
    gateway.workers.push(GatewayWorker {
        name: name.to_string(),
        token_sha256: hash(&token),
        made_at: crate::store::now(),
    });
    store.set_setting(WORKER_GATEWAY, &gateway)?;
    Ok(token)
}

/// Take back the token of worker `name`: the gateway refuses it from now on.
pub fn forget_worker(store: &Store, name: &str) -> Result<bool> {
    let mut gateway = worker_gateway(store)?;
    let before = gateway.workers.len();
    gateway.workers.retain(|w| w.name != name.trim());
    store.set_setting(WORKER_GATEWAY, &gateway)?;
    Ok(gateway.workers.len() != before)
}

/// Whether `token` is a worker's the control room made (read afresh each time: a token taken
/// back is refused at once).
pub fn knows_worker(store: &Store, token: &str) -> bool {
    let hashed = hash(token);
    worker_gateway(store).is_ok_and(|g| g.workers.iter().any(|w| w.token_sha256 == hashed))
}

fn hash(token: &str) -> String {
    format!("{:x}", Sha256::digest(token.as_bytes()))
}
