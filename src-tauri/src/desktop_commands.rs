//! Commands for living on the desktop: the background and login settings, where the window
//! was (so a new one opens there), and quitting.

use healer::ErrorPayload;
use tauri::{AppHandle, State};

use crate::desktop::{self, DesktopSettings};
use crate::window::{SavedView, ViewMemory};

type CmdResult<T> = Result<T, ErrorPayload>;

#[tauri::command]
#[specta::specta]
pub fn get_desktop_settings(app: AppHandle) -> CmdResult<DesktopSettings> {
    desktop::settings(&app)
}

#[tauri::command]
#[specta::specta]
pub fn set_keep_running(app: AppHandle, on: bool) -> CmdResult<DesktopSettings> {
    desktop::set_keep_running(&app, on)
}

#[tauri::command]
#[specta::specta]
pub fn set_start_at_login(app: AppHandle, on: bool) -> CmdResult<DesktopSettings> {
    desktop::set_start_at_login(&app, on)
}

/// The window says where the person is, so a window made later opens there.
#[tauri::command]
#[specta::specta]
pub fn remember_view(views: State<'_, ViewMemory>, view: SavedView) {
    views.remember(view);
}

/// Where a new window should open, once; `null` for a first window.
#[tauri::command]
#[specta::specta]
pub fn restored_view(views: State<'_, ViewMemory>) -> Option<SavedView> {
    views.take()
}

/// Quit Healer: the engine stops through its normal shutdown.
#[tauri::command]
#[specta::specta]
pub fn quit_app(app: AppHandle) {
    app.exit(0);
}
