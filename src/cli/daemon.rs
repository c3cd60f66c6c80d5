//! `healer daemon`: the engine without a window, until Ctrl-C or SIGTERM.

use healer::{logging, Engine, Error, Paths, Result};

pub async fn run(paths: Paths) -> Result<()> {
    paths.ensure()?;
    let _log = logging::init("info", Some(&paths.log_dir()));
    let engine = Engine::start(paths.clone(), "healer daemon").await?;
    // Listening before saying it is ready: a stop that follows the message at once is heard.
    let stop = stop_signal()?;
    eprintln!(
        "Healer engine running for {} (pid {}). Press Ctrl-C to stop.",
        paths.data_dir().display(),
        std::process::id()
    );
    stop.await;
    eprintln!("Stopping…");
    engine.shutdown().await;
    Ok(())
}

/// A future that ends at Ctrl-C or SIGTERM; the handlers are in place when it is returned.
#[cfg(unix)]
fn stop_signal() -> Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term =
        signal(SignalKind::terminate()).map_err(|e| Error::io("cannot listen for SIGTERM", e))?;
    let mut interrupt =
        signal(SignalKind::interrupt()).map_err(|e| Error::io("cannot listen for Ctrl-C", e))?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = term.recv() => {}
        }
    })
}

#[cfg(not(unix))]
fn stop_signal() -> Result<impl std::future::Future<Output = ()>> {
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}
