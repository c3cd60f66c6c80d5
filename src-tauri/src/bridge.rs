//! The bridge from the engine's bus to the webview (typed event `healer-event`) and to desktop
//! notifications.

use healer::events::{Event, EventRecord};
use healer::llm::ThreadText;
use healer::workflow::runner::OutputChunk;
use serde::{Deserialize, Serialize};
use tauri::{AppHandle, Manager};
use tauri_plugin_notification::NotificationExt;
use tauri_specta::Event as _;
use tokio::sync::broadcast::{self, error::RecvError};

/// Every engine event, as the UI receives it live.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
pub struct HealerEvent(pub EventRecord);

/// Output of a running attempt, as it is printed (not persisted; the attempt keeps its log).
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
pub struct RunOutput(pub OutputChunk);

/// Text of a task's thread as the model writes it (the stored message follows when done).
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
pub struct ThreadTextEvent(pub ThreadText);

pub async fn forward(
    app: AppHandle,
    events: broadcast::Receiver<EventRecord>,
    output: broadcast::Receiver<OutputChunk>,
    text: broadcast::Receiver<ThreadText>,
) {
    tokio::join!(
        forward_events(app.clone(), events),
        forward_output(app.clone(), output),
        forward_text(app, text)
    );
}

async fn forward_text(app: AppHandle, mut rx: broadcast::Receiver<ThreadText>) {
    loop {
        match rx.recv().await {
            Ok(piece) => {
                if let Err(e) = ThreadTextEvent(piece).emit(&app) {
                    tracing::debug!("cannot send thread text to the window: {e}");
                }
            }
            // Live text is a view; the stored message is complete.
            Err(RecvError::Lagged(_)) => {}
            Err(RecvError::Closed) => break,
        }
    }
}

async fn forward_output(app: AppHandle, mut rx: broadcast::Receiver<OutputChunk>) {
    loop {
        match rx.recv().await {
            Ok(chunk) => {
                if let Err(e) = RunOutput(chunk).emit(&app) {
                    tracing::debug!("cannot send output to the window: {e}");
                }
            }
            // Live output is a view; the full log is stored with the attempt.
            Err(RecvError::Lagged(_)) => {}
            Err(RecvError::Closed) => break,
        }
    }
}

async fn forward_events(app: AppHandle, mut rx: broadcast::Receiver<EventRecord>) {
    loop {
        match rx.recv().await {
            Ok(record) => {
                if let Event::NotificationCreated { notification } = &record.event {
                    notify_desktop(&app, &notification.title, &notification.body);
                }
                if let Err(e) = HealerEvent(record).emit(&app) {
                    tracing::warn!("cannot send an event to the window: {e}");
                }
            }
            // The UI re-reads the events table on its next refresh; nothing is lost.
            Err(RecvError::Lagged(missed)) => {
                tracing::warn!("the window missed {missed} live events");
            }
            Err(RecvError::Closed) => break,
        }
    }
}

/// A desktop notification, unless the person is looking at the window already.
fn notify_desktop(app: &AppHandle, title: &str, body: &str) {
    let focused = app
        .get_webview_window("main")
        .and_then(|w| w.is_focused().ok())
        .unwrap_or(false);
    if focused {
        return;
    }
    if let Err(e) = app.notification().builder().title(title).body(body).show() {
        // No notification service (a bare X session): the notification centre still has it.
        tracing::info!("no desktop notification shown: {e}");
    }
}
