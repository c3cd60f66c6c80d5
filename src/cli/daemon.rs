//! `healer daemon`: the engine without a window, until Ctrl-C or SIGTERM.

use healer::{logging, Engine, Error, Paths, Result};

pub async fn run(paths: Paths) -> Result<()> {
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
