//! The main window comes and goes; Healer stays. Closing it destroys the webview, so its web
//! process and most of the memory go with it; opening Healer makes a new one, which asks for
//! the screen and scroll position the person left (`restored_view`).

use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use tauri::{AppHandle, Manager, WebviewUrl, WebviewWindow, WebviewWindowBuilder};

pub const MAIN: &str = "main";

/// Where the person was: the screen (the URL's hash) and how far down it was scrolled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct SavedView {
    pub hash: String,
    pub scroll: u32,
}

/// The view a new window opens at; set as the old window reports it, or by the tray.
#[derive(Default)]
pub struct ViewMemory(Mutex<Option<SavedView>>);

impl ViewMemory {
    pub fn remember(&self, view: SavedView) {
        *self.lock() = Some(view);
    }

    pub fn take(&self) -> Option<SavedView> {
        self.lock().take()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<SavedView>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Show the window, making it when there is none.
pub fn open(app: &AppHandle) {
    if let Some(window) = app.get_webview_window(MAIN) {
        let _ = window.unminimize();
        let _ = window.show();
        let _ = window.set_focus();
        return;
    }
    if let Err(e) = build(app) {
        tracing::error!("the window could not be opened: {e}");
    }
}

/// Show the window at `hash` (`#/workflows/3`).
pub fn open_at(app: &AppHandle, hash: &str) {
    match app.get_webview_window(MAIN) {
        Some(window) => {
            // A JSON string is a JavaScript string literal, quotes and all.
            let target = serde_json::Value::from(hash).to_string();
            if let Err(e) = window.eval(format!("window.location.hash = {target};")) {
                tracing::warn!("cannot show {hash} in the window: {e}");
            }
            open(app);
        }
        None => {
            app.state::<ViewMemory>().remember(SavedView {
                hash: hash.to_string(),
                scroll: 0,
            });
            open(app);
        }
    }
}

/// Close the window as its close button does (the webview goes; Healer may stay).
pub fn close(app: &AppHandle) {
    if let Some(window) = app.get_webview_window(MAIN) {
        if let Err(e) = window.close() {
            tracing::warn!("the window could not be closed: {e}");
        }
    }
}

fn build(app: &AppHandle) -> tauri::Result<WebviewWindow> {
    let window = WebviewWindowBuilder::new(app, MAIN, WebviewUrl::default())
        .title("Healer")
        .inner_size(1180.0, 760.0)
        .min_inner_size(600.0, 560.0)
        .center()
        .build()?;
    crate::webkit::tune(&window);
    Ok(window)
}
