//! How a command reaches Healer's data: the store directly when it only reads (or only changes
//! settings), the engine when it acts — the running one, or one started for this command.

use std::time::Duration;

use healer::client::{self, Request, Response};
use healer::store::Store;
use healer::{Error, Paths, Result};

/// How long an acting command waits for a running engine to answer.
pub const ANSWER_WAIT: Duration = Duration::from_secs(30);

pub async fn act(paths: &Paths, request: Request, wait: Duration) -> Result<Response> {
    client::act(paths, "healer CLI", request, wait).await
}

/// The store, for commands that only read (or only change settings).
pub fn open(paths: &Paths) -> Result<Store> {
    paths.ensure()?;
    let running = healer::lease::Lease::is_held(paths)
        .unwrap_or(false)
        .then(|| healer::lease::Lease::holder(paths));
    Store::open_without_upgrade(&paths.db(), running)
}

pub fn unexpected() -> Result<bool> {
    Err(Error::Internal(
        "the engine answered another question".to_string(),
    ))
}
