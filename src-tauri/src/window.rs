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
    // The window-state plugin has put back the last size and place by now, which may have
    // been on a larger screen than this one.
    if let Err(e) = fit_to_screen(&window) {
        tracing::warn!("the window could not be fitted to the screen: {e}");
    }
    crate::webkit::tune(&window);
    Ok(window)
}

/// Keep the window inside the screen it is on (or the main one): smaller when it is larger
/// than the screen's free area, moved in when any part of it is outside.
fn fit_to_screen(window: &WebviewWindow) -> tauri::Result<()> {
    let Some(monitor) = window.current_monitor()?.or(window.primary_monitor()?) else {
        return Ok(());
    };
    let area = monitor.work_area();
    let frame = Rect::of(window.outer_position()?, window.outer_size()?);
    let inner = window.inner_size()?;
    let screen = Rect::of(area.position, area.size);
    let Some(fitted) = fit(frame, screen) else {
        return Ok(());
    };
    // The frame (title bar, borders) stays as it is: only the content shrinks.
    let (extra_w, extra_h) = (frame.width - inner.width, frame.height - inner.height);
    window.set_size(tauri::PhysicalSize::new(
        fitted.width.saturating_sub(extra_w),
        fitted.height.saturating_sub(extra_h),
    ))?;
    window.set_position(tauri::PhysicalPosition::new(fitted.x, fitted.y))
}

/// A rectangle on the desktop, in physical pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Rect {
    x: i32,
    y: i32,
    width: u32,
    height: u32,
}

impl Rect {
    fn of(position: tauri::PhysicalPosition<i32>, size: tauri::PhysicalSize<u32>) -> Rect {
        Rect {
            x: position.x,
            y: position.y,
            width: size.width,
            height: size.height,
        }
    }
}

/// Where `window` goes to lie inside `screen`, or `None` when it already does.
fn fit(window: Rect, screen: Rect) -> Option<Rect> {
    let width = window.width.min(screen.width);
    let height = window.height.min(screen.height);
    let room = |start: i32, total: u32, size: u32| {
        start.saturating_add(i32::try_from(total.saturating_sub(size)).unwrap_or(i32::MAX))
    };
    let x = window
        .x
        .clamp(screen.x, room(screen.x, screen.width, width));
    let y = window
        .y
        .clamp(screen.y, room(screen.y, screen.height, height));
    let fitted = Rect {
        x,
        y,
        width,
        height,
    };
    (fitted != window).then_some(fitted)
}

#[cfg(test)]
mod tests {
    use super::{fit, Rect};

    const LAPTOP: Rect = Rect {
        x: 0,
        y: 0,
        width: 1280,
        height: 800,
    };

    #[test]
    fn a_window_placed_on_a_larger_screen_is_shrunk_and_moved_onto_this_one() {
        let from_big_screen = Rect {
            x: 370,
            y: 160,
            width: 1180,
            height: 797,
        };
        let fitted = fit(from_big_screen, LAPTOP).expect("moved");
        assert_eq!(
            fitted,
            Rect {
                x: 100,
                y: 3,
                width: 1180,
                height: 797
            }
        );
        let huge = Rect {
            x: -50,
            y: 900,
            width: 1900,
            height: 1060,
        };
        assert_eq!(fit(huge, LAPTOP), Some(LAPTOP));
    }

    #[test]
    fn a_window_that_fits_is_left_alone() {
        let fits = Rect {
            x: 50,
            y: 20,
            width: 1180,
            height: 760,
        };
        assert_eq!(fit(fits, LAPTOP), None);
    }
}
