//! `healer daemon`: the engine without a window, until Ctrl-C or SIGTERM.

use healer::{logging, Engine, Error, Paths, Result};

pub async fn run(paths: Paths) -> Result<()> {
    paths.ensure()?;
    let _log = logging::init("info", Some(&paths.log_dir()));
    let engine = Engine::start(paths.clone(), "healer daemon").await?;
    // Listen for the stop signals before saying we are ready: a SIGTERM
    // that arrives right after the ready line must stop us cleanly, not by
    // the signal's default action.
    let stop = stop_signal()?;
    eprintln!(
        "Healer engine running for {} (pid {}). Press Ctrl-C to stop.",
        paths.data_dir().display(),
        std::process::id()
    );
    stop.await?;
    eprintln!("Stopping…");
    engine.shutdown().await;
    Ok(())
}

#[cfg(unix)]
fn stop_signal() -> Result<impl std::future::Future<Output = Result<()>>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term =
        signal(SignalKind::terminate()).map_err(|e| Error::io("cannot listen for SIGTERM", e))?;
    let mut int =
        signal(SignalKind::interrupt()).map_err(|e| Error::io("cannot listen for Ctrl-C", e))?;
    Ok(async move {
        tokio::select! {
            _ = int.recv() => Ok(()),
            _ = term.recv() => Ok(()),
        }
    })
}

#[cfg(not(unix))]
fn stop_signal() -> Result<impl std::future::Future<Output = Result<()>>> {
    Ok(async {
        tokio::signal::ctrl_c()
            .await
            .map_err(|e| Error::io("cannot listen for Ctrl-C", e))
    })
}
