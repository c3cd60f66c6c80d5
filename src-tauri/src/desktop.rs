//! How Healer lives on the desktop: whether closing the window keeps it running in the tray
//! (on by default), whether it starts at login (off by default; it then starts in the tray,
//! without a window), and the one-time word that it is still running.

use healer::{Engine, ErrorCode, ErrorPayload};
use serde::{Deserialize, Serialize};
use tauri::{AppHandle, Manager};
use tauri_plugin_autostart::ManagerExt as _;
use tauri_plugin_notification::NotificationExt;

use crate::state::AppState;

/// Settings key: keep running when the window closes (absent: yes).
const KEEP_RUNNING: &str = "desktop.keep_running";
/// Settings key: the person was told once that Healer keeps running without its window.
const TOLD_ABOUT_TRAY: &str = "desktop.told_about_tray";

/// The argument a start at login passes: start in the tray, without a window.
pub const HIDDEN_ARG: &str = "--hidden";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct DesktopSettings {
    /// Closing the window leaves Healer running in the tray.
    pub keep_running: bool,
    /// Healer starts, in the tray, when the person logs in.
    pub start_at_login: bool,
    /// Whether this desktop can show a tray icon (the library for it is installed).
    pub tray: bool,
}

pub fn keep_running(engine: &Engine) -> bool {
    engine
        .store()
        .setting::<bool>(KEEP_RUNNING)
        .ok()
        .flatten()
        .unwrap_or(true)
}

pub fn settings(app: &AppHandle) -> Result<DesktopSettings, ErrorPayload> {
    let state = app.state::<AppState>();
    let engine = state.engine()?;
    Ok(DesktopSettings {
        keep_running: keep_running(engine),
        start_at_login: app.autolaunch().is_enabled().map_err(autostart_error)?,
        tray: crate::tray::available(),
    })
}

pub fn set_keep_running(app: &AppHandle, on: bool) -> Result<DesktopSettings, ErrorPayload> {
    let state = app.state::<AppState>();
    state.engine()?.store().set_setting(KEEP_RUNNING, &on)?;
    settings(app)
}

pub fn set_start_at_login(app: &AppHandle, on: bool) -> Result<DesktopSettings, ErrorPayload> {
    let launcher = app.autolaunch();
    if on {
        launcher.enable()
    } else {
        launcher.disable()
    }
    .map_err(autostart_error)?;
    settings(app)
}

fn autostart_error(e: tauri_plugin_autostart::Error) -> ErrorPayload {
    ErrorPayload {
        code: ErrorCode::Io,
        message: format!(
            "the login item could not be changed: {e}. Check that your autostart folder \
             (~/.config/autostart) can be written"
        ),
    }
}

/// The window closed and Healer stays: the first time, say so and how to quit.
pub fn window_closed(app: &AppHandle) {
    let state = app.state::<AppState>();
    let Ok(engine) = state.engine() else {
        return;
    };
    if state.quitting() || !staying(app, engine) {
        return;
    }
    if crate::webkit::knobs().contains(&crate::webkit::Knob::Trim) {
        crate::trim::after_window_closed();
    }
    let store = engine.store();
    if store.setting::<bool>(TOLD_ABOUT_TRAY).ok().flatten() == Some(true) {
        return;
    }
    let shown = app
        .notification()
        .builder()
        .title("Healer is still running")
        .body(
            "It keeps your workflows on schedule from the tray. To quit, choose Quit Healer \
             in the tray menu.",
        )
        .show();
    match shown {
        Ok(()) => {
            if let Err(e) = store.set_setting(TOLD_ABOUT_TRAY, &true) {
                tracing::warn!("cannot remember that the tray was explained: {e}");
            }
        }
        // Told next time, when a notification service may be there.
        Err(e) => tracing::info!("no desktop notification shown: {e}"),
    }
}

/// Whether Healer stays when its last window closes: the engine runs, the person wants it,
/// and there is a tray to come back from.
pub fn staying(app: &AppHandle, engine: &Engine) -> bool {
    keep_running(engine) && app.tray_by_id(crate::tray::ID).is_some()
}
