//! What the shell manages: the engine (or why it could not start) and the data paths.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use healer::{Engine, Error, ErrorCode, ErrorPayload, Paths};
use tauri::AppHandle;
use tauri_plugin_opener::OpenerExt;

pub struct AppState {
    paths: Paths,
    engine: Result<Arc<Engine>, ErrorPayload>,
    /// Follow the engine's bus (to the webview, to the tray); aborted when dropped.
    tasks: Vec<tauri::async_runtime::JoinHandle<()>>,
    /// Healer is quitting: windows that close now are not "closed to the tray".
    quitting: AtomicBool,
}

impl AppState {
    pub fn new(
        paths: Paths,
        engine: Result<Arc<Engine>, ErrorPayload>,
        tasks: Vec<tauri::async_runtime::JoinHandle<()>>,
    ) -> Self {
        AppState {
            paths,
            engine,
            tasks,
            quitting: AtomicBool::new(false),
        }
    }

    pub fn set_quitting(&self) {
        self.quitting.store(true, Ordering::SeqCst);
    }

    pub fn quitting(&self) -> bool {
        self.quitting.load(Ordering::SeqCst)
    }

    /// The engine, or the reason it could not start (shown by the UI in place of the app).
    pub fn engine(&self) -> Result<&Engine, ErrorPayload> {
        self.engine.as_deref().map_err(Clone::clone)
    }

    pub fn startup_error(&self) -> Option<&ErrorPayload> {
        self.engine.as_ref().err()
    }

    pub fn paths(&self) -> &Paths {
        &self.paths
    }

    pub async fn shutdown(&self) {
        if let Ok(engine) = &self.engine {
            engine.shutdown().await;
        }
    }
}

impl Drop for AppState {
    fn drop(&mut self) {
        for task in self.tasks.drain(..) {
            task.abort();
        }
    }
}

pub fn open_folder(app: &AppHandle, dir: &Path) -> Result<(), ErrorPayload> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
    app.opener()
        .open_path(dir.display().to_string(), None::<&str>)
        .map_err(|e| ErrorPayload {
            code: ErrorCode::Io,
            message: format!(
                "cannot open {} in the file manager: {}. The logs are in that folder",
                dir.display(),
                opener_failure(&e)
            ),
        })
}

/// Why the desktop did not open a folder, in a sentence: the opener's own error is a program's
/// exit status (`ExitStatus(unix_wait_status(512))`) when no program is set to open folders.
pub fn opener_failure(e: &tauri_plugin_opener::Error) -> String {
    let text = e.to_string();
    if text.contains("ExitStatus") || text.contains("exit status") {
        "no program on this computer is set to open folders (the desktop's opener gave up)"
            .to_string()
    } else if text.contains("No such file") || text.contains("not found") {
        "the desktop has no program to open folders with".to_string()
    } else {
        text
    }
}
